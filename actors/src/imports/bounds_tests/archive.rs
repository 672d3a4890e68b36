//! The `.xlsx` archive: a part past its cap, too many parts to scan, a part that lies
//! about its size, shared-string counts and styles calamine would multiply.

use std::io::{Cursor, Read, Write};

use crate::imports::bounds::ImportLimits;
use crate::imports::workbook::tests::{copy_parts, rewrite_parts, with_part, with_sheet_xml};
use crate::imports::workbook::{read, read_with, FileKind};

use super::{refused, refused_xlsx, sample_xlsx};

#[test]
fn an_archive_part_past_the_cap_is_refused_by_name() {
    let limits = ImportLimits {
        max_entry_bytes: 4096,
        ..ImportLimits::default()
    };
    // theme1.xml inflates to about 7 KB: never read for the quotes, refused all the same.
    let message = refused(FileKind::Xlsx, &sample_xlsx(), &limits);
    assert!(
        message.contains("'xl/theme/theme1.xml' inflates to"),
        "{message}"
    );
    assert!(
        message.contains("more than the 4096 bytes an import accepts"),
        "{message}"
    );
    let message = refused(
        FileKind::Xlsx,
        &sample_xlsx(),
        &ImportLimits {
            max_entry_bytes: 1024,
            ..limits
        },
    );
    assert!(message.contains("1024 bytes"), "{message}");
    // In MiB when it is a whole number of them.
    let mib = ImportLimits {
        max_entry_bytes: 1024 * 1024,
        ..limits
    };
    let big = with_sheet_xml(&sample_xlsx(), |xml| {
        xml.replace(
            "</worksheet>",
            &format!("<!--{}--></worksheet>", " ".repeat(1 << 21)),
        )
    });
    let message = refused(FileKind::Xlsx, &big, &mib);
    assert!(message.contains("'xl/worksheets/sheet1.xml'"), "{message}");
    assert!(
        message.contains("more than the 1 MiB an import accepts"),
        "{message}"
    );
}

#[test]
fn many_parts_to_scan_are_refused_before_they_are_scanned() {
    // Each copy is within the cap, but calamine reads one: scanning them all is bounded.
    let strings = "<si><t>x</t></si>".repeat(100);
    let copy = format!("<sst uniqueCount=\"100\">{strings}</sst>");
    let options = zip::write::SimpleFileOptions::default();
    let mut out = copy_parts(&sample_xlsx(), options, |_, content| content);
    for i in 0..20 {
        out.start_file(
            format!("copy{i}/SharedStrings.xml"),
            zip::write::SimpleFileOptions::default(),
        )
        .expect("start");
        out.write_all(copy.as_bytes()).expect("write");
    }
    let bytes = out.finish().expect("finish").into_inner();
    let limits = ImportLimits {
        max_entry_bytes: 8 * 1024,
        ..ImportLimits::default()
    };
    let message = refused(FileKind::Xlsx, &bytes, &limits);
    assert!(
        message.contains("more shared-string and style parts"),
        "{message}"
    );
    read_with(FileKind::Xlsx, &bytes, &ImportLimits::default()).expect("within twice the cap");
}

/// `bytes` with the sizes of `part` in its local header and the central directory
/// replaced by `declared`: a part that lies about what it inflates to.
fn declaring(bytes: &[u8], part: &str, declared: u32) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let le16 = |b: &[u8], at: usize| usize::from(u16::from_le_bytes([b[at], b[at + 1]]));
    let mut patched = 0;
    let mut i = 0;
    while i + 46 <= out.len() {
        // (signature, offset of the uncompressed size, of the name length, of the name)
        let layout = match &out[i..i + 4] {
            b"PK\x03\x04" => Some((22, 26, 30)),
            b"PK\x01\x02" => Some((24, 28, 46)),
            _ => None,
        };
        if let Some((size_at, name_len_at, name_at)) = layout {
            let name_len = le16(&out, i + name_len_at);
            if out.get(i + name_at..i + name_at + name_len) == Some(part.as_bytes()) {
                out[i + size_at..i + size_at + 4].copy_from_slice(&declared.to_le_bytes());
                patched += 1;
            }
        }
        i += 1;
    }
    assert_eq!(patched, 2, "local header and central directory of {part}");
    out
}

#[test]
fn the_zip_crate_stops_a_part_at_its_declared_size() {
    // What the import relies on: a part that inflates past its declaration fails as
    // soon as it does, so the declared size, which the cap judges, bounds the output.
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    writer
        .start_file("bomb.xml", zip::write::SimpleFileOptions::default())
        .expect("start");
    let block = vec![b'a'; 1 << 20];
    for _ in 0..16 {
        writer.write_all(&block).expect("write");
    }
    let bomb = writer.finish().expect("finish").into_inner();
    assert!(
        bomb.len() < 100_000,
        "16 MiB of one letter deflates to little"
    );
    let lying = declaring(&bomb, "bomb.xml", 1000);
    let mut archive = zip::ZipArchive::new(Cursor::new(&lying[..])).expect("a zip");
    {
        let mut entry = archive.by_name("bomb.xml").expect("entry");
        assert_eq!(entry.size(), 1000);
        let mut out = Vec::new();
        let error = entry
            .read_to_end(&mut out)
            .expect_err("past its declared size");
        assert!(out.len() <= 1001, "read {} bytes", out.len());
        assert!(
            error
                .to_string()
                .contains("larger than its declared uncompressed size"),
            "{error}"
        );
    }
    // Read in pieces, as calamine's XML reader does, the same.
    let mut entry = archive.by_name("bomb.xml").expect("entry");
    let mut total = 0usize;
    let mut buffer = vec![0u8; 8192];
    let failed = loop {
        match entry.read(&mut buffer) {
            Ok(0) => break false,
            Ok(n) => total += n,
            Err(_) => break true,
        }
    };
    assert!(failed && total <= 1000 + buffer.len(), "read {total} bytes");
}

#[test]
fn a_part_that_lies_about_its_size_is_a_damaged_workbook() {
    let bytes = sample_xlsx();
    // The sheet declares 200 bytes and inflates to about 1,200.
    let message = refused_xlsx(&declaring(&bytes, "xl/worksheets/sheet1.xml", 200));
    assert!(message.contains("declared uncompressed size"), "{message}");
    // The shared strings, which the pre-scan reads first.
    let message = refused_xlsx(&declaring(&bytes, "xl/sharedStrings.xml", 100));
    assert!(message.contains("part 'xl/sharedStrings.xml'"), "{message}");
    assert!(message.contains("declared uncompressed size"), "{message}");
}

#[test]
fn a_shared_string_count_calamine_would_reserve_terabytes_for_is_refused() {
    // calamine reserves `uniqueCount` strings (24 bytes each) before reading one: this
    // 2 KB file asked for 2.4 TB, and the failed allocation aborted the process.
    let bytes = with_part(&sample_xlsx(), "xl/sharedStrings.xml", |xml| {
        xml.replace("uniqueCount=\"13\"", "uniqueCount=\"99999999999\"")
    });
    let message = refused_xlsx(&bytes);
    assert!(message.contains("holds 99999999999 texts"), "{message}");
    assert!(
        message.contains("more than the 10000000 cells"),
        "{message}"
    );
    // The strings themselves are counted too, whatever the count says.
    let limits = ImportLimits {
        max_cells: 12,
        ..ImportLimits::default()
    };
    let bytes = with_part(&sample_xlsx(), "xl/sharedStrings.xml", |xml| {
        xml.replace("uniqueCount=\"13\"", "uniqueCount=\"1\"")
    });
    let message = refused(FileKind::Xlsx, &bytes, &limits);
    assert!(message.contains("holds 13 texts"), "{message}");
}

/// The sample workbook with its font named `name` and `formats` (cell formats using that
/// font) added to its one.
fn with_styles(name: &str, formats: &str) -> Vec<u8> {
    with_part(&sample_xlsx(), "xl/styles.xml", |xml| {
        xml.replace(
            "<name val=\"Calibri\"/>",
            &format!("<name val=\"{name}\"/>"),
        )
        .replace(
            "<cellXfs count=\"1\">",
            &format!("<cellXfs count=\"1\">{formats}"),
        )
    })
}

#[test]
fn styles_calamine_would_multiply_are_refused() {
    // calamine copies a font's name into every cell format that uses it: a 10 KB name
    // and 10,000 formats would be 100 MB, and it grows with the square of the part.
    let name = "F".repeat(10_000);
    let formats = "<xf fontId=\"0\"/>".repeat(10_000);
    let message = refused_xlsx(&with_styles(&name, &formats));
    assert!(
        message.contains("styles (part 'xl/styles.xml')"),
        "{message}"
    );
    // The long name alone, or many formats alone, are fine.
    for (name, formats) in [(name.as_str(), ""), ("Calibri", formats.as_str())] {
        read(FileKind::Xlsx, &with_styles(name, formats)).expect("readable");
    }
}

/// `bytes` rewritten with every part stored, not deflated, so that a byte of a part's
/// text can be changed in place (and its CRC no longer matches).
fn stored(bytes: &[u8]) -> Vec<u8> {
    rewrite_parts(bytes, zip::CompressionMethod::Stored, |_, content| content)
}

#[test]
fn a_part_whose_crc_does_not_match_is_refused_whichever_part_it_is() {
    let good = stored(&sample_xlsx());
    assert_eq!(read(FileKind::Xlsx, &good).expect("readable").rows.len(), 3);
    // A price in the shared strings, a cell reference in the sheet, a sheet name in
    // the workbook part: each read by calamine, none checked by it.
    for (was, now) in [
        (&b"250000.123456"[..], &b"950000.123456"[..]),
        (b"r=\"A2\"", b"r=\"A3\""),
        (b"name=\"Sheet1\"", b"name=\"Sheet2\""),
    ] {
        let at = good
            .windows(was.len())
            .position(|w| w == was)
            .unwrap_or_else(|| panic!("{}", String::from_utf8_lossy(was)));
        let mut damaged = good.clone();
        damaged[at..at + now.len()].copy_from_slice(now);
        let message = refused_xlsx(&damaged);
        assert!(
            message.contains("Invalid checksum") && message.contains("part '"),
            "{}: {message}",
            String::from_utf8_lossy(was)
        );
    }
}

#[test]
fn shared_strings_that_would_take_more_than_twice_the_part_cap_are_refused() {
    // A million empty strings: 13 MB of XML, within a 16 MiB part cap, but 64 MB to hold.
    let strings = "<si><t/></si>".repeat(1_000_000);
    let bytes = with_part(&sample_xlsx(), "xl/sharedStrings.xml", |_| {
        format!("<sst>{strings}</sst>")
    });
    let limits = ImportLimits {
        max_entry_bytes: 16 * 1024 * 1024,
        ..ImportLimits::default()
    };
    let message = refused(FileKind::Xlsx, &bytes, &limits);
    assert!(
        message.contains("would take 73.4 MiB of memory to read, more than the 32 MiB"),
        "{message}"
    );
    // Twice the cap is room enough.
    let roomy = ImportLimits {
        max_entry_bytes: 64 * 1024 * 1024,
        ..limits
    };
    read_with(FileKind::Xlsx, &bytes, &roomy).expect("within the budget");
}
