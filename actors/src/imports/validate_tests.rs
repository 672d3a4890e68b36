//! Tests of the D8 rules ([`super`]): every rule and its reason.

use super::super::workbook::{self, FileKind};
use super::super::write;
use super::*;
use std::str::FromStr;

fn day(s: &str) -> NaiveDate {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").expect("test date")
}

fn dec(s: &str) -> Decimal {
    Decimal::from_str(s).expect("test decimal")
}

struct World {
    reference: Reference,
}

impl World {
    fn new() -> Self {
        World {
            reference: Reference {
                quote_indexes: ["GPU_Index", "Server_Index"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
                // 2026-11-21/22 are a weekend.
                open_days: ["2026-11-10", "2026-11-19", "2026-11-20", "2026-11-23"]
                    .iter()
                    .map(|s| day(s))
                    .collect(),
                calculated_indexes: ["Hardware_Index".to_owned()].into_iter().collect(),
            },
        }
    }

    fn reference(&self) -> &Reference {
        &self.reference
    }

    fn csv(&self, text: &str) -> Result<Vec<QuoteRow>, Vec<RowError>> {
        let sheet = workbook::read(FileKind::Csv, text.as_bytes()).expect("readable csv");
        validate(&sheet, self.reference())
    }

    fn errors(&self, text: &str) -> Vec<RowError> {
        self.csv(text).expect_err("should be refused")
    }

    /// (row, column) of each error.
    fn places(&self, text: &str) -> Vec<(u32, String)> {
        self.errors(text)
            .into_iter()
            .map(|e| (e.row, e.column))
            .collect()
    }

    /// The one error of a one-data-row file whose other cells are fine.
    fn reason(&self, text: &str) -> String {
        let errors = self.errors(text);
        assert_eq!(errors.len(), 1, "{errors:?}");
        errors[0].reason.clone()
    }
}

fn quote(date: &str, index: &str, spec: &str, weight: &str, price: &str) -> QuoteRow {
    QuoteRow {
        trade_date: day(date),
        index_code: index.to_owned(),
        specification: spec.to_owned(),
        weight: dec(weight),
        price: dec(price),
    }
}

fn err(row: u32, column: &str, reason: &str) -> RowError {
    RowError {
        row,
        column: column.to_owned(),
        reason: reason.to_owned(),
    }
}

const HEAD: &str = "trade_date,index_code,specification,weight,price\n";

/// A one-row file with one cell replaced.
fn one_row(column: usize, value: &str) -> String {
    let mut cells = ["20261120", "GPU_Index", "B200", "1", "250000"];
    cells[column] = value;
    format!("{HEAD}{}\n", cells.join(","))
}

fn at(row: u32, column: &str) -> (u32, String) {
    (row, column.to_owned())
}

#[test]
fn a_valid_file_gives_every_quote_in_file_order() {
    let world = World::new();
    let quotes = world
        .csv(&format!(
            "{HEAD}20261120,GPU_Index,B200,0.6,250000.5\n\
                 2026-11-20,GPU_Index,H100,0.4,180000\n\
                 20261120,Server_Index,HGX,1,1.000001\n"
        ))
        .expect("valid");
    assert_eq!(
        quotes,
        vec![
            quote("2026-11-20", "GPU_Index", "B200", "0.6", "250000.5"),
            quote("2026-11-20", "GPU_Index", "H100", "0.4", "180000"),
            quote("2026-11-20", "Server_Index", "HGX", "1", "1.000001"),
        ]
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
    assert_eq!(
        places,
        vec![(2, "weight".to_owned()), (4, "price".to_owned())]
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
fn columns_in_any_order_and_any_header_case() {
    let world = World::new();
    let quotes = world
        .csv(
            " PRICE ,Weight,Specification,\tIndex_Code,Trade_Date\n\
                 250000,0.5,B200,GPU_Index,20261120\n\
                 180000,0.5,H100,GPU_Index,20261120\n",
        )
        .expect("valid");
    assert_eq!(
        quotes,
        vec![
            quote("2026-11-20", "GPU_Index", "B200", "0.5", "250000"),
            quote("2026-11-20", "GPU_Index", "H100", "0.5", "180000"),
        ]
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
                cells: vec![
                    Cell::Text("trade_date".into()),
                    Cell::Text("index_code".into()),
                    Cell::Text("specification".into()),
                    Cell::Text("weight".into()),
                    Cell::Text("price".into()),
                    Cell::Number("42".into()),
                ],
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
    for (value, reason) in cases {
        let errors = world.errors(&one_row(TRADE_DATE, value));
        assert_eq!(errors, vec![err(2, "trade_date", reason)], "{value}");
    }
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
    for (value, reason) in cases {
        assert_eq!(
            world.errors(&one_row(WEIGHT, value)),
            vec![err(2, "weight", reason)],
            "{value}"
        );
    }
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
    for (value, reason) in cases {
        assert_eq!(
            world.errors(&one_row(PRICE, value)),
            vec![err(2, "price", reason)],
            "{value}"
        );
    }
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
fn a_group_with_a_bad_row_skips_the_sum() {
    let world = World::new();
    // Rows 2-3 would sum to 0.3, but row 3's price is bad: only that is reported.
    // Rows 4-6: a duplicate, whose sum would be off by its weight.
    assert_eq!(
        world.places(&format!(
            "{HEAD}20261120,GPU_Index,a,0.1,1\n\
                 20261120,GPU_Index,b,0.2,zero\n\
                 20261123,GPU_Index,a,0.5,1\n\
                 20261123,GPU_Index,b,0.5,1\n\
                 20261123,GPU_Index,b,0.5,1\n"
        )),
        vec![at(3, "price"), at(6, "specification")]
    );
}

#[test]
fn csv_with_bom_quotes_and_unicode() {
    let world = World::new();
    let csv = "\u{FEFF}trade_date,index_code,specification,weight,price\r\n\
                   20261120,GPU_Index,\"Ä 8x B200 SXM 180GB, \"\"liquid\"\"\",0.25,\"250000.1\"\r\n\
                   20261120,GPU_Index,\" 中文 H20 \",0.75,1\r\n";
    let quotes = world.csv(csv).expect("valid");
    assert_eq!(
        quotes,
        vec![
            quote(
                "2026-11-20",
                "GPU_Index",
                "Ä 8x B200 SXM 180GB, \"liquid\"",
                "0.25",
                "250000.1"
            ),
            quote("2026-11-20", "GPU_Index", " 中文 H20 ", "0.75", "1"),
        ]
    );
}

#[test]
fn xlsx_round_trip() {
    let world = World::new();
    let rows = vec![
        quote(
            "2026-11-20",
            "GPU_Index",
            "Ä 8x B200 SXM 180GB",
            "0.33333333",
            "250000.123456",
        ),
        quote(
            "2026-11-20",
            "GPU_Index",
            " H100 ",
            "0.33333333",
            "0.000001",
        ),
        quote(
            "2026-11-20",
            "GPU_Index",
            "h100",
            "0.33333334",
            "999999999999999999.999999",
        ),
        quote("2026-11-23", "Server_Index", "HGX, 8 GPUs", "1", "1"),
    ];
    let bytes = write::to_xlsx(&rows).expect("xlsx");
    let sheet = workbook::read(FileKind::Xlsx, &bytes).expect("readable");
    assert_eq!(validate(&sheet, world.reference()).expect("valid"), rows);

    let bytes = write::to_csv(&rows);
    let sheet = workbook::read(FileKind::Csv, &bytes).expect("readable");
    assert_eq!(validate(&sheet, world.reference()).expect("valid"), rows);
}

/// A workbook typed by hand: number cells, date cells, formulas.
fn typed_workbook(last_weight: impl FnOnce(&mut rust_xlsxwriter::Worksheet)) -> Vec<u8> {
    use rust_xlsxwriter::{ExcelDateTime, Format, Workbook};
    let mut book = Workbook::new();
    let sheet = book.add_worksheet();
    sheet.set_formula_result_default("");
    let date_format = Format::new().set_num_format("yyyy-mm-dd");
    for (col, name) in (0u16..).zip(COLUMNS) {
        sheet.write_string(0, col, name).expect("header");
    }
    let date = ExcelDateTime::from_ymd(2026, 11, 20).expect("date");
    for (row, (weight, price)) in (1u32..).zip([(0.1, 250000.1), (0.2, 0.000001)]) {
        sheet
            .write_datetime_with_format(row, 0, &date, &date_format)
            .expect("date");
        sheet.write_string(row, 1, "GPU_Index").expect("index");
        sheet
            .write_string(row, 2, format!("spec {row}"))
            .expect("spec");
        sheet.write_number(row, 3, weight).expect("weight");
        sheet.write_number(row, 4, price).expect("price");
    }
    sheet
        .write_datetime_with_format(3, 0, &date, &date_format)
        .expect("date");
    sheet.write_string(3, 1, "GPU_Index").expect("index");
    sheet.write_number(3, 2, 4090).expect("spec");
    sheet.write_number(3, 4, 1).expect("price");
    last_weight(sheet);
    book.save_to_buffer().expect("save")
}

#[test]
fn xlsx_number_date_and_calculated_formula_cells() {
    let world = World::new();
    let bytes = typed_workbook(|sheet| {
        sheet.write_number(3, 3, 0.7).expect("weight");
    });
    let sheet = workbook::read(FileKind::Xlsx, &bytes).expect("readable");
    let quotes = validate(&sheet, world.reference()).expect("valid");
    assert_eq!(
        quotes,
        vec![
            quote("2026-11-20", "GPU_Index", "spec 1", "0.1", "250000.1"),
            quote("2026-11-20", "GPU_Index", "spec 2", "0.2", "0.000001"),
            quote("2026-11-20", "GPU_Index", "4090", "0.7", "1"),
        ]
    );
    // Exactly 0.1 etc. (not the binary double nearest to it): the sum is exactly 1.
    assert_eq!(quotes[0].weight.to_string(), "0.1");
    assert_eq!(quotes[1].price.to_string(), "0.000001");

    let bytes = typed_workbook(|sheet| {
        sheet
            .write_formula(
                3,
                3,
                rust_xlsxwriter::Formula::new("=1-B2").set_result("0.7"),
            )
            .expect("formula");
    });
    let sheet = workbook::read(FileKind::Xlsx, &bytes).expect("readable");
    let quotes = validate(&sheet, world.reference()).expect("valid");
    assert_eq!(quotes[2].weight, dec("0.7"));
}

#[test]
fn xlsx_formula_without_result_and_error_values_are_reported() {
    let world = World::new();
    let bytes = typed_workbook(|sheet| {
        sheet.write_formula(3, 3, "=1-D2-D3").expect("formula");
        sheet
            .write_formula(
                3,
                4,
                rust_xlsxwriter::Formula::new("=1/0").set_result("#DIV/0!"),
            )
            .expect("formula");
    });
    let sheet = workbook::read(FileKind::Xlsx, &bytes).expect("readable");
    let errors = validate(&sheet, world.reference()).expect_err("refused");
    assert_eq!(
        errors,
        vec![
            err(
                4,
                "weight",
                "the cell holds a formula without a computed value (save the file from a \
                     spreadsheet application that calculates it); expected a weight (a \
                     decimal number)"
            ),
            err(
                4,
                "price",
                "the cell holds the error value #DIV/0!; expected a price (a decimal number)"
            ),
        ]
    );
}

#[test]
fn xlsx_computed_float_noise_is_refused_not_rounded() {
    let world = World::new();
    let bytes = typed_workbook(|sheet| {
        // What a spreadsheet stores for =0.1+0.2 shown as 0.3.
        sheet.write_number(3, 3, 0.1 + 0.2).expect("weight");
    });
    let sheet = workbook::read(FileKind::Xlsx, &bytes).expect("readable");
    assert_eq!(
        validate(&sheet, world.reference()).expect_err("refused"),
        vec![err(
            4,
            "weight",
            "the weight 0.30000000000000004 has 17 decimal places; at most 8 are allowed"
        )]
    );
}

#[test]
fn garbage_is_40001_not_a_row_error() {
    let error = workbook::read(FileKind::Xlsx, b"\x00\x01garbage").expect_err("garbage");
    assert_eq!(error.code.as_u32(), 40001);
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

#[test]
fn column_letters() {
    assert_eq!(column_letter(0), "A");
    assert_eq!(column_letter(25), "Z");
    assert_eq!(column_letter(26), "AA");
    assert_eq!(column_letter(51), "AZ");
    assert_eq!(column_letter(52), "BA");
    assert_eq!(column_letter(16_383), "XFD");
}
