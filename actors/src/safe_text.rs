//! The rules every text a person or a file supplies must pass before it is stored and
//! served back: imported specifications ([`crate::imports`]) and the index names the
//! back office edits (and every other such text as it becomes editable).
//!
//! Our answers serve text as it was stored (D18: cells are never altered), into JSON,
//! CSV files, DataFrames, terminals and pages, so a text that would misbehave in one of
//! them is refused where it enters, with a reason that says why. This module only
//! judges; it must never alter a text (no trimming, no escaping).

/// A character no imported or edited text may hold: control characters (C0, DEL, C1:
/// escape sequences that rewrite a terminal, bells, line breaks that split a CSV line
/// or a log line) and the bidirectional overrides and isolates (U+202A-U+202E,
/// U+2066-U+2069), which make a text display as something other than what it holds.
pub fn is_forbidden(c: char) -> bool {
    c.is_control()
        || ('\u{202A}'..='\u{202E}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// Why a name would be run by a spreadsheet, if it would: a text that starts with `=`,
/// `+`, `-` or `@` (OWASP's list; D28 added `-`: `-2+3+cmd|' /C calc'!A0` runs a
/// command) is a formula to Excel and LibreOffice when a CSV answer or a DataFrame
/// export is opened there (`=HYPERLINK(...)` sends the sheet's cells to another site).
/// Such names are refused rather than escaped, so every answer serves them as they are.
/// (Tab and carriage return, OWASP's other two, are control characters, refused by
/// [`is_forbidden`].)
pub fn formula_like(name: &str) -> Option<String> {
    let first = name.chars().next()?;
    matches!(first, '=' | '+' | '-' | '@').then(|| {
        format!(
            "starts with '{first}', which a spreadsheet would run as a formula: remove or \
             replace the first character"
        )
    })
}

/// Why a text may not be stored, if it may not, as the end of a sentence that names
/// it ("the specification " + this): a forbidden character ([`is_forbidden`]) or a
/// formula ([`formula_like`]).
pub fn text_problem(text: &str) -> Option<String> {
    if let Some(c) = text.chars().find(|&c| is_forbidden(c)) {
        let kind = if c.is_control() {
            "the control character"
        } else {
            "the bidirectional control character"
        };
        return Some(format!(
            "holds {kind} U+{:04X}, which stored text may not hold: remove it",
            u32::from(c)
        ));
    }
    formula_like(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_and_bidi_characters_are_forbidden_and_others_not() {
        for c in [
            '\0', '\u{1B}', '\u{7}', '\u{8}', '\r', '\n', '\t', '\u{7F}', '\u{85}',
        ] {
            assert!(is_forbidden(c), "U+{:04X}", u32::from(c));
        }
        for c in ['\u{202A}', '\u{202E}', '\u{2066}', '\u{2069}'] {
            assert!(is_forbidden(c), "U+{:04X}", u32::from(c));
        }
        for c in ['a', 'Ä', '中', ' ', '-', '\u{200F}', '\u{2070}', '\u{2029}'] {
            assert!(!is_forbidden(c), "U+{:04X}", u32::from(c));
        }
    }

    #[test]
    fn formulas_are_told_by_their_first_character() {
        for name in [
            "=HYPERLINK(\"http://x\",\"y\")",
            "@SUM(1+1)",
            "+1+1",
            "-2+3+cmd|' /C calc'!A0",
            "-1",
        ] {
            assert!(formula_like(name).is_some(), "{name}");
        }
        for name in ["B200", "a=b", "", " =x", "H100 @ 80GB", "H100 - 80GB"] {
            assert_eq!(formula_like(name), None, "{name}");
        }
        assert_eq!(
            text_problem("GPU\u{1B}[2J").as_deref(),
            Some("holds the control character U+001B, which stored text may not hold: remove it")
        );
        assert_eq!(
            text_problem("a\u{202E}b").as_deref(),
            Some(
                "holds the bidirectional control character U+202E, which stored text may not \
                 hold: remove it"
            )
        );
        assert!(text_problem("@x").unwrap().starts_with("starts with '@'"));
        assert_eq!(text_problem("GPU index \u{4E2D}"), None);
    }
}
