//! [`Conformance`]: JSON checked against the document's schemas (the subset of JSON
//! Schema the document uses), refusing properties the document does not name, and the
//! check of the patterns it reads. It must never send a request: `tour.rs` does.

use std::collections::BTreeSet;

use iq_actors::catalogue::DATASETS;
use iq_service::openapi::query::fields_schema_name;
use serde_json::Value;

use super::{property_names, resolve, strings};
use crate::helpers::Reply;

/// Checks JSON against the document's schemas, the subset of JSON Schema the document
/// uses, and also refuses properties the document does not name.
pub(super) struct Conformance<'d> {
    pub(super) doc: &'d Value,
}

impl<'d> Conformance<'d> {
    fn resolve(&self, schema: &'d Value) -> &'d Value {
        resolve(self.doc, schema)
    }

    /// The property names an object schema documents, through `$ref` and `allOf`;
    /// `None` when it takes any (a map, or no properties at all).
    pub(super) fn documented(&self, schema: &'d Value) -> Option<BTreeSet<String>> {
        let schema = self.resolve(schema);
        if let Some(parts) = schema["allOf"].as_array() {
            let mut all = BTreeSet::new();
            for part in parts {
                all.extend(self.documented(part)?);
            }
            return Some(all);
        }
        if schema["additionalProperties"].is_object() || !schema["properties"].is_object() {
            return None;
        }
        Some(property_names(schema))
    }

    pub(super) fn check(
        &self,
        schema: &'d Value,
        value: &Value,
        at: &str,
        problems: &mut Vec<String>,
    ) {
        let schema = self.resolve(schema);
        if value.is_object() {
            if let Some(names) = self.documented(schema) {
                for key in value.as_object().unwrap().keys() {
                    if !names.contains(key) {
                        problems.push(format!("{at}.{key} is not documented"));
                    }
                }
            }
        }
        self.check_open(schema, value, at, problems);
    }

    /// [`Self::check`] without the undocumented-property rule (for parts of an `allOf`).
    fn check_open(&self, schema: &'d Value, value: &Value, at: &str, problems: &mut Vec<String>) {
        let schema = self.resolve(schema);
        for part in schema["allOf"].as_array().into_iter().flatten() {
            self.check_open(part, value, at, problems);
        }
        for key in ["oneOf", "anyOf"] {
            if let Some(choices) = schema[key].as_array() {
                let mut first = None;
                let fits = choices.iter().any(|choice| {
                    let mut found = Vec::new();
                    self.check(choice, value, at, &mut found);
                    if first.is_none() {
                        first = Some(found.clone());
                    }
                    found.is_empty()
                });
                if !fits {
                    problems.push(format!("{at}: {value} fits none of {key}: {first:?}"));
                }
            }
        }
        if let Some(allowed) = schema["enum"].as_array() {
            if !allowed.contains(value) {
                problems.push(format!("{at}: {value} is not one of {allowed:?}"));
            }
        }
        let types: Vec<&str> = match &schema["type"] {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !types.is_empty() {
            let fits = types.iter().any(|t| match *t {
                "null" => value.is_null(),
                "string" => value.is_string(),
                "boolean" => value.is_boolean(),
                "integer" => value.is_i64() || value.is_u64(),
                "number" => value.is_number(),
                "array" => value.is_array(),
                "object" => value.is_object(),
                _ => false,
            });
            if !fits {
                problems.push(format!("{at}: {value} is not {types:?}"));
                return;
            }
        }
        if let (Some(pattern), Some(text)) = (schema["pattern"].as_str(), value.as_str()) {
            if matches(pattern, text) == Some(false) {
                problems.push(format!("{at}: {text:?} does not match {pattern}"));
            }
        }
        if let Some(n) = value.as_f64() {
            if schema["minimum"].as_f64().is_some_and(|min| n < min) {
                problems.push(format!("{at}: {n} below {}", schema["minimum"]));
            }
            if schema["maximum"].as_f64().is_some_and(|max| n > max) {
                problems.push(format!("{at}: {n} above {}", schema["maximum"]));
            }
        }
        if let Some(object) = value.as_object() {
            for name in strings(&schema["required"]) {
                if !object.contains_key(name) {
                    problems.push(format!("{at}.{name} is required but absent"));
                }
            }
            for (key, item) in object {
                if let Some(property) = schema["properties"].get(key) {
                    self.check(property, item, &format!("{at}.{key}"), problems);
                } else if schema["additionalProperties"].is_object() {
                    let values = &schema["additionalProperties"];
                    self.check(values, item, &format!("{at}.{key}"), problems);
                }
            }
        }
        if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
            for (i, item) in array.iter().enumerate() {
                self.check(items, item, &format!("{at}[{i}]"), problems);
            }
        }
    }

    /// The problems of `reply` as an answer of `method path` (a path template).
    pub(super) fn answer(&self, method: &str, path: &str, reply: &Reply) -> Vec<String> {
        let what = format!("{method} {path} -> {}", reply.status);
        let Some(operation) = self.doc["paths"][path].get(method.to_lowercase()) else {
            return vec![format!("{what}: no such operation")];
        };
        let Some(response) = operation["responses"].get(reply.status.to_string()) else {
            return vec![format!("{what}: status not documented ({})", reply.body)];
        };
        let response = self.resolve(response);
        let mut problems = Vec::new();
        for header in response["headers"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|h| h.0)
        {
            // The rate-limit headers come with a key, the page's `X-*` headers with CSV.
            let conditional = header.contains("RateLimit")
                || matches!(
                    header.as_str(),
                    "Set-Cookie"
                        | "Cache-Control"
                        | "X-Limit"
                        | "X-Offset"
                        | "X-Returned"
                        | "X-Has-More"
                );
            if !conditional && reply.header(header).is_none() {
                problems.push(format!("{what}: header {header} absent"));
            }
        }
        match response["content"]["application/json"].get("schema") {
            Some(schema) => self.check(schema, &reply.body, "body", &mut problems),
            None => problems.push(format!("{what}: no JSON body documented")),
        }
        problems
            .into_iter()
            .map(|p| format!("{what}: {p}"))
            .collect()
    }
}

/// Whether `text` matches `pattern`, for the patterns the document's answers use;
/// `None` for another (requests' patterns are not checked here).
fn matches(pattern: &str, text: &str) -> Option<bool> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if pattern == "^req_" {
        return Some(text.starts_with("req_"));
    }
    if pattern == "^[0-9]{8}$" {
        return Some(text.len() == 8 && digits(text));
    }
    if pattern == "^iq_[0-9A-Za-z]{40}$" {
        let body = text.strip_prefix("iq_")?;
        return Some(body.len() == 40 && body.bytes().all(|b| b.is_ascii_alphanumeric()));
    }
    // A decimal with a fixed scale: ^-?[0-9]+\.[0-9]{N}$
    let scale: usize = pattern
        .strip_prefix("^-?[0-9]+\\.[0-9]{")?
        .strip_suffix("}$")?
        .parse()
        .ok()?;
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    Some(match unsigned.split_once('.') {
        Some((whole, fraction)) => digits(whole) && digits(fraction) && fraction.len() == scale,
        None => false,
    })
}

#[test]
fn the_pattern_check_reads_every_pattern_of_the_columns() {
    let doc: Value = serde_json::from_str(iq_service::routes::json()).unwrap();
    for dataset in &DATASETS {
        let typed = &doc["components"]["schemas"][fields_schema_name(dataset)];
        for (field, schema) in typed["properties"].as_object().unwrap() {
            if let Some(pattern) = schema["pattern"].as_str() {
                assert!(matches(pattern, "").is_some(), "{field}: {pattern} unread");
            }
        }
    }
    let six = "^-?[0-9]+\\.[0-9]{6}$";
    assert_eq!(matches(six, "-1003.417711"), Some(true));
    assert_eq!(matches(six, "1003.41771"), Some(false));
    assert_eq!(matches(six, "1e3"), Some(false));
    assert_eq!(matches("^[0-9]{8}$", "20261120"), Some(true));
    assert_eq!(matches("^[0-9]{8}$", "2026-11-20"), Some(false));
}
