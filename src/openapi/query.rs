//! `POST /api/v1/query`: its body and answer, built at run time from the dataset
//! catalogue ([`DATASETS`]), the single source of validation and SQL, so no dataset,
//! parameter or field is written here by hand. One request schema per dataset joins a
//! `oneOf` on `api_name`; one `...Fields` schema per dataset types its columns; and the
//! catalogue itself is the document's `x-datasets` (what `iq-service catalogue` prints).

use std::borrow::Cow;

use iq_actors::catalogue::{Dataset, ParamRole, ValueKind, DATASETS};
use iq_actors::query::{DEFAULT_LIMIT, MAX_PARAM_CHARS};
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::schema::{
    AdditionalProperties, ArrayBuilder, Discriminator, KnownFormat, ObjectBuilder, OneOfBuilder,
    Schema, SchemaFormat, SchemaType, Type,
};
use utoipa::openapi::{OpenApi, Ref, RefOr};
use utoipa::{Modify, PartialSchema, ToSchema};

use super::errors::{BadRequest, Forbidden, InternalError, TooManyRequests, Unauthorized};

pub const PATH: &str = "/api/v1/query";

/// The server's largest `limit` when `MAX_LIMIT` is not set (`src/settings.rs`).
const DEFAULT_MAX_LIMIT: u32 = 5000;

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

/// `IndexDaily` for `index_daily`.
fn camel(api_name: &str) -> String {
    api_name
        .split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// `IndexDailyQuery`: the body asking for `index_daily`.
pub fn request_schema_name(dataset: &Dataset) -> String {
    format!("{}Query", camel(dataset.api_name))
}

/// `IndexDailyFields`: what each column of `index_daily` holds.
pub fn fields_schema_name(dataset: &Dataset) -> String {
    format!("{}Fields", camel(dataset.api_name))
}

fn string() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String)
}

fn integer() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::Integer)
}

/// One sentence on a dataset's rules: scope, delay, detail, order, default fields.
fn rules(dataset: &Dataset) -> String {
    let mut text = format!(
        "{}. Scope `{}`; member delay {}",
        capitalised(dataset.description),
        dataset.scope.as_str(),
        if dataset.delayed {
            "applies"
        } else {
            "does not apply"
        },
    );
    if dataset.detail_only {
        text.push_str("; rows only for indexes whose detail the caller may see");
    }
    text.push_str(&format!(
        "; sorted by `{}`. Default fields: `{}`.",
        dataset.sort_key.join(", "),
        dataset.default_fields.join("`, `")
    ));
    text
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().collect::<String>() + chars.as_str())
        .unwrap_or_default()
}

fn param_schema(role: ParamRole, description: &str) -> ObjectBuilder {
    let schema = string()
        .min_length(Some(1))
        .max_length(Some(MAX_PARAM_CHARS));
    const DATE: &str = "[0-9]{8}|[0-9]{4}-[0-9]{2}-[0-9]{2}";
    const INSTANT: &str =
        "[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})";
    match role {
        role if role.is_date() => schema
            .pattern(Some(format!("^({DATE})$")))
            .description(Some(format!(
                "{description}; a real date as `YYYYMMDD` or `YYYY-MM-DD`"
            ))),
        ParamRole::AsOf => schema
            .pattern(Some(format!("^({DATE}|{INSTANT})$")))
            .description(Some(format!(
                "{description}; for example `2026-11-20T18:00:00Z` or `20261120`"
            ))),
        ParamRole::UpdatedSince => schema
            .pattern(Some(format!("^{INSTANT}$")))
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .description(Some(format!(
                "{description}; for example `2026-11-20T18:00:00Z`"
            ))),
        _ => schema.description(Some(description)),
    }
}

/// The body for one dataset.
fn request_schema(dataset: &Dataset) -> Schema {
    let mut params = ObjectBuilder::new()
        .additional_properties(Some(AdditionalProperties::FreeForm(false)))
        .description(Some(format!(
            "Filters, each a non-empty string of at most {MAX_PARAM_CHARS} characters; \
             omit the ones you do not use. Allowed: `{}`.",
            dataset
                .params
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join("`, `")
        )));
    for param in dataset.params {
        params = params.property(param.name, param_schema(param.role, param.description));
    }
    let fields = ArrayBuilder::new()
        .items(string().enum_values(Some(dataset.fields.iter().map(|f| f.name))))
        .unique_items(true)
        .default(Some(dataset.default_fields.into()))
        .description(Some(format!(
            "The columns to return, in this order, each once. Absent, null or empty: the \
             default fields. What each holds: `{}`.",
            fields_schema_name(dataset)
        )));
    ObjectBuilder::new()
        .title(Some(dataset.api_name))
        .description(Some(rules(dataset)))
        .additional_properties(Some(AdditionalProperties::FreeForm(false)))
        .property("api_name", string().enum_values(Some([dataset.api_name])))
        .required("api_name")
        .property("params", params)
        .property("fields", fields)
        .property(
            "limit",
            integer()
                .minimum(Some(1))
                .default(Some(DEFAULT_LIMIT.into()))
                .description(Some(format!(
                    "rows per page (default {DEFAULT_LIMIT}); a larger one is reduced to the \
                     server's cap (`MAX_LIMIT`, default and at most {DEFAULT_MAX_LIMIT}) and \
                     the tier's `max_rows`: `data.limit` says the value used"
                ))),
        )
        .property(
            "offset",
            integer()
                .minimum(Some(0))
                .default(Some(0.into()))
                .description(Some("rows to skip (default 0)")),
        )
        .build()
        .into()
}

/// The type of one field's values on the wire.
fn value_schema(kind: ValueKind) -> ObjectBuilder {
    let nullable = |ty: Type| SchemaType::from_iter([ty, Type::Null]);
    match kind {
        ValueKind::Text => ObjectBuilder::new().schema_type(nullable(Type::String)),
        ValueKind::Date => ObjectBuilder::new()
            .schema_type(nullable(Type::String))
            .pattern(Some("^[0-9]{8}$"))
            .format(Some(SchemaFormat::Custom("YYYYMMDD".into()))),
        ValueKind::Integer => ObjectBuilder::new().schema_type(nullable(Type::Integer)),
        ValueKind::Boolean => ObjectBuilder::new().schema_type(nullable(Type::Boolean)),
        ValueKind::Decimal { scale } => ObjectBuilder::new()
            .schema_type(nullable(Type::String))
            .pattern(Some(format!("^-?[0-9]+\\.[0-9]{{{scale}}}$")))
            .format(Some(SchemaFormat::Custom(format!("decimal({scale})")))),
        ValueKind::Timestamp => ObjectBuilder::new()
            .schema_type(nullable(Type::String))
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime))),
    }
}

/// What a dataset's columns hold. The rows of `data.items` are arrays in the order of
/// `data.fields`, so this is a key to their values, not the shape of a row.
fn fields_schema(dataset: &Dataset) -> Schema {
    let mut schema = ObjectBuilder::new()
        .title(Some(format!("{} fields", dataset.api_name)))
        .description(Some(format!(
            "The fields of `{}` and their values. A row of `data.items` is an array whose \
             n-th value is the field named by the n-th entry of `data.fields`; values are \
             typed as here, null when absent. Decimals are strings with exactly the digits \
             shown: parse them as decimals, never as floats.",
            dataset.api_name
        )));
    for field in dataset.fields {
        let default = if dataset.default_fields.contains(&field.name) {
            " (a default field)"
        } else {
            ""
        };
        schema = schema.property(
            field.name,
            value_schema(field.kind).description(Some(format!("{}{default}", field.description))),
        );
    }
    schema.build().into()
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
