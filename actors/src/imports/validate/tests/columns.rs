//! The identifying cells: trade date forms and errors, index codes, specifications kept
//! exactly.

use super::*;

#[test]
fn trade_date_forms() {
    let world = World::new();
    for form in ["20261120", "2026-11-20", " 20261120\t"] {
        let quotes = world.csv(&one_row(TRADE_DATE, form)).expect(form);
        assert_eq!(quotes[0].trade_date, day("2026-11-20"));
    }
    // A date cell, and a General number cell holding 20261120.
    for cell in [
        Cell::Date(day("2026-11-20")),
        Cell::Number("20261120".into()),
    ] {
        let mut sheet =
            workbook::read(FileKind::Csv, one_row(0, "x").as_bytes()).expect("readable");
        sheet.rows[1].cells[TRADE_DATE] = cell;
        let quotes = validate(&sheet, world.reference()).expect("valid");
        assert_eq!(quotes[0].trade_date, day("2026-11-20"));
    }
}

#[test]
fn trade_date_errors() {
    let world = World::new();
    let cases = [
        ("20261121", "2026-11-21 is not an open trading day"),
        ("2026-11-21", "2026-11-21 is not an open trading day"),
        // D26: after today, open or not, is refused as such.
        (
            "20261124",
            "date is after today: 2026-11-24 (today is 2026-11-23)",
        ),
        (
            "2027-01-04",
            "date is after today: 2027-01-04 (today is 2026-11-23)",
        ),
        ("20261131", "'20261131' is not a real calendar date"),
        ("2026-02-29", "'2026-02-29' is not a real calendar date"),
        (
            "20/11/2026",
            "'20/11/2026' is not a date in the form YYYYMMDD or YYYY-MM-DD",
        ),
        (
            "2026112",
            "'2026112' is not a date in the form YYYYMMDD or YYYY-MM-DD",
        ),
        (
            "2026-1-200",
            "'2026-1-200' is not a date in the form YYYYMMDD or YYYY-MM-DD",
        ),
        ("", "missing"),
        ("   ", "missing"),
    ];
    world.refuses_each(TRADE_DATE, &cases);
    let mut sheet = workbook::read(FileKind::Csv, one_row(0, "x").as_bytes()).expect("readable");
    sheet.rows[1].cells[TRADE_DATE] = Cell::Number("46346".into());
    assert_eq!(
        validate(&sheet, world.reference()).expect_err("serial"),
        vec![err(
            2,
            "trade_date",
            "46346 is a number, not a date: format the cell as a date or write the date \
                 as YYYYMMDD or YYYY-MM-DD"
        )]
    );
    sheet.rows[1].cells[TRADE_DATE] = Cell::Invalid("a date with a time of day".into());
    assert_eq!(
        validate(&sheet, world.reference()).expect_err("time"),
        vec![err(
            2,
            "trade_date",
            "the cell holds a date with a time of day; expected a date (YYYYMMDD or \
                 YYYY-MM-DD)"
        )]
    );
}

#[test]
fn index_code_rules() {
    let world = World::new();
    let quotes = world
        .csv(&one_row(INDEX_CODE, " GPU_Index "))
        .expect("trimmed");
    assert_eq!(quotes[0].index_code, "GPU_Index");
    assert_eq!(
        world.reason(&one_row(INDEX_CODE, "Hardware_Index")),
        "Hardware_Index is calculated from the base indexes and takes no quotes"
    );
    assert_eq!(
        world.reason(&one_row(INDEX_CODE, "CPU_Index")),
        "unknown index code 'CPU_Index'"
    );
    assert_eq!(
        world.reason(&one_row(INDEX_CODE, "gpu_index")),
        "unknown index code 'gpu_index' (did you mean 'GPU_Index'? index codes are \
             case-sensitive)"
    );
    assert_eq!(world.reason(&one_row(INDEX_CODE, "")), "missing");
}

#[test]
fn specification_is_kept_exactly() {
    let world = World::new();
    let csv = format!(
        "{HEAD}20261120,GPU_Index,\"  Ä 8x B200 SXM 180GB \",0.5,1\n\
             20261120,GPU_Index,ä 8x b200 sxm 180gb,0.5,1\n"
    );
    let quotes = world.csv(&csv).expect("valid");
    // Differing in case and spaces only: two distinct specifications.
    assert_eq!(quotes[0].specification, "  Ä 8x B200 SXM 180GB ");
    assert_eq!(quotes[1].specification, "ä 8x b200 sxm 180gb");
}

#[test]
fn specification_errors() {
    let world = World::new();
    assert_eq!(world.reason(&one_row(SPECIFICATION, "")), "missing");
    assert_eq!(
        world.reason(&one_row(SPECIFICATION, " \t ")),
        "the specification is blank (only spaces)"
    );
    // 200 characters of two bytes each are fine; 201 are not.
    let long = "Ä".repeat(200);
    let quotes = world
        .csv(&one_row(SPECIFICATION, &long))
        .expect("200 chars");
    assert_eq!(quotes[0].specification, long);
    assert_eq!(
        world.reason(&one_row(SPECIFICATION, &"Ä".repeat(201))),
        "the specification is 201 characters long; at most 200 are allowed"
    );
}

#[test]
fn a_numeric_specification_is_its_text() {
    let world = World::new();
    let mut sheet =
        workbook::read(FileKind::Csv, one_row(0, "20261120").as_bytes()).expect("readable");
    sheet.rows[1].cells[SPECIFICATION] = Cell::Number("4090".into());
    let quotes = validate(&sheet, world.reference()).expect("valid");
    assert_eq!(quotes[0].specification, "4090");
}
