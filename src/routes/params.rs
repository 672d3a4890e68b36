//! Query-string parameters of the GET endpoints that take any. Each endpoint's are one
//! struct that says both how they are read (`Deserialize`) and how the document
//! describes them (`IntoParams`; the bounds come from the domain's constants through
//! the `schema_with` functions here, since utoipa takes only literals for bounds). Any
//! parameter the struct does not have, one given twice, or a value out of its bounds is
//! 400 / 40001 naming the parameter. The bounds themselves are the domain's
//! ([`PageRequest`], [`SearchText`](iq_actors::paging::SearchText), [`usage::MAX_DAYS`], the feed's and the import
//! list's limits).
//!
//! Fields hold the text as given: each is checked by the function that turns it into
//! the domain's value ([`page`], [`days`], `SearchText::new`, ...), whose refusal names it.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{OnceLock, PoisonError, RwLock};

use actix_web::web;
use iq_actors::accounts::usage;
use iq_actors::audit::Action;
use iq_actors::imports::service::{DEFAULT_LISTED, MAX_LISTED};
use iq_actors::paging::PageRequest;
use iq_actors::paging::{DEFAULT_LIST_ROWS, MAX_LIST_ROWS, MAX_OFFSET, MAX_SEARCH_CHARS};
use iq_actors::ApiError;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use utoipa::openapi::path::ParameterIn;
use utoipa::openapi::schema::{KnownFormat, Object, ObjectBuilder, SchemaFormat, Type};
use utoipa::IntoParams;

/// The longest id a filter takes (ids are opaque, and short).
const MAX_ID_CHARS: usize = 64;
/// The days of usage shown when the client does not say.
const DEFAULT_DAYS: u32 = 30;

/// `query` read as `T`: only `T`'s parameters, each at most once.
pub fn parse<T: DeserializeOwned + IntoParams + 'static>(query: &str) -> Result<T, ApiError> {
    let invalid = || ApiError::invalid("the query string is not valid");
    let pairs = web::Query::<Vec<(String, String)>>::from_query(query)
        .map_err(|_| invalid())?
        .into_inner();
    let allowed = names_of::<T>();
    for (i, (name, _)) in pairs.iter().enumerate() {
        if !allowed.contains(name) {
            return Err(ApiError::invalid(format!(
                "unknown query parameter '{}'; expected {}",
                name.chars().take(50).collect::<String>(),
                allowed.join(", ")
            )));
        }
        if pairs[..i].iter().any(|(other, _)| other == name) {
            return Err(ApiError::invalid(format!(
                "query parameter '{name}' is given twice"
            )));
        }
    }
    web::Query::<T>::from_query(query)
        .map(web::Query::into_inner)
        .map_err(|_| invalid())
}

/// `T`'s parameter names, as its `IntoParams` says them. Working them out builds every
/// parameter's schema, so it is done once per type, not on every request.
fn names_of<T: IntoParams + 'static>() -> &'static [String] {
    static NAMES: OnceLock<RwLock<HashMap<TypeId, &'static [String]>>> = OnceLock::new();
    let names = NAMES.get_or_init(Default::default);
    let known = names
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&TypeId::of::<T>())
        .copied();
    known.unwrap_or_else(|| {
        let listed: Vec<String> = T::into_params(|| Some(ParameterIn::Query))
            .into_iter()
            .map(|p| p.name)
            .collect();
        // Leaked once per query type: a handful of short lists for the process's life.
        let listed: &'static [String] = Vec::leak(listed);
        let mut names = names.write().unwrap_or_else(PoisonError::into_inner);
        *names.entry(TypeId::of::<T>()).or_insert(listed)
    })
}

/// A whole number, when given; `what` completes "`name` must be a whole number ...".
fn integer(name: &str, text: Option<&str>, what: &str) -> Result<Option<i64>, ApiError> {
    text.map(|text| {
        text.parse::<i64>()
            .map_err(|_| ApiError::invalid(format!("{name} must be a whole number {what}")))
    })
    .transpose()
}

/// `limit` (1..=`max_limit`, default `default_limit`) and `offset` (default 0).
pub fn page(
    limit: Option<&str>,
    offset: Option<&str>,
    default_limit: i64,
    max_limit: i64,
) -> Result<PageRequest, ApiError> {
    let limit = integer("limit", limit, &format!("from 1 to {max_limit}"))?;
    let offset = integer("offset", offset, &format!("from 0 to {MAX_OFFSET}"))?;
    PageRequest::new(limit, offset, default_limit, max_limit)
}

/// The back office's lists: `limit` 1..=500, default 50, and `offset`.
pub fn standard_page(limit: Option<&str>, offset: Option<&str>) -> Result<PageRequest, ApiError> {
    page(limit, offset, DEFAULT_LIST_ROWS, MAX_LIST_ROWS)
}

/// A whole number from `min` to `max`, `default` when not given.
pub fn bounded(
    name: &str,
    text: Option<&str>,
    min: i64,
    max: i64,
    default: i64,
) -> Result<i64, ApiError> {
    match integer(name, text, &format!("from {min} to {max}"))? {
        None => Ok(default),
        Some(n) if (min..=max).contains(&n) => Ok(n),
        Some(_) => Err(ApiError::invalid(format!(
            "{name} must be a whole number from {min} to {max}"
        ))),
    }
}

/// An opaque id to filter by, at most 64 characters.
pub fn id<'t>(name: &str, text: Option<&'t str>) -> Result<Option<&'t str>, ApiError> {
    match text {
        Some(id) if id.chars().count() > MAX_ID_CHARS => Err(ApiError::invalid(format!(
            "{name} must be at most {MAX_ID_CHARS} characters"
        ))),
        other => Ok(other),
    }
}

/// `days`: 1..=366, default 30.
pub fn days(text: Option<&str>) -> Result<u32, ApiError> {
    let days = bounded("days", text, 1, usage::MAX_DAYS.into(), DEFAULT_DAYS.into())?;
    u32::try_from(days).map_err(ApiError::internal)
}

/// `limit`, `offset` and `q` (users by user name).
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UserListQuery {
    #[param(schema_with = standard_limit)]
    pub limit: Option<String>,
    #[param(schema_with = offset)]
    pub offset: Option<String>,
    #[param(schema_with = search_text)]
    pub q: Option<String>,
}

/// `limit`, `offset`, `user_id` and `q` (keys by name).
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct KeyListQuery {
    #[param(schema_with = standard_limit)]
    pub limit: Option<String>,
    #[param(schema_with = offset)]
    pub offset: Option<String>,
    #[param(schema_with = owner_id)]
    pub user_id: Option<String>,
    #[param(schema_with = search_text)]
    pub q: Option<String>,
}

/// `limit`, `offset` and the filters of the audit trail (newest first).
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    #[param(schema_with = standard_limit)]
    pub limit: Option<String>,
    #[param(schema_with = offset)]
    pub offset: Option<String>,
    /// only changes made by this user name
    #[param(max_length = 200)]
    pub actor: Option<String>,
    #[param(schema_with = audit_action)]
    pub action: Option<String>,
    /// only changes of this kind of thing (`user`, `key`, `tier`, `index`, `calendar`, `import`, `webhook`) or of one thing (`user:42`, `index:GPU_Index`)
    #[param(max_length = 200)]
    pub target: Option<String>,
    #[param(schema_with = from_day)]
    pub from: Option<String>,
    #[param(schema_with = to_day)]
    pub to: Option<String>,
}

/// `limit` and `offset` of the import list (newest first).
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ImportListQuery {
    #[param(schema_with = import_limit)]
    pub limit: Option<String>,
    #[param(schema_with = offset)]
    pub offset: Option<String>,
}

/// `days` of usage.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DaysQuery {
    #[param(schema_with = usage_days)]
    pub days: Option<String>,
}

impl DaysQuery {
    /// The days of usage the query string `query` asks for ([`days`]).
    pub fn read(query: &str) -> Result<u32, ApiError> {
        days(parse::<DaysQuery>(query)?.days.as_deref())
    }
}

/// `GET /api/v1/events`: `after`, `limit`, `wait`.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FeedQuery {
    /// the last event id seen (`next` of the previous page); from the first event when absent
    #[param(pattern = "^evt_[0-9]{1,19}$")]
    pub after: Option<String>,
    #[param(schema_with = feed_limit)]
    pub limit: Option<String>,
    #[param(schema_with = feed_wait)]
    pub wait: Option<String>,
    /// only events of these types, comma-separated: `index.published`, `index.revised`
    #[param(example = "index.revised")]
    pub types: Option<String>,
    /// only events of this index
    #[param(example = "GPU_Index")]
    pub index_code: Option<String>,
}

/// The longest a feed request waits, in whole seconds.
pub fn feed_max_wait() -> i64 {
    i64::try_from(iq_actors::events::MAX_WAIT.as_secs()).unwrap_or(i64::MAX)
}

// The schemas of the parameters, with their descriptions (`schema_with` drops a
// field's doc comment; `openapi::described` moves these to the parameter).

fn whole(min: i64, max: i64, default: i64, description: String) -> Object {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .minimum(Some(min))
        .maximum(Some(max))
        .default(Some(default.into()))
        .description(Some(description))
        .build()
}

fn limit(what: &str, default: i64, max: i64) -> Object {
    let text = format!("{what} in the page, 1 to {max} (default {default})");
    whole(1, max, default, text)
}

fn standard_limit() -> Object {
    limit("rows", DEFAULT_LIST_ROWS, MAX_LIST_ROWS)
}

fn import_limit() -> Object {
    limit("rows", DEFAULT_LISTED, MAX_LISTED)
}

fn feed_limit() -> Object {
    use iq_actors::events::{DEFAULT_EVENTS, MAX_EVENTS};
    limit("events", DEFAULT_EVENTS.into(), MAX_EVENTS.into())
}

fn feed_wait() -> Object {
    let max = feed_max_wait();
    let text =
        format!("seconds to hold an empty answer until an event arrives, 0 to {max} (default 0)");
    whole(0, max, 0, text)
}

fn offset() -> Object {
    let text = "rows to skip (default 0); an offset past the end is an empty page";
    whole(0, MAX_OFFSET, 0, text.to_owned())
}

fn usage_days() -> Object {
    let (max, default) = (usage::MAX_DAYS, DEFAULT_DAYS);
    let text = format!("UTC days of usage, newest first, 1 to {max} (default {default})");
    whole(1, max.into(), default.into(), text)
}

fn text(max: usize, description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .max_length(Some(max))
        .description(Some(description))
}

fn search_text() -> Object {
    let description = format!(
        "rows whose name contains it, in any letter case; at most {MAX_SEARCH_CHARS} \
         characters without control characters; `%`, `_` and `\\` are not wildcards"
    );
    text(MAX_SEARCH_CHARS, &description).build()
}

fn owner_id() -> Object {
    let description = "only this owner's keys (an id that is nobody's matches nothing)";
    text(MAX_ID_CHARS, description).build()
}

fn audit_action() -> Object {
    text(40, "only this action")
        .enum_values(Some(Action::ALL.map(Action::as_str)))
        .build()
}

fn utc_day(description: &str) -> Object {
    text(10, description)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Date)))
        .build()
}

fn from_day() -> Object {
    utc_day("only changes made on this UTC day or later")
}

fn to_day() -> Object {
    utc_day("only changes made on this UTC day or earlier")
}

#[cfg(test)]
mod tests {
    use iq_actors::paging::SearchText;

    use super::*;

    #[test]
    fn only_named_parameters_once_each() {
        assert!(parse::<ImportListQuery>("").is_ok());
        assert!(parse::<ImportListQuery>("limit=5").is_ok());
        let unknown = parse::<ImportListQuery>("limt=5").err().unwrap();
        assert!(
            unknown.message.contains("'limt'; expected limit, offset"),
            "{}",
            unknown.message
        );
        let twice = parse::<ImportListQuery>("limit=5&limit=6").err().unwrap();
        assert!(twice.message.contains("twice"), "{}", twice.message);
        let feed = parse::<FeedQuery>("after=evt_3&wait=2").unwrap();
        assert_eq!(
            (feed.after.as_deref(), feed.limit, feed.wait.as_deref()),
            (Some("evt_3"), None, Some("2"))
        );
    }

    #[test]
    fn pages_and_days_are_bounded() {
        let page = |q: &str| {
            let q = parse::<UserListQuery>(q).unwrap();
            page(
                q.limit.as_deref(),
                q.offset.as_deref(),
                DEFAULT_LIST_ROWS,
                MAX_LIST_ROWS,
            )
        };
        assert_eq!(
            page("").unwrap(),
            PageRequest::standard(None, None).unwrap()
        );
        assert_eq!(page("limit=500&offset=7").unwrap().offset(), 7);
        for bad in [
            "limit=0",
            "limit=501",
            "limit=abc",
            "limit=1.5",
            "offset=-1",
            "limit=",
        ] {
            assert!(page(bad).is_err(), "{bad}");
        }
        let days = DaysQuery::read;
        assert_eq!(days("").unwrap(), 30);
        assert_eq!(days("days=366").unwrap(), 366);
        for bad in ["days=0", "days=367", "days=-1", "days=x"] {
            assert!(days(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn search_text_is_decoded_then_checked() {
        let q = |q: &str| SearchText::new("q", parse::<UserListQuery>(q).unwrap().q.as_deref());
        assert_eq!(q("q=a%25b").unwrap().as_str(), "a%b");
        assert_eq!(q("q=a+b").unwrap().as_str(), "a b");
        assert!(q("q=a%00b").is_err());
        assert!(q(&format!("q={}", "x".repeat(101))).is_err());
    }
}
