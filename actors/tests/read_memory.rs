//! The memory of one read, measured: whatever workbook a property generates (shared
//! strings long and short, referenced by many cells, inline strings, styles, declared
//! dimensions), the peak of what the read allocates stays within
//! [`ImportLimits::read_budget`], the budget docs/operations.md states.
//!
//! The allocator of this test binary counts, per thread, the bytes allocated and not
//! yet freed, and the peak of that since the last reset: a read runs on the calling
//! thread, so its peak is what it held at its worst, other tests running beside it
//! not counted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::{Cursor, Write};

use iq_actors::imports::bounds::column_letter;
use iq_actors::imports::workbook::{read_rows, FileKind};
use iq_actors::imports::ImportLimits;
use proptest::prelude::*;

struct Counting;

thread_local! {
    static HELD: Cell<i64> = const { Cell::new(0) };
    static PEAK: Cell<i64> = const { Cell::new(0) };
}

fn count(delta: i64) {
    // `try_with`: a thread being torn down still frees memory.
    let _ = HELD.try_with(|held| {
        let now = held.get() + delta;
        held.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call is passed to the system allocator as it came; only the counting
// is added, and it allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            count(layout.size() as i64);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as i64));
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            count(layout.size() as i64);
        }
        ptr
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            count(new_size as i64 - layout.size() as i64);
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The peak this thread held while `work` ran, above what it held before.
fn peak_of(work: impl FnOnce()) -> u64 {
    let before = HELD.with(Cell::get);
    PEAK.with(|peak| peak.set(before));
    work();
    let peak = PEAK.with(Cell::get);
    u64::try_from(peak - before).unwrap_or(0)
}

/// A test-size budget: 8 MiB parts, so a few megabytes of text referenced by a few
/// dozen cells would break it if each reference were copied.
const LIMITS: ImportLimits = ImportLimits {
    max_cells: 200_000,
    max_entry_bytes: 8 * 1024 * 1024,
};

/// The parts of a workbook whose first sheet is `sheet`, with `strings` as its shared
/// strings and `styles` as its styles part.
fn workbook(sheet: &str, strings: &str, styles: &str) -> Vec<u8> {
    const NS: &str = "http://schemas.openxmlformats.org";
    let parts = [
        (
            "[Content_Types].xml",
            format!(
                r#"<Types xmlns="{NS}/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#
            ),
        ),
        (
            "_rels/.rels",
            format!(
                r#"<Relationships xmlns="{NS}/package/2006/relationships"><Relationship Id="rId1" Type="{NS}/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#
            ),
        ),
        (
            "xl/workbook.xml",
            format!(
                r#"<workbook xmlns="{NS}/spreadsheetml/2006/main" xmlns:r="{NS}/officeDocument/2006/relationships"><sheets><sheet name="Quotes" sheetId="1" r:id="rId1"/></sheets></workbook>"#
            ),
        ),
        (
            "xl/_rels/workbook.xml.rels",
            format!(
                r#"<Relationships xmlns="{NS}/package/2006/relationships"><Relationship Id="rId1" Type="{NS}/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="{NS}/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/><Relationship Id="rId3" Type="{NS}/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>"#
            ),
        ),
        ("xl/worksheets/sheet1.xml", sheet.to_owned()),
        ("xl/sharedStrings.xml", strings.to_owned()),
        ("xl/styles.xml", styles.to_owned()),
    ];
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, text) in parts {
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        zip.start_file(name, options).expect("a part");
        zip.write_all(text.as_bytes()).expect("written");
    }
    zip.finish().expect("an archive").into_inner()
}

/// What a generated workbook is made of.
#[derive(Debug, Clone)]
struct Shape {
    /// Each shared string's length, in bytes of one repeated letter.
    strings: Vec<usize>,
    /// Rows of cells: each a shared-string reference (an index into `strings`), an
    /// inline string of the given length, or a number.
    rows: Vec<Vec<Content>>,
    /// Cell formats, and the length of the font name each clones.
    formats: usize,
    font_name: usize,
    /// The declared dimension's last row.
    declared_rows: u32,
}

#[derive(Debug, Clone)]
enum Content {
    Shared(usize),
    Inline(usize),
    Number(u32),
}

fn shape() -> impl Strategy<Value = Shape> {
    // Long strings up to 3 MiB (two fit the shared-strings part), short ones many.
    let length = prop_oneof![
        3 => 0usize..600,
        1 => 400_000usize..3_000_000,
    ];
    let strings = prop::collection::vec(length, 1..4);
    (
        strings,
        1usize..4,
        0usize..2_000,
        0usize..200,
        1u32..2_000_000,
    )
        .prop_flat_map(|(strings, rows, formats, font_name, declared_rows)| {
            let count = strings.len();
            let content = prop_oneof![
                6 => (0..count).prop_map(Content::Shared),
                1 => (0usize..700_000).prop_map(Content::Inline),
                1 => any::<u32>().prop_map(Content::Number),
            ];
            let row = prop::collection::vec(content, 1..400);
            (
                Just(strings),
                prop::collection::vec(row, rows..=rows),
                Just(formats),
                Just(font_name),
                Just(declared_rows),
            )
                .prop_map(|(strings, rows, formats, font_name, declared_rows)| Shape {
                    strings,
                    rows,
                    formats,
                    font_name,
                    declared_rows,
                })
        })
}

impl Shape {
    fn bytes(&self) -> Vec<u8> {
        const MAIN: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
        let strings: String = self
            .strings
            .iter()
            .enumerate()
            .map(|(i, len)| {
                let letter = char::from(b'a' + (i % 26) as u8);
                format!("<si><t>{}</t></si>", letter.to_string().repeat(*len))
            })
            .collect();
        let strings = format!(
            r#"<sst xmlns="{MAIN}" uniqueCount="{}">{strings}</sst>"#,
            self.strings.len()
        );
        let mut sheet = format!(
            r#"<worksheet xmlns="{MAIN}"><dimension ref="A1:C{}"/><sheetData>"#,
            self.declared_rows
        );
        for (r, row) in self.rows.iter().enumerate() {
            sheet.push_str(&format!(r#"<row r="{}">"#, r + 1));
            for (c, content) in row.iter().enumerate() {
                let at = format!("{}{}", column_letter(c as u64), r + 1);
                sheet.push_str(&match content {
                    Content::Shared(i) => format!(r#"<c r="{at}" t="s"><v>{i}</v></c>"#),
                    Content::Inline(len) => format!(
                        r#"<c r="{at}" t="inlineStr"><is><t>{}</t></is></c>"#,
                        "i".repeat(*len)
                    ),
                    Content::Number(n) => format!(r#"<c r="{at}"><v>{n}</v></c>"#),
                });
            }
            sheet.push_str("</row>");
        }
        sheet.push_str("</sheetData></worksheet>");
        let font = "f".repeat(self.font_name);
        let styles = format!(
            r#"<styleSheet xmlns="{MAIN}"><fonts count="1"><font><name val="{font}"/></font></fonts><cellXfs count="{n}">{xfs}</cellXfs></styleSheet>"#,
            n = self.formats,
            xfs = r#"<xf numFmtId="0" fontId="0"/>"#.repeat(self.formats)
        );
        workbook(&sheet, &strings, &styles)
    }
}

/// Reads `bytes` as an import does, keeping nothing of the rows, and gives the peak.
fn read_peak(bytes: &[u8]) -> (u64, Result<(), String>) {
    let mut result = Ok(());
    let peak = peak_of(|| {
        result = read_rows(FileKind::Xlsx, bytes, &LIMITS, &mut |row| {
            drop(row);
            true
        })
        .map_err(|e| e.message);
    });
    (peak, result)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_read_never_takes_more_than_its_budget(shape in shape()) {
        let bytes = shape.bytes();
        let (peak, result) = read_peak(&bytes);
        prop_assert!(
            peak <= LIMITS.read_budget(),
            "peak {peak} bytes over the budget {} ({result:?})",
            LIMITS.read_budget()
        );
    }
}

/// The file the hostile probe sent, at test size: one 3 MiB shared string referenced by
/// every cell of a 2,000-cell row took 6 GB when each reference was a copy.
#[test]
fn the_shared_string_bomb_stays_within_the_budget() {
    let shape = Shape {
        strings: vec![3 * 1024 * 1024],
        rows: vec![vec![Content::Shared(0); 2_000]],
        formats: 1,
        font_name: 8,
        declared_rows: 1,
    };
    let bytes = shape.bytes();
    assert!(bytes.len() < 200_000, "{} bytes", bytes.len());
    let (peak, result) = read_peak(&bytes);
    result.expect("read, its cells judged");
    eprintln!(
        "peak {} KiB, budget {} KiB",
        peak / 1024,
        LIMITS.read_budget() / 1024
    );
    assert!(peak <= LIMITS.read_budget(), "peak {peak} bytes");
    // Well within it, in fact: the string once, its XML buffered, a row of reasons.
    assert!(peak < 32 * 1024 * 1024, "peak {peak} bytes");
}
