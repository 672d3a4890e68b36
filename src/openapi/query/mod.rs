//! `POST /api/v1/query`: its body and answer, built at run time from the dataset
//! catalogue ([`DATASETS`]), the single source of validation and SQL, so no dataset,
//! parameter or field is written here by hand. One request schema per dataset joins a
//! `oneOf` on `api_name`; one `...Fields` schema per dataset types its columns; and the
//! catalogue itself is the document's `x-datasets` (what `iq-service catalogue` prints).
//!
//! Here the schemas of the whole body and answer; each dataset's own
//! request and fields schemas are built in [`per_dataset`].

mod per_dataset;

use std::borrow::Cow;

use iq_actors::catalogue::{DatasetName, DATASETS};
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::schema::{
    ArrayBuilder, Discriminator, ObjectBuilder, OneOfBuilder, Schema, SchemaType, Type,
};
use utoipa::openapi::{OpenApi, Ref, RefOr};
use utoipa::{Modify, PartialSchema, ToSchema};

use super::typed;
use per_dataset::{fields_schema, request_schema};
pub use per_dataset::{fields_schema_name, request_schema_name};

/// A string schema.
fn string() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String)
}

/// An integer schema.
fn integer() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::Integer)
}

/// `{api_name, params, fields, limit, offset}`: one of the datasets' bodies.
pub struct QueryRequest;

impl PartialSchema for QueryRequest {
    fn schema() -> RefOr<Schema> {
        let mapping = DATASETS.iter().map(|d| {
            (
                d.api_name,
                format!("#/components/schemas/{}", request_schema_name(d)),
            )
        });
        let mut one_of = OneOfBuilder::new()
            .description(Some(format!(
                "`api_name` picks the dataset: one of `{}`. Each dataset's parameters and \
                 fields are its own; an unknown one is 400 / 40001 naming it.",
                DATASETS
                    .iter()
                    .map(|d| d.api_name)
                    .collect::<Vec<_>>()
                    .join("`, `")
            )))
            .discriminator(Some(Discriminator::with_mapping("api_name", mapping)));
        for dataset in &DATASETS {
            one_of = one_of.item(Ref::from_schema_name(request_schema_name(dataset)));
        }
        one_of.into()
    }
}

impl ToSchema for QueryRequest {
    fn name() -> Cow<'static, str> {
        "QueryRequest".into()
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        for dataset in &DATASETS {
            schemas.push((request_schema_name(dataset), request_schema(dataset).into()));
            schemas.push((fields_schema_name(dataset), fields_schema(dataset).into()));
        }
        schemas.push((DatasetName::name().into(), DatasetName::schema()));
    }
}

/// `data` of a query's answer.
pub struct QueryPage;

impl PartialSchema for QueryPage {
    fn schema() -> RefOr<Schema> {
        let cell = ObjectBuilder::new()
            .schema_type(SchemaType::from_iter([
                Type::String,
                Type::Integer,
                Type::Boolean,
                Type::Null,
            ]))
            .description(Some("typed as the dataset's `...Fields` schema says"));
        ObjectBuilder::new()
            .description(Some("One page of a dataset."))
            .property(
                "fields",
                ArrayBuilder::new()
                    .items(string())
                    .description(Some("the columns of `items`, in order")),
            )
            .required("fields")
            .property(
                "items",
                ArrayBuilder::new()
                    .items(ArrayBuilder::new().items(cell))
                    .description(Some(
                        "the rows, in the dataset's order; each an array of values in the order \
                         of `fields`",
                    )),
            )
            .required("items")
            .property(
                "limit",
                typed(Type::Integer, "the page size used, after the caps").minimum(Some(1)),
            )
            .required("limit")
            .property(
                "offset",
                typed(Type::Integer, "rows skipped").minimum(Some(0)),
            )
            .required("offset")
            .property(
                "returned",
                typed(Type::Integer, "rows in `items`").minimum(Some(0)),
            )
            .required("returned")
            .property(
                "has_more",
                typed(
                    Type::Boolean,
                    "whether rows follow: ask again with `offset + returned`",
                ),
            )
            .required("has_more")
            .into()
    }
}

impl ToSchema for QueryPage {
    fn name() -> Cow<'static, str> {
        "QueryPage".into()
    }
}

/// The catalogue as `iq-service catalogue` prints it, as the document's `x-datasets`.
pub struct Catalogue;

impl Modify for Catalogue {
    fn modify(&self, openapi: &mut OpenApi) {
        let datasets = serde_json::to_value(&DATASETS).expect("the catalogue serialises");
        let extensions = openapi.extensions.get_or_insert_with(Default::default);
        extensions.merge(ExtensionsBuilder::new().add("x-datasets", datasets).build());
    }
}
