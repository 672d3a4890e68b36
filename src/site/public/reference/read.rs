//! The /docs page read from the typed document the API serves (the same value
//! `/api/v1/openapi.json` prints): utoipa's `preserve_order` features keep its paths in
//! route order and its properties in declaration order, so the page lists them as the
//! JSON does. `$ref`s are resolved, types named in words with the schemas they name
//! linked, and an enveloped answer shown by its `data`.
//!
//! Reading only: this must never change the document, nor put on the page anything the
//! document does not hold. Leaves are read through their JSON (`json`), by the names the
//! document gives them.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;
use utoipa::openapi::path::Operation;
use utoipa::openapi::schema::{AdditionalProperties, ArrayItems, Schema, SchemaType, Type};
use utoipa::openapi::{OpenApi, RefOr, Required, Response};

use super::{first_paragraph, paragraphs, Rich};
use super::{BodyView, CodeRow, DatasetField, DatasetView, FieldRow, Linked};
use super::{OperationView, ParamRow, Reference, ResponseRow, SchemaView};
use super::{SchemeRow, Shape, TagSection, TypePart};
use crate::openapi::security::{API_KEY, BEARER, CSRF, SESSION};

/// The order credentials are named in: the session before its CSRF token, as a client
/// sends them.
const RANK: [&str; 4] = [API_KEY, BEARER, SESSION, CSRF];

/// A part of the document as its JSON, to read a leaf by its name in the document.
fn json(value: &impl Serialize) -> Value {
    serde_json::to_value(value).expect("the document serialises")
}

fn text<'v>(value: &'v Value, key: &str) -> &'v str {
    value[key].as_str().unwrap_or_default()
}

fn list<'v>(value: &'v Value, key: &str) -> &'v [Value] {
    value[key].as_array().map_or(&[], Vec::as_slice)
}

/// `Name` of `#/components/schemas/Name`.
fn last(reference: &str) -> &str {
    reference.rsplit('/').next().unwrap_or(reference)
}

fn description(schema: &Schema) -> Option<&str> {
    match schema {
        Schema::Object(o) => o.description.as_deref(),
        Schema::Array(a) => a.description.as_deref(),
        Schema::OneOf(o) => o.description.as_deref(),
        Schema::AllOf(a) => a.description.as_deref(),
        Schema::AnyOf(a) => a.description.as_deref(),
        _ => None,
    }
}

fn is_null(schema: &RefOr<Schema>) -> bool {
    matches!(schema, RefOr::T(Schema::Object(o)) if o.schema_type == SchemaType::Type(Type::Null))
}

/// The document's components, to resolve `$ref`s in.
struct Doc<'d> {
    schemas: &'d BTreeMap<String, RefOr<Schema>>,
    responses: &'d BTreeMap<String, RefOr<Response>>,
}

impl<'d> Doc<'d> {
    /// `schema`, or the component its `$ref` names (components are never references
    /// themselves; the bound only guards against a malformed document).
    fn resolve(&self, mut schema: &'d RefOr<Schema>) -> Option<&'d Schema> {
        for _ in 0..8 {
            match schema {
                RefOr::T(schema) => return Some(schema),
                RefOr::Ref(r) => schema = self.schemas.get(last(&r.ref_location))?,
            }
        }
        None
    }

    /// `text` in parts, each word that names a schema linked to it.
    fn link(&self, text: &str) -> Linked {
        let mut parts: Vec<TypePart> = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let schema = (end > 0 && self.schemas.contains_key(&rest[..end]))
                .then(|| rest[..end].to_string());
            let end = match schema {
                Some(_) => end,
                None => end.max(rest.chars().next().map_or(1, char::len_utf8)),
            };
            match parts.last_mut() {
                Some(last) if last.schema.is_none() && schema.is_none() => {
                    last.text.push_str(&rest[..end])
                }
                _ => parts.push(TypePart {
                    text: rest[..end].to_string(),
                    schema,
                }),
            }
            rest = &rest[end..];
        }
        Linked { parts }
    }

    /// A schema's name (for a `$ref`) or a short description of its type.
    fn type_name(&self, schema: &RefOr<Schema>) -> String {
        let schema = match schema {
            RefOr::Ref(r) => return last(&r.ref_location).to_string(),
            RefOr::T(schema) => schema,
        };
        let (kind, detail, format) = match schema {
            Schema::OneOf(o) => return self.either(&o.items),
            Schema::AnyOf(a) => return self.either(&a.items),
            Schema::AllOf(a) => {
                let names: Vec<String> = a.items.iter().map(|i| self.type_name(i)).collect();
                return names.join(" + ");
            }
            Schema::Object(o) if o.enum_values.is_some() => {
                let values = o.enum_values.iter().flatten().map(Value::to_string);
                return values.collect::<Vec<_>>().join(" | ");
            }
            Schema::Object(o) => {
                let values = match o.additional_properties.as_deref() {
                    Some(AdditionalProperties::RefOr(values)) => Some(values),
                    _ => None,
                };
                let detail = values.map(|v| format!("map of {}", self.type_name(v)));
                (&o.schema_type, detail, o.format.as_ref().map(json))
            }
            Schema::Array(a) => {
                let items = match &a.items {
                    ArrayItems::RefOrSchema(items) => self.type_name(items),
                    ArrayItems::False => "any".to_string(),
                };
                (&a.schema_type, Some(format!("array of {items}")), None)
            }
            _ => return "any".to_string(),
        };
        // A lone `null` is a type of its own; in a list of types it makes the rest nullable.
        let (words, nullable): (Vec<Value>, bool) = match kind {
            SchemaType::Type(ty) => (vec![json(ty)], false),
            SchemaType::Array(types) => (
                types
                    .iter()
                    .filter(|t| **t != Type::Null)
                    .map(json)
                    .collect(),
                types.contains(&Type::Null),
            ),
            SchemaType::AnyValue => (Vec::new(), false),
        };
        let mut name = match (words.as_slice(), detail) {
            ([], _) => "any".to_string(),
            ([one], Some(detail)) if one == "array" || one == "object" => detail,
            (words, _) => words
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" | "),
        };
        if let Some(format) = format {
            name.push_str(&format!(" ({})", text_of(&format)));
        }
        if nullable {
            name.push_str(" or null");
        }
        name
    }

    /// `A | B`, or `A | B or null` when one of the forms is null.
    fn either(&self, forms: &[RefOr<Schema>]) -> String {
        let names: Vec<String> = forms
            .iter()
            .filter(|f| !is_null(f))
            .map(|f| self.type_name(f))
            .collect();
        let joined = names.join(" | ");
        match forms.iter().any(is_null) {
            true => format!("{joined} or null"),
            false => joined,
        }
    }

    /// A property's description: its own, else that of the schema it stands for (a
    /// nullable reference is `oneOf: [null, $ref]`, its description beside the `$ref`).
    fn describe(&self, property: &'d RefOr<Schema>) -> &'d str {
        let schema = match property {
            RefOr::Ref(r) if !r.description.is_empty() => return &r.description,
            RefOr::Ref(_) => return self.resolve(property).and_then(description).unwrap_or(""),
            RefOr::T(schema) => schema,
        };
        if let Some(own) = description(schema) {
            return own;
        }
        let forms = match schema {
            Schema::OneOf(o) => &o.items,
            Schema::AnyOf(a) => &a.items,
            Schema::AllOf(a) => &a.items,
            _ => return "",
        };
        let mut found = forms.iter().map(|form| self.describe(form));
        found.find(|d| !d.is_empty()).unwrap_or("")
    }

    /// The fields of an object schema, through `$ref` and `allOf`.
    fn fields(&self, schema: Option<&'d Schema>) -> Vec<FieldRow> {
        match schema {
            Some(Schema::AllOf(all)) => all
                .items
                .iter()
                .flat_map(|part| self.fields(self.resolve(part)))
                .collect(),
            Some(Schema::Object(object)) => object
                .properties
                .iter()
                .map(|(name, property)| FieldRow {
                    name: name.clone(),
                    ty: self.link(&self.type_name(property)),
                    required: object.required.contains(name),
                    description: first_paragraph(self.describe(property)),
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The objects a body is made of: itself, or each of its forms.
    fn shapes(&self, schema: &'d RefOr<Schema>) -> Vec<Shape> {
        let name = match schema {
            RefOr::Ref(_) => self.type_name(schema),
            RefOr::T(_) => String::new(),
        };
        let resolved = self.resolve(schema);
        if let Some(Schema::OneOf(forms)) = resolved {
            return forms.items.iter().flat_map(|f| self.shapes(f)).collect();
        }
        let fields = self.fields(resolved);
        if fields.is_empty() {
            return Vec::new();
        }
        let description = resolved.and_then(description).unwrap_or("");
        vec![Shape {
            name,
            description: first_paragraph(description),
            fields,
        }]
    }

    fn response(&self, status: &str, response: &'d RefOr<Response>) -> ResponseRow {
        let response = match response {
            RefOr::T(response) => response,
            RefOr::Ref(r) => match self.responses.get(last(&r.ref_location)) {
                Some(RefOr::T(response)) => response,
                _ => panic!("the document lacks the response {}", r.ref_location),
            },
        };
        let content = response.content.iter().next();
        let mut row = ResponseRow {
            status: status.to_string(),
            description: first_paragraph(&response.description),
            content_type: content.map(|(ty, _)| ty.clone()).unwrap_or_default(),
            data: Linked::default(),
            codes: Vec::new(),
            headers: response.headers.keys().cloned().collect(),
            shapes: Vec::new(),
        };
        let Some(schema) = content.and_then(|(_, c)| c.schema.as_ref()) else {
            return row;
        };
        if !status.starts_with('2') {
            row.codes = codes(schema);
            return row;
        }
        // `data` of an enveloped body (the second part of its `allOf`), else the body.
        let data = match schema {
            RefOr::T(Schema::AllOf(all)) => match all.items.as_slice() {
                [RefOr::Ref(first), RefOr::T(Schema::Object(rest)), ..]
                    if first.ref_location == "#/components/schemas/Success" =>
                {
                    rest.properties.get("data")
                }
                _ => None,
            },
            _ => None,
        };
        row.data = self.link(&match data {
            Some(data) => format!("data: {}", self.type_name(data)),
            None => self.type_name(schema),
        });
        let data = data.unwrap_or(schema);
        let element = match data {
            RefOr::T(Schema::Array(a)) if a.schema_type == SchemaType::Type(Type::Array) => {
                match &a.items {
                    ArrayItems::RefOrSchema(items) => items,
                    ArrayItems::False => data,
                }
            }
            _ => data,
        };
        row.shapes = self.shapes(element);
        row
    }

    fn operation(&self, path: &str, method: &str, operation: &'d Operation) -> OperationView {
        let params = operation.parameters.iter().flatten().map(|p| {
            let mut ty = p
                .schema
                .as_ref()
                .map_or("any".into(), |s| self.type_name(s));
            let facts = json(&p.schema);
            if let (Some(min), Some(max)) = (facts.get("minimum"), facts.get("maximum")) {
                ty.push_str(&format!(", {min} to {max}"));
            }
            if let Some(default) = facts.get("default") {
                ty.push_str(&format!(", default {default}"));
            }
            ParamRow {
                name: p.name.clone(),
                location: text_of(&json(&p.parameter_in)).to_string(),
                required: p.required == Required::True,
                ty: self.link(&ty),
                description: Rich::new(p.description.as_deref().unwrap_or_default()),
            }
        });
        let body = operation.request_body.as_ref().map(|body| {
            let content = body.content.iter().next();
            BodyView {
                content_type: content.map(|(ty, _)| ty.clone()).unwrap_or_default(),
                description: first_paragraph(body.description.as_deref().unwrap_or_default()),
                shapes: (content.and_then(|(_, c)| c.schema.as_ref()))
                    .map(|s| self.shapes(s))
                    .unwrap_or_default(),
            }
        });
        let responses = operation.responses.responses.iter();
        let role = operation.extensions.as_ref().and_then(|e| e.get("x-role"));
        OperationView {
            anchor: format!(
                "op-{}",
                operation.operation_id.as_deref().unwrap_or_default()
            ),
            method: method.to_uppercase(),
            path: path.to_string(),
            summary: operation.summary.clone().unwrap_or_default(),
            description: paragraphs(operation.description.as_deref().unwrap_or_default()),
            auth: auth(operation),
            role: role.and_then(Value::as_str).map(str::to_string),
            params: params.collect(),
            body,
            responses: responses.map(|(s, r)| self.response(s, r)).collect(),
        }
    }
}

fn text_of(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// The codes an error body may carry: `code`'s `enum` in a part of its `allOf`.
fn codes(schema: &RefOr<Schema>) -> Vec<u64> {
    let RefOr::T(Schema::AllOf(all)) = schema else {
        return Vec::new();
    };
    let code = all.items.iter().filter_map(|part| match part {
        RefOr::T(Schema::Object(o)) => o.properties.get("code"),
        _ => None,
    });
    let values = code.filter_map(|code| match code {
        RefOr::T(Schema::Object(o)) => o.enum_values.as_ref(),
        _ => None,
    });
    values.flatten().filter_map(Value::as_u64).collect()
}

/// The credentials an operation takes, in words: each alternative, `or` between them.
fn auth(operation: &Operation) -> String {
    let Some(requirements) = &operation.security else {
        return "none".to_string();
    };
    let label = |name: &str| match name {
        API_KEY => "API key (X-API-Key)".to_string(),
        BEARER => "API key (Authorization: Bearer)".to_string(),
        SESSION => "session cookie".to_string(),
        CSRF => "X-CSRF-Token".to_string(),
        other => other.to_string(),
    };
    let alternatives = requirements.iter().map(|requirement| {
        let all = json(requirement);
        let mut names: Vec<&str> = all
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k.as_str())
            .collect();
        names.sort_by_key(|name| RANK.iter().position(|r| r == name));
        match names.is_empty() {
            true => "none".to_string(),
            false => names.into_iter().map(label).collect::<Vec<_>>().join(" + "),
        }
    });
    alternatives.collect::<Vec<_>>().join(", or ")
}

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

impl Doc<'_> {
    /// The operations grouped by their first tag, in the document's tag order (an
    /// operation under a tag the document does not list adds it; an untagged one goes
    /// under `other`); tags without an operation are left out.
    fn tag_sections(&self, document: &OpenApi) -> Vec<TagSection> {
        let mut tags: Vec<TagSection> = (document.tags.iter().flatten())
            .map(|tag| TagSection {
                name: tag.name.clone(),
                description: Rich::new(tag.description.as_deref().unwrap_or_default()),
                operations: Vec::new(),
            })
            .collect();
        for (path, item) in &document.paths.paths {
            let operations = [
                &item.get,
                &item.put,
                &item.post,
                &item.delete,
                &item.options,
                &item.head,
                &item.patch,
                &item.trace,
            ];
            for (method, operation) in METHODS.into_iter().zip(operations) {
                let Some(operation) = operation else { continue };
                let tag = operation
                    .tags
                    .iter()
                    .flatten()
                    .next()
                    .map_or("other", String::as_str);
                let position = match tags.iter().position(|t| t.name == tag) {
                    Some(position) => position,
                    None => {
                        tags.push(TagSection {
                            name: tag.to_string(),
                            description: Rich::new(""),
                            operations: Vec::new(),
                        });
                        tags.len() - 1
                    }
                };
                let view = self.operation(path, method, operation);
                tags[position].operations.push(view);
            }
        }
        tags.retain(|t| !t.operations.is_empty());
        tags
    }
}

impl Reference {
    /// The page's view of the document.
    pub fn of(document: &OpenApi) -> Reference {
        let components = document.components.as_ref();
        let empty = (BTreeMap::new(), BTreeMap::new());
        let doc = Doc {
            schemas: components.map_or(&empty.0, |c| &c.schemas),
            responses: components.map_or(&empty.1, |c| &c.responses),
        };
        let tags = doc.tag_sections(document);
        let schemes = components.into_iter().flat_map(|c| &c.security_schemes);
        let schemes = schemes.map(|(name, scheme)| {
            let scheme = json(scheme);
            SchemeRow {
                name: name.clone(),
                carrier: match text(&scheme, "type") {
                    "apiKey" => format!("{} {}", text(&scheme, "in"), text(&scheme, "name")),
                    "http" => format!("Authorization: {}", text(&scheme, "scheme")),
                    other => other.to_string(),
                },
                description: Rich::new(text(&scheme, "description")),
            }
        });
        let extensions = json(&document.extensions);
        let error_code = doc.schemas.get("ErrorCode").map(json).unwrap_or_default();
        let schemas = doc.schemas.iter().map(|(name, schema)| {
            let fields = doc.fields(doc.resolve(schema));
            let description = doc.resolve(schema).and_then(description);
            SchemaView {
                name: name.clone(),
                description: paragraphs(description.unwrap_or_default()),
                ty: match fields.is_empty() {
                    true => doc.link(&doc.type_name(schema)),
                    false => Linked::default(),
                },
                fields,
            }
        });
        let info = &document.info;
        Reference {
            title: info.title.clone(),
            version: info.version.clone(),
            intro: paragraphs(info.description.as_deref().unwrap_or_default()),
            schemes: schemes.collect(),
            tags,
            datasets: list(&extensions, "x-datasets")
                .iter()
                .map(dataset)
                .collect(),
            codes: list(&error_code, "x-error-codes")
                .iter()
                .map(code)
                .collect(),
            schemas: schemas.collect(),
        }
    }
}

/// One dataset of the catalogue (`x-datasets`).
fn dataset(d: &Value) -> DatasetView {
    let names = |key: &str| list(d, key).iter().filter_map(Value::as_str);
    let defaults: Vec<&str> = names("default_fields").collect();
    DatasetView {
        api_name: text(d, "api_name").to_string(),
        description: text(d, "description").to_string(),
        scope: text(d, "scope").to_string(),
        delayed: d["delayed"].as_bool() == Some(true),
        sort_key: names("sort_key").collect::<Vec<_>>().join(", "),
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
}

/// One error code (`x-error-codes` of the `ErrorCode` schema).
fn code(c: &Value) -> CodeRow {
    CodeRow {
        code: c["code"].as_u64().unwrap_or_default(),
        status: c["status"].as_u64().unwrap_or_default(),
        name: text(c, "name").to_string(),
        meaning: Rich::new(text(c, "meaning")),
    }
}
