//! The composite `Hardware_Index` (D8) after quote imports, read back through the API
//! with a professional member's key (the composite is a `member` index).
//!
//! Every expectation is computed here from the imported quotes with the test's own
//! decimal arithmetic, exactly as D8 and D26 state it, never with the service's
//! functions:
//!
//! - a base index: `weighted_price = round6(sum w x p)`; its first date is `base_value`
//!   (1000); afterwards `value(t) = round6(1000 x wp(t) / wp(first))` (D26), and
//!   `pct_change = round6(change / pre_value x 100)` against the index's previous row;
//! - the composite, on each date on which all six base indexes have a value: the first
//!   such date is 1000 (no pre_value, change or pct_change); afterwards
//!   `pct_change(t) = round6(mean of the six stored pct_change(t))` and
//!   `value(t) = round6(value(t-1) x (100 + pct_change(t)) / 100)`, `t-1` being the
//!   previous composite row; a date on which a base index has no value has no row.

use std::collections::BTreeMap;

use rust_decimal::prelude::*;
use rust_decimal::RoundingStrategy;
use serde_json::{json, Value};

use crate::helpers::quotes::{self, BASES};
use crate::helpers::{select_value, spawn_with_sql, Key, Reply, Session, TestApp};

/// Weekdays 2026-11-02 .. 2026-11-13: the calendar, and nothing else.
const CALENDAR: &str = "INSERT INTO trade_calendar (trade_date) \
    SELECT d::date FROM generate_series('2026-11-02'::date, '2026-11-13'::date, '1 day') AS d \
    WHERE extract(isodow FROM d) < 6;";

const COMPOSITE: &str = "Hardware_Index";

/// One quote row of an import file: (trade_date, index_code, specification, weight,
/// price).
type Quote = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

/// Six trading days of all six base indexes, except DRAM_Index on Thursday 2026-11-05.
/// Several specifications with uneven weights make the weighted prices round; the
/// composite's mean change lands exactly on a midpoint on 2026-11-06 (+0.5118665) and
/// on 2026-11-09 (-0.1590845), where half away from zero and half to even differ. A
/// `Server_Rental_Index` series takes no part in the composite.
const QUOTES: &[Quote] = &[
    ("20261102", "Server_Index", "8x H100", "0.5", "250000.1"),
    ("20261102", "Server_Index", "8x H200", "0.5", "255328.2"),
    ("20261103", "Server_Index", "8x H100", "0.5", "252531.37"),
    ("20261103", "Server_Index", "8x H200", "0.5", "255328.2"),
    ("20261104", "Server_Index", "8x H100", "0.6", "249875.12"),
    (
        "20261104",
        "Server_Index",
        "8x H200",
        "0.4",
        "260000.000001",
    ),
    ("20261105", "Server_Index", "8x H100", "0.6", "250000"),
    ("20261105", "Server_Index", "8x H200", "0.4", "260000"),
    ("20261106", "Server_Index", "8x H100", "0.6", "251000.5"),
    ("20261106", "Server_Index", "8x H200", "0.4", "259999.5"),
    ("20261109", "Server_Index", "8x H100", "0.6", "248000"),
    ("20261109", "Server_Index", "8x H200", "0.4", "261000.25"),
    ("20261102", "GPU_Index", "H100", "0.33333333", "29700"),
    ("20261102", "GPU_Index", "H200", "0.33333333", "31500.5"),
    (
        "20261102",
        "GPU_Index",
        "B200",
        "0.33333334",
        "41000.123456",
    ),
    ("20261103", "GPU_Index", "H100", "0.33333333", "29800"),
    ("20261103", "GPU_Index", "H200", "0.33333333", "31500.5"),
    (
        "20261103",
        "GPU_Index",
        "B200",
        "0.33333334",
        "41000.123456",
    ),
    ("20261104", "GPU_Index", "H100", "0.33333333", "29800"),
    ("20261104", "GPU_Index", "H200", "0.33333333", "31400.25"),
    ("20261104", "GPU_Index", "B200", "0.33333334", "40900"),
    ("20261105", "GPU_Index", "H100", "0.33333333", "29650.75"),
    ("20261105", "GPU_Index", "H200", "0.33333333", "31400.25"),
    ("20261105", "GPU_Index", "B200", "0.33333334", "40900"),
    ("20261106", "GPU_Index", "H100", "0.33333333", "29650.75"),
    ("20261106", "GPU_Index", "H200", "0.33333333", "31600"),
    (
        "20261106",
        "GPU_Index",
        "B200",
        "0.33333334",
        "41200.999999",
    ),
    ("20261109", "GPU_Index", "H100", "0.33333333", "29700"),
    ("20261109", "GPU_Index", "H200", "0.33333333", "31650"),
    ("20261109", "GPU_Index", "B200", "0.33333334", "41150"),
    ("20261102", "DRAM_Index", "DDR5 64GB", "1", "100"),
    ("20261103", "DRAM_Index", "DDR5 64GB", "1", "101"),
    ("20261104", "DRAM_Index", "DDR5 64GB", "1", "99.99"),
    ("20261106", "DRAM_Index", "DDR5 64GB", "1", "102.5"),
    ("20261109", "DRAM_Index", "DDR5 64GB", "1", "101.234567"),
    ("20261102", "SSD_Index", "7.68TB", "0.7", "480.25"),
    ("20261102", "SSD_Index", "15.36TB", "0.3", "512"),
    ("20261103", "SSD_Index", "7.68TB", "0.7", "481.2105"),
    ("20261103", "SSD_Index", "15.36TB", "0.3", "512"),
    ("20261104", "SSD_Index", "7.68TB", "0.7", "479"),
    ("20261104", "SSD_Index", "15.36TB", "0.3", "515.5"),
    ("20261105", "SSD_Index", "7.68TB", "0.7", "478.5"),
    ("20261105", "SSD_Index", "15.36TB", "0.3", "515.5"),
    ("20261106", "SSD_Index", "7.68TB", "0.7", "478.5"),
    ("20261106", "SSD_Index", "15.36TB", "0.3", "516"),
    ("20261109", "SSD_Index", "7.68TB", "0.7", "481"),
    ("20261109", "SSD_Index", "15.36TB", "0.3", "514.75"),
    ("20261102", "CPU_Index", "EPYC 9654", "1", "8000"),
    ("20261103", "CPU_Index", "EPYC 9654", "1", "8080"),
    ("20261104", "CPU_Index", "EPYC 9654", "1", "7999.2"),
    ("20261105", "CPU_Index", "EPYC 9654", "1", "8100"),
    ("20261106", "CPU_Index", "EPYC 9654", "1", "8050"),
    ("20261109", "CPU_Index", "EPYC 9654", "1", "8050"),
    ("20261102", "OI_Index", "800G SR8", "1", "1200"),
    ("20261103", "OI_Index", "800G SR8", "1", "1212"),
    ("20261104", "OI_Index", "800G SR8", "1", "1199.88"),
    ("20261105", "OI_Index", "800G SR8", "1", "1190"),
    ("20261106", "OI_Index", "800G SR8", "1", "1195"),
    ("20261109", "OI_Index", "800G SR8", "1", "1201.000015"),
    ("20261102", "Server_Rental_Index", "H100 hour", "1", "2.1"),
    ("20261105", "Server_Rental_Index", "H100 hour", "1", "2.7"),
    ("20261106", "Server_Rental_Index", "H100 hour", "1", "1.9"),
];

fn round6(x: Decimal) -> Decimal {
    x.round_dp_with_strategy(6, RoundingStrategy::MidpointAwayFromZero)
}

fn dec(text: &str) -> Decimal {
    Decimal::from_str(text).unwrap()
}

/// The quotes the database holds: each import replaces the (date, index) groups it
/// contains, as D8 says.
#[derive(Default, Clone)]
struct Held {
    /// (index_code, trade_date) -> [(weight, price)]
    groups: BTreeMap<(String, String), Vec<(Decimal, Decimal)>>,
}

impl Held {
    fn import(&mut self, quotes: &[Quote]) {
        let mut file: BTreeMap<(String, String), Vec<(Decimal, Decimal)>> = BTreeMap::new();
        for (date, code, _, weight, price) in quotes {
            file.entry((code.to_string(), date.to_string()))
                .or_default()
                .push((dec(weight), dec(price)));
        }
        self.groups.extend(file);
    }

    /// A base index's rows: date -> (index_value, pct_change).
    fn base(&self, code: &str) -> BTreeMap<String, (Decimal, Option<Decimal>)> {
        let mut rows = BTreeMap::new();
        // D26: each level a ratio to the base day's weighted price.
        let mut previous: Option<(Decimal, Decimal)> = None; // (value, base weighted price)
        for ((c, date), quotes) in &self.groups {
            if c != code {
                continue;
            }
            let wp = round6(quotes.iter().map(|(w, p)| w * p).sum());
            let (value, pct, base_wp) = match previous {
                None => (dec("1000"), None, wp),
                Some((pre, base_wp)) => {
                    let value = round6(dec("1000") * wp / base_wp);
                    (
                        value,
                        Some(round6((value - pre) / pre * dec("100"))),
                        base_wp,
                    )
                }
            };
            rows.insert(date.clone(), (value, pct));
            previous = Some((value, base_wp));
        }
        rows
    }

    /// The composite's rows, ascending.
    fn composite(&self) -> Vec<Row> {
        let bases: Vec<_> = BASES.iter().map(|code| self.base(code)).collect();
        let mut dates: Vec<&String> = bases.iter().flat_map(|rows| rows.keys()).collect();
        dates.sort();
        dates.dedup();
        let mut rows: Vec<Row> = Vec::new();
        for date in dates {
            let Some(day) = bases
                .iter()
                .map(|rows| rows.get(date))
                .collect::<Option<Vec<_>>>()
            else {
                continue; // a base index has no value: no composite row
            };
            let row = match rows.last() {
                None => Row {
                    date: date.clone(),
                    value: dec("1000"),
                    pre_value: None,
                    change: None,
                    pct_change: None,
                },
                Some(previous) => {
                    let pcts: Vec<Decimal> = day
                        .iter()
                        .map(|(_, pct)| {
                            pct.expect("after its first date a base index has a change")
                        })
                        .collect();
                    let mean = pcts.iter().sum::<Decimal>() / Decimal::from(pcts.len());
                    let pct = round6(mean);
                    let pre = previous.value;
                    let value = round6(pre * (dec("100") + pct) / dec("100"));
                    Row {
                        date: date.clone(),
                        value,
                        pre_value: Some(pre),
                        change: Some(value - pre),
                        pct_change: Some(pct),
                    }
                }
            };
            rows.push(row);
        }
        rows
    }
}

/// One `index_daily` row of the composite.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    date: String,
    value: Decimal,
    pre_value: Option<Decimal>,
    change: Option<Decimal>,
    pct_change: Option<Decimal>,
}

fn row(date: &str, value: &str, pre: Option<&str>, change: Option<&str>, pct: Option<&str>) -> Row {
    Row {
        date: date.into(),
        value: dec(value),
        pre_value: pre.map(dec),
        change: change.map(dec),
        pct_change: pct.map(dec),
    }
}

/// [`quotes::import`] (`quotes` as a CSV file, asserting it was accepted), also asserting
/// that every row was stored.
async fn import(app: &TestApp, admin: &Session, file_name: &str, quotes: &[Quote]) -> Reply {
    let reply = quotes::import(app, admin, file_name, quotes).await;
    assert_eq!(reply.data()["quotes"], quotes.len(), "{}", reply.body);
    reply
}

/// `index_daily` of `code` as the professional member `key` reads it.
async fn daily(app: &TestApp, key: &Key, code: &str) -> Vec<Row> {
    let body = json!({"api_name": "index_daily", "params": {"index_code": code},
                      "fields": ["trade_date", "index_value", "pre_value", "change", "pct_change"]});
    let reply = app.query_with(body, Some(&key.key)).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    let num = |v: &Value| v.as_str().map(dec);
    reply
        .items()
        .iter()
        .map(|r| Row {
            date: r[0].as_str().unwrap().to_string(),
            value: num(&r[1]).unwrap(),
            pre_value: num(&r[2]),
            change: num(&r[3]),
            pct_change: num(&r[4]),
        })
        .collect()
}

/// Each base index as the service stored it agrees with the test's own ratios (D26)
/// (so a composite mismatch is the composite's, not a base index's).
async fn assert_bases(app: &TestApp, key: &Key, held: &Held) {
    for code in BASES {
        let stored: Vec<(String, Decimal, Option<Decimal>)> = daily(app, key, code)
            .await
            .into_iter()
            .map(|r| (r.date, r.value, r.pct_change))
            .collect();
        let expected: Vec<(String, Decimal, Option<Decimal>)> = held
            .base(code)
            .into_iter()
            .map(|(date, (value, pct))| (date, value, pct))
            .collect();
        assert_eq!(stored, expected, "{code}");
    }
}

async fn spawn() -> (TestApp, Session, Key) {
    let app = spawn_with_sql(CALENDAR).await;
    let admin = app.admin().await;
    let key = app.key_of_tier(&admin, "petra", "pro").await;
    (app, admin, key)
}

fn dates(rows: &[Row]) -> Vec<&str> {
    rows.iter().map(|r| r.date.as_str()).collect()
}

#[actix_web::test]
async fn the_composite_is_the_chained_mean_of_the_six_base_changes() {
    let (app, admin, key) = spawn().await;
    let reply = import(&app, &admin, "quotes.csv", QUOTES).await;
    assert_eq!(
        reply.data()["recalculated_from"][COMPOSITE],
        "20261102",
        "{}",
        reply.body
    );
    let mut held = Held::default();
    held.import(QUOTES);
    assert_bases(&app, &key, &held).await;

    let expected = held.composite();
    let stored = daily(&app, &key, COMPOSITE).await;
    assert_eq!(stored, expected);

    // DRAM_Index has no value on 2026-11-05: no composite row that day, and the next
    // day links to the last composite row (2026-11-04) through the six changes of
    // 2026-11-06 (DRAM_Index's own change being 2026-11-04 -> 2026-11-06).
    assert_eq!(
        dates(&stored),
        ["20261102", "20261103", "20261104", "20261106", "20261109"]
    );
    // The same numbers, worked out separately with exact decimal arithmetic: a check
    // on the test's own arithmetic. 2026-11-06's mean change is exactly 0.5118665 and
    // 2026-11-09's exactly -0.1590845: both round away from zero.
    assert_eq!(
        expected,
        vec![
            row("20261102", "1000", None, None, None),
            row(
                "20261103",
                "1006.22673",
                Some("1000"),
                Some("6.22673"),
                Some("0.622673")
            ),
            row(
                "20261104",
                "1000.693942",
                Some("1006.22673"),
                Some("-5.532788"),
                Some("-0.549855")
            ),
            row(
                "20261106",
                "1005.816164",
                Some("1000.693942"),
                Some("5.122222"),
                Some("0.511867")
            ),
            row(
                "20261109",
                "1004.216061",
                Some("1005.816164"),
                Some("-1.600103"),
                Some("-0.159085")
            ),
        ]
    );

    // The composite has no quotes, so no weighted price.
    let priced: i64 = select_value(
        &app.db,
        "SELECT count(*) FROM index_daily \
         WHERE index_code = 'Hardware_Index' AND weighted_price IS NOT NULL",
    )
    .await;
    assert_eq!(priced, 0);

    // Server_Rental_Index is no base index: re-quoting it leaves the composite alone.
    let rental: &[Quote] = &[("20261104", "Server_Rental_Index", "H100 hour", "1", "3.3")];
    let reply = import(&app, &admin, "rental.csv", rental).await;
    assert!(
        reply.data()["recalculated_from"].get(COMPOSITE).is_none(),
        "{}",
        reply.body
    );
    assert_eq!(daily(&app, &key, COMPOSITE).await, expected);

    // The composite is a member index: a visitor naming it is refused.
    app.query(json!({"api_name": "index_daily", "params": {"index_code": COMPOSITE}}))
        .await
        .assert_error(403, 40301);
}

#[actix_web::test]
async fn a_reimported_middle_day_recalculates_every_later_composite_row() {
    let (app, admin, key) = spawn().await;
    import(&app, &admin, "quotes.csv", QUOTES).await;
    let before = daily(&app, &key, COMPOSITE).await;

    // SSD_Index on Wednesday 2026-11-04 re-quoted: its own chain changes from that day
    // on, and so does every composite row from that day on.
    let fix: &[Quote] = &[
        ("20261104", "SSD_Index", "7.68TB", "0.5", "470.123457"),
        ("20261104", "SSD_Index", "30.72TB", "0.5", "530"),
    ];
    let reply = import(&app, &admin, "fix.csv", fix).await;
    assert_eq!(reply.data()["recalculated_from"]["SSD_Index"], "20261104");
    assert_eq!(reply.data()["recalculated_from"][COMPOSITE], "20261104");

    let mut held = Held::default();
    held.import(QUOTES);
    held.import(fix);
    assert_bases(&app, &key, &held).await;
    let after = daily(&app, &key, COMPOSITE).await;
    assert_eq!(after, held.composite());
    assert_eq!(
        dates(&after),
        ["20261102", "20261103", "20261104", "20261106", "20261109"]
    );
    assert_eq!(
        after[..2],
        before[..2],
        "rows before the re-quoted day stay"
    );
    for (new, old) in after[2..].iter().zip(&before[2..]) {
        assert_ne!(new.value, old.value, "{} was not recalculated", new.date);
    }
    // Each later row links to the row before it as it is now.
    for pair in after.windows(2) {
        assert_eq!(pair[1].pre_value, Some(pair[0].value), "{}", pair[1].date);
    }
}

#[actix_web::test]
async fn filling_the_missing_day_later_adds_its_row_and_relinks_the_next() {
    let (app, admin, key) = spawn().await;
    import(&app, &admin, "quotes.csv", QUOTES).await;
    let gap: &[Quote] = &[("20261105", "DRAM_Index", "DDR5 64GB", "1", "100.5")];
    let reply = import(&app, &admin, "dram.csv", gap).await;
    assert_eq!(reply.data()["recalculated_from"][COMPOSITE], "20261105");

    let mut held = Held::default();
    held.import(QUOTES);
    held.import(gap);
    assert_bases(&app, &key, &held).await;
    let stored = daily(&app, &key, COMPOSITE).await;
    assert_eq!(stored, held.composite());
    assert_eq!(
        dates(&stored),
        ["20261102", "20261103", "20261104", "20261105", "20261106", "20261109"]
    );
    assert_eq!(stored[4].pre_value, Some(stored[3].value));
}

#[actix_web::test]
async fn the_composite_starts_on_the_first_day_all_six_have_a_value() {
    let (app, admin, key) = spawn().await;
    // OI_Index starts a day after the others: on 2026-11-02 there is no composite row;
    // on 2026-11-03 all six have a value (OI_Index's first, with no change yet) and the
    // composite takes its base value; from 2026-11-04 it chains.
    let late: Vec<Quote> = QUOTES
        .iter()
        .copied()
        .filter(|(date, code, ..)| !(*code == "OI_Index" && *date == "20261102"))
        .collect();
    import(&app, &admin, "late.csv", &late).await;
    let mut held = Held::default();
    held.import(&late);
    assert_bases(&app, &key, &held).await;
    let stored = daily(&app, &key, COMPOSITE).await;
    assert_eq!(stored, held.composite());
    assert_eq!(
        dates(&stored),
        ["20261103", "20261104", "20261106", "20261109"]
    );
    assert_eq!(stored[0], row("20261103", "1000", None, None, None));
}
