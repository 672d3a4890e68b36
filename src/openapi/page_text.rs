//! The /docs page's text: descriptions as paragraphs with `code` spans, as the
//! document writes them.

/// Text with `code` spans, as the document's descriptions write them.
pub struct Rich {
    pub spans: Vec<Span>,
}

pub struct Span {
    pub code: bool,
    pub text: String,
}

impl Rich {
    pub(super) fn new(text: &str) -> Rich {
        let spans = text
            .split('`')
            .enumerate()
            .filter(|(_, t)| !t.is_empty())
            .map(|(i, t)| Span {
                code: i % 2 == 1,
                text: t.to_string(),
            })
            .collect();
        Rich { spans }
    }

    pub(super) fn plain(text: &str) -> Rich {
        Rich {
            spans: vec![Span {
                code: false,
                text: text.to_string(),
            }],
        }
    }
}

/// Paragraphs of a description: blank lines part them; a markdown table is left out
/// (what it says is shown as a table of its own).
pub(super) fn paragraphs(text: &str) -> Vec<Rich> {
    text.split("\n\n")
        .filter(|p| !p.trim_start().starts_with('|'))
        .map(|p| Rich::new(&p.split_whitespace().collect::<Vec<_>>().join(" ")))
        .filter(|r| !r.spans.is_empty())
        .collect()
}

pub(super) fn first_paragraph(text: &str) -> Rich {
    paragraphs(text)
        .into_iter()
        .next()
        .unwrap_or_else(|| Rich::plain(""))
}
