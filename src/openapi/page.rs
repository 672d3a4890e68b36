//! `GET /docs`: the document as a page people read, rendered on the server from the
//! same JSON the API serves (so the page cannot say anything the document does not),
//! with the site's stylesheet and no script: the endpoints by tag with their
//! parameters, bodies and answers, the dataset catalogue (`x-datasets`) and the error
//! codes (`x-error-codes`).

use std::sync::LazyLock;

use super::ordered::Json as Value;
use actix_web::http::StatusCode;
use askama::Template;

use crate::http::RequestId;
use crate::site::assets::CSS;
use crate::site::respond::{render, Caching, PageResult};

use super::page_text::{first_paragraph, paragraphs, Rich};
use super::page_views::*;

/// `GET /docs`.
pub async fn docs_page() -> PageResult {
    let request_id = RequestId::current();
    let page = DocsPage {
        reference: &REFERENCE,
        css: CSS.href(),
        request_id: request_id.as_str(),
    };
    render(&page, StatusCode::OK, Caching::Visitor)
}

static REFERENCE: LazyLock<Reference> = LazyLock::new(|| {
    let document: Value = serde_json::from_str(super::json()).expect("the document is JSON");
    Reference::read(&document)
});

#[derive(Template)]
#[template(path = "docs.html")]
struct DocsPage<'a> {
    reference: &'a Reference,
    css: String,
    request_id: &'a str,
}

fn text<'v>(value: &'v Value, key: &str) -> &'v str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn list<'v>(value: &'v Value, key: &str) -> &'v [Value] {
    value
        .get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The document, to resolve `$ref`s in, and the names of its schemas.
struct Doc<'d>(&'d Value, Vec<String>);

impl<'d> Doc<'d> {
    fn new(document: &'d Value) -> Doc<'d> {
        let names = document
            .pointer("/components/schemas")
            .and_then(Value::as_object)
            .map(|schemas| schemas.iter().map(|(name, _)| name.clone()).collect())
            .unwrap_or_default();
        Doc(document, names)
    }

    /// `text` in parts, each word that names a schema linked to it.
    fn link(&self, text: &str) -> Linked {
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
    fn schemas(&self) -> Vec<SchemaView> {
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
    fn resolve(&self, value: &'d Value) -> &'d Value {
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
    fn type_name(&self, schema: &Value) -> String {
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
    fn shapes(&self, schema: &'d Value) -> Vec<Shape> {
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

    /// `data` of an enveloped body (the second part of its `allOf`), else the body.
    fn data_schema(&self, schema: &'d Value) -> (&'d Value, bool) {
        if let Some(parts) = schema.get("allOf").and_then(Value::as_array) {
            let enveloped = parts
                .first()
                .and_then(|p| p.get("$ref"))
                .and_then(Value::as_str)
                == Some("#/components/schemas/Success");
            if enveloped {
                if let Some(data) = parts.get(1).and_then(|p| p.pointer("/properties/data")) {
                    return (data, true);
                }
            }
        }
        (schema, false)
    }

    /// The codes an error body may carry.
    fn codes(&self, schema: &'d Value) -> Vec<u64> {
        list(schema, "allOf")
            .iter()
            .filter_map(|part| part.pointer("/properties/code/enum"))
            .filter_map(Value::as_array)
            .flatten()
            .filter_map(Value::as_u64)
            .collect()
    }

    fn response(&self, status: &str, response: &'d Value) -> ResponseRow {
        let response = self.resolve(response);
        let (content_type, schema) = response
            .get("content")
            .and_then(Value::as_object)
            .and_then(|content| content.iter().next())
            .map(|(ty, media)| (ty.clone(), media.get("schema")))
            .unwrap_or_default();
        let mut row = ResponseRow {
            status: status.to_string(),
            description: first_paragraph(text(response, "description")),
            content_type,
            data: Linked::default(),
            codes: Vec::new(),
            headers: response
                .get("headers")
                .and_then(Value::as_object)
                .map(|h| h.iter().map(|(name, _)| name.clone()).collect())
                .unwrap_or_default(),
            shapes: Vec::new(),
        };
        if let Some(schema) = schema {
            if status.starts_with('2') {
                let (data, enveloped) = self.data_schema(schema);
                row.data = self.link(&if enveloped {
                    format!("data: {}", self.type_name(data))
                } else {
                    self.type_name(data)
                });
                let element = match self.resolve(data).get("items") {
                    Some(items) if data.get("type").and_then(Value::as_str) == Some("array") => {
                        items
                    }
                    _ => data,
                };
                row.shapes = self.shapes(element);
            } else {
                row.codes = self.codes(schema);
            }
        }
        row
    }

    fn auth(&self, operation: &Value) -> String {
        let Some(requirements) = operation.get("security").and_then(Value::as_array) else {
            return "none".to_string();
        };
        let label = |name: &str| match name {
            super::security::API_KEY => "API key (X-API-Key)".to_string(),
            super::security::BEARER => "API key (Authorization: Bearer)".to_string(),
            super::security::SESSION => "session cookie".to_string(),
            super::security::CSRF => "X-CSRF-Token".to_string(),
            other => other.to_string(),
        };
        requirements
            .iter()
            .map(|requirement| match requirement.as_object() {
                Some(all) if !all.is_empty() => {
                    let mut names: Vec<&str> = all.iter().map(|(k, _)| k.as_str()).collect();
                    // The session before its CSRF token, as a client sends them.
                    names.sort_by_key(|name| RANK.iter().position(|r| r == name));
                    names.into_iter().map(label).collect::<Vec<_>>().join(" + ")
                }
                _ => "none".to_string(),
            })
            .collect::<Vec<_>>()
            .join(", or ")
    }

    fn operation(&self, path: &str, method: &str, operation: &'d Value) -> OperationView {
        let params = list(operation, "parameters")
            .iter()
            .map(|p| {
                let p = self.resolve(p);
                let schema = p.get("schema").cloned().unwrap_or(Value::Null);
                let mut ty = self.type_name(&schema);
                let bounds = (schema.get("minimum"), schema.get("maximum"));
                if let (Some(min), Some(max)) = bounds {
                    ty.push_str(&format!(", {min} to {max}"));
                }
                if let Some(default) = schema.get("default") {
                    ty.push_str(&format!(", default {default}"));
                }
                ParamRow {
                    name: text(p, "name").to_string(),
                    location: text(p, "in").to_string(),
                    required: p.get("required").and_then(Value::as_bool) == Some(true),
                    ty: self.link(&ty),
                    description: Rich::new(text(p, "description")),
                }
            })
            .collect();
        let body = operation.get("requestBody").map(|body| {
            let (content_type, schema) = body
                .get("content")
                .and_then(Value::as_object)
                .and_then(|content| content.iter().next())
                .map(|(ty, media)| (ty.clone(), media.get("schema")))
                .unwrap_or_default();
            BodyView {
                content_type,
                description: first_paragraph(text(body, "description")),
                shapes: schema.map(|s| self.shapes(s)).unwrap_or_default(),
            }
        });
        let responses = operation
            .get("responses")
            .and_then(Value::as_object)
            .map(|responses| {
                responses
                    .iter()
                    .map(|(status, response)| self.response(status, response))
                    .collect()
            })
            .unwrap_or_default();
        let operation_id = text(operation, "operationId");
        OperationView {
            anchor: format!("op-{operation_id}"),
            method: method.to_uppercase(),
            path: path.to_string(),
            summary: text(operation, "summary").to_string(),
            description: paragraphs(text(operation, "description")),
            auth: self.auth(operation),
            role: operation
                .get("x-role")
                .and_then(Value::as_str)
                .map(str::to_string),
            params,
            body,
            responses,
        }
    }
}

/// The order credentials are named in.
const RANK: [&str; 4] = [
    super::security::API_KEY,
    super::security::BEARER,
    super::security::SESSION,
    super::security::CSRF,
];

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

impl Reference {
    fn read(document: &Value) -> Reference {
        let doc = Doc::new(document);
        let info = &document["info"];
        let empty = Vec::new();
        let paths = document
            .get("paths")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let mut tags: Vec<TagSection> = list(document, "tags")
            .iter()
            .map(|tag| TagSection {
                name: text(tag, "name").to_string(),
                description: Rich::new(text(tag, "description")),
                operations: Vec::new(),
            })
            .collect();
        for (path, item) in paths {
            for method in METHODS {
                let Some(operation) = item.get(method) else {
                    continue;
                };
                let tag = list(operation, "tags")
                    .first()
                    .and_then(Value::as_str)
                    .unwrap_or("other");
                let position = match tags.iter().position(|t| t.name == tag) {
                    Some(position) => position,
                    None => {
                        tags.push(TagSection {
                            name: tag.to_string(),
                            description: Rich::plain(""),
                            operations: Vec::new(),
                        });
                        tags.len() - 1
                    }
                };
                tags[position]
                    .operations
                    .push(doc.operation(path, method, operation));
            }
        }
        tags.retain(|t| !t.operations.is_empty());
        let schemes = document
            .pointer("/components/securitySchemes")
            .and_then(Value::as_object)
            .map(|schemes| {
                schemes
                    .iter()
                    .map(|(name, scheme)| SchemeRow {
                        name: name.clone(),
                        carrier: match text(scheme, "type") {
                            "apiKey" => format!("{} {}", text(scheme, "in"), text(scheme, "name")),
                            "http" => format!("Authorization: {}", text(scheme, "scheme")),
                            other => other.to_string(),
                        },
                        description: Rich::new(text(scheme, "description")),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let datasets = list(document, "x-datasets")
            .iter()
            .map(|d| {
                let defaults: Vec<&str> = list(d, "default_fields")
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                DatasetView {
                    api_name: text(d, "api_name").to_string(),
                    description: text(d, "description").to_string(),
                    scope: text(d, "scope").to_string(),
                    delayed: d.get("delayed").and_then(Value::as_bool) == Some(true),
                    sort_key: list(d, "sort_key")
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(", "),
                    params: list(d, "params")
                        .iter()
                        .map(|p| {
                            (
                                text(p, "name").to_string(),
                                text(p, "description").to_string(),
                            )
                        })
                        .collect(),
                    fields: list(d, "fields")
                        .iter()
                        .map(|f| DatasetField {
                            name: text(f, "name").to_string(),
                            kind: match (text(f, "type"), f.get("scale")) {
                                ("date", _) => "date YYYYMMDD".to_string(),
                                ("decimal", Some(scale)) => format!("decimal, {scale} dp"),
                                (kind, _) => kind.to_string(),
                            },
                            default: defaults.contains(&text(f, "name")),
                            description: text(f, "description").to_string(),
                        })
                        .collect(),
                }
            })
            .collect();
        let codes = document
            .pointer("/components/schemas/ErrorCode/x-error-codes")
            .and_then(Value::as_array)
            .map(|codes| {
                codes
                    .iter()
                    .map(|c| CodeRow {
                        code: c["code"].as_u64().unwrap_or_default(),
                        status: c["status"].as_u64().unwrap_or_default(),
                        name: text(c, "name").to_string(),
                        meaning: Rich::new(text(c, "meaning")),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Reference {
            title: text(info, "title").to_string(),
            version: text(info, "version").to_string(),
            intro: paragraphs(text(info, "description")),
            schemes,
            tags,
            datasets,
            codes,
            schemas: doc.schemas(),
        }
    }
}
