//! What the /docs page shows, as its template reads it: one view per part of the
//! document (operations, parameters, bodies, answers, datasets, codes, schemas).
//! Built by `page.rs`, `page_schemas.rs` and `page_operations.rs`; nothing here reads
//! the document itself.

use super::page_text::Rich;

/// A type's name with the schemas it names linked to their entries.
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
