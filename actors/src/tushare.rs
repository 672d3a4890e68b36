//! Tushare's wire (D24): a `POST /tushare` body as the official `tushare` package sends
//! it (`{"api_name", "token", "params", "fields"}`), read into the [`Query`] of the
//! Tushare dataset it names ([`catalogue::tushare_dataset`]), so that it runs through
//! the same check chain, caches and quotas as `POST /api/v1/query`.
//!
//! Tushare's habits are taken as they are: `fields` as a comma-separated string,
//! `null` and `""` for an absent param, `ts_type_name` (the SDK adds it) ignored,
//! `limit`/`offset` among the params, several codes in `ts_code`, any letter case.
//! Anything else unknown is refused by name. It never panics on any input and never
//! produces SQL.

use serde_json::{Map, Value};

use crate::catalogue::{self, Dataset, ParamRole, TUSHARE_DATASETS};
use crate::query::{printable, ParamValue, Query};
use crate::ApiError;

/// The most codes one `ts_code` may name (D24).
pub const MAX_CODES: usize = 8;
/// The name of the service's trading calendar, `trade_cal`'s `exchange`.
pub const CALENDAR_NAME: &str = "IQ";
/// What a call without `limit` reads: as much as a page may hold.
const UNLIMITED: u32 = u32::MAX;

/// The keys of a Tushare body.
pub const TOP_LEVEL_KEYS: [&str; 4] = ["api_name", "token", "params", "fields"];

/// Tushare's bar fields we do not publish on daily values, refused with a reason.
const BAR_FIELDS: [&str; 5] = ["open", "high", "low", "vol", "amount"];

/// A Tushare call: its query and the token it carries (empty or absent: none).
#[derive(Debug)]
pub struct Call {
    pub query: Query,
    pub token: Option<String>,
}

/// The token of a body, read before anything else is checked: the key comes first in
/// the check chain. Anything but a string (or null) is no token.
pub fn token(body: &Value) -> Option<String> {
    match body.get("token") {
        Some(Value::String(t)) if !t.is_empty() => Some(t.clone()),
        _ => None,
    }
}

/// The query `body` asks for; `path_name` is the api_name of `/tushare/{api_name}`.
pub fn parse(body: &Value, path_name: Option<&str>) -> Result<Query, ApiError> {
    let object = body
        .as_object()
        .ok_or_else(|| ApiError::invalid("the request body must be a JSON object"))?;
    if let Some(unknown) = object
        .keys()
        .find(|k| !TOP_LEVEL_KEYS.contains(&k.as_str()))
    {
        return Err(ApiError::invalid(format!(
            "unknown key '{}'; a Tushare call has api_name, token, params and fields",
            printable(unknown)
        )));
    }
    let named = match object.get("api_name") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.is_empty() => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => return Err(ApiError::invalid("'api_name' must be a string")),
    };
    let name = match (path_name, named) {
        (Some(path), Some(body)) if path != body => {
            return Err(ApiError::invalid(format!(
                "the path names api_name '{}' and the body '{}'",
                printable(path),
                printable(body)
            )))
        }
        (Some(name), _) | (None, Some(name)) => name,
        (None, None) => {
            return Err(ApiError::invalid(format!(
                "'api_name' is required; one of {}",
                api_names()
            )))
        }
    };
    let dataset = catalogue::tushare_dataset(name).ok_or_else(|| {
        ApiError::invalid(format!(
            "unknown api_name '{}'; this service answers {}",
            printable(name),
            api_names()
        ))
    })?;
    let (params, limit, offset) = params(dataset, name, object.get("params"))?;
    let mut native = Map::new();
    native.insert("params".into(), Value::Object(params));
    native.insert(
        "fields".into(),
        fields(dataset, name, object.get("fields"))?,
    );
    native.insert("limit".into(), Value::from(limit));
    native.insert("offset".into(), Value::from(offset));
    let mut query = Query::of(dataset, &native)?;
    // Several codes, any case: the dataset actor matches them to the indexes.
    for (param, value) in query.params.iter_mut() {
        let is_codes = dataset
            .param(param)
            .is_some_and(|p| p.role == ParamRole::IndexCode);
        if let (true, ParamValue::Text(text)) = (is_codes, &*value) {
            *value = ParamValue::Codes(index_codes(param, text)?);
        }
    }
    Ok(query)
}

fn api_names() -> String {
    TUSHARE_DATASETS
        .iter()
        .filter_map(|d| d.api_name.strip_prefix("tushare."))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The params in D1's form (strings, absent ones left out), and the page.
fn params(
    dataset: &'static Dataset,
    name: &str,
    value: Option<&Value>,
) -> Result<(Map<String, Value>, u32, u64), ApiError> {
    let empty = Map::new();
    let given = match value {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(o)) => o,
        Some(_) => return Err(ApiError::invalid("'params' must be an object")),
    };
    let mut params = Map::new();
    let (mut limit, mut offset) = (UNLIMITED, 0u64);
    for (key, value) in given {
        let text = match value {
            Value::Null => continue,
            Value::String(s) if s.is_empty() => continue,
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            _ => {
                return Err(ApiError::invalid(format!(
                    "param '{}' must be text or a number",
                    printable(key)
                )))
            }
        };
        match key.as_str() {
            // The SDK's own note of where it sent the call.
            "ts_type_name" => {}
            "limit" => {
                limit = text.parse().ok().filter(|n| *n >= 1).ok_or_else(|| {
                    ApiError::invalid("param 'limit' must be an integer of at least 1")
                })?
            }
            "offset" => {
                offset = text
                    .parse()
                    .ok()
                    .filter(|n| *n <= i64::MAX as u64)
                    .ok_or_else(|| {
                        ApiError::invalid("param 'offset' must be an integer of at least 0")
                    })?
            }
            "exchange" if name == "trade_cal" => {
                if !text.eq_ignore_ascii_case(CALENDAR_NAME) {
                    return Err(ApiError::invalid(format!(
                        "param 'exchange' must be '' or '{CALENDAR_NAME}', the service's \
                         one calendar; got '{}'",
                        printable(&text)
                    )));
                }
            }
            "is_open" if !matches!(text.as_str(), "0" | "1") => {
                return Err(ApiError::invalid("param 'is_open' must be 0 or 1"))
            }
            key if dataset.param(key).is_some() => {
                params.insert(key.to_string(), Value::String(text));
            }
            key => {
                let allowed: Vec<&str> = dataset.params.iter().map(|p| p.name).collect();
                return Err(ApiError::invalid(format!(
                    "unknown param '{}' for {name}; it takes {}, limit and offset",
                    printable(key),
                    allowed.join(", ")
                )));
            }
        }
    }
    Ok((params, limit, offset))
}

/// `fields` as an array of names: from a comma-separated string or an array; `""`, an
/// empty array or none mean the defaults.
fn fields(dataset: &'static Dataset, name: &str, value: Option<&Value>) -> Result<Value, ApiError> {
    let names: Vec<String> = match value {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => s
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .collect(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| ApiError::invalid("'fields' must hold only names"))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(ApiError::invalid(
                "'fields' must be a comma-separated string or an array of names",
            ))
        }
    };
    let mut unique: Vec<String> = Vec::with_capacity(names.len());
    for field in names {
        if dataset.field(&field).is_none() {
            let known: Vec<&str> = dataset.fields.iter().map(|f| f.name).collect();
            let why = if BAR_FIELDS.contains(&field.as_str()) && name == "index_daily" {
                format!(
                    "field '{field}' is not published: an index has one value a day (its \
                     close); index_weekly and index_monthly have open, high and low"
                )
            } else {
                format!(
                    "unknown field '{}' for {name}; its fields are {}",
                    printable(&field),
                    known.join(", ")
                )
            };
            return Err(ApiError::invalid(why));
        }
        if !unique.contains(&field) {
            unique.push(field);
        }
    }
    Ok(Value::from(unique))
}

/// The codes `text` names for param `param` (trimmed, upper-cased, at most
/// [`MAX_CODES`]).
fn index_codes(param: &str, text: &str) -> Result<Vec<String>, ApiError> {
    let codes: Vec<String> = text
        .split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_ascii_uppercase)
        .collect();
    match codes.len() {
        0 => Err(ApiError::invalid(format!(
            "param '{param}' names no index code"
        ))),
        n if n > MAX_CODES => Err(ApiError::invalid(format!(
            "param '{param}' names {n} codes; at most {MAX_CODES} in one call"
        ))),
        _ => Ok(codes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parsed(body: Value) -> Result<Query, ApiError> {
        parse(&body, None)
    }

    #[test]
    fn the_sdks_body_reads_as_the_tushare_dataset() {
        let q = parsed(json!({
            "api_name": "index_daily", "token": "iq_x", "fields": "ts_code, close,close",
            "params": {"ts_code": "gpu_index,SSD_Index", "start_date": "", "end_date": null,
                       "offset": null, "limit": 10, "ts_type_name": "http://x/tushare"}
        }))
        .unwrap();
        assert_eq!(q.dataset.api_name, "tushare.index_daily");
        assert_eq!(q.limit, 10);
        let names: Vec<&str> = q.fields.iter().map(|f| f.name).collect();
        assert_eq!(names, ["ts_code", "close"]);
        assert_eq!(
            q.params.get("ts_code"),
            Some(&ParamValue::Codes(vec![
                "GPU_INDEX".into(),
                "SSD_INDEX".into()
            ]))
        );
        assert_eq!(q.named_indexes().count(), 2);
        assert_eq!(token(&json!({"token": "iq_x"})).as_deref(), Some("iq_x"));
        assert_eq!(token(&json!({"token": ""})), None);
    }

    #[test]
    fn what_is_wrong_is_named() {
        let cases = [
            (json!({"api_name": "daily"}), "unknown api_name 'daily'"),
            (json!({}), "'api_name' is required"),
            (
                json!({"api_name": "index_daily", "fields": "vol"}),
                "one value a day",
            ),
            (
                json!({"api_name": "index_daily", "fields": "closing"}),
                "unknown field 'closing'",
            ),
            (
                json!({"api_name": "index_daily", "params": {"code": "X"}}),
                "unknown param 'code'",
            ),
            (
                json!({"api_name": "index_daily", "params": {"ts_code": "A,B,C,D,E,F,G,H,I"}}),
                "at most 8",
            ),
            (
                json!({"api_name": "index_daily", "params": {"ts_code": " , "}}),
                "names no index code",
            ),
            (
                json!({"api_name": "index_daily", "params": {"limit": 0}}),
                "'limit'",
            ),
            (
                json!({"api_name": "trade_cal", "params": {"exchange": "SSE"}}),
                "'exchange'",
            ),
            (
                json!({"api_name": "trade_cal", "params": {"is_open": "2"}}),
                "'is_open'",
            ),
            (
                json!({"api_name": "index_daily", "extra": 1}),
                "unknown key 'extra'",
            ),
            (
                json!({"api_name": "index_daily", "params": {"start_date": "20261399"}}),
                "start_date",
            ),
        ];
        for (body, says) in cases {
            let error = parsed(body.clone()).unwrap_err();
            assert_eq!(error.code, crate::ErrorCode::InvalidRequest, "{body}");
            assert!(error.message.contains(says), "{body}: {}", error.message);
        }
        let error = parse(&json!({"api_name": "index_daily"}), Some("index_weekly")).unwrap_err();
        assert!(
            error.message.contains("the path names"),
            "{}",
            error.message
        );
    }

    fn any_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            "\\PC{0,12}".prop_map(Value::from),
            prop::sample::select(vec![
                "index_daily",
                "trade_cal",
                "ts_code",
                "fields",
                "limit"
            ])
            .prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                prop::collection::btree_map(
                    prop::sample::select(vec![
                        "api_name",
                        "token",
                        "params",
                        "fields",
                        "ts_code",
                        "start_date",
                        "limit",
                        "offset",
                        "is_open",
                        "exchange",
                        "x",
                    ]),
                    inner,
                    0..6
                )
                .prop_map(|m| Value::Object(
                    m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
                )),
            ]
        })
    }

    proptest::proptest! {
        /// Any JSON is a query or a 40001, never a panic.
        #[test]
        fn any_body_is_a_query_or_a_clear_refusal(body in any_json()) {
            if let Err(error) = parse(&body, None) {
                proptest::prop_assert_eq!(error.code, crate::ErrorCode::InvalidRequest);
                proptest::prop_assert!(!error.message.is_empty());
            }
        }
    }
}
