//! The whole file: every quote in file order, the validator row by row, an empty file,
//! a header alone, every bad cell of every row in order, and a hundred thousand rows.

use super::*;

#[test]
fn a_valid_file_gives_every_quote_in_file_order() {
    let world = World::new();
    let file = format!(
        "{HEAD}20261120,GPU_Index,B200,0.6,250000.5\n\
             2026-11-20,GPU_Index,H100,0.4,180000\n\
             20261120,Server_Index,HGX,1,1.000001\n"
    );
    accepted(
        world.csv(&file),
        &[
            quote("2026-11-20", "GPU_Index", "B200", "0.6", "250000.5"),
            quote("2026-11-20", "GPU_Index", "H100", "0.4", "180000"),
            quote("2026-11-20", "Server_Index", "HGX", "1", "1.000001"),
        ],
    );
}

#[test]
fn row_by_row_the_validator_says_when_the_file_turns_bad() {
    let world = World::new();
    let rows = |text: &str| {
        workbook::read(FileKind::Csv, text.as_bytes())
            .expect("readable csv")
            .rows
    };
    // Clean until a bad cell; a weight sum is judged only at the end.
    let file = rows(&format!(
        "{HEAD}20261120,GPU_Index,B200,0.5,1\n\
             20261120,Server_Index,HGX,1,1\n\
             20261120,Server_Index,HGX,1,x\n\
             20261120,Server_Index,DGX,1,1\n"
    ));
    let mut validator = Validator::new(world.reference());
    let mut clean = Vec::new();
    for row in &file {
        let quote = validator.row(row);
        clean.push((quote.is_some(), validator.is_clean()));
    }
    assert_eq!(
        clean,
        vec![
            (false, true),
            (true, true),
            (true, true),
            (false, false),
            (true, false)
        ]
    );
    assert_eq!(validator.rows(), 4);
    let places: Vec<(u32, String)> = validator
        .finish()
        .expect_err("refused")
        .errors
        .into_iter()
        .map(|e| (e.row, e.column))
        .collect();
    // Every problem at once: row 4 duplicates row 3 and its price is bad; left out of
    // the sum, Server_Index's rows 3 and 5 still sum to 2.
    let at = |row: u32, column: &str| (row, column.to_owned());
    assert_eq!(
        places,
        vec![
            at(2, "weight"),
            at(3, "weight"),
            at(4, "specification"),
            at(4, "price"),
            at(5, "weight")
        ]
    );

    // A value under a nameless column makes the file bad at that row.
    let file = rows(&format!("{HEAD}20261120,GPU_Index,B200,1,1,note\n"));
    let mut validator = Validator::new(world.reference());
    validator.row(&file[0]);
    assert!(validator.is_clean());
    validator.row(&file[1]);
    assert!(!validator.is_clean());
}

#[test]
fn an_empty_file_is_one_error() {
    let world = World::new();
    let expected = vec![err(
        1,
        "",
        "the file is empty: expected a header row trade_date, index_code, specification, \
             weight, price and at least one quote",
    )];
    assert_eq!(world.errors(""), expected);
    assert_eq!(world.errors("\u{FEFF}\n,,,\n"), expected);
    assert_eq!(
        validate(&Sheet::default(), world.reference()).expect_err("empty"),
        expected
    );
}

#[test]
fn a_header_without_quotes_is_one_error() {
    let world = World::new();
    assert_eq!(
        world.errors(HEAD),
        vec![err(2, "", "no quotes below the header")]
    );
    // The header on sheet row 3: the first quote row would be row 4.
    assert_eq!(
        world.errors(&format!("\n\n{HEAD}")),
        vec![err(4, "", "no quotes below the header")]
    );
}

#[test]
fn every_bad_cell_of_every_row_is_reported_in_order() {
    let world = World::new();
    let errors = world.errors(
        "price,weight,specification,index_code,trade_date\n\
             1,0.5,ok,GPU_Index,20261120\n\
             -1,2,,Hardware_Index,20261121\n\
             1,0.5,ok2,GPU_Index,20261120\n\
             1,,x,Nope,\n",
    );
    let places: Vec<(u32, &str)> = errors.iter().map(|e| (e.row, e.column.as_str())).collect();
    assert_eq!(
        places,
        vec![
            (3, "trade_date"),
            (3, "index_code"),
            (3, "specification"),
            (3, "weight"),
            (3, "price"),
            (5, "trade_date"),
            (5, "index_code"),
            (5, "weight"),
        ]
    );
    // The GPU_Index group of rows 2 and 4 sums to 1: no sum error.
}

#[test]
fn a_hundred_thousand_rows() {
    let world = World::new();
    let days: Vec<NaiveDate> = world.reference.open_days.iter().copied().collect();
    let mut rows = Vec::with_capacity(100_000);
    for i in 0..100_000usize {
        rows.push(SheetRow {
            number: u32::try_from(i + 2).expect("small"),
            cells: vec![
                Cell::Text(days[i % 4].format("%Y%m%d").to_string()),
                Cell::Text("GPU_Index".into()),
                Cell::Text(format!("spec {}", i / 4)),
                Cell::Number("0.00004".into()),
                Cell::Number("250000.123456".into()),
            ],
        });
    }
    rows.insert(
        0,
        SheetRow {
            number: 1,
            cells: COLUMNS.iter().map(|c| Cell::Text(c.to_string())).collect(),
        },
    );
    let sheet = Sheet { rows };
    // Its speed is measured by `cargo bench --bench import`, not here.
    let quotes = validate(&sheet, world.reference()).expect("valid");
    assert_eq!(quotes.len(), 100_000);
    assert_eq!(quotes[99_999].specification, "spec 24999");
}
