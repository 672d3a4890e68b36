//! The streaming count of one XML part of a workbook archive (shared strings or
//! styles): start tags, the tags calamine keeps something for, a declared
//! `uniqueCount`, the longest attribute value, and any document type declaration.
//!
//! A byte-at-a-time state machine over quick-xml's markup rules, in constant memory:
//! it must never allocate by what it reads, never count fewer start tags than quick-xml
//! sees, and never depend on where the chunks it is fed begin or end. It judges
//! nothing; [`super::check`] does.

use std::io::Read;

use super::Part;

#[cfg(test)]
mod tests;

/// Bytes inflated at a time by the scans.
const CHUNK: usize = 64 * 1024;

/// What one scan of an XML part found.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Tally {
    /// Start tags, whatever their name.
    pub(super) elements: u64,
    /// Start tags named `si` in the shared strings (calamine keeps a string for each),
    /// `xf` in the styles (a cell format, into which it clones a font name and a
    /// number format).
    pub(super) sought: u64,
    /// The largest all-digit `uniqueCount` of an `sst` start tag: calamine reserves
    /// room for that many strings.
    pub(super) declared: u64,
    /// The longest attribute value, in bytes as written.
    pub(super) longest_value: u64,
    /// A `<!DOCTYPE` (or another `<!` construct that is neither a comment nor CDATA).
    pub(super) doctype: bool,
    /// The part's inflated bytes.
    pub(super) bytes: u64,
}

pub(super) fn scan(mut entry: impl Read, part: Part) -> std::io::Result<Tally> {
    let mut scanner = Scanner::new(part);
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let read = entry.read(&mut chunk)?;
        let Some(bytes) = chunk.get(..read).filter(|b| !b.is_empty()) else {
            break;
        };
        scanner.tally.bytes = scanner.tally.bytes.saturating_add(read as u64);
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
