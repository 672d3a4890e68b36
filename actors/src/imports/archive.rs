//! An `.xlsx` archive, checked before calamine opens it (D8: "a zip entry that inflates
//! past a configured cap is refused whole with 400 / 40001 before it is read").
//!
//! - Every part (zip entry) whose inflated size, as the central directory declares it,
//!   exceeds [`ImportLimits::max_entry_bytes`] is refused by name, whether calamine
//!   would read it or not: a 2 MB workbook may hold a 2 GiB shared string.
//! - A part that lies, declaring less than it inflates to, cannot get past its
//!   declaration: the zip crate (9.x) fails a read as soon as the output grows past the
//!   declared size ("File is larger than its declared uncompressed size"), for calamine
//!   as for this check, so the declared size bounds what is inflated, and the lie reads
//!   as a damaged workbook. The tests hold the zip crate to that.
//! - The parts calamine holds whole while it opens a workbook are scanned here first,
//!   streaming, with constant memory: the shared strings, whose declared `uniqueCount`
//!   calamine reserves room for before it reads one (a 1 KB file could otherwise ask
//!   for terabytes and abort the process), and whose strings it keeps (their number
//!   is bounded by [`ImportLimits::max_cells`]); and the styles, where calamine clones
//!   a font name and a number format into every cell format, so a few kilobytes of
//!   long names and many cell formats would multiply into gigabytes.
//!
//! Nothing here allocates by a number read from the file. A file that is not a zip
//! archive at all is left to calamine, which says why it is not a workbook.

use std::io::{Cursor, Read};

use zip::ZipArchive;

use super::bounds::{echo, library_error, ImportLimits};
use crate::ApiError;

/// The most elements the styles part may hold; calamine keeps a structure of up to a
/// few hundred bytes for each. Excel allows at most 64,000 cell formats of a few
/// elements each; a quote file has a few dozen elements.
const MAX_STYLE_ELEMENTS: u64 = 262_144;
/// Cell formats (`xf`) times the longest attribute value of the styles part: calamine
/// clones a font name and a number format, each an attribute value, into every cell
/// format, so what the clones take is at most twice this. Common workbooks stay far
/// below it (thousands of formats, values under a hundred bytes).
const MAX_STYLE_CLONED_BYTES: u64 = 64 * 1024 * 1024;
/// Bytes inflated at a time by the scans.
const CHUNK: usize = 64 * 1024;

/// Refuses, with 400 / 40001, a workbook archive that breaks a bound; `Ok` for one
/// that may be opened, or that is not an archive at all.
pub fn check(bytes: &[u8], limits: &ImportLimits) -> Result<(), ApiError> {
    let Ok(mut archive) = ZipArchive::new(Cursor::new(bytes)) else {
        return Ok(());
    };
    let mut scans = Vec::new();
    let mut to_scan: u64 = 0;
    for index in 0..archive.len() {
        let entry = archive.by_index_data(index).map_err(|e| damaged("", &e))?;
        let name = entry.name().map_err(|e| damaged("", &e))?.into_owned();
        if entry.size() > limits.max_entry_bytes {
            return Err(ApiError::invalid(format!(
                "the workbook's part '{}' inflates to {} bytes, more than the {} an import \
                 accepts; the file was not read",
                echo(&name),
                entry.size(),
                size_text(limits.max_entry_bytes)
            )));
        }
        // calamine looks parts up case-insensitively, `\` as `/`, under the folder the
        // package names: any part of these names may be the one it reads.
        let key = name.replace('\\', "/").to_ascii_lowercase();
        let part = match key.rsplit('/').next() {
            Some("sharedstrings.xml") => Part::SharedStrings,
            Some("styles.xml") => Part::Styles,
            _ => continue,
        };
        // A workbook has one of each; many would make this scan the slow part.
        to_scan = to_scan.saturating_add(entry.size());
        if to_scan > limits.max_entry_bytes.saturating_mul(2) {
            return Err(ApiError::invalid(format!(
                "the workbook holds more shared-string and style parts than a workbook has \
                 ('{}'); the file was not read",
                echo(&name)
            )));
        }
        scans.push((index, name, part));
    }
    for (index, name, part) in scans {
        let tally = {
            let entry = archive.by_index(index).map_err(|e| damaged(&name, &e))?;
            scan(entry, part).map_err(|e| damaged(&name, &e))?
        };
        part.judge(&name, &tally, limits)?;
    }
    Ok(())
}

/// A part calamine reads whole when it opens a workbook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    SharedStrings,
    Styles,
}

impl Part {
    fn judge(self, name: &str, tally: &Tally, limits: &ImportLimits) -> Result<(), ApiError> {
        if tally.doctype {
            return Err(ApiError::invalid(format!(
                "the workbook's part '{}' holds a document type declaration, which no \
                 spreadsheet application writes: save the file again as an Excel workbook \
                 (.xlsx)",
                echo(name)
            )));
        }
        match self {
            Part::SharedStrings => {
                let strings = tally.sought.max(tally.declared);
                if strings > limits.max_cells {
                    return Err(ApiError::invalid(format!(
                        "the workbook holds {strings} texts (part '{}'), more than the {} \
                         cells an import accepts; the file was not read",
                        echo(name),
                        limits.max_cells
                    )));
                }
            }
            Part::Styles => {
                let cloned = tally.sought.saturating_mul(tally.longest_value);
                if tally.elements > MAX_STYLE_ELEMENTS || cloned > MAX_STYLE_CLONED_BYTES {
                    return Err(ApiError::invalid(format!(
                        "the workbook's styles (part '{}') are larger than an import \
                         accepts: copy the quotes into a new workbook, or save them as CSV",
                        echo(name)
                    )));
                }
            }
        }
        Ok(())
    }
}

/// `bytes` as a person reads it: whole MiB where it is a whole number of them.
fn size_text(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes % MIB == 0 {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

fn damaged(part: &str, error: &dyn std::fmt::Display) -> ApiError {
    let part = if part.is_empty() {
        String::new()
    } else {
        format!(" (part '{}')", echo(part))
    };
    ApiError::invalid(format!(
        "the file is not a readable .xlsx workbook{part}: {}; save it again as an Excel \
         workbook (.xlsx)",
        library_error(error)
    ))
}

/// What one scan of an XML part found.
#[derive(Debug, Default, PartialEq, Eq)]
struct Tally {
    /// Start tags, whatever their name.
    elements: u64,
    /// Start tags named `si` in the shared strings (calamine keeps a string for each),
    /// `xf` in the styles (a cell format, into which it clones a font name and a
    /// number format).
    sought: u64,
    /// The largest all-digit `uniqueCount` of an `sst` start tag: calamine reserves
    /// room for that many strings.
    declared: u64,
    /// The longest attribute value, in bytes as written.
    longest_value: u64,
    /// A `<!DOCTYPE` (or another `<!` construct that is neither a comment nor CDATA).
    doctype: bool,
}

fn scan(mut entry: impl Read, part: Part) -> std::io::Result<Tally> {
    let mut scanner = Scanner::new(part);
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let read = entry.read(&mut chunk)?;
        let Some(bytes) = chunk.get(..read).filter(|b| !b.is_empty()) else {
            break;
        };
        scanner.feed(bytes);
    }
    Ok(scanner.tally)
}

/// A short name as written, for comparison: longer names match nothing sought.
#[derive(Debug, Default, Clone, Copy)]
struct Name {
    bytes: [u8; 16],
    len: usize,
    overflow: bool,
}

impl Name {
    fn push(&mut self, byte: u8) {
        match self.bytes.get_mut(self.len) {
            Some(slot) => {
                *slot = byte;
                self.len += 1;
            }
            None => self.overflow = true,
        }
    }

    /// Pushes a byte of an element name, of which only the part after the last `:`
    /// is kept (`x:si` is `si`; quick-xml's local name, after the first `:`, is that
    /// or never what is sought), so a prefix of any length cannot hide the name.
    fn push_local(&mut self, byte: u8) {
        if byte == b':' {
            *self = Name::default();
        } else {
            self.push(byte);
        }
    }

    fn is(&self, name: &[u8]) -> bool {
        !self.overflow && self.bytes.get(..self.len) == Some(name)
    }
}

/// Where the scanner is. The markup rules are quick-xml's, which calamine reads with,
/// so every start tag it sees is counted here (a malformed file may count a few more,
/// never fewer): in a tag a quote opens a value that `>` does not end, end tags
/// included; comments end at `-->`, CDATA at `]]>`, processing instructions at `?>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Text,
    /// Just after `<`.
    Open,
    /// The start tag's name.
    ElementName,
    /// In a start or end tag, outside quotes and names.
    Tag {
        end: bool,
    },
    /// An attribute name.
    AttributeName {
        end: bool,
    },
    /// In a quoted value.
    Value {
        end: bool,
        quote: u8,
    },
    /// After `<!`: how many bytes of `--` or `[CDATA[` matched.
    Bang {
        matched: usize,
        cdata: bool,
    },
    /// In a comment; the `-` seen just before.
    Comment {
        dashes: usize,
    },
    /// In CDATA; the `]` seen just before.
    CData {
        brackets: usize,
    },
    /// In a processing instruction; whether `?` came just before.
    Pi {
        question: bool,
    },
    /// After an unexpected `<!`: nothing more is counted (the part is refused).
    Stop,
}

struct Scanner {
    part: Part,
    state: State,
    element: Name,
    attribute: Name,
    value_len: u64,
    /// The digits of the value being read, while they are all digits.
    number: Option<u64>,
    tally: Tally,
}

impl Scanner {
    fn new(part: Part) -> Scanner {
        Scanner {
            part,
            state: State::Text,
            element: Name::default(),
            attribute: Name::default(),
            value_len: 0,
            number: None,
            tally: Tally::default(),
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        let mut i = 0;
        while let Some(&byte) = bytes.get(i) {
            i += 1;
            if self.state == State::Text {
                // Most bytes of a part are text or in tags; jump to the next tag.
                match bytes
                    .get(i - 1..)
                    .and_then(|rest| rest.iter().position(|&b| b == b'<'))
                {
                    Some(at) => {
                        i += at;
                        self.state = State::Open;
                    }
                    None => return,
                }
                continue;
            }
            self.step(byte);
        }
    }

    fn step(&mut self, byte: u8) {
        let space = byte.is_ascii_whitespace();
        self.state = match self.state {
            State::Text if byte == b'<' => State::Open,
            State::Text => State::Text,
            State::Open => match byte {
                b'/' => State::Tag { end: true },
                b'!' => State::Bang {
                    matched: 0,
                    cdata: false,
                },
                b'?' => State::Pi { question: false },
                _ => {
                    self.element = Name::default();
                    self.tally.elements += 1;
                    self.name_byte(byte)
                }
            },
            State::ElementName => self.name_byte(byte),
            State::Tag { end } => match byte {
                b'>' => State::Text,
                b'"' | b'\'' => self.open_value(end, byte),
                _ if space || byte == b'=' || byte == b'/' => State::Tag { end },
                // A name character after anything else starts the next attribute's name.
                _ => {
                    self.attribute = Name::default();
                    self.attribute.push(byte);
                    State::AttributeName { end }
                }
            },
            State::AttributeName { end } => match byte {
                b'>' => State::Text,
                b'"' | b'\'' => self.open_value(end, byte),
                _ if space || byte == b'=' || byte == b'/' => State::Tag { end },
                _ => {
                    self.attribute.push(byte);
                    State::AttributeName { end }
                }
            },
            State::Value { end, quote } if byte == quote => {
                self.close_value(end);
                State::Tag { end }
            }
            State::Value { end, quote } => {
                self.value_len += 1;
                self.number = self
                    .number
                    .and_then(|n| byte.is_ascii_digit().then_some(n))
                    .map(|n| n.saturating_mul(10).saturating_add(u64::from(byte - b'0')));
                State::Value { end, quote }
            }
            State::Bang { matched, cdata } => self.bang(matched, cdata, byte),
            State::Comment { dashes } => match byte {
                b'>' if dashes >= 2 => State::Text,
                b'-' => State::Comment { dashes: dashes + 1 },
                _ => State::Comment { dashes: 0 },
            },
            State::CData { brackets } => match byte {
                b'>' if brackets >= 2 => State::Text,
                b']' => State::CData {
                    brackets: brackets + 1,
                },
                _ => State::CData { brackets: 0 },
            },
            State::Pi { question } => match byte {
                b'>' if question => State::Text,
                _ => State::Pi {
                    question: byte == b'?',
                },
            },
            State::Stop => State::Stop,
        };
    }

    /// One byte of a start tag's name (or the byte that ends it).
    fn name_byte(&mut self, byte: u8) -> State {
        match byte {
            b'>' => {
                self.start_tag_named();
                State::Text
            }
            b'"' | b'\'' => {
                self.start_tag_named();
                self.open_value(false, byte)
            }
            _ if byte == b'/' || byte.is_ascii_whitespace() => {
                self.start_tag_named();
                State::Tag { end: false }
            }
            _ => {
                self.element.push_local(byte);
                State::ElementName
            }
        }
    }

    fn start_tag_named(&mut self) {
        let sought: &[u8] = match self.part {
            Part::SharedStrings => b"si",
            Part::Styles => b"xf",
        };
        if self.element.is(sought) {
            self.tally.sought += 1;
        }
    }

    fn open_value(&mut self, end: bool, quote: u8) -> State {
        self.value_len = 0;
        self.number = Some(0);
        State::Value { end, quote }
    }

    fn close_value(&mut self, end: bool) {
        self.tally.longest_value = self.tally.longest_value.max(self.value_len);
        let counts = !end
            && self.part == Part::SharedStrings
            && self.element.is(b"sst")
            && self.attribute.is(b"uniqueCount");
        if let (true, Some(n), true) = (counts, self.number, self.value_len > 0) {
            self.tally.declared = self.tally.declared.max(n);
        }
        self.attribute = Name::default();
    }

    fn bang(&mut self, matched: usize, cdata: bool, byte: u8) -> State {
        const COMMENT: &[u8] = b"--";
        const CDATA: &[u8] = b"[CDATA[";
        let (pattern, cdata) = match (matched, byte) {
            (0, b'[') => (CDATA, true),
            (0, _) => (COMMENT, false),
            _ => (if cdata { CDATA } else { COMMENT }, cdata),
        };
        if pattern.get(matched) != Some(&byte) {
            self.tally.doctype = true;
            return State::Stop;
        }
        match (matched + 1 == pattern.len(), cdata) {
            (true, true) => State::CData { brackets: 0 },
            (true, false) => State::Comment { dashes: 0 },
            (false, _) => State::Bang {
                matched: matched + 1,
                cdata,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(part: Part, xml: &str) -> Tally {
        let mut whole = Scanner::new(part);
        whole.feed(xml.as_bytes());
        // Fed a byte at a time, the scan finds the same: chunk edges do not matter.
        let mut bytewise = Scanner::new(part);
        for byte in xml.as_bytes() {
            bytewise.feed(std::slice::from_ref(byte));
        }
        assert_eq!(whole.tally, bytewise.tally, "{xml}");
        whole.tally
    }

    #[test]
    fn shared_strings_are_counted_as_quick_xml_sees_them() {
        let xml = "<?xml version=\"1.0\"?>\n<sst xmlns=\"x\" count=\"9\" uniqueCount=\"3\">\
                   <si><t>a &lt; b</t></si><x:si><t>b</t></x:si><si/>\
                   <a-very-long-namespace-prefix:si/>\
                   <!-- <si> --><![CDATA[<si>]]><sis/><s i=\"<si>\"/></sst>";
        let found = tally(Part::SharedStrings, xml);
        assert_eq!(found.sought, 4);
        assert_eq!(found.declared, 3);
        assert_eq!(found.elements, 9);
        assert!(!found.doctype);
    }

    #[test]
    fn the_declared_count_is_read_as_calamine_reads_it() {
        let declared = |tag: &str| tally(Part::SharedStrings, tag).declared;
        assert_eq!(declared("<sst uniqueCount='99999999999'>"), 99_999_999_999);
        assert_eq!(declared("<x:sst a=\">\" uniqueCount = \"12\" >"), 12);
        // Saturating: a count past u64 is as large as any.
        assert_eq!(
            declared("<sst uniqueCount=\"99999999999999999999999\">"),
            u64::MAX
        );
        // Not all digits: calamine reserves nothing for it.
        assert_eq!(declared("<sst uniqueCount=\"+5\">"), 0);
        assert_eq!(declared("<sst uniqueCount=\"\">"), 0);
        assert_eq!(declared("<sst count=\"12\">"), 0);
        assert_eq!(declared("<si uniqueCount=\"12\">"), 0);
    }

    #[test]
    fn style_values_and_elements() {
        let xml = "<styleSheet><fonts><font><name val=\"Calibri\"/></font></fonts>\
                   <numFmts><numFmt formatCode='0.00&quot;x&quot;'/></numFmts></styleSheet>";
        let found = tally(Part::Styles, xml);
        assert_eq!(found.elements, 6);
        assert_eq!(found.sought, 0);
        assert_eq!(
            tally(Part::Styles, "<cellXfs><xf/><x:xf a='1'></x:xf></cellXfs>").sought,
            2
        );
        assert_eq!(found.longest_value, "0.00&quot;x&quot;".len() as u64);
    }

    #[test]
    fn a_doctype_stops_the_scan() {
        assert!(tally(Part::Styles, "<!DOCTYPE x [<!ENTITY a \"b\">]><a/>").doctype);
        assert!(tally(Part::Styles, "<!-x-><a/>").doctype);
        assert!(!tally(Part::Styles, "<!----><a/>").doctype);
    }
}
