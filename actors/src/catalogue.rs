//! The dataset catalogue: every dataset of `POST /api/v1/query`, declared once, as data.
//!
//! Validation ([`crate::query`]), SQL building ([`crate::dataset::sql`]), the docs and the
//! Python client's local checks all read this table. Column expressions here are static
//! SQL written by us; client input never becomes SQL text (it is bound as parameters).
//!
//! SQL templates use placeholders the builder fills: `{where}` (the filters),
//! `{cutoff}` (the caller's delay cutoff date), `{detailed}` (the indexes whose
//! detail fields the caller may see), and `{index_daily}` / `{index_quotes}` (the
//! table, or with `as_of` the rows current at that instant: D17).

use serde::Serialize;

/// The scope a key needs for a dataset (spec part 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Scope {
    #[serde(rename = "index:read")]
    IndexRead,
    #[serde(rename = "quote:read")]
    QuoteRead,
    #[serde(rename = "calendar:read")]
    CalendarRead,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::IndexRead, Scope::QuoteRead, Scope::CalendarRead];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::IndexRead => "index:read",
            Scope::QuoteRead => "quote:read",
            Scope::CalendarRead => "calendar:read",
        }
    }

    pub fn parse(text: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// The wire type of a field's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ValueKind {
    Text,
    /// `YYYYMMDD` on the wire.
    Date,
    Integer,
    Boolean,
    /// A decimal string with exactly `scale` fractional digits.
    Decimal {
        scale: u32,
    },
    /// An instant, RFC 3339 in UTC with microseconds: `2026-11-23T10:15:30.123456Z`.
    Timestamp,
}

#[derive(Debug, Serialize)]
pub struct FieldDef {
    pub name: &'static str,
    #[serde(flatten)]
    pub kind: ValueKind,
    pub description: &'static str,
    /// The column expression; may use `{detailed}`.
    #[serde(skip)]
    pub sql: &'static str,
    /// Computed only when the query asks for the field (it costs a lookup per row);
    /// otherwise the statement selects NULL in its place.
    #[serde(skip)]
    pub on_demand: bool,
}

/// What a parameter filters on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamRole {
    /// Equality on the dataset's index column; subject to the caller's index permissions.
    IndexCode,
    /// Equality on the dataset's date column.
    TradeDate,
    /// Inclusive lower bound on the date column.
    StartDate,
    /// Inclusive upper bound on the date column.
    EndDate,
    /// Exact, case-sensitive equality on a text column.
    Exact { column: &'static str },
    /// The instant the data is read as of (D17): RFC 3339 with an offset, or a date
    /// meaning the end of that day in the service time zone.
    AsOf,
    /// Only rows that became visible to the caller after this instant (D17): RFC 3339
    /// with an offset.
    UpdatedSince,
}

impl ParamRole {
    pub fn is_date(self) -> bool {
        matches!(
            self,
            ParamRole::TradeDate | ParamRole::StartDate | ParamRole::EndDate
        )
    }
}

#[derive(Debug, Serialize)]
pub struct ParamDef {
    pub name: &'static str,
    pub role: ParamRole,
    pub description: &'static str,
}

/// One dataset of the query endpoint.
#[derive(Debug, Serialize)]
pub struct Dataset {
    pub api_name: &'static str,
    pub description: &'static str,
    pub scope: Scope,
    /// Whether the member delay cutoff applies (spec part 8).
    pub delayed: bool,
    /// Rows exist only for indexes whose detail the caller may see (quotes).
    pub detail_only: bool,
    pub params: &'static [ParamDef],
    pub fields: &'static [FieldDef],
    pub default_fields: &'static [&'static str],
    /// Ascending sort key (spec 4.3), for documentation; `order_by` is its SQL.
    pub sort_key: &'static [&'static str],
    #[serde(skip)]
    pub from: &'static str,
    #[serde(skip)]
    pub order_by: &'static str,
    /// Column a given `index_code` and the caller's visible indexes filter on.
    #[serde(skip)]
    pub index_column: Option<&'static str>,
    /// Column the date parameters filter on.
    #[serde(skip)]
    pub date_column: Option<&'static str>,
    /// The alias of the versioned rows (with `trade_date`, `index_code` and `vintage`
    /// columns) the `as_of` and `updated_since` parameters apply to; `None` for a
    /// dataset without history.
    #[serde(skip)]
    pub versioned: Option<Versioned>,
}

/// How a dataset's rows are versioned (D17).
#[derive(Debug, Clone, Copy)]
pub struct Versioned {
    /// The alias of the rows in the dataset's `from`.
    pub alias: &'static str,
    /// `updated_since` answers whole (date, index) days (quotes) rather than rows.
    pub by_day: bool,
}

impl Dataset {
    pub fn field(&self, name: &str) -> Option<&'static FieldDef> {
        self.fields.iter().find(|f| f.name == name)
    }

    pub fn param(&self, name: &str) -> Option<&'static ParamDef> {
        self.params.iter().find(|p| p.name == name)
    }

    pub fn uses_indexes(&self) -> bool {
        self.index_column.is_some()
    }
}

const fn field(
    name: &'static str,
    kind: ValueKind,
    sql: &'static str,
    description: &'static str,
) -> FieldDef {
    FieldDef {
        name,
        kind,
        description,
        sql,
        on_demand: false,
    }
}

/// When the row's current version was published (D17); not among the default fields.
const fn published_at(sql: &'static str) -> FieldDef {
    FieldDef {
        name: "published_at",
        kind: ValueKind::Timestamp,
        description: "when the row's current values were published (RFC 3339, UTC)",
        sql,
        on_demand: true,
    }
}

const fn param(name: &'static str, role: ParamRole, description: &'static str) -> ParamDef {
    ParamDef {
        name,
        role,
        description,
    }
}

const P6: ValueKind = ValueKind::Decimal { scale: 6 };

const INDEX_CODE: ParamDef = param(
    "index_code",
    ParamRole::IndexCode,
    "index code (case-sensitive)",
);
const TRADE_DATE: ParamDef = param(
    "trade_date",
    ParamRole::TradeDate,
    "one date; not together with start_date/end_date",
);
const START_DATE: ParamDef = param("start_date", ParamRole::StartDate, "first date, inclusive");
const END_DATE: ParamDef = param("end_date", ParamRole::EndDate, "last date, inclusive");
const AS_OF: ParamDef = param(
    "as_of",
    ParamRole::AsOf,
    "the data as it stood at this instant: RFC 3339 with an offset, or a date \
     (end of that day in the service time zone)",
);
const UPDATED_SINCE: ParamDef = param(
    "updated_since",
    ParamRole::UpdatedSince,
    "only rows that became visible after this instant (RFC 3339 with an offset)",
);

/// index_daily and index_latest share their fields (decisions D2).
const DAILY_FIELDS: &[FieldDef] = &[
    field("trade_date", ValueKind::Date, "d.trade_date", "trading day"),
    field("index_code", ValueKind::Text, "d.index_code", "index code"),
    field("index_value", P6, "d.index_value", "index points"),
    field(
        "weighted_price",
        P6,
        "CASE WHEN d.index_code = ANY({detailed}) THEN d.weighted_price END",
        "sum of weight x price over the day's specifications; null where not shown",
    ),
    field(
        "pre_value",
        P6,
        "d.pre_value",
        "previous trading day's index points",
    ),
    field("change", P6, "d.change", "index_value - pre_value"),
    field(
        "pct_change",
        P6,
        "d.pct_change",
        "change in percent of pre_value",
    ),
    published_at("(SELECT v.published_at FROM vintages v WHERE v.vintage = d.vintage)"),
];

const DAILY_DEFAULTS: &[&str] = &[
    "trade_date",
    "index_code",
    "index_value",
    "weighted_price",
    "change",
    "pct_change",
];

pub static DATASETS: [Dataset; 5] = [
    Dataset {
        api_name: "index_basic",
        description: "index basic information",
        scope: Scope::IndexRead,
        delayed: false,
        detail_only: false,
        params: &[INDEX_CODE],
        fields: &[
            field("index_code", ValueKind::Text, "i.index_code", "index code"),
            field("index_name", ValueKind::Text, "i.index_name", "index name"),
            field("sort_no", ValueKind::Integer, "i.sort_no", "display order"),
            field(
                "visibility",
                ValueKind::Text,
                "i.visibility",
                "aggregate, index_only, member or private",
            ),
            field(
                "base_date",
                ValueKind::Date,
                "(SELECT min(b.trade_date) FROM index_daily b WHERE b.index_code = i.index_code)",
                "first date on which the index has a value",
            ),
            field(
                "base_value",
                P6,
                "i.base_value",
                "index points on the base date",
            ),
            field(
                "unit",
                ValueKind::Text,
                "i.unit",
                "unit of the index points",
            ),
            field(
                "has_quotes",
                ValueKind::Boolean,
                "i.has_quotes",
                "whether the index has specification quotes",
            ),
            field(
                "description",
                ValueKind::Text,
                "i.description",
                "what the index measures",
            ),
        ],
        default_fields: &[
            "index_code",
            "index_name",
            "sort_no",
            "visibility",
            "base_date",
            "base_value",
            "unit",
            "has_quotes",
            "description",
        ],
        sort_key: &["sort_no", "index_code"],
        from: "FROM indexes i WHERE {where}",
        order_by: "i.sort_no, i.index_code",
        index_column: Some("i.index_code"),
        date_column: None,
        versioned: None,
    },
    Dataset {
        api_name: "index_daily",
        description: "daily index points and weighted price",
        scope: Scope::IndexRead,
        delayed: true,
        detail_only: false,
        params: &[
            INDEX_CODE,
            TRADE_DATE,
            START_DATE,
            END_DATE,
            AS_OF,
            UPDATED_SINCE,
        ],
        fields: DAILY_FIELDS,
        default_fields: DAILY_DEFAULTS,
        sort_key: &["trade_date", "index_code"],
        from: "FROM {index_daily} d WHERE d.trade_date <= {cutoff} AND {where}",
        order_by: "d.trade_date, d.index_code",
        index_column: Some("d.index_code"),
        date_column: Some("d.trade_date"),
        versioned: Some(Versioned {
            alias: "d",
            by_day: false,
        }),
    },
    Dataset {
        api_name: "index_latest",
        description: "latest daily row of each visible index",
        scope: Scope::IndexRead,
        delayed: true,
        detail_only: false,
        params: &[INDEX_CODE, AS_OF, UPDATED_SINCE],
        fields: DAILY_FIELDS,
        default_fields: DAILY_DEFAULTS,
        sort_key: &["sort_no", "index_code"],
        from: "FROM indexes i CROSS JOIN LATERAL (SELECT * FROM {index_daily} x \
               WHERE x.index_code = i.index_code AND x.trade_date <= {cutoff} \
               ORDER BY x.trade_date DESC LIMIT 1) d WHERE {where}",
        order_by: "i.sort_no, i.index_code",
        index_column: Some("i.index_code"),
        date_column: None,
        versioned: Some(Versioned {
            alias: "d",
            by_day: false,
        }),
    },
    Dataset {
        api_name: "index_quote",
        description: "specification-level quote detail",
        scope: Scope::QuoteRead,
        delayed: true,
        detail_only: true,
        params: &[
            INDEX_CODE,
            TRADE_DATE,
            START_DATE,
            END_DATE,
            param(
                "specification",
                ParamRole::Exact {
                    column: "q.specification",
                },
                "specification name; exact match",
            ),
            AS_OF,
            UPDATED_SINCE,
        ],
        fields: &[
            field("trade_date", ValueKind::Date, "q.trade_date", "quote date"),
            field("index_code", ValueKind::Text, "q.index_code", "index code"),
            field(
                "specification",
                ValueKind::Text,
                "q.specification",
                "specification name exactly as imported",
            ),
            field(
                "weight",
                ValueKind::Decimal { scale: 8 },
                "q.weight",
                "weight in the index; 0.6 means 60 percent",
            ),
            field("price", P6, "q.price", "unit price of the specification"),
            published_at("(SELECT v.published_at FROM vintages v WHERE v.vintage = q.vintage)"),
        ],
        default_fields: &[
            "trade_date",
            "index_code",
            "specification",
            "weight",
            "price",
        ],
        sort_key: &["trade_date", "index_code", "specification"],
        from: "FROM {index_quotes} q WHERE q.trade_date <= {cutoff} AND {where}",
        order_by: "q.trade_date, q.index_code, q.specification",
        index_column: Some("q.index_code"),
        date_column: Some("q.trade_date"),
        versioned: Some(Versioned {
            alias: "q",
            by_day: true,
        }),
    },
    Dataset {
        api_name: "trade_calendar",
        description: "trading calendar (open days only)",
        scope: Scope::CalendarRead,
        delayed: false,
        detail_only: false,
        params: &[TRADE_DATE, START_DATE, END_DATE],
        fields: &[
            field(
                "trade_date",
                ValueKind::Date,
                "c.trade_date",
                "open trading day",
            ),
            field(
                "pretrade_date",
                ValueKind::Date,
                "c.pretrade_date",
                "previous open trading day; null for the first day on record",
            ),
        ],
        default_fields: &["trade_date", "pretrade_date"],
        sort_key: &["trade_date"],
        from: "FROM (SELECT t.trade_date, lag(t.trade_date) OVER (ORDER BY t.trade_date) \
               AS pretrade_date FROM trade_calendar t) c WHERE {where}",
        order_by: "c.trade_date",
        index_column: None,
        date_column: Some("c.trade_date"),
        versioned: None,
    },
];

/// The dataset named `api_name`, if it exists.
pub fn dataset(api_name: &str) -> Option<&'static Dataset> {
    DATASETS.iter().find(|d| d.api_name == api_name)
}

/// The api_names, in catalogue order.
pub fn api_names() -> Vec<&'static str> {
    DATASETS.iter().map(|d| d.api_name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_sort_keys_name_real_fields() {
        for ds in &DATASETS {
            for name in ds.default_fields.iter().chain(ds.sort_key) {
                let is_field = ds.field(name).is_some();
                // index_latest sorts by the index's sort_no, which is not one of its fields.
                assert!(is_field || *name == "sort_no", "{}: {name}", ds.api_name);
            }
            let date_param = ds.params.iter().any(|p| p.role.is_date());
            assert_eq!(date_param, ds.date_column.is_some(), "{}", ds.api_name);
            let index_param = ds.params.iter().any(|p| p.role == ParamRole::IndexCode);
            assert_eq!(index_param, ds.index_column.is_some(), "{}", ds.api_name);
            let history_param = ds
                .params
                .iter()
                .any(|p| matches!(p.role, ParamRole::AsOf | ParamRole::UpdatedSince));
            assert_eq!(history_param, ds.versioned.is_some(), "{}", ds.api_name);
            let versioned = ds.from.contains("{index_daily}") || ds.from.contains("{index_quotes}");
            assert_eq!(versioned, ds.versioned.is_some(), "{}", ds.api_name);
            // Fields computed on demand are never among the defaults.
            for f in ds.fields.iter().filter(|f| f.on_demand) {
                assert!(!ds.default_fields.contains(&f.name), "{}", f.name);
            }
        }
    }
}
