//! The rules through both file formats: CSV with a byte-order mark, quotes and Unicode;
//! `.xlsx` round trips, typed cells, formulas, error values, float noise; garbage.

use super::*;

#[test]
fn csv_with_bom_quotes_and_unicode() {
    let world = World::new();
    let csv = "\u{FEFF}trade_date,index_code,specification,weight,price\r\n\
                   20261120,GPU_Index,\"Ä 8x B200 SXM 180GB, \"\"liquid\"\"\",0.25,\"250000.1\"\r\n\
                   20261120,GPU_Index,\" 中文 H20 \",0.75,1\r\n";
    accepted(
        world.csv(csv),
        &[
            quote(
                "2026-11-20",
                "GPU_Index",
                "Ä 8x B200 SXM 180GB, \"liquid\"",
                "0.25",
                "250000.1",
            ),
            quote("2026-11-20", "GPU_Index", " 中文 H20 ", "0.75", "1"),
        ],
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
    assert_eq!(world.file(FileKind::Xlsx, &bytes).expect("valid"), rows);

    let bytes = write::to_csv(&rows);
    assert_eq!(world.file(FileKind::Csv, &bytes).expect("valid"), rows);
}

/// A workbook typed by hand: number cells, date cells, formulas.
fn typed_workbook(last_weight: impl FnOnce(&mut rust_xlsxwriter::Worksheet)) -> Vec<u8> {
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet();
    sheet.set_formula_result_default("");
    let (date, date_format) = write::typed_rows(sheet, &[(0.1, 250000.1), (0.2, 0.000001)]);
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
    let quotes = accepted(
        world.file(FileKind::Xlsx, &bytes),
        &[
            quote("2026-11-20", "GPU_Index", "spec 1", "0.1", "250000.1"),
            quote("2026-11-20", "GPU_Index", "spec 2", "0.2", "0.000001"),
            quote("2026-11-20", "GPU_Index", "4090", "0.7", "1"),
        ],
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
    let quotes = world.file(FileKind::Xlsx, &bytes).expect("valid");
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
    let errors = world.file(FileKind::Xlsx, &bytes).expect_err("refused");
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
    assert_eq!(
        world.file(FileKind::Xlsx, &bytes).expect_err("refused"),
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
