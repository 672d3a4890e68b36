//! What the service's own source says, for the checks that compare the manifests with
//! it: the environment variables it reads. It must never look at the manifests.

use std::collections::BTreeSet;
use std::fs;

use super::render::repository;

/// The string literals of Rust `source`, each with the code before it; comments, char
/// literals and escapes skipped (raw strings are not expected).
fn string_literals(source: &str) -> Vec<(&str, String)> {
    let bytes = source.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = source[i..].find('\n').map_or(bytes.len(), |end| i + end);
            }
            b'\'' if bytes.get(i + 1) == Some(&b'\\') => i += 4,
            b'\'' if bytes.get(i + 2) == Some(&b'\'') => i += 3,
            b'"' => {
                let mut literal = String::new();
                let mut j = i + 1;
                while let Some(&byte) = bytes.get(j).filter(|b| **b != b'"') {
                    if byte == b'\\' {
                        j += 1;
                    }
                    literal.extend(bytes.get(j).map(|b| char::from(*b)));
                    j += 1;
                }
                found.push((&source[..i], literal));
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    found
}

/// Every `"NAME"` passed as the first argument of a call (`var("..")`, `parsed("..",`,
/// `flag("..")`) in the files that read the environment, outside their unit tests: the
/// variables the service reads itself. There is no public list of them to use instead.
pub(super) fn variables_read_by_the_code() -> BTreeSet<String> {
    let mut files = vec![repository().join("src").join("settings.rs")];
    let telemetry = repository().join("src").join("telemetry");
    for entry in fs::read_dir(&telemetry).expect("src/telemetry") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    let mut names = BTreeSet::new();
    for file in files {
        let source = fs::read_to_string(&file).expect("read the source");
        let code = source.split("#[cfg(test)]").next().unwrap_or_default();
        for (before, name) in string_literals(code) {
            let is_variable = name.starts_with(|c: char| c.is_ascii_uppercase())
                && name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
            if is_variable && before.trim_end().ends_with('(') {
                names.insert(name);
            }
        }
    }
    names
}
