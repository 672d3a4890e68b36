//! The /docs page's view of one operation: its credentials, parameters, body and
//! answers (with an envelope's `data` and an error's codes), read through [`Doc`].
//!
//! Reading only: what an operation accepts and answers is what the document says,
//! never anything added here.

use super::ordered::Json as Value;

use super::page_schemas::{list, text, Doc};
use super::page_text::{first_paragraph, paragraphs, Rich};
use super::page_views::{BodyView, Linked, OperationView, ParamRow, ResponseRow};

impl<'d> Doc<'d> {
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

    pub(super) fn operation(
        &self,
        path: &str,
        method: &str,
        operation: &'d Value,
    ) -> OperationView {
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
