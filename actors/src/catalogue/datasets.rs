//! [`DATASETS`]: every dataset of `POST /api/v1/query` as data (its parameters,
//! fields, SQL fragments and sort order), with the small constructors and the shared
//! parameters and fields the table is written with.
//!
//! The table is the contract: changing a name, a description or an SQL fragment here
//! changes the API, the docs and the Python client's checks. It must never hold SQL
//! built from anything but these literals.

use super::types::{Dataset, FieldDef, ParamDef, ParamRole, Scope, ValueKind, Versioned, Wire};

pub(super) const fn field(
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

/// A field returned only when named in `fields` (D20's facts, D17's `published_at`).
pub(super) const fn on_demand(
    name: &'static str,
    kind: ValueKind,
    sql: &'static str,
    description: &'static str,
) -> FieldDef {
    FieldDef {
        on_demand: true,
        ..field(name, kind, sql, description)
    }
}

/// When the row's current version was published (D17); not among the default fields.
const fn published_at(sql: &'static str) -> FieldDef {
    on_demand(
        "published_at",
        ValueKind::Timestamp,
        sql,
        "when the row's current values were published (RFC 3339, UTC)",
    )
}

pub(super) const fn param(
    name: &'static str,
    role: ParamRole,
    description: &'static str,
) -> ParamDef {
    ParamDef {
        name,
        role,
        description,
    }
}

pub(super) const P6: ValueKind = ValueKind::Decimal { scale: 6 };

pub(super) const INDEX_CODE: ParamDef = param(
    "index_code",
    ParamRole::IndexCode,
    "index code (case-sensitive)",
);
pub(super) const TRADE_DATE: ParamDef = param(
    "trade_date",
    ParamRole::TradeDate,
    "one date; not together with start_date/end_date",
);
pub(super) const START_DATE: ParamDef =
    param("start_date", ParamRole::StartDate, "first date, inclusive");
pub(super) const END_DATE: ParamDef = param("end_date", ParamRole::EndDate, "last date, inclusive");
pub(super) const AS_OF: ParamDef = param(
    "as_of",
    ParamRole::AsOf,
    "the data as it stood at this instant: RFC 3339 with an offset, or a date \
     (end of that day in the service time zone)",
);
pub(super) const UPDATED_SINCE: ParamDef = param(
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

/// The rows of a period dataset (D25): per index and calendar `$unit` (`'week'`, an
/// ISO week from Monday, or `'month'`) of visible daily values, the last day's value,
/// the first, the highest and the lowest, and the previous period's last value, with a
/// vintage for `updated_since` (`super::periods` says where they come from). The
/// visible indexes and the params filter the periods (`{where}`), never the days a
/// period's `pre_value` reads.
macro_rules! period_from {
    ($unit:literal) => {
        concat!("FROM {periods:", $unit, "} w WHERE {where}")
    };
}

/// The periods of `index_weekly` and `index_monthly` (and of Tushare's).
pub(super) const WEEKLY_FROM: &str = period_from!("week");
pub(super) const MONTHLY_FROM: &str = period_from!("month");

/// A period's change and percent change, over [`period_from`]'s rows (`w`): divided at
/// 30 decimals, then rounded once half away from zero (D8's round6).
pub(super) const PERIOD_CHANGE: &str = "w.index_value - w.pre_value";
pub(super) const PERIOD_PCT_CHANGE: &str =
    "round((w.index_value - w.pre_value)::numeric(60, 30) * 100 / w.pre_value, 6)";

/// The fields of a period dataset (D25), every one a default field.
const PERIOD_FIELDS: &[FieldDef] = &[
    field(
        "trade_date",
        ValueKind::Date,
        "w.trade_date",
        "the period's last trading day with a value (so far, for the period in progress)",
    ),
    field("index_code", ValueKind::Text, "w.index_code", "index code"),
    field(
        "index_value",
        P6,
        "w.index_value",
        "index points on trade_date: the period's close",
    ),
    field(
        "open_value",
        P6,
        "w.open_value",
        "index points on the period's first trading day with a value",
    ),
    field(
        "high_value",
        P6,
        "w.high_value",
        "the period's highest index points",
    ),
    field(
        "low_value",
        P6,
        "w.low_value",
        "the period's lowest index points",
    ),
    field(
        "pre_value",
        P6,
        "w.pre_value",
        "the previous period's index_value; null for an index's first period",
    ),
    field("change", P6, PERIOD_CHANGE, "index_value - pre_value"),
    field(
        "pct_change",
        P6,
        PERIOD_PCT_CHANGE,
        "change in percent of pre_value",
    ),
];

const PERIOD_DEFAULTS: &[&str] = &[
    "trade_date",
    "index_code",
    "index_value",
    "open_value",
    "high_value",
    "low_value",
    "pre_value",
    "change",
    "pct_change",
];

/// A period dataset (D25) named `api_name`, over `from` (a [`period_from`]).
const fn period_dataset(
    api_name: &'static str,
    description: &'static str,
    from: &'static str,
) -> Dataset {
    Dataset {
        api_name,
        description,
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
        fields: PERIOD_FIELDS,
        default_fields: PERIOD_DEFAULTS,
        sort_key: &["trade_date", "index_code"],
        from,
        order_by: "w.trade_date, w.index_code",
        index_column: Some("w.index_code"),
        date_column: Some("w.trade_date"),
        versioned: Some(Versioned {
            alias: "w",
            by_day: false,
        }),
        wire: Wire::Native,
    }
}

/// The facts of an index (D20), on-demand fields of `index_basic` (and of Tushare's).
pub(super) const CURRENCY: FieldDef = on_demand(
    "currency",
    ValueKind::Text,
    "i.currency",
    "ISO 4217 code of weighted_price and of every quote price of the index",
);

pub(super) const PRICE_BASIS: FieldDef = on_demand(
    "price_basis",
    ValueKind::Text,
    "i.price_basis",
    "what a price includes",
);

pub(super) const SOURCE: FieldDef = on_demand(
    "source",
    ValueKind::Text,
    "i.source",
    "where prices come from",
);

pub(super) const PUBLISH_TIME: FieldDef = on_demand(
    "publish_time",
    ValueKind::Text,
    "i.publish_time",
    "HH:MM in the service time zone: when a trading day's values are published",
);

pub(super) const METHODOLOGY_VERSION: FieldDef = on_demand(
    "methodology_version",
    ValueKind::Text,
    "i.methodology_version",
    "the version of the methodology the index is calculated by",
);

pub(super) const LATEST_TRADE_DATE: FieldDef = on_demand(
    "latest_trade_date",
    ValueKind::Date,
    "(SELECT max(b.trade_date) FROM index_daily b \
          WHERE b.index_code = i.index_code AND b.trade_date <= {cutoff})",
    "the latest date with a value this caller may see; empty when none",
);

pub(super) const NEXT_PUBLICATION_AT: FieldDef = on_demand(
    "next_publication_at",
    ValueKind::Timestamp,
    "(SELECT (min(c.trade_date) + i.publish_time::time) AT TIME ZONE {tz} \
          FROM trade_calendar c WHERE c.trade_date > \
          (SELECT max(b.trade_date) FROM index_daily b \
           WHERE b.index_code = i.index_code))",
    "publish_time on the first open trading day after the latest published \
         date (RFC 3339, UTC): a schedule, the same for every caller",
);

pub static DATASETS: [Dataset; 8] = [
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
            CURRENCY,
            PRICE_BASIS,
            SOURCE,
            PUBLISH_TIME,
            METHODOLOGY_VERSION,
            LATEST_TRADE_DATE,
            NEXT_PUBLICATION_AT,
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
        wire: Wire::Native,
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
        wire: Wire::Native,
    },
    period_dataset(
        "index_weekly",
        "weekly values: per ISO week (Monday to Sunday), its last, first, highest and lowest \
         daily value",
        WEEKLY_FROM,
    ),
    period_dataset(
        "index_monthly",
        "monthly values: per calendar month, its last, first, highest and lowest daily value",
        MONTHLY_FROM,
    ),
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
        wire: Wire::Native,
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
        wire: Wire::Native,
    },
    Dataset {
        api_name: "index_revisions",
        description: "each published daily value that was replaced by a different one",
        scope: Scope::IndexRead,
        delayed: true,
        detail_only: false,
        params: &[
            INDEX_CODE,
            START_DATE,
            END_DATE,
            param(
                "since",
                ParamRole::PublishedAfter {
                    column: "r.published_at",
                },
                "only revisions published after this instant (RFC 3339 with an offset)",
            ),
        ],
        fields: &[
            field("index_code", ValueKind::Text, "r.index_code", "index code"),
            field(
                "trade_date",
                ValueKind::Date,
                "r.trade_date",
                "trading day whose values were revised",
            ),
            field(
                "published_at",
                ValueKind::Timestamp,
                "r.published_at",
                "when the new value was published (RFC 3339, UTC)",
            ),
            field(
                "previous_published_at",
                ValueKind::Timestamp,
                "r.previous_published_at",
                "when the value it replaced had been published (RFC 3339, UTC)",
            ),
            field(
                "previous_value",
                P6,
                "r.previous_value",
                "index points before the revision",
            ),
            field(
                "index_value",
                P6,
                "r.index_value",
                "index points after the revision",
            ),
            field(
                "change",
                P6,
                "r.change",
                "index_value - previous_value; 0 when only other fields of the row changed",
            ),
            on_demand(
                "reason",
                ValueKind::Text,
                "r.reason",
                "why the value was revised, as the import that revised it said (its note); \
                 null when it gave none",
            ),
        ],
        default_fields: &[
            "index_code",
            "trade_date",
            "published_at",
            "previous_published_at",
            "previous_value",
            "index_value",
            "change",
        ],
        sort_key: &["published_at desc", "index_code", "trade_date"],
        from: "FROM index_revisions r WHERE r.trade_date <= {cutoff} AND {where}",
        order_by: "r.published_at DESC, r.index_code, r.trade_date",
        index_column: Some("r.index_code"),
        date_column: Some("r.trade_date"),
        versioned: None,
        wire: Wire::Native,
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
        wire: Wire::Native,
    },
];
