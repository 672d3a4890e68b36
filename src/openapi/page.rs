//! `GET /docs`: the document as a page people read, rendered on the server from the
//! same JSON the API serves (so the page cannot say anything the document does not),
//! with the site's stylesheet and no script: the endpoints by tag with their
//! parameters, bodies and answers, the dataset catalogue (`x-datasets`) and the error
//! codes (`x-error-codes`).
//!
//! This file serves the page and assembles it, once, from the document's parts; the
//! parts are read by `page_schemas.rs` (types and fields) and `page_operations.rs` (one
//! operation), shown through `page_views.rs`, their prose by `page_text.rs`. Nothing
//! here may describe the API from anywhere but the served document.

use super::ordered::Json as Value;
use actix_web::http::StatusCode;
use askama::Template;

use crate::http::RequestId;
use crate::site::assets::{CSS, ICON};
use crate::site::respond::{render, Caching, PageResult};

use super::page_schemas::{list, text, Doc};
use super::page_text::{paragraphs, Rich};
use super::page_views::{CodeRow, DatasetField, DatasetView, Reference, SchemeRow, TagSection};

/// The page of `reference` (`GET /docs`).
pub fn docs_page(reference: &Reference) -> PageResult {
    let request_id = RequestId::current();
    let page = DocsPage {
        reference,
        css: CSS.href(),
        icon: ICON.href(),
        request_id: request_id.as_str(),
    };
    render(&page, StatusCode::OK, Caching::Visitor)
}

impl Reference {
    /// The page's view of a document, from its JSON.
    pub fn of(json: &str) -> Reference {
        let document: Value = serde_json::from_str(json).expect("the document is JSON");
        Reference::read(&document)
    }
}

#[derive(Template)]
#[template(path = "docs.html")]
struct DocsPage<'a> {
    reference: &'a Reference,
    css: String,
    icon: String,
    request_id: &'a str,
}

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
