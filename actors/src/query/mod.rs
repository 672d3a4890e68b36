//! Validation of the `POST /api/v1/query` body (decisions D1) against the catalogue.
//!
//! Turns untrusted JSON into a [`Query`] whose every part is known to the catalogue, or
//! into a 40001 whose message names the offending parameter or field. It never panics
//! on any input and never produces SQL.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use serde_json::{Map, Value};

use crate::catalogue::{self, Dataset, FieldDef, ParamRole};
use crate::wire_date::{timestamp, WireDate};
use crate::ApiError;

/// Longest accepted parameter value, in characters.
pub const MAX_PARAM_CHARS: usize = 500;
/// Default page size (spec 4.1).
pub const DEFAULT_LIMIT: u32 = 1000;
/// The most rows one answer holds: the `MAX_LIMIT` setting's default and ceiling (a
/// larger `limit` is reduced to the setting). The website reads whole ranges in pages
/// of this size.
pub const LIMIT_CAP: u32 = 5000;

const TOP_LEVEL_KEYS: [&str; 5] = ["api_name", "params", "fields", "limit", "offset"];

/// A parameter value after validation. Dates are normalised, so `2024-01-05` and
/// `20240105` are the same query (and the same cache entry).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ParamValue {
    Text(String),
    Date(NaiveDate),
    /// An instant with an offset, normalised to UTC and truncated to microseconds (the
    /// precision `published_at` is kept at), so equal instants are one cache entry.
    Instant(DateTime<Utc>),
    /// Several index codes in any letter case (Tushare's `ts_code`, D24), upper-cased;
    /// the dataset actor matches them to the indexes' own spelling.
    Codes(Vec<String>),
}

/// A query whose dataset, parameters and fields are all known to the catalogue.
#[derive(Debug, Clone)]
pub struct Query {
    pub dataset: &'static Dataset,
    /// Keyed by parameter name; sorted, so equal queries compare equal.
    pub params: BTreeMap<&'static str, ParamValue>,
    /// The columns to return, in the requested order.
    pub fields: Vec<&'static FieldDef>,
    /// The limit the client asked for; the effective one is capped later.
    pub limit: u32,
    pub offset: u64,
}

impl Query {
    /// The index codes the query names, by its index-code parameter: one code
    /// (case-sensitive) or several (Tushare's, any letter case).
    pub fn named_indexes(&self) -> impl Iterator<Item = &str> {
        let param = self
            .dataset
            .params
            .iter()
            .find(|p| p.role == ParamRole::IndexCode)
            .and_then(|p| self.params.get(p.name));
        let (one, several): (Option<&str>, &[String]) = match param {
            Some(ParamValue::Text(code)) => (Some(code), &[]),
            Some(ParamValue::Codes(codes)) => (None, codes),
            _ => (None, &[]),
        };
        one.into_iter().chain(several.iter().map(String::as_str))
    }

    /// Validates a parsed JSON body.
    pub fn parse(body: &Value) -> Result<Query, ApiError> {
        let object = body
            .as_object()
            .ok_or_else(|| ApiError::invalid("request body must be a JSON object"))?;
        if let Some(unknown) = object
            .keys()
            .find(|k| !TOP_LEVEL_KEYS.contains(&k.as_str()))
        {
            return Err(ApiError::invalid(format!(
                "unknown top-level key '{}'; expected api_name, params, fields, limit, offset",
                printable(unknown)
            )));
        }
        let dataset = parse_api_name(object.get("api_name"))?;
        Query::of(dataset, object)
    }

    /// The query of `dataset` that `object`'s `params`, `fields`, `limit` and `offset`
    /// say (D1's rules), whatever else `object` holds.
    pub fn of(dataset: &'static Dataset, object: &Map<String, Value>) -> Result<Query, ApiError> {
        let params = parse_params(dataset, object.get("params"))?;
        let fields = parse_fields(dataset, object.get("fields"))?;
        let limit = match object.get("limit") {
            None | Some(Value::Null) => DEFAULT_LIMIT,
            Some(v) => match v.as_u64() {
                Some(n) if n >= 1 => u32::try_from(n).unwrap_or(u32::MAX),
                _ => {
                    return Err(ApiError::invalid(
                        "'limit' must be an integer of at least 1",
                    ))
                }
            },
        };
        let offset = match object.get("offset") {
            None | Some(Value::Null) => 0,
            Some(v) => match v.as_u64() {
                Some(n) if n <= i64::MAX as u64 => n,
                _ => {
                    return Err(ApiError::invalid(
                        "'offset' must be an integer of at least 0",
                    ))
                }
            },
        };
        Ok(Query {
            dataset,
            params,
            fields,
            limit,
            offset,
        })
    }
}

fn parse_api_name(value: Option<&Value>) -> Result<&'static Dataset, ApiError> {
    let expected = || catalogue::api_names().join(", ");
    match value {
        None | Some(Value::Null) => Err(ApiError::invalid(format!(
            "'api_name' is required; one of {}",
            expected()
        ))),
        Some(Value::String(name)) => catalogue::dataset(name).ok_or_else(|| {
            ApiError::invalid(format!(
                "unknown api_name '{}'; expected one of {}",
                printable(name),
                expected()
            ))
        }),
        Some(_) => Err(ApiError::invalid("'api_name' must be a string")),
    }
}

fn parse_params(
    dataset: &'static Dataset,
    value: Option<&Value>,
) -> Result<BTreeMap<&'static str, ParamValue>, ApiError> {
    let empty = Map::new();
    let object = match value {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(o)) => o,
        Some(_) => return Err(ApiError::invalid("'params' must be an object")),
    };
    let mut params = BTreeMap::new();
    for (name, value) in object {
        let def = dataset.param(name).ok_or_else(|| {
            let allowed: Vec<_> = dataset.params.iter().map(|p| p.name).collect();
            ApiError::invalid(format!(
                "unknown parameter '{}' for dataset {}; allowed: {}",
                printable(name),
                dataset.api_name,
                allowed.join(", ")
            ))
        })?;
        let text = match value {
            Value::String(s) if !s.is_empty() => s,
            Value::String(_) => {
                return Err(ApiError::invalid(format!(
                    "parameter '{}' must not be empty; omit unused filters",
                    def.name
                )))
            }
            _ => {
                return Err(ApiError::invalid(format!(
                    "parameter '{}' must be a string",
                    def.name
                )))
            }
        };
        if text.chars().count() > MAX_PARAM_CHARS || text.contains('\0') {
            return Err(ApiError::invalid(format!(
                "parameter '{}' must be at most {MAX_PARAM_CHARS} characters of text",
                def.name
            )));
        }
        let parsed = match def.role {
            role if role.is_date() => ParamValue::Date(parse_date(text).ok_or_else(|| {
                ApiError::invalid(format!(
                    "parameter '{}' must be a real date as YYYYMMDD or YYYY-MM-DD",
                    def.name
                ))
            })?),
            ParamRole::AsOf => match (timestamp::parse(text).ok(), parse_date(text)) {
                (Some(instant), _) => ParamValue::Instant(instant),
                (None, Some(date)) => ParamValue::Date(date),
                (None, None) => {
                    return Err(ApiError::invalid(format!(
                        "parameter '{}' must be an RFC 3339 timestamp with an offset \
                         (2026-11-20T18:00:00Z) or a date as YYYYMMDD or YYYY-MM-DD",
                        def.name
                    )))
                }
            },
            ParamRole::UpdatedSince | ParamRole::PublishedAfter { .. } => {
                ParamValue::Instant(timestamp::parse(text).ok().ok_or_else(|| {
                    ApiError::invalid(format!(
                        "parameter '{}' must be an RFC 3339 timestamp with an offset, \
                         such as 2026-11-20T18:00:00Z",
                        def.name
                    ))
                })?)
            }
            _ => ParamValue::Text(text.clone()),
        };
        params.insert(def.name, parsed);
    }
    check_date_combination(dataset, &params)?;
    Ok(params)
}

fn check_date_combination(
    dataset: &Dataset,
    params: &BTreeMap<&'static str, ParamValue>,
) -> Result<(), ApiError> {
    let date_of = |role: ParamRole| {
        dataset
            .params
            .iter()
            .find(|p| p.role == role)
            .and_then(|p| params.get(p.name))
    };
    let trade = date_of(ParamRole::TradeDate);
    let start = date_of(ParamRole::StartDate);
    let end = date_of(ParamRole::EndDate);
    if trade.is_some() && (start.is_some() || end.is_some()) {
        return Err(ApiError::invalid(
            "parameter 'trade_date' cannot be combined with 'start_date' or 'end_date'",
        ));
    }
    if let (Some(ParamValue::Date(s)), Some(ParamValue::Date(e))) = (start, end) {
        if s > e {
            return Err(ApiError::invalid(format!(
                "parameter 'start_date' ({}) is later than 'end_date' ({})",
                WireDate(*s),
                WireDate(*e)
            )));
        }
    }
    Ok(())
}

fn parse_fields(
    dataset: &'static Dataset,
    value: Option<&Value>,
) -> Result<Vec<&'static FieldDef>, ApiError> {
    let requested = match value {
        None | Some(Value::Null) => return Ok(default_fields(dataset)),
        Some(Value::Array(items)) if items.is_empty() => return Ok(default_fields(dataset)),
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err(ApiError::invalid(
                "'fields' must be an array of field names",
            ))
        }
    };
    let mut fields: Vec<&'static FieldDef> = Vec::with_capacity(requested.len());
    for item in requested {
        let name = item
            .as_str()
            .ok_or_else(|| ApiError::invalid("'fields' must contain only strings"))?;
        let def = dataset.field(name).ok_or_else(|| {
            ApiError::invalid(format!(
                "field '{}' does not belong to dataset {}",
                printable(name),
                dataset.api_name
            ))
        })?;
        if fields.iter().any(|f| f.name == def.name) {
            return Err(ApiError::invalid(format!(
                "field '{}' appears more than once in 'fields'",
                def.name
            )));
        }
        fields.push(def);
    }
    Ok(fields)
}

fn default_fields(dataset: &'static Dataset) -> Vec<&'static FieldDef> {
    dataset
        .default_fields
        .iter()
        .filter_map(|name| dataset.field(name))
        .collect()
}

/// `YYYYMMDD` or `YYYY-MM-DD`, and a real calendar date.
pub fn parse_date(text: &str) -> Option<NaiveDate> {
    WireDate::parse(text).ok().map(|d| d.0)
}

/// Echoes client text in a message without letting it run on or carry control characters.
pub(crate) fn printable(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(64)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if text.chars().count() > 64 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests;
