//! `GET /docs`: the document as a page people read, with the site's stylesheet and no
//! script (the policy forbids inline script): the endpoints by tag with their
//! parameters, bodies and answers, the dataset catalogue (`x-datasets`), the error codes
//! (`x-error-codes`), the credentials and the schemas.
//!
//! This file holds what the template (`templates/docs.html`) shows and renders it;
//! `read.rs` fills it from the served document. Nothing here may read the document
//! or describe the API itself: the page must not say anything the document does not.

use actix_web::http::StatusCode;
use askama::Template;

use crate::http::RequestId;
use crate::site::assets::{CSS, ICON};
use crate::site::respond::{render, Caching, PageError, PageResult};

mod read;

/// A page of `reference`: `GET /docs` (`section` `None`: the overview with the index
/// of endpoints, the datasets, the error codes and the credentials), `GET /docs/{tag}`
/// (one group of endpoints in full) or `GET /docs/schemas`. A page of its own per part
/// keeps each one small enough to read on a phone. An unknown section is a 404 page.
pub fn docs_page(reference: &Reference, section: Option<&str>) -> PageResult {
    let request_id = RequestId::current();
    let (part, tag, heading) = match section {
        None => ("overview", None, "API reference".to_owned()),
        Some("schemas") => ("schemas", None, "Schemas".to_owned()),
        Some(name) => {
            let tag = reference
                .tags
                .iter()
                .find(|t| t.name == name)
                .ok_or_else(|| PageError::not_found("There is no such part of the reference."))?;
            ("tag", Some(tag), format!("Endpoints: {}", tag.name))
        }
    };
    let page = DocsPage {
        reference,
        part,
        tag,
        heading,
        css: CSS.href(),
        icon: ICON.href(),
        request_id: request_id.as_str(),
    };
    render(&page, StatusCode::OK, Caching::Visitor)
}

#[derive(Template)]
#[template(path = "docs.html")]
struct DocsPage<'a> {
    reference: &'a Reference,
    /// `overview`, `tag` or `schemas`.
    part: &'static str,
    tag: Option<&'a TagSection>,
    heading: String,
    css: String,
    icon: String,
    request_id: &'a str,
}

/// The whole page, read once from the document (`Reference::of`).
pub struct Reference {
    pub title: String,
    pub version: String,
    pub intro: Vec<Rich>,
    pub schemes: Vec<SchemeRow>,
    pub tags: Vec<TagSection>,
    pub datasets: Vec<DatasetView>,
    pub codes: Vec<CodeRow>,
    pub schemas: Vec<SchemaView>,
}

/// A type in words, each part that names a schema linked to its entry.
#[derive(Default)]
pub struct Linked {
    pub parts: Vec<TypePart>,
}

pub struct TypePart {
    pub text: String,
    /// The schema this part names, if any.
    pub schema: Option<String>,
}

/// A component schema: its fields, or for one that is not an object, its type.
pub struct SchemaView {
    pub name: String,
    pub description: Vec<Rich>,
    pub ty: Linked,
    pub fields: Vec<FieldRow>,
}

pub struct SchemeRow {
    pub name: String,
    pub carrier: String,
    pub description: Rich,
}

pub struct TagSection {
    pub name: String,
    pub description: Rich,
    pub operations: Vec<OperationView>,
}

pub struct OperationView {
    pub anchor: String,
    pub method: String,
    pub path: String,
    pub summary: String,
    pub description: Vec<Rich>,
    pub auth: String,
    pub role: Option<String>,
    pub params: Vec<ParamRow>,
    pub body: Option<BodyView>,
    pub responses: Vec<ResponseRow>,
}

pub struct ParamRow {
    pub name: String,
    pub location: String,
    pub required: bool,
    pub ty: Linked,
    pub description: Rich,
}

pub struct BodyView {
    pub content_type: String,
    pub description: Rich,
    pub shapes: Vec<Shape>,
}

/// An object's fields under a name: a body, one form of a body, or `data`.
pub struct Shape {
    pub name: String,
    pub description: Rich,
    pub fields: Vec<FieldRow>,
}

pub struct FieldRow {
    pub name: String,
    pub ty: Linked,
    pub required: bool,
    pub description: Rich,
}

pub struct ResponseRow {
    pub status: String,
    pub description: Rich,
    pub content_type: String,
    /// The type of `data` (or of the body, outside the envelope).
    pub data: Linked,
    pub codes: Vec<u64>,
    pub headers: Vec<String>,
    pub shapes: Vec<Shape>,
}

pub struct DatasetView {
    pub api_name: String,
    pub description: String,
    pub scope: String,
    pub delayed: bool,
    pub sort_key: String,
    pub params: Vec<(String, String)>,
    pub fields: Vec<DatasetField>,
}

pub struct DatasetField {
    pub name: String,
    pub kind: String,
    pub default: bool,
    pub description: String,
}

pub struct CodeRow {
    pub code: u64,
    pub status: u64,
    pub name: String,
    pub meaning: Rich,
}

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
        let spans = text.split('`').enumerate().filter(|(_, t)| !t.is_empty());
        Rich {
            spans: spans
                .map(|(i, t)| Span {
                    code: i % 2 == 1,
                    text: t.to_string(),
                })
                .collect(),
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
    let first = paragraphs(text).into_iter().next();
    first.unwrap_or(Rich { spans: Vec::new() })
}
