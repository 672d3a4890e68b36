//! Import time of a 100k-row quote workbook against the floor, PostgreSQL `COPY` of the
//! same rows into a bare table, in one run. The goal of the issue: within 5x of the floor.
//!
//! `cargo bench --bench import` makes one fresh database on the test PostgreSQL
//! (`TEST_DATABASE_URL`, default the local server at 127.0.0.1:5432, as the API tests),
//! migrates it with the service's own migrations, and fills `trade_calendar` with
//! weekdays from Monday 2 January 2023 on, enough for the rows (one plain `INSERT`: the
//! D8 rule is that every quote falls on an open day). The rows are generated: the seven
//! quote-bearing indexes, 20 specifications each per day (weights in basis points that
//! sum to exactly 1, prices on a seeded random walk), day after day, so 100000 rows are
//! 714 full days and two index-days of the 715th. They are written once, outside any
//! timing, as a `.xlsx` workbook (`write::to_xlsx`, every cell a text cell, as the
//! demo data) and as a `.csv` file (`write::to_csv`). Then, in each round (the order
//! of the variants rotates from round to round), each variant is timed from the file's
//! bytes in memory to the commit:
//!
//! - **COPY floor**: the CSV bytes, sent whole through `COPY copy_floor FROM STDIN
//!   (FORMAT csv, HEADER true)` into a bare table `copy_floor (trade_date date,
//!   index_code text, specification text, weight numeric, price numeric)` with no key,
//!   index or constraint, in a transaction that commits. The table is emptied (outside
//!   the timing) before each round.
//! - **xlsx import** and **csv import**: `Importer::import` (the path of the endpoint
//!   and of the `import` command): read the file, validate every D8 rule against the
//!   database's calendar and index list, replace the quotes, recalculate `index_daily`
//!   for the seven indexes and `Hardware_Index`, record the import, commit. Before each
//!   import `index_quotes`, `index_daily` and `imports` are emptied (outside the timing),
//!   so every import lands on empty tables as on a fresh database; after it the result
//!   is checked (outside the timing): `index_quotes` holds every row, and `index_daily`
//!   one row per index and day (plus `Hardware_Index` on each day all six base indexes
//!   have), which the bench asserts.
//! - **COPY into index_quotes** (a reference, not the floor): the same `COPY`, into the
//!   real `index_quotes` with its primary key, its second index, the foreign key to
//!   `indexes` and the checks. It tells how much of the gap the table itself costs, and
//!   how much the import path does on top of it.
//!
//! The import's progress messages are timestamped, which splits its time into stages:
//! reading, validating and storing the quotes, which overlap (a blocking thread parses
//! the file and hands it over in pieces; each piece is checked against every D8 rule
//! and written with `COPY` while the next is parsed; the stage includes beginning the
//! transaction, the advisory lock and reading the calendar and index list), then
//! recalculating `index_daily` (`QuoteWriter::recalculate`), then recording the
//! import, the NOTIFY and the commit.
//!
//! Output: the rows and file sizes, then for each variant the seconds of every round and
//! their median, the ratios of the medians to the COPY floor with `goal <= 5x: PASS` or
//! `ABOVE GOAL`, and the stage breakdown of each import (median seconds per stage, and
//! each stage's own multiple of the floor). The machine is shared and noisy: only the
//! ratios within one run mean anything, and none is asserted (the bench fails only when
//! an import fails or its result is wrong). The database is dropped at the end.
//!
//! Settings: `BENCH_IMPORT_ROWS` quote rows (default 100000), `BENCH_ROUNDS` (default 5).

use iq_test_support as helpers;

#[path = "support.rs"]
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Cursor;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{median, setting};

use chrono::{Datelike, NaiveDate, Weekday};
use futures_util::SinkExt;
use iq_actors::audit::Author;
use iq_actors::changes::ChangeBus;
use iq_actors::clock::SystemClock;
use iq_actors::db::{build_pool, PoolSettings};
use iq_actors::demo::SplitMix64;
use iq_actors::imports::write::{to_csv, to_xlsx};
use iq_actors::imports::{Importer, Source};
use iq_actors::quotes::QuoteRow;
use rust_decimal::Decimal;

// The six indexes `Hardware_Index` is derived from (D8).
use helpers::quotes::BASES as COMPOSITE_BASES;

/// The goal of the issue: an import within this multiple of the COPY floor.
const GOAL: f64 = 5.0;
/// The quote-bearing indexes (every index but `Hardware_Index`).
const INDEXES: [&str; 7] = [
    "Server_Index",
    "Server_Rental_Index",
    "GPU_Index",
    "DRAM_Index",
    "SSD_Index",
    "CPU_Index",
    "OI_Index",
];
const COMPOSITE: &str = "Hardware_Index";
/// Specifications per index and day.
const SPECS: usize = 20;
/// The stages the import's progress messages delimit, in order (the "so far" messages
/// in between only report progress).
const STAGES: [&str; 3] = [
    "read + validate + store (overlapped)",
    "recalculate index_daily",
    "record the import, notify, commit",
];

#[actix_web::main]
async fn main() {
    let row_count = setting("BENCH_IMPORT_ROWS", 100_000).max(1) as usize;
    let rounds = setting("BENCH_ROUNDS", 5).max(1) as usize;

    let rows = quote_rows(row_count);
    let open_days: Vec<NaiveDate> = rows
        .iter()
        .map(|r| r.trade_date)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let expected = expected_daily(&rows);
    let xlsx = {
        let rows = rows.clone();
        tokio::task::spawn_blocking(move || to_xlsx(&rows))
            .await
            .expect("join")
            .expect("write the workbook")
    };
    let csv = to_csv(&rows);

    let database_url = helpers::create_database().await;
    let config: tokio_postgres::Config = database_url.parse().expect("database url");
    helpers::database::migrate(&database_url).await;
    let db = helpers::connect(&database_url).await;
    db.batch_execute(
        "SET statement_timeout = 0; \
         CREATE TABLE copy_floor (trade_date date, index_code text, specification text, \
                                  weight numeric, price numeric)",
    )
    .await
    .expect("create copy_floor");
    db.execute(
        "INSERT INTO trade_calendar (trade_date) SELECT UNNEST($1::date[])",
        &[&open_days],
    )
    .await
    .expect("fill the calendar");
    let importer = Importer {
        pool: build_pool(config, &PoolSettings::default()).expect("pool"),
        clock: Arc::new(SystemClock),
        bus: ChangeBus::new(Vec::new()),
        limits: iq_actors::imports::ImportLimits::default(),
        service_tz: chrono_tz::Asia::Shanghai,
    };
    // Connect the pool now, so no round pays for the connection.
    drop(importer.pool.get().await.expect("connect the pool"));

    println!(
        "import bench: {} quote rows ({} indexes x {SPECS} specifications over {} open days), \
         xlsx {} bytes, csv {} bytes, {rounds} rounds",
        rows.len(),
        INDEXES.len(),
        open_days.len(),
        xlsx.len(),
        csv.len()
    );

    let variants = [
        Variant::CopyFloor,
        Variant::Import("xlsx"),
        Variant::Import("csv"),
        Variant::CopyQuotes,
    ];
    let mut seconds: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    // Per import variant: per stage, the seconds of every round.
    let mut stages: BTreeMap<&str, Vec<Vec<f64>>> = BTreeMap::new();
    let mut messages: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for round in 0..rounds {
        for k in 0..variants.len() {
            let v = (k + round) % variants.len();
            let elapsed = match variants[v] {
                Variant::CopyFloor => {
                    db.batch_execute("TRUNCATE copy_floor")
                        .await
                        .expect("truncate");
                    copy(&db, "copy_floor", &csv).await
                }
                Variant::CopyQuotes => {
                    // CASCADE: what refers to an import (its changes, its vintage).
                    db.batch_execute(
                        "TRUNCATE index_quotes, index_daily, imports, quote_days_changed CASCADE",
                    )
                    .await
                    .expect("truncate");
                    copy(&db, "index_quotes", &csv).await
                }
                Variant::Import(kind) => {
                    // CASCADE: what refers to an import (its changes, its vintage).
                    db.batch_execute(
                        "TRUNCATE index_quotes, index_daily, imports, quote_days_changed CASCADE",
                    )
                    .await
                    .expect("truncate");
                    let bytes = match kind {
                        "xlsx" => xlsx.clone(),
                        _ => csv.clone(),
                    };
                    let (elapsed, marks) = import(&importer, kind, bytes, rows.len()).await;
                    check(&db, rows.len(), &expected).await;
                    let per_stage = stages
                        .entry(kind)
                        .or_insert_with(|| vec![Vec::new(); STAGES.len()]);
                    let mut last = Duration::ZERO;
                    let ends = marks.iter().skip(1).map(|m| m.0).chain([elapsed]);
                    for (stage, end) in ends.enumerate() {
                        if let Some(slot) = per_stage.get_mut(stage) {
                            slot.push(end.saturating_sub(last).as_secs_f64());
                        }
                        last = end;
                    }
                    messages.insert(kind, marks.into_iter().map(|m| m.1).collect());
                    elapsed
                }
            };
            seconds[v].push(elapsed.as_secs_f64());
        }
    }

    let floor = median(&seconds[0]);
    println!();
    println!("seconds, from the bytes in memory to the commit (every round; median):");
    for (variant, times) in variants.iter().zip(&seconds) {
        let each: Vec<String> = times.iter().map(|t| format!("{t:.3}")).collect();
        let median = median(times);
        println!(
            "  {:<34} {:>8.3} s  {:>6.2}x COPY  [{}]",
            variant.name(),
            median,
            median / floor,
            each.join(", ")
        );
    }
    println!();
    println!("ratio to the COPY floor (median / median), goal <= {GOAL}x:");
    for (variant, times) in variants.iter().zip(&seconds) {
        if let Variant::Import(_) = variant {
            let ratio = median(times) / floor;
            let verdict = if ratio <= GOAL { "PASS" } else { "ABOVE GOAL" };
            println!("  {:<34} {ratio:>6.2}x  {verdict}", variant.name());
        }
    }
    for (kind, per_stage) in &stages {
        println!();
        println!("{kind} import by stage (median seconds; multiple of the COPY floor):");
        for (name, times) in STAGES.iter().zip(per_stage) {
            let median = median(times);
            println!("  {name:<42} {median:>8.3} s  {:>6.2}x", median / floor);
        }
        if let Some(said) = messages.get(kind) {
            println!("  progress messages: {}", said.join(" | "));
        }
    }

    importer.pool.close();
    drop(db);
    drop_database(&database_url).await;
}

#[derive(Clone, Copy)]
enum Variant {
    CopyFloor,
    Import(&'static str),
    CopyQuotes,
}

impl Variant {
    fn name(&self) -> String {
        match self {
            Variant::CopyFloor => "COPY into copy_floor (the floor)".into(),
            Variant::Import(kind) => format!("{kind} import"),
            Variant::CopyQuotes => "COPY into index_quotes (reference)".into(),
        }
    }
}

/// `COPY` of the CSV file (header included) into `table`, committed.
async fn copy(db: &tokio_postgres::Client, table: &str, csv: &[u8]) -> Duration {
    // The file's columns, named: `index_quotes` has a vintage too, which takes its default.
    let statement = format!(
        "COPY {table} (trade_date, index_code, specification, weight, price) \
         FROM STDIN (FORMAT csv, HEADER true)"
    );
    let bytes = csv.to_vec();
    let started = Instant::now();
    db.batch_execute("BEGIN").await.expect("begin");
    let sink = db
        .copy_in::<_, Cursor<Vec<u8>>>(statement.as_str())
        .await
        .expect("copy_in");
    futures_util::pin_mut!(sink);
    sink.send(Cursor::new(bytes)).await.expect("send the rows");
    let copied = sink.as_mut().finish().await.expect("finish the copy");
    db.batch_execute("COMMIT").await.expect("commit");
    let elapsed = started.elapsed();
    assert_eq!(copied as usize, csv_rows(csv), "COPY into {table}");
    elapsed
}

fn csv_rows(csv: &[u8]) -> usize {
    csv.iter().filter(|b| **b == b'\n').count() - 1
}

/// One import through the service's own path; its elapsed time and the time of each
/// progress message since the start.
async fn import(
    importer: &Importer,
    kind: &str,
    bytes: Vec<u8>,
    rows: usize,
) -> (Duration, Vec<(Duration, String)>) {
    let marks: Mutex<Vec<(Duration, String)>> = Mutex::new(Vec::new());
    let file_name = format!("bench-quotes.{kind}");
    let started = Instant::now();
    let progress = |stage: &str| {
        let at = started.elapsed();
        marks.lock().unwrap().push((at, stage.to_string()));
    };
    let outcome = importer
        .import(
            &Author::system(),
            Source::Command,
            &file_name,
            (bytes, None),
            &progress,
        )
        .await
        .unwrap_or_else(|e| panic!("the {kind} import failed: {e} {:?}", e.errors));
    let elapsed = started.elapsed();
    assert_eq!(outcome.quotes, rows, "quotes stored by the {kind} import");
    let marks: Vec<(Duration, String)> = marks
        .into_inner()
        .unwrap()
        .into_iter()
        .filter(|(_, said)| !said.ends_with("so far"))
        .collect();
    assert_eq!(
        marks.len(),
        STAGES.len(),
        "progress messages of the {kind} import: {marks:?}"
    );
    (elapsed, marks)
}

/// The import's result: every quote, and the expected `index_daily` rows per index.
async fn check(db: &tokio_postgres::Client, rows: usize, expected: &BTreeMap<String, i64>) {
    let quotes: i64 = db
        .query_one("SELECT count(*) FROM index_quotes", &[])
        .await
        .expect("count quotes")
        .get(0);
    assert_eq!(quotes as usize, rows, "rows in index_quotes");
    let daily: BTreeMap<String, i64> = db
        .query(
            "SELECT index_code, count(*) FROM index_daily GROUP BY index_code",
            &[],
        )
        .await
        .expect("count daily rows")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(&daily, expected, "index_daily rows per index");
    let distinct: i64 = db
        .query_one(
            "SELECT count(*) FROM (SELECT DISTINCT index_code, trade_date FROM index_daily) d",
            &[],
        )
        .await
        .expect("count distinct daily rows")
        .get(0);
    assert_eq!(
        distinct,
        expected.values().sum::<i64>(),
        "one index_daily row per index and day"
    );
}

/// `index_daily` rows per index the recalculation must write: one per quoted day of
/// each index, and `Hardware_Index` on the first day all six bases have and on every
/// later day all six have, once each has had its first (change-less) day.
fn expected_daily(rows: &[QuoteRow]) -> BTreeMap<String, i64> {
    let mut days: BTreeMap<&str, BTreeSet<NaiveDate>> = BTreeMap::new();
    for row in rows {
        days.entry(&row.index_code)
            .or_default()
            .insert(row.trade_date);
    }
    let mut expected: BTreeMap<String, i64> = days
        .iter()
        .map(|(code, d)| (code.to_string(), d.len() as i64))
        .collect();
    let bases: Vec<&BTreeSet<NaiveDate>> = COMPOSITE_BASES
        .iter()
        .filter_map(|code| days.get(code))
        .collect();
    if bases.len() == COMPOSITE_BASES.len() {
        let firsts: Vec<NaiveDate> = bases.iter().filter_map(|d| d.first().copied()).collect();
        let mut all: Vec<NaiveDate> = bases[0]
            .iter()
            .copied()
            .filter(|day| bases.iter().all(|d| d.contains(day)))
            .collect();
        all.sort();
        let composite = all
            .iter()
            .enumerate()
            .filter(|(i, day)| *i == 0 || firsts.iter().all(|f| f < day))
            .count();
        if composite > 0 {
            expected.insert(COMPOSITE.to_string(), composite as i64);
        }
    }
    expected
}

/// Weights in basis points for `n` specifications, summing to exactly 10000: around
/// 10000 / n each, the last one the remainder.
fn weights_bp(n: usize) -> Vec<i64> {
    let n = n.max(1);
    let base = 10_000 / n as i64;
    let step = base / 10;
    let mut weights: Vec<i64> = (0..n - 1)
        .map(|i| base + ((i % 5) as i64 - 2) * step)
        .collect();
    weights.push(10_000 - weights.iter().sum::<i64>());
    weights
}

/// `count` quote rows: day after day (weekdays from 2 January 2023), each of the seven
/// indexes with [`SPECS`] specifications; the last index-day may have fewer.
fn quote_rows(count: usize) -> Vec<QuoteRow> {
    let mut rng = SplitMix64(0x1A_2026_0100);
    // Starting prices in cents, per index and specification.
    let mut prices: Vec<Vec<i64>> = (0..INDEXES.len())
        .map(|i| {
            (0..SPECS)
                .map(|s| 10_000 + (i as i64 * 7_919 + s as i64 * 104_729) % 5_000_000)
                .collect()
        })
        .collect();
    let names: Vec<Vec<String>> = INDEXES
        .iter()
        .map(|code| {
            (0..SPECS)
                .map(|s| {
                    format!(
                        "{} basket item {s:02}, SKU {:04}-{:02}",
                        code.trim_end_matches("_Index").replace('_', " "),
                        code.len() * 97 + s,
                        s * 3
                    )
                })
                .collect()
        })
        .collect();
    let full = weights_bp(SPECS);
    let mut rows = Vec::with_capacity(count);
    let mut day = NaiveDate::from_ymd_opt(2023, 1, 2).expect("a date");
    while rows.len() < count {
        for (i, code) in INDEXES.iter().enumerate() {
            let left = count - rows.len();
            if left == 0 {
                break;
            }
            let n = left.min(SPECS);
            let partial;
            let weights = if n == SPECS {
                &full
            } else {
                partial = weights_bp(n);
                &partial
            };
            for (s, weight) in weights.iter().enumerate() {
                let step_bp = rng.symmetric(60);
                let price = &mut prices[i][s];
                *price = (*price + *price * step_bp / 10_000).max(1);
                rows.push(QuoteRow {
                    trade_date: day,
                    index_code: code.to_string(),
                    specification: names[i][s].clone(),
                    weight: Decimal::new(*weight, 4),
                    price: Decimal::new(*price, 2),
                });
            }
        }
        day = next_weekday(day);
    }
    rows
}

fn next_weekday(day: NaiveDate) -> NaiveDate {
    let mut next = day.succ_opt().expect("a next day");
    while matches!(next.weekday(), Weekday::Sat | Weekday::Sun) {
        next = next.succ_opt().expect("a next day");
    }
    next
}

async fn drop_database(database_url: &str) {
    let Some(name) = database_url.rsplit('/').next() else {
        return;
    };
    let admin = helpers::connect(&helpers::server_url()).await;
    if let Err(e) = admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
        .await
    {
        eprintln!("could not drop the bench database {name}: {e}");
    }
}
