//! `POST /api/v1/query`: its body and answer, built at run time from the dataset
//! catalogue ([`DATASETS`]), the single source of validation and SQL, so no dataset,
//! parameter or field is written here by hand. One request schema per dataset joins a
//! `oneOf` on `api_name`; one `...Fields` schema per dataset types its columns; and the
//! catalogue itself is the document's `x-datasets` (what `iq-service catalogue` prints).//!
//! Here the operation and the schemas of the whole body and answer; each dataset's own
//! request and fields schemas are built in [`per_dataset`].

mod per_dataset;

use std::borrow::Cow;

use iq_actors::catalogue::DATASETS;
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::schema::{
    ArrayBuilder, Discriminator, ObjectBuilder, OneOfBuilder, Schema, SchemaType, Type,
};
use utoipa::openapi::{OpenApi, Ref, RefOr};
use utoipa::{Modify, PartialSchema, ToSchema};

use super::errors::{BadRequest, Forbidden, InternalError, TooManyRequests, Unauthorized};
use per_dataset::{fields_schema, request_schema};
pub use per_dataset::{fields_schema_name, request_schema_name};

/// Query a dataset
///
/// One page of one dataset of the catalogue (`api_name`), filtered by `params`, with the
/// columns `fields` in that order, sorted by the dataset's sort key. Callers: an API key
/// (`X-API-Key` or `Authorization: Bearer`), a website session (the cookie) or a visitor
/// (neither); what each may see is in docs/api.md ("Who sees what"). A present key
/// header always means key identity, even with a cookie.
///
/// Decimals are strings with a fixed number of fractional digits, dates `YYYYMMDD`,
/// absent values `null`. `limit` larger than the server's cap (`MAX_LIMIT`, at most
/// 5000) or the tier's `max_rows` is reduced to it, and `data.limit` says the value
/// used. Page with `offset = offset + returned` while `has_more`, keeping `end_date`
/// fixed. A query matching nothing is a success with `items: []`; so is naming a
/// private or unknown index.
///
/// Every answer to a call with a valid key, refusals included, carries the
/// `X-RateLimit-*`, `RateLimit` and `RateLimit-Policy` headers; a 429 also
/// `Retry-After`. Key checks come first (401, 403), then the body (400), then scope and
/// range (403), then the quota (429). Callers without a key are limited per minute
/// (`WEBSITE_PER_MINUTE`), with no quota.
///
/// With `Accept: text/csv` a success is CSV instead (`text/csv; charset=utf-8`): a header
/// row of `data.fields`, then one RFC 4180 line per item (CRLF line ends), each cell
/// exactly the JSON value (`null` an empty cell, never escaped for spreadsheets), and
/// the page in the headers `X-Limit`, `X-Offset`, `X-Returned` and `X-Has-More`.
/// Errors stay JSON envelopes.
#[utoipa::path(
    post,
    path = "/api/v1/query",
    tag = "query",
    operation_id = "query",
    request_body(
        content = QueryRequest,
        content_type = "application/json",
        description = "The dataset, its filters, the columns and the page."
    ),
    responses(
        (
            status = 200,
            description = "One page of rows: the envelope, or with `Accept: text/csv` the \
                           page as CSV (a header row of `data.fields`, then one RFC 4180 line \
                           per item; `X-Limit`, `X-Offset`, `X-Returned` and `X-Has-More` \
                           carry the rest of `data`).",
            content(
                (QueryPage = "application/json"),
                (
                    String = "text/csv; charset=utf-8",
                    example = json!("trade_date,index_value\r\n20260105,1003.417711\r\n")
                ),
            ),
            headers(
                ("X-Limit" = u32, description = "CSV answers only: `data.limit`, the page size used."),
                ("X-Offset" = u64, description = "CSV answers only: `data.offset`, the rows skipped."),
                ("X-Returned" = u32, description = "CSV answers only: `data.returned`, the rows in the body."),
                ("X-Has-More" = bool, description = "CSV answers only: `data.has_more`, `true` or `false`."),
            ),
        ),
        (status = 400, response = inline(BadRequest)),
        (status = 401, response = inline(Unauthorized)),
        (status = 403, response = inline(Forbidden)),
        (status = 429, response = inline(TooManyRequests)),
        (status = 500, response = inline(InternalError)),
    ),
    security((), ("api_key" = []), ("bearer" = []), ("session" = [])),
)]
#[allow(dead_code)]
fn query() {}

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

/// The name of a dataset.
pub struct DatasetName;

impl PartialSchema for DatasetName {
    fn schema() -> RefOr<Schema> {
        string()
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
                integer()
                    .minimum(Some(1))
                    .description(Some("the page size used, after the caps")),
            )
            .required("limit")
            .property(
                "offset",
                integer().minimum(Some(0)).description(Some("rows skipped")),
            )
            .required("offset")
            .property(
                "returned",
                integer()
                    .minimum(Some(0))
                    .description(Some("rows in `items`")),
            )
            .required("returned")
            .property(
                "has_more",
                ObjectBuilder::new()
                    .schema_type(Type::Boolean)
                    .description(Some(
                        "whether rows follow: ask again with `offset + returned`",
                    )),
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
