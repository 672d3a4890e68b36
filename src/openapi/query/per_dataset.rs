//! The schemas of one dataset, built from its catalogue entry: the request body that
//! asks for it (`IndexDailyQuery`: parameters, fields, page) and the key to its columns
//! (`IndexDailyFields`), with the names they are filed under.
//!
//! Everything is read from [`iq_actors::catalogue`] and the domain's constants; no
//! dataset, parameter or field may be written here by hand.

use iq_actors::catalogue::{Dataset, ParamRole, ValueKind};
use iq_actors::query::{DEFAULT_LIMIT, LIMIT_CAP, MAX_PARAM_CHARS};
use utoipa::openapi::schema::{
    AdditionalProperties, ArrayBuilder, KnownFormat, ObjectBuilder, Schema, SchemaFormat,
    SchemaType, Type,
};

use super::{integer, string};

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
        ParamRole::UpdatedSince | ParamRole::PublishedAfter { .. } => schema
            .pattern(Some(format!("^{INSTANT}$")))
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .description(Some(format!(
                "{description}; for example `2026-11-20T18:00:00Z`"
            ))),
        _ => schema.description(Some(description)),
    }
}

/// The body for one dataset.
pub(super) fn request_schema(dataset: &Dataset) -> Schema {
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
                     server's cap (`MAX_LIMIT`, default and at most {LIMIT_CAP}) and \
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
        // Tushare's wire only (D24): no native dataset has such a field.
        ValueKind::Number { scale } => ObjectBuilder::new()
            .schema_type(nullable(Type::Number))
            .format(Some(SchemaFormat::Custom(format!("decimal({scale})")))),
    }
}

/// What a dataset's columns hold. The rows of `data.items` are arrays in the order of
/// `data.fields`, so this is a key to their values, not the shape of a row.
pub(super) fn fields_schema(dataset: &Dataset) -> Schema {
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
