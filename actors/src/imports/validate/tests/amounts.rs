//! Weights and prices: bounds, decimal places, numbers that are not plain decimals.

use super::*;

#[test]
fn weight_rules() {
    let world = World::new();
    for ok in ["1", "1.00000000", " 1 ", "+1", "1.", "01"] {
        let quotes = world.csv(&one_row(WEIGHT, ok)).expect(ok);
        assert_eq!(quotes[0].weight, Decimal::ONE, "{ok}");
    }
    let cases = [
        ("0", "the weight must be greater than 0, found 0"),
        ("-0.5", "the weight must be greater than 0, found -0.5"),
        ("-0", "the weight must be greater than 0, found -0"),
        ("1.5", "the weight must be at most 1, found 1.5"),
        (
            "1.00000001",
            "the weight must be at most 1, found 1.00000001",
        ),
        ("2", "the weight must be at most 1, found 2"),
        (
            "0.123456789",
            "the weight 0.123456789 has 9 decimal places; at most 8 are allowed",
        ),
        (
            "1e-3",
            "'1e-3' is in exponent notation; write the number out in full (such as \
                 0.001), since exponent notation may mean the spreadsheet rounded it",
        ),
        (
            "abc",
            "'abc' is not a number; write digits with a '.' decimal point, without \
                 thousands separators or currency signs",
        ),
        (
            ".",
            "'.' is not a number; write digits with a '.' decimal point, without \
                 thousands separators or currency signs",
        ),
        (
            "NaN",
            "'NaN' is not a number; write digits with a '.' decimal point, without \
                 thousands separators or currency signs",
        ),
        ("", "missing"),
    ];
    world.refuses_each(WEIGHT, &cases);
    // "0,5" splits into two CSV fields: that is an unnamed extra column.
    assert_eq!(world.places(&one_row(WEIGHT, "0,5")), vec![at(1, "")]);
}

#[test]
fn weight_places_count_after_trailing_zeros() {
    let world = World::new();
    let csv = format!(
        "{HEAD}20261120,GPU_Index,a,0.500000000000000000000000000000,1\n\
             20261120,GPU_Index,b,0.50000000,1\n"
    );
    let quotes = world.csv(&csv).expect("valid");
    assert_eq!(quotes[0].weight, dec("0.5"));
    assert_eq!(quotes[1].weight, dec("0.5"));
}

#[test]
fn price_rules() {
    let world = World::new();
    for (ok, value) in [
        ("0.000001", "0.000001"),
        ("250000.100000000", "250000.1"),
        ("999999999999999999.999999", "999999999999999999.999999"),
        ("  42 ", "42"),
    ] {
        let quotes = world.csv(&one_row(PRICE, ok)).expect(ok);
        assert_eq!(quotes[0].price, dec(value), "{ok}");
    }
    let cases = [
        ("0", "the price must be greater than 0, found 0"),
        (
            "0.0000000",
            "the price must be greater than 0, found 0.0000000",
        ),
        ("-1", "the price must be greater than 0, found -1"),
        (
            "0.0000001",
            "the price 0.0000001 has 7 decimal places; at most 6 are allowed",
        ),
        (
            "1000000000000000000",
            "the price 1000000000000000000 is too large: at most 18 digits before the \
                 decimal point",
        ),
        (
            "$100",
            "'$100' is not a number; write digits with a '.' decimal point, without \
                 thousands separators or currency signs",
        ),
        (
            "2.5E+11",
            "'2.5E+11' is in exponent notation; write the number out in full (such as \
                 0.001), since exponent notation may mean the spreadsheet rounded it",
        ),
        ("", "missing"),
    ];
    world.refuses_each(PRICE, &cases);
}
