//! The name of a dataset as the OpenAPI document describes it: one of the catalogue's
//! `api_name`s. Here, beside the catalogue, so that every answer naming datasets (the
//! query's body, the site's configuration) can say so without depending on the document.

use std::borrow::Cow;

use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

use super::DATASETS;

/// The name of a dataset (`DatasetName` in the document).
pub struct DatasetName;

impl PartialSchema for DatasetName {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(DATASETS.iter().map(|d| d.api_name)))
            .description(Some("the `api_name` of a dataset of the catalogue"))
            .into()
    }
}

impl ToSchema for DatasetName {
    fn name() -> Cow<'static, str> {
        "DatasetName".into()
    }
}
