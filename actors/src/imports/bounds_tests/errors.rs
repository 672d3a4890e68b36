//! The problems listed: the first 1,000 in row order, all counted, and the messages of
//! a rejection.

use crate::imports::bounds::{ErrorList, MAX_LISTED_ERRORS};
use crate::imports::validate::RowError;
use crate::ApiError;

use super::{import, HEAD};

#[test]
fn two_million_problems_list_the_first_thousand_and_count_all() {
    // 400,000 junk lines, five problems each (a date that is not one, four cells
    // missing): before the bound every problem was listed, a 642 MB answer for the
    // 2,000,000 junk lines that are now refused as more rows than a sheet has.
    let mut csv = String::with_capacity(HEAD.len() + 400_000 * 2);
    csv.push_str(HEAD);
    for _ in 0..400_000 {
        csv.push_str("x\n");
    }
    let error = import(&csv).expect_err("rejected");
    assert_eq!(error.code.as_u32(), 40002);
    assert_eq!(error.errors_total, 2_000_000);
    assert_eq!(error.errors.len(), MAX_LISTED_ERRORS);
    assert_eq!(
        error.message,
        "the file was rejected: 2000000 problems; the first 1000 are listed in errors"
    );
    // Rows 2 to 201, each cell in the D8 column order.
    let first: Vec<(u32, &str)> = error.errors[..6]
        .iter()
        .map(|e| (e.row, e.column.as_str()))
        .collect();
    assert_eq!(
        first,
        [
            (2, "trade_date"),
            (2, "index_code"),
            (2, "specification"),
            (2, "weight"),
            (2, "price"),
            (3, "trade_date")
        ]
    );
    assert_eq!(error.errors.last().map(|e| e.row), Some(201));
}

#[test]
fn weight_sums_found_last_are_listed_in_row_order() {
    // Rows 2-3: a weight sum of 0.2, judged after the last row; rows 4-1503: a bad
    // price each, in a group of their own whose weights sum to 150 (a problem of each
    // of those rows too). The first 1,000 in row order start with the sum's two rows.
    let mut csv = HEAD.to_owned();
    csv.push_str("20261120,GPU_Index,a,0.1,1\n20261120,GPU_Index,b,0.1,1\n");
    for i in 0..1_500 {
        csv.push_str(&format!("20261120,Server_Index,s{i},0.1,x\n"));
    }
    let error = import(&csv).expect_err("rejected");
    assert_eq!(error.errors_total, 3_002);
    assert_eq!(error.errors.len(), MAX_LISTED_ERRORS);
    let places: Vec<(u32, &str)> = error.errors[..3]
        .iter()
        .map(|e| (e.row, e.column.as_str()))
        .collect();
    assert_eq!(places, [(2, "weight"), (3, "weight"), (4, "weight")]);
    assert_eq!(error.errors.last().map(|e| e.row), Some(502));
    assert!(error.errors.windows(2).all(|w| w[0].row <= w[1].row));
}

#[test]
fn the_error_list_keeps_the_smallest_and_counts_all() {
    let error = |row: u32| RowError {
        row,
        column: String::new(),
        reason: String::new(),
    };
    let mut list = ErrorList::default();
    for row in (0..3_000).rev() {
        list.add(0, error(row));
    }
    assert!(!list.would_list(1_000, 0));
    assert!(list.would_list(998, 0));
    let (listed, total) = list.into_sorted();
    assert_eq!(total, 3_000);
    let rows: Vec<u32> = listed.iter().map(|e| e.row).collect();
    assert_eq!(rows, (0..1_000).collect::<Vec<_>>());
}

#[test]
fn one_problem_and_a_few_keep_their_messages() {
    let problem = RowError {
        row: 2,
        column: "price".to_owned(),
        reason: "missing".to_owned(),
    };
    let one = ApiError::rejected(vec![problem.clone()], 1);
    assert_eq!(
        one.message,
        "the file was rejected: 1 problem, listed in errors"
    );
    assert_eq!(one.errors_total, 1);
    let two = ApiError::rejected(vec![problem; 2], 2);
    assert_eq!(
        two.message,
        "the file was rejected: 2 problems, listed in errors"
    );
    assert_eq!(two.errors_total, 2);
    assert_eq!(ApiError::invalid("x").errors_total, 0);
}
