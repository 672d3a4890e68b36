//! The rules across rows: duplicates name the first row, weights sum to exactly 1, a
//! group with a bad row is not summed.

use super::*;

#[test]
fn duplicates_name_the_first_row() {
    let world = World::new();
    let errors = world.errors(&format!(
        "{HEAD}20261120,GPU_Index,B200,0.5,1\n\
             20261120,GPU_Index,B200 ,0.5,1\n\
             2026-11-20,GPU_Index,B200,0.5,2\n\
             20261120,Server_Index,B200,1,1\n\
             20261120, GPU_Index,B200,0.5,3\n"
    ));
    let reason = "duplicate of row 2: the same trade_date, index_code and specification \
                      appear there";
    assert_eq!(
        errors,
        vec![
            err(4, "specification", reason),
            err(6, "specification", reason)
        ]
    );
}

#[test]
fn weights_must_sum_to_exactly_one() {
    let world = World::new();
    let errors = world.errors(&format!(
        "{HEAD}20261110,Server_Index,a,0.6,1\n\
             20261110,Server_Index,b,0.3,1\n\
             20261110,GPU_Index,a,1,1\n\
             20261120,Server_Index,a,0.50000001,1\n\
             20261120,Server_Index,b,0.5,1\n"
    ));
    assert_eq!(
        errors,
        vec![
            err(
                2,
                "weight",
                "weights of Server_Index on 2026-11-10 sum to 0.9 (rows 2, 3), not 1"
            ),
            err(
                3,
                "weight",
                "weights of Server_Index on 2026-11-10 sum to 0.9 (rows 2, 3), not 1"
            ),
            err(
                5,
                "weight",
                "weights of Server_Index on 2026-11-20 sum to 1.00000001 (rows 5, 6), not 1"
            ),
            err(
                6,
                "weight",
                "weights of Server_Index on 2026-11-20 sum to 1.00000001 (rows 5, 6), not 1"
            ),
        ]
    );
}

#[test]
fn eight_digit_weights_sum_exactly() {
    let world = World::new();
    let quotes = world
        .csv(&format!(
            "{HEAD}20261120,GPU_Index,a,0.33333333,1\n\
                 20261120,GPU_Index,b,0.33333333,1\n\
                 20261120,GPU_Index,c,0.33333334,1\n"
        ))
        .expect("sums to 1");
    let sum: Decimal = quotes.iter().map(|q| q.weight).sum();
    assert_eq!(sum, Decimal::ONE);
}

#[test]
fn a_long_group_lists_ten_rows() {
    let world = World::new();
    let mut csv = HEAD.to_owned();
    for i in 0..12 {
        csv.push_str(&format!("20261120,GPU_Index,s{i},0.01,1\n"));
    }
    let errors = world.errors(&csv);
    assert_eq!(errors.len(), 12);
    assert_eq!(
        errors[0].reason,
        "weights of GPU_Index on 2026-11-20 sum to 0.12 (rows 2, 3, 4, 5, 6, 7, 8, 9, 10, \
             11 and 2 more), not 1"
    );
}

#[test]
fn a_group_with_a_bad_cell_is_still_summed_and_a_duplicate_left_out_of_its_sum() {
    let world = World::new();
    // Rows 2-3 sum to 0.3 and row 3's price is bad: both problems, in one upload (the
    // weights were reported only after the price was fixed).
    // Rows 4-6: a duplicate, left out of the sum, which is then 1.
    assert_eq!(
        world.places(&format!(
            "{HEAD}20261120,GPU_Index,a,0.1,1\n\
                 20261120,GPU_Index,b,0.2,zero\n\
                 20261123,GPU_Index,a,0.5,1\n\
                 20261123,GPU_Index,b,0.5,1\n\
                 20261123,GPU_Index,b,0.5,1\n"
        )),
        vec![
            at(2, "weight"),
            at(3, "weight"),
            at(3, "price"),
            at(6, "specification")
        ]
    );
}

#[test]
fn a_group_with_an_unreadable_weight_is_not_summed_but_checked_for_duplicates() {
    let world = World::new();
    // Row 3's weight cannot be read: any sum would be a guess. Row 4 duplicates row 2
    // although its price is bad.
    assert_eq!(
        world.places(&format!(
            "{HEAD}20261120,GPU_Index,a,0.1,1\n\
                 20261120,GPU_Index,b,heavy,1\n\
                 20261120,GPU_Index,a,0.3,x\n"
        )),
        vec![at(3, "weight"), at(4, "specification"), at(4, "price")]
    );
}
