//! The shapes of the dataset catalogue: scopes, value kinds, fields, parameters, a
//! dataset and how its rows are versioned, and how they serialise for the docs
//! (`iq-service catalogue`, the OpenAPI document's `x-datasets`).
//!
//! No dataset is declared here (that is [`super::DATASETS`]), and nothing here reads
//! client input: the SQL fragments these types carry are written by us, never built.

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
    /// A decimal written as a JSON number with exactly `scale` fractional digits
    /// (Tushare's wire, D24: `1009.305519`, never a string).
    Number {
        scale: u32,
    },
}

#[derive(Debug, Serialize)]
pub struct FieldDef {
    pub name: &'static str,
    #[serde(flatten)]
    pub kind: ValueKind,
    pub description: &'static str,
    /// The column expression; may use `{detailed}`, `{cutoff}` and `{tz}`.
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
    /// Rows whose timestamp `column` is later than this instant (D21's `since`): RFC
    /// 3339 with an offset.
    PublishedAfter { column: &'static str },
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
    /// The sort key (spec 4.3), for documentation: field names, ascending unless
    /// followed by ` desc`; `order_by` is its SQL.
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
    /// The answer's shape: ours, or Tushare's (D24).
    #[serde(skip)]
    pub wire: Wire,
}

/// The shape of a dataset's answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// `POST /api/v1/query`: `data` with `fields`, `items`, `limit`, `offset`,
    /// `returned` and `has_more`.
    Native,
    /// `POST /tushare` (D24): `data` with `fields`, `items` and `has_more` only.
    Tushare,
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
