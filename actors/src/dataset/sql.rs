//! Builds one parameterised SELECT from the catalogue and a validated query.
//!
//! The statement text is assembled only from the catalogue's static SQL and `$n`
//! placeholders; every value (index codes, dates, specifications, limits) is bound.
//!
//! Every statement selects all of the dataset's fields, in catalogue order, whatever
//! the client asked for (a field computed on demand, `published_at`, is NULL unless
//! asked for); the page picks and orders the requested ones when it renders
//! ([`super::page::Page::render`]). So the statements a connection prepares and keeps
//! are bounded by the catalogue (dataset x the parameters given x whether each
//! on-demand field is asked for x whether the page starts after a boundary x whether it
//! skips rows), never by the clients: permuting `fields` cannot grow the statement
//! cache in this process or in PostgreSQL.
//!
//! Point in time (D17): with `as_of`, `{index_daily}` and `{index_quotes}` become the
//! rows current at the vintage published last at or before that instant: current rows
//! of that vintage or older, and history rows it had not yet superseded. Without it
//! they are the tables themselves, so today's queries read exactly what they always did.
//!
//! Deep pages (issue 14): a page may start after a remembered boundary, the sort key of
//! the row before it ([`super::boundaries`]): `(sort columns) > (key)` joins the
//! conditions and the OFFSET shrinks to the rows past that boundary. Sort columns no
//! field selects as is are selected after the fields, so every row carries its key.

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use tokio_postgres::types::ToSql;

use super::boundaries::{SortValue, Start};
use super::keyset::{self, field_for, sort_columns};
use crate::catalogue::{periods, Dataset, ParamRole, Versioned};
use crate::indexes::View;
use crate::query::{ParamValue, Query};

pub type SqlParam = Box<dyn ToSql + Sync + Send>;

/// A sort key's value, bound back into the statement that starts after it.
fn sort_param(value: &SortValue) -> SqlParam {
    match value {
        SortValue::Int(v) => Box::new(*v),
        SortValue::BigInt(v) => Box::new(*v),
        SortValue::Text(v) => Box::new(v.clone()),
        SortValue::Date(v) => Box::new(*v),
        SortValue::Instant(v) => Box::new(*v),
    }
}

pub struct Statement {
    pub text: String,
    pub params: Vec<SqlParam>,
}

#[derive(Default)]
struct Binder {
    params: Vec<SqlParam>,
}

impl Binder {
    fn bind(&mut self, value: SqlParam) -> String {
        self.params.push(value);
        format!("${}", self.params.len())
    }
}

fn bind_value(binder: &mut Binder, value: &ParamValue) -> String {
    match value {
        ParamValue::Text(text) => binder.bind(Box::new(text.clone())),
        ParamValue::Date(date) => binder.bind(Box::new(*date)),
        ParamValue::Instant(instant) => binder.bind(Box::new(*instant)),
        ParamValue::Codes(codes) => binder.bind(Box::new(codes.clone())),
    }
}

/// The point-in-time part of a query (D17), resolved by the dataset actor: instants in
/// UTC, and the caller's delay cutoffs on the days they fall in (service time zone).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct PointInTime {
    /// `as_of`; `None` reads the current rows.
    pub as_of: Option<DateTime<Utc>>,
    /// The caller's cutoff on the day `as_of` falls in: with `updated_since`, a row
    /// whose date entered the caller's window after `as_of` is outside (U, T].
    pub as_of_cutoff: Option<NaiveDate>,
    /// `updated_since`, and the caller's cutoff on the day it falls in: rows of later
    /// dates entered the caller's window after it.
    pub since: Option<(DateTime<Utc>, Option<NaiveDate>)>,
}

/// The values a field's SQL may read by placeholder, each bound once per statement
/// however many fields read it: `{detailed}` (the indexes whose detail the caller
/// sees), `{cutoff}` (the caller's delay cutoff) and `{tz}` (the service time zone).
#[derive(Default)]
struct SharedValues {
    detailed: Option<String>,
    cutoff: Option<String>,
    tz: Option<String>,
}

impl SharedValues {
    fn fill(
        &mut self,
        sql: &str,
        binder: &mut Binder,
        view: &View,
        cutoff: Option<NaiveDate>,
        tz: Tz,
    ) -> String {
        let mut text = sql.to_string();
        if text.contains("{detailed}") {
            let placeholder = self
                .detailed
                .get_or_insert_with(|| binder.bind(Box::new(view.detailed.to_vec())));
            text = text.replace("{detailed}", placeholder);
        }
        if text.contains("{cutoff}") {
            let placeholder = self
                .cutoff
                .get_or_insert_with(|| binder.bind(Box::new(cutoff)));
            text = text.replace("{cutoff}", placeholder);
        }
        if text.contains("{tz}") {
            let placeholder = self
                .tz
                .get_or_insert_with(|| binder.bind(Box::new(tz.name().to_string())));
            text = text.replace("{tz}", placeholder);
        }
        text
    }
}

/// The newest vintage published at or before the instant bound at `at`.
fn vintage_at(at: &str) -> String {
    format!("(SELECT coalesce(max(vv.vintage), 0) FROM vintages vv WHERE vv.published_at <= {at})")
}

/// The rows of `table` (with `columns`) current at vintage `v`: current rows with
/// `vintage <= v`, history rows with `vintage <= v < superseded_by`.
///
/// The conditions sit above the UNION ALL, not in its branches, on purpose: PostgreSQL
/// (15) flattens a UNION ALL into an append of its tables only when the branches have
/// no WHERE of their own, and only then can it merge the two primary keys in sort order
/// (and seek both to a page's boundary) instead of sorting every row for each page.
fn rows_at(table: &str, columns: &str, v: &str) -> String {
    format!(
        "(SELECT {columns} FROM (SELECT {columns}, NULL::bigint AS superseded_by FROM {table} \
         UNION ALL SELECT {columns}, superseded_by FROM {table}_history) r \
         WHERE r.vintage <= {v} AND (r.superseded_by IS NULL OR r.superseded_by > {v}))"
    )
}

const DAILY_COLUMNS: &str =
    "trade_date, index_code, index_value, weighted_price, pre_value, change, pct_change, vintage";
const QUOTE_COLUMNS: &str = "trade_date, index_code, specification, weight, price, vintage";

/// The conditions `updated_since` adds on the rows aliased `versioned.alias`: published
/// after it, or of a date that entered the caller's window after it; and with `as_of`,
/// of a date already in the window then. Quotes answer whole days (D17).
fn since_conditions(
    binder: &mut Binder,
    versioned: Versioned,
    point: &PointInTime,
    as_of_vintage: Option<&str>,
) -> Vec<String> {
    let Some((since, since_cutoff)) = point.since else {
        return Vec::new();
    };
    let a = versioned.alias;
    let mut conditions = Vec::new();
    if point.as_of.is_some() {
        let until = binder.bind(Box::new(point.as_of_cutoff));
        conditions.push(format!("{a}.trade_date <= {until}"));
    }
    // No day in the caller's window yet on updated_since's day: every row entered it
    // later, so all are in.
    let Some(since_cutoff) = since_cutoff else {
        return conditions;
    };
    let since = binder.bind(Box::new(since));
    let since_vintage = vintage_at(&since);
    let entered = binder.bind(Box::new(since_cutoff));
    if versioned.by_day {
        let upto = as_of_vintage
            .map(|v| format!(" AND c.vintage <= {v}"))
            .unwrap_or_default();
        conditions.push(format!(
            "({a}.trade_date, {a}.index_code) IN (\
             SELECT c.trade_date, c.index_code FROM quote_days_changed c \
             WHERE c.vintage > {since_vintage}{upto} \
             UNION SELECT t.trade_date, x.index_code FROM trade_calendar t \
             CROSS JOIN indexes x WHERE t.trade_date > {entered})"
        ));
    } else {
        conditions.push(format!(
            "({a}.vintage > {since_vintage} OR {a}.trade_date > {entered})"
        ));
    }
    conditions
}

/// The SELECT for one page. `fetch` is the number of rows to read (limit + 1, to learn
/// `has_more`); `start` where to begin (after a boundary's sort key, then `skip` rows).
/// `cutoff` must be `Some` for delayed datasets and for a field that reads it
/// (`{cutoff}`); `tz` is the service time zone, for a field that reads it (`{tz}`).
pub fn build(
    query: &Query,
    view: &View,
    cutoff: Option<NaiveDate>,
    tz: Tz,
    point: &PointInTime,
    fetch: i64,
    start: &Start,
) -> Result<Statement, std::num::TryFromIntError> {
    let ds = query.dataset;
    let mut binder = Binder::default();
    // Placeholders are numbered in the order values are bound: the columns', the
    // conditions', the FROM's, then LIMIT and OFFSET.
    let columns = select_columns(query, &mut binder, view, cutoff, tz);
    let mut conditions = Vec::new();
    if let Some(column) = ds.index_column {
        let allowed = if ds.detail_only {
            &view.detailed
        } else {
            &view.visible
        };
        let placeholder = binder.bind(Box::new(allowed.to_vec()));
        conditions.push(format!("{column} = ANY({placeholder})"));
    }
    conditions.extend(param_conditions(query, &mut binder));
    if let Some(after) = &start.after {
        let values: Vec<String> = after.iter().map(|v| binder.bind(sort_param(v))).collect();
        conditions.push(keyset::after(ds, &values));
    }
    let as_of_vintage = point.as_of.map(|at| vintage_at(&binder.bind(Box::new(at))));
    if let Some(versioned) = ds.versioned {
        conditions.extend(since_conditions(
            &mut binder,
            versioned,
            point,
            as_of_vintage.as_deref(),
        ));
    }
    let where_clause = if conditions.is_empty() {
        "TRUE".to_string()
    } else {
        conditions.join(" AND ")
    };
    let from = from_clause(
        ds,
        &where_clause,
        as_of_vintage.as_deref(),
        cutoff,
        &mut binder,
    );
    let limit = binder.bind(Box::new(fetch));
    // No OFFSET at all when nothing is skipped (a first page, or one that starts at its
    // boundary): with a bound OFFSET, PostgreSQL's generic plan assumes it skips a tenth
    // of the rows, always looks costlier than a custom one, and so the statement is
    // planned afresh on every execution (60-70 us, more than running it). Without one,
    // the generic plan is chosen after five executions, as for any other statement.
    let offset = match start.skip {
        0 => String::new(),
        skip => format!(" OFFSET {}", binder.bind(Box::new(i64::try_from(skip)?))),
    };
    Ok(Statement {
        text: format!(
            "SELECT {} {from} ORDER BY {} LIMIT {limit}{offset}",
            columns.join(", "),
            ds.order_by
        ),
        params: binder.params,
    })
}

/// The SELECT list: every field of the dataset in its order (`NULL` for an on-demand
/// field not asked for), then the sort columns that are no field.
fn select_columns(
    query: &Query,
    binder: &mut Binder,
    view: &View,
    cutoff: Option<NaiveDate>,
    tz: Tz,
) -> Vec<String> {
    let ds = query.dataset;
    let mut shared = SharedValues::default();
    ds.fields
        .iter()
        .map(|f| {
            if f.on_demand && !query.fields.iter().any(|q| std::ptr::eq(*q, f)) {
                "NULL".to_string()
            } else {
                shared.fill(f.sql, &mut *binder, view, cutoff, tz)
            }
        })
        .chain(
            sort_columns(ds)
                .filter(|sort| field_for(ds, sort.column).is_none())
                .map(|sort| sort.column.to_string()),
        )
        .collect()
}

/// A condition for each parameter that narrows rows (the point-in-time ones are
/// resolved into [`PointInTime`] by the dataset actor).
fn param_conditions(query: &Query, binder: &mut Binder) -> Vec<String> {
    let ds = query.dataset;
    let mut conditions = Vec::new();
    for (name, value) in &query.params {
        let Some(def) = ds.param(name) else { continue };
        if matches!(def.role, ParamRole::AsOf | ParamRole::UpdatedSince) {
            continue;
        }
        let placeholder = bind_value(binder, value);
        let condition = match (def.role, ds.index_column, ds.date_column) {
            (ParamRole::IndexCode, Some(column), _) => match value {
                ParamValue::Codes(_) => format!("{column} = ANY({placeholder})"),
                _ => format!("{column} = {placeholder}"),
            },
            (ParamRole::TradeDate, _, Some(column)) => format!("{column} = {placeholder}"),
            (ParamRole::StartDate, _, Some(column)) => format!("{column} >= {placeholder}"),
            (ParamRole::EndDate, _, Some(column)) => format!("{column} <= {placeholder}"),
            (ParamRole::Exact { column }, _, _) => format!("{column} = {placeholder}"),
            (ParamRole::PublishedAfter { column }, _, _) => format!("{column} > {placeholder}"),
            // The catalogue test guarantees a column for every role a dataset declares;
            // the point-in-time roles come resolved in `point`.
            _ => continue,
        };
        conditions.push(condition);
    }
    conditions
}

/// The dataset's FROM with its placeholders filled: the WHERE, the period rows, the
/// daily and quote tables (as they stood at `as_of_vintage` in a past view) and the
/// delay cutoff.
fn from_clause(
    ds: &Dataset,
    where_clause: &str,
    as_of_vintage: Option<&str>,
    cutoff: Option<NaiveDate>,
    binder: &mut Binder,
) -> String {
    let (daily, quotes) = match as_of_vintage {
        Some(v) => (
            rows_at("index_daily", DAILY_COLUMNS, v),
            rows_at("index_quotes", QUOTE_COLUMNS, v),
        ),
        None => ("index_daily".to_string(), "index_quotes".to_string()),
    };
    let mut from = ds.from.replace("{where}", where_clause);
    for unit in periods::UNITS {
        let placeholder = periods::placeholder(unit);
        if from.contains(&placeholder) {
            let as_of_daily = as_of_vintage.is_some().then_some(daily.as_str());
            from = from.replace(&placeholder, &periods::rows(unit, as_of_daily));
        }
    }
    let mut from = from
        .replace("{index_daily}", &daily)
        .replace("{index_quotes}", &quotes);
    if from.contains("{cutoff}") {
        let placeholder = binder.bind(Box::new(cutoff));
        from = from.replace("{cutoff}", &placeholder);
    }
    from
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    #[test]
    fn client_text_is_bound_never_inlined() {
        let evil = "x'; DROP TABLE indexes; --";
        let q = Query::parse(&json!({
            "api_name": "index_quote",
            "params": {"index_code": evil, "specification": evil, "start_date": "20240101"},
            "fields": ["price", "weight"]
        }))
        .unwrap();
        let view = View {
            visible: Arc::from(vec!["Server_Index".to_string()]),
            detailed: Arc::from(vec!["Server_Index".to_string()]),
        };
        let stmt = build(
            &q,
            &view,
            NaiveDate::from_ymd_opt(2024, 6, 1),
            chrono_tz::Asia::Shanghai,
            &PointInTime::default(),
            11,
            &Start {
                after: None,
                skip: 0,
            },
        )
        .unwrap();
        assert!(!stmt.text.contains("DROP"), "{}", stmt.text);
        // Every field, in catalogue order, whatever the client listed.
        assert!(
            stmt.text.starts_with(
                "SELECT q.trade_date, q.index_code, q.specification, \
                 q.weight, q.price, NULL FROM index_quotes q"
            ),
            "{}",
            stmt.text
        );
        assert!(stmt.text.contains("q.specification = $"));
        assert!(stmt
            .text
            .ends_with("ORDER BY q.trade_date, q.index_code, q.specification LIMIT $6"));
        assert_eq!(stmt.params.len(), 6);
    }

    #[test]
    fn an_offset_is_bound_only_when_rows_are_skipped() {
        let q = Query::parse(
            &json!({"api_name": "index_daily", "params": {"index_code": "GPU_Index"}}),
        )
        .unwrap();
        let view = View {
            visible: Arc::from(vec!["GPU_Index".to_string()]),
            detailed: Arc::from(Vec::new()),
        };
        let read = |skip| {
            build(
                &q,
                &view,
                None,
                chrono_tz::Asia::Shanghai,
                &PointInTime::default(),
                11,
                &Start { after: None, skip },
            )
            .unwrap()
        };
        let first = read(0);
        assert!(!first.text.contains("OFFSET"), "{}", first.text);
        let deeper = read(40);
        let n = deeper.params.len();
        assert!(
            deeper
                .text
                .ends_with(&format!("LIMIT ${} OFFSET ${n}", n - 1)),
            "{}",
            deeper.text
        );
        assert_eq!(n, first.params.len() + 1);
    }
}

#[cfg(test)]
mod bounded {
    use super::*;
    use crate::catalogue;
    use serde_json::json;
    use std::collections::BTreeSet;
    use std::sync::Arc;

    /// However a client orders or picks `fields`, the statement text is one per
    /// dataset, set of parameters given and on-demand fields asked for.
    #[test]
    fn field_choices_do_not_make_new_statements() {
        let view = View {
            visible: Arc::from(vec!["GPU_Index".to_string()]),
            detailed: Arc::from(Vec::new()),
        };
        for dataset in &catalogue::DATASETS {
            let names: Vec<&str> = dataset.fields.iter().map(|f| f.name).collect();
            let mut texts = BTreeSet::new();
            for rotation in 0..names.len() {
                let mut fields = names.clone();
                fields.rotate_left(rotation);
                fields.truncate(1 + rotation % names.len());
                let query = Query::parse(&json!({
                    "api_name": dataset.api_name,
                    "fields": fields,
                }))
                .unwrap();
                let cutoff = NaiveDate::from_ymd_opt(2026, 11, 20);
                let start = Start {
                    after: None,
                    skip: 0,
                };
                let point = PointInTime::default();
                texts.insert(
                    build(
                        &query,
                        &view,
                        cutoff,
                        chrono_tz::Asia::Shanghai,
                        &point,
                        11,
                        &start,
                    )
                    .unwrap()
                    .text,
                );
            }
            let on_demand = dataset.fields.iter().filter(|f| f.on_demand).count();
            assert!(
                texts.len() <= 1 << on_demand,
                "{}: {texts:?}",
                dataset.api_name
            );
        }
    }
}
