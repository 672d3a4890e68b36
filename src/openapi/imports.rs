//! The schemas of `/api/v1/admin/imports` (handled in `src/routes/imports.rs`): quote
//! files in, all or nothing (D8), and the record of every
//! attempt. Administrators and super administrators.

use utoipa::ToSchema;

// The answers derive their schemas where they are defined, in the domain crate (its
// `openapi` feature).
pub use iq_actors::imports::{ImportDetail, ImportOutcome, ImportRecord};

/// The upload: one file part named `file`.
// The multipart form `http::upload` reads field by field: no type holds it, so this
// one exists for the schema only.
#[derive(ToSchema)]
#[allow(dead_code)] // never built: it only derives the schema
pub struct ImportUpload {
    /// the quote file, `.xlsx` or `.csv` by its file name
    #[schema(format = Binary, content_media_type = "application/octet-stream")]
    file: String,
    /// why the file is imported (a correction's reason): at most 500 characters, kept
    /// as the `reason` of every revision it makes
    #[schema(max_length = 500)]
    note: Option<String>,
}
