//! Query-string parameters of the back office's lists, with the bounds the handlers
//! enforce read from the domain's constants (`src/routes/params.rs` checks them).
//! Any parameter an endpoint does not take, one given twice, or a value out of range is
//! 400 / 40001 naming it.

use iq_actors::accounts::usage::MAX_DAYS;
use iq_actors::audit::Action;
use iq_actors::imports::service::{DEFAULT_LISTED, MAX_LISTED};
use iq_actors::paging::{DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET, MAX_SEARCH_CHARS};
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::Required;
use utoipa::IntoParams;

/// The days of usage a usage endpoint shows when not told (`src/routes/params.rs`).
const DEFAULT_DAYS: u32 = 30;
/// The longest id a filter takes (`src/routes/params.rs`).
const MAX_ID_CHARS: usize = 64;

fn query(name: &str, schema: ObjectBuilder, description: &str) -> Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .required(Required::False)
        .description(Some(description))
        .schema(Some(schema))
        .build()
}

fn integer(min: i64, max: i64, default: i64) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .minimum(Some(min))
        .maximum(Some(max))
        .default(Some(default.into()))
}

fn page(default_limit: i64, max_limit: i64) -> Vec<Parameter> {
    vec![
        query(
            "limit",
            integer(1, max_limit, default_limit),
            &format!("rows in the page, 1 to {max_limit} (default {default_limit})"),
        ),
        query(
            "offset",
            integer(0, MAX_OFFSET, 0),
            "rows to skip (default 0); an offset past the end is an empty page",
        ),
    ]
}

fn search() -> Parameter {
    query(
        "q",
        ObjectBuilder::new()
            .schema_type(Type::String)
            .max_length(Some(MAX_SEARCH_CHARS)),
        &format!(
            "rows whose name contains it, in any letter case; at most {MAX_SEARCH_CHARS} \
             characters without control characters; `%`, `_` and `\\` are not wildcards"
        ),
    )
}

/// `limit`, `offset` and `q` (users by user name).
pub struct UserListParams;

impl IntoParams for UserListParams {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        let mut params = page(DEFAULT_LIMIT, MAX_LIMIT);
        params.push(search());
        params
    }
}

/// `limit`, `offset`, `user_id` and `q` (keys by name).
pub struct KeyListParams;

impl IntoParams for KeyListParams {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        let mut params = page(DEFAULT_LIMIT, MAX_LIMIT);
        params.push(query(
            "user_id",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .max_length(Some(MAX_ID_CHARS)),
            "only this owner's keys (an id that is nobody's matches nothing)",
        ));
        params.push(search());
        params
    }
}

/// `limit`, `offset` and the filters of the audit trail (newest first).
pub struct AuditParams;

impl IntoParams for AuditParams {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        let text = |max: usize| {
            ObjectBuilder::new()
                .schema_type(Type::String)
                .max_length(Some(max))
        };
        let day = || {
            text(10).format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                utoipa::openapi::KnownFormat::Date,
            )))
        };
        let mut params = page(DEFAULT_LIMIT, MAX_LIMIT);
        params.extend([
            query("actor", text(200), "only changes made by this user name"),
            query(
                "action",
                text(40).enum_values(Some(Action::ALL.map(Action::as_str))),
                "only this action",
            ),
            query(
                "target",
                text(200),
                "only changes of this kind of thing (`user`, `key`, `tier`, `index`, \
                 `calendar`, `import`, `webhook`) or of one thing (`user:42`, `index:GPU_Index`)",
            ),
            query("from", day(), "only changes made on this UTC day or later"),
            query("to", day(), "only changes made on this UTC day or earlier"),
        ]);
        params
    }
}

/// `limit` and `offset` of the import list (newest first).
pub struct ImportListParams;

impl IntoParams for ImportListParams {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        page(DEFAULT_LISTED, MAX_LISTED)
    }
}

/// `days` of usage.
pub struct DaysParam;

impl IntoParams for DaysParam {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![query(
            "days",
            integer(1, i64::from(MAX_DAYS), i64::from(DEFAULT_DAYS)),
            &format!("UTC days of usage, newest first, 1 to {MAX_DAYS} (default {DEFAULT_DAYS})"),
        )]
    }
}

/// `GET /api/v1/events`: `after`, `limit`, `wait`.
pub struct FeedParams;

impl IntoParams for FeedParams {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        use iq_actors::events::{DEFAULT_LIMIT, MAX_LIMIT, MAX_WAIT};
        let wait = i64::try_from(MAX_WAIT.as_secs()).unwrap_or(i64::MAX);
        vec![
            query(
                "after",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .pattern(Some("^evt_[0-9]{1,19}$")),
                "the last event id seen (`next` of the previous page); from the first event \
                 when absent",
            ),
            query(
                "limit",
                integer(1, MAX_LIMIT.into(), DEFAULT_LIMIT.into()),
                &format!("events in the page, 1 to {MAX_LIMIT} (default {DEFAULT_LIMIT})"),
            ),
            query(
                "wait",
                integer(0, wait, 0),
                &format!(
                    "seconds to hold an empty answer until an event arrives, 0 to {wait} \
                     (default 0)"
                ),
            ),
        ]
    }
}
