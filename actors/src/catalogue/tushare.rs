//! Tushare's datasets (D24), as `POST /tushare` serves them: each one of ours under
//! Tushare's api_name, with Tushare's column names, decimals as JSON numbers and its
//! order (newest first, but `index_basic` in display order). The same SQL, scopes,
//! delay, visibility and `as_of` as the native dataset it shows, and never reachable
//! from `POST /api/v1/query`: [`super::dataset`] does not list them.
//!
//! Their `api_name` is `tushare.` and Tushare's name, so their pages are cached apart
//! from the native ones.

use super::datasets::{
    field, param, AS_OF, CURRENCY, END_DATE, LATEST_TRADE_DATE, METHODOLOGY_VERSION, MONTHLY_FROM,
    NEXT_PUBLICATION_AT, PERIOD_CHANGE, PERIOD_PCT_CHANGE, PRICE_BASIS, PUBLISH_TIME, SOURCE,
    START_DATE, TRADE_DATE, WEEKLY_FROM,
};
use super::types::{Dataset, FieldDef, ParamDef, ParamRole, Scope, ValueKind, Versioned, Wire};

/// Decimals on Tushare's wire: JSON numbers with six places.
const N6: ValueKind = ValueKind::Number { scale: 6 };

/// `ts_code`: one index code or several, comma-separated (the parser splits them).
const TS_CODE: ParamDef = param(
    "ts_code",
    ParamRole::IndexCode,
    "index code, or up to 8 comma-separated; any letter case",
);

const FIRST_DAY: &str =
    "(SELECT min(b.trade_date) FROM index_daily b WHERE b.index_code = i.index_code)";

const BASIC_FIELDS: &[FieldDef] = &[
    field("ts_code", ValueKind::Text, "i.index_code", "index code"),
    field("name", ValueKind::Text, "i.index_name", "index name"),
    field(
        "fullname",
        ValueKind::Text,
        "i.index_name",
        "index name in full",
    ),
    field(
        "market",
        ValueKind::Text,
        "'AI hardware'",
        "the market the index covers",
    ),
    field(
        "publisher",
        ValueKind::Text,
        "'IQ'",
        "who publishes the index",
    ),
    field(
        "category",
        ValueKind::Text,
        "CASE WHEN i.has_quotes THEN 'price index' ELSE 'composite index' END",
        "price index (of quotes) or composite index (of other indexes)",
    ),
    field(
        "base_date",
        ValueKind::Date,
        FIRST_DAY,
        "first date with a value",
    ),
    field(
        "base_point",
        N6,
        "i.base_value",
        "index points on the base date",
    ),
    field(
        "list_date",
        ValueKind::Date,
        FIRST_DAY,
        "first date with a value",
    ),
    field(
        "desc",
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
];

const DAILY_FIELDS: &[FieldDef] = &[
    field("ts_code", ValueKind::Text, "d.index_code", "index code"),
    field("trade_date", ValueKind::Date, "d.trade_date", "trading day"),
    field("close", N6, "d.index_value", "index points"),
    field(
        "pre_close",
        N6,
        "d.pre_value",
        "previous trading day's index points",
    ),
    field("change", N6, "d.change", "close - pre_close"),
    field(
        "pct_chg",
        N6,
        "d.pct_change",
        "change in percent of pre_close",
    ),
];

const PERIOD_FIELDS: &[FieldDef] = &[
    field("ts_code", ValueKind::Text, "w.index_code", "index code"),
    field(
        "trade_date",
        ValueKind::Date,
        "w.trade_date",
        "the period's last trading day",
    ),
    field("close", N6, "w.index_value", "index points on trade_date"),
    field(
        "open",
        N6,
        "w.open_value",
        "index points on the period's first day",
    ),
    field(
        "high",
        N6,
        "w.high_value",
        "the period's highest index points",
    ),
    field("low", N6, "w.low_value", "the period's lowest index points"),
    field(
        "pre_close",
        N6,
        "w.pre_value",
        "the previous period's close",
    ),
    field("change", N6, PERIOD_CHANGE, "close - pre_close"),
    field(
        "pct_chg",
        N6,
        PERIOD_PCT_CHANGE,
        "change in percent of pre_close",
    ),
];

const DAILY_VERSIONED: Option<Versioned> = Some(Versioned {
    alias: "d",
    by_day: false,
});

const fn period(api_name: &'static str, from: &'static str) -> Dataset {
    Dataset {
        api_name,
        description: "Tushare's weekly or monthly index bars",
        scope: Scope::IndexRead,
        delayed: true,
        detail_only: false,
        params: &[TS_CODE, TRADE_DATE, START_DATE, END_DATE, AS_OF],
        fields: PERIOD_FIELDS,
        default_fields: &[
            "ts_code",
            "trade_date",
            "close",
            "open",
            "high",
            "low",
            "pre_close",
            "change",
            "pct_chg",
        ],
        sort_key: &["trade_date desc", "ts_code"],
        from,
        order_by: "w.trade_date DESC, w.index_code",
        index_column: Some("w.index_code"),
        date_column: Some("w.trade_date"),
        versioned: Some(Versioned {
            alias: "w",
            by_day: false,
        }),
        wire: Wire::Tushare,
    }
}

pub static TUSHARE_DATASETS: [Dataset; 6] = [
    Dataset {
        api_name: "tushare.index_basic",
        description: "Tushare's index_basic",
        scope: Scope::IndexRead,
        delayed: false,
        detail_only: false,
        params: &[TS_CODE],
        fields: BASIC_FIELDS,
        default_fields: &[
            "ts_code",
            "name",
            "fullname",
            "market",
            "publisher",
            "category",
            "base_date",
            "base_point",
            "list_date",
            "desc",
        ],
        sort_key: &["sort_no", "ts_code"],
        from: "FROM indexes i WHERE {where}",
        order_by: "i.sort_no, i.index_code",
        index_column: Some("i.index_code"),
        date_column: None,
        versioned: None,
        wire: Wire::Tushare,
    },
    Dataset {
        api_name: "tushare.index_daily",
        description: "Tushare's index_daily",
        scope: Scope::IndexRead,
        delayed: true,
        detail_only: false,
        params: &[TS_CODE, TRADE_DATE, START_DATE, END_DATE, AS_OF],
        fields: DAILY_FIELDS,
        default_fields: &[
            "ts_code",
            "trade_date",
            "close",
            "pre_close",
            "change",
            "pct_chg",
        ],
        sort_key: &["trade_date desc", "ts_code"],
        from: "FROM {index_daily} d WHERE d.trade_date <= {cutoff} AND {where}",
        order_by: "d.trade_date DESC, d.index_code",
        index_column: Some("d.index_code"),
        date_column: Some("d.trade_date"),
        versioned: DAILY_VERSIONED,
        wire: Wire::Tushare,
    },
    period("tushare.index_weekly", WEEKLY_FROM),
    period("tushare.index_monthly", MONTHLY_FROM),
    Dataset {
        api_name: "tushare.trade_cal",
        description: "Tushare's trade_cal: every calendar day of the calendar's range",
        scope: Scope::CalendarRead,
        delayed: false,
        detail_only: false,
        params: &[
            param(
                "is_open",
                ParamRole::Exact {
                    column: "c.is_open::text",
                },
                "1: open days only; 0: closed days only",
            ),
            START_DATE,
            END_DATE,
        ],
        fields: &[
            field(
                "exchange",
                ValueKind::Text,
                "'IQ'",
                "the service's calendar",
            ),
            field("cal_date", ValueKind::Date, "c.cal_date", "calendar day"),
            field(
                "is_open",
                ValueKind::Integer,
                "c.is_open",
                "1 open, 0 closed",
            ),
            field(
                "pretrade_date",
                ValueKind::Date,
                "c.pretrade_date",
                "the open day before cal_date",
            ),
        ],
        default_fields: &["exchange", "cal_date", "is_open", "pretrade_date"],
        sort_key: &["cal_date desc"],
        from: "FROM (SELECT g.day::date AS cal_date, \
                       CASE WHEN t.trade_date IS NULL THEN 0 ELSE 1 END AS is_open, \
                       (SELECT max(p.trade_date) FROM trade_calendar p \
                        WHERE p.trade_date < g.day::date) AS pretrade_date \
                     FROM generate_series((SELECT min(trade_date) FROM trade_calendar), \
                                          (SELECT max(trade_date) FROM trade_calendar), \
                                          interval '1 day') AS g(day) \
                     LEFT JOIN trade_calendar t ON t.trade_date = g.day::date) c \
               WHERE {where}",
        order_by: "c.cal_date DESC",
        index_column: None,
        date_column: Some("c.cal_date"),
        versioned: None,
        wire: Wire::Tushare,
    },
    Dataset {
        api_name: "tushare.index_weight",
        description: "Tushare's index_weight: the quotes of aggregate indexes",
        scope: Scope::QuoteRead,
        delayed: true,
        detail_only: true,
        params: &[
            param(
                "index_code",
                ParamRole::IndexCode,
                "index code, or up to 8 comma-separated; any letter case",
            ),
            TRADE_DATE,
            START_DATE,
            END_DATE,
            AS_OF,
        ],
        fields: &[
            field("index_code", ValueKind::Text, "q.index_code", "index code"),
            field(
                "con_code",
                ValueKind::Text,
                "q.specification",
                "specification",
            ),
            field("trade_date", ValueKind::Date, "q.trade_date", "quote date"),
            field(
                "weight",
                N6,
                "round(q.weight * 100, 6)",
                "weight in percent",
            ),
        ],
        default_fields: &["index_code", "con_code", "trade_date", "weight"],
        sort_key: &["trade_date desc", "index_code", "con_code"],
        from: "FROM {index_quotes} q WHERE q.trade_date <= {cutoff} AND {where}",
        order_by: "q.trade_date DESC, q.index_code, q.specification",
        index_column: Some("q.index_code"),
        date_column: Some("q.trade_date"),
        versioned: Some(Versioned {
            alias: "q",
            by_day: true,
        }),
        wire: Wire::Tushare,
    },
];
