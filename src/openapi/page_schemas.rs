//! The /docs page's reading of the document's types: `$ref`s resolved, a schema's type
//! named in words (with the schemas it names linked), an object's fields, a body's
//! shapes, and every component schema.
//!
//! [`Doc`] is shared with `page_operations.rs`, which reads operations with it. Reading
//! only: this must never change the document, nor turn anything into text the
//! document does not hold.

use super::ordered::Json as Value;

use super::page_text::{first_paragraph, paragraphs};
use super::page_views::{FieldRow, Linked, SchemaView, Shape, TypePart};

pub(super) fn text<'v>(value: &'v Value, key: &str) -> &'v str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

pub(super) fn list<'v>(value: &'v Value, key: &str) -> &'v [Value] {
    value
        .get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The document, to resolve `$ref`s in, and the names of its schemas.
pub(super) struct Doc<'d>(&'d Value, Vec<String>);

impl<'d> Doc<'d> {
    pub(super) fn new(document: &'d Value) -> Doc<'d> {
        let names = document
            .pointer("/components/schemas")
            .and_then(Value::as_object)
            .map(|schemas| schemas.iter().map(|(name, _)| name.clone()).collect())
            .unwrap_or_default();
        Doc(document, names)
    }

    /// `text` in parts, each word that names a schema linked to it.
    pub(super) fn link(&self, text: &str) -> Linked {
        let mut parts: Vec<TypePart> = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let word_end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let (piece, schema) = if word_end > 0 && self.1.iter().any(|n| n == &rest[..word_end]) {
                (&rest[..word_end], Some(rest[..word_end].to_string()))
            } else {
                let end = word_end.max(rest.chars().next().map_or(1, char::len_utf8));
                (&rest[..end], None)
            };
            match parts.last_mut() {
                Some(last) if last.schema.is_none() && schema.is_none() => {
                    last.text.push_str(piece)
                }
                _ => parts.push(TypePart {
                    text: piece.to_string(),
                    schema,
                }),
            }
            rest = &rest[piece.len()..];
        }
        Linked { parts }
    }

    /// Every component schema, by name.
    pub(super) fn schemas(&self) -> Vec<SchemaView> {
        let Some(schemas) = self
            .0
            .pointer("/components/schemas")
            .and_then(Value::as_object)
        else {
            return Vec::new();
        };
        schemas
            .iter()
            .map(|(name, schema)| {
                let fields = self.fields(schema);
                SchemaView {
                    name: name.clone(),
                    description: paragraphs(text(schema, "description")),
                    ty: if fields.is_empty() {
                        self.link(&self.type_name(schema))
                    } else {
                        Linked::default()
                    },
                    fields,
                }
            })
            .collect()
    }
    /// `value`, or what its `$ref` points to (a component of the document).
    pub(super) fn resolve(&self, value: &'d Value) -> &'d Value {
        let mut value = value;
        // References point at components, which are never references themselves; the
        // bound only guards against a malformed document.
        for _ in 0..8 {
            let Some(target) = value.get("$ref").and_then(Value::as_str) else {
                break;
            };
            let pointer = target.trim_start_matches('#');
            match self.0.pointer(pointer) {
                Some(found) => value = found,
                None => break,
            }
        }
        value
    }

    /// A schema's name (for a `$ref`) or a short description of its type.
    pub(super) fn type_name(&self, schema: &Value) -> String {
        if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
            return target.rsplit('/').next().unwrap_or(target).to_string();
        }
        for key in ["oneOf", "anyOf"] {
            if let Some(items) = schema.get(key).and_then(Value::as_array) {
                let mut names: Vec<String> = Vec::new();
                let mut nullable = false;
                for item in items {
                    if item.get("type").and_then(Value::as_str) == Some("null") {
                        nullable = true;
                    } else {
                        names.push(self.type_name(item));
                    }
                }
                let joined = names.join(" | ");
                return if nullable {
                    format!("{joined} or null")
                } else {
                    joined
                };
            }
        }
        if let Some(items) = schema.get("allOf").and_then(Value::as_array) {
            return items
                .iter()
                .map(|item| self.type_name(item))
                .collect::<Vec<_>>()
                .join(" + ");
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            return values.join(" | ");
        }
        let (types, nullable): (Vec<&str>, bool) = match schema.get("type") {
            Some(Value::String(t)) => (vec![t.as_str()], false),
            Some(Value::Array(ts)) => {
                let all: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
                let nullable = all.contains(&"null");
                (all.into_iter().filter(|t| *t != "null").collect(), nullable)
            }
            _ => (Vec::new(), false),
        };
        let mut name = match types.as_slice() {
            [] => "any".to_string(),
            ["array"] => match schema.get("items") {
                Some(items) => format!("array of {}", self.type_name(items)),
                None => "array".to_string(),
            },
            ["object"] => match schema.get("additionalProperties") {
                Some(values @ Value::Object(_)) => {
                    format!("map of {}", self.type_name(values))
                }
                _ => "object".to_string(),
            },
            [single] => single.to_string(),
            several => several.join(" | "),
        };
        if let Some(format) = schema.get("format").and_then(Value::as_str) {
            name.push_str(&format!(" ({format})"));
        }
        if nullable {
            name.push_str(" or null");
        }
        name
    }

    /// A property's description: its own, else that of the schema it stands for (a
    /// nullable reference is `oneOf: [null, $ref]`, its description beside the `$ref`).
    fn describe(&self, property: &'d Value) -> &'d str {
        if let Some(own) = property.get("description").and_then(Value::as_str) {
            return own;
        }
        for key in ["oneOf", "anyOf", "allOf"] {
            for item in list(property, key) {
                let found = self.describe(item);
                if !found.is_empty() {
                    return found;
                }
            }
        }
        match property.get("$ref") {
            Some(_) => text(self.resolve(property), "description"),
            None => "",
        }
    }

    /// The fields of an object schema, through `$ref` and `allOf`.
    fn fields(&self, schema: &'d Value) -> Vec<FieldRow> {
        let schema = self.resolve(schema);
        if let Some(parts) = schema.get("allOf").and_then(Value::as_array) {
            return parts.iter().flat_map(|part| self.fields(part)).collect();
        }
        let required: Vec<&str> = list(schema, "required")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            return Vec::new();
        };
        properties
            .iter()
            .map(|(name, property)| {
                let description = self.describe(property);
                FieldRow {
                    name: name.clone(),
                    ty: self.link(&self.type_name(property)),
                    required: required.contains(&name.as_str()),
                    description: first_paragraph(description),
                }
            })
            .collect()
    }

    /// The objects a body is made of: itself, or each of its forms.
    pub(super) fn shapes(&self, schema: &'d Value) -> Vec<Shape> {
        let named = schema.get("$ref").map(|_| self.type_name(schema));
        let resolved = self.resolve(schema);
        if let Some(forms) = resolved.get("oneOf").and_then(Value::as_array) {
            return forms.iter().flat_map(|form| self.shapes(form)).collect();
        }
        let fields = self.fields(resolved);
        if fields.is_empty() {
            return Vec::new();
        }
        vec![Shape {
            name: named.unwrap_or_default(),
            description: first_paragraph(text(resolved, "description")),
            fields,
        }]
    }
}
