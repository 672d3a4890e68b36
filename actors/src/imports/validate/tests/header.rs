//! The header row: columns in any order and letter case; extra, missing, doubled,
//! unnamed and non-text columns; column letters.

use super::*;

#[test]
fn columns_in_any_order_and_any_header_case() {
    let world = World::new();
    let file = " PRICE ,Weight,Specification,\tIndex_Code,Trade_Date\n\
                250000,0.5,B200,GPU_Index,20261120\n\
                180000,0.5,H100,GPU_Index,20261120\n";
    accepted(
        world.csv(file),
        &[
            quote("2026-11-20", "GPU_Index", "B200", "0.5", "250000"),
            quote("2026-11-20", "GPU_Index", "H100", "0.5", "180000"),
        ],
    );
}

#[test]
fn an_extra_column_is_refused() {
    let world = World::new();
    let errors = world.errors(
        "trade_date,index_code,specification,weight,price,comment\n\
             20261120,GPU_Index,B200,1,250000,hi\n",
    );
    assert_eq!(
        errors,
        vec![err(
            1,
            "comment",
            "unknown column 'comment' (column F); the only columns allowed are \
                 trade_date, index_code, specification, weight, price, in any order"
        )]
    );
}

#[test]
fn a_missing_column_is_refused() {
    let world = World::new();
    let errors = world.errors("trade_date,index_code,specification,weight\nx,y,z,1\n");
    assert_eq!(
        errors,
        vec![err(
            1,
            "price",
            "missing column price; the header must name trade_date, index_code, \
                 specification, weight, price"
        )]
    );
}

#[test]
fn a_duplicate_column_is_refused() {
    let world = World::new();
    let errors =
        world.errors("trade_date,index_code,specification,weight,price,Weight\n1,2,3,4,5,6\n");
    assert_eq!(
        errors,
        vec![err(
            1,
            "Weight",
            "column weight appears twice (columns D and F)"
        )]
    );
}

#[test]
fn header_problems_are_all_listed_and_data_rows_left_alone() {
    let world = World::new();
    // Every data cell is bad too, but only the header is reported.
    let places = world.places(
        "trade_date,foo,specification,weight,weight,bar\n\
             never,Hardware_Index,,-1,0,x\n",
    );
    assert_eq!(
        places,
        vec![
            at(1, "index_code"),
            at(1, "weight"),
            at(1, "price"),
            at(1, "foo"),
            at(1, "bar"),
        ]
    );
}

#[test]
fn a_non_text_header_cell_is_refused() {
    let world = World::new();
    let sheet = Sheet {
        rows: vec![
            SheetRow {
                number: 1,
                // The usual header, then a number where a sixth name would be.
                cells: HEAD
                    .trim_end()
                    .split(',')
                    .map(|name| Cell::Text(name.into()))
                    .chain([Cell::Number("42".into())])
                    .collect(),
            },
            SheetRow {
                number: 2,
                cells: vec![],
            },
        ],
    };
    let errors = validate(&sheet, world.reference()).expect_err("refused");
    assert_eq!(
        errors,
        vec![err(
            1,
            "42",
            "the header cell in column F holds the number 42; header cells must be the \
                 column names trade_date, index_code, specification, weight, price"
        )]
    );
}

#[test]
fn an_unnamed_column_with_values_is_an_extra_column() {
    let world = World::new();
    let errors = world.errors(&format!("{HEAD}20261120,GPU_Index,B200,1,250000,,note\n"));
    assert_eq!(
        errors,
        vec![err(
            1,
            "",
            "column G holds values but has no header name; the only columns allowed are \
                 trade_date, index_code, specification, weight, price"
        )]
    );
    // Trailing separators without values are harmless.
    world
        .csv(
            "trade_date,index_code,specification,weight,price,,\n\
                 20261120,GPU_Index,B200,1,250000,,\n",
        )
        .expect("valid");
}

#[test]
fn column_letters() {
    assert_eq!(column_letter(0), "A");
    assert_eq!(column_letter(25), "Z");
    assert_eq!(column_letter(26), "AA");
    assert_eq!(column_letter(51), "AZ");
    assert_eq!(column_letter(52), "BA");
    assert_eq!(column_letter(16_383), "XFD");
}
