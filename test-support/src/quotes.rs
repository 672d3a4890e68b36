//! Quote-import files for the tests of imports and of what they compute: the six base
//! indexes of the composite ([`BASES`]), quote rows written as the CSV file an import
//! reads ([`csv`], [`HEADER`]; [`every_base_on`] some days), an instance to import into
//! ([`spawn_for_imports`]), and
//! [`import`], which sends one and asserts it was
//! accepted. It must never compute what an import should produce: each test does that
//! with its own arithmetic.

use crate::{spawn_with_sql, Key, Reply, Session, TestApp};

/// The six base indexes of the composite `Hardware_Index`, in D8's order (not
/// `Server_Rental_Index`).
pub const BASES: [&str; 6] = [
    "Server_Index",
    "GPU_Index",
    "DRAM_Index",
    "SSD_Index",
    "CPU_Index",
    "OI_Index",
];

/// Every weekday of November 2026 as a trading day: the calendar quotes are imported
/// against in the tests of what imports compute and of how their pages are read.
pub const NOVEMBER: &str = "INSERT INTO trade_calendar (trade_date) \
    SELECT d::date FROM generate_series('2026-11-02'::date, '2026-11-30'::date, '1 day') AS d \
    WHERE extract(isodow FROM d) < 6;";

/// An instance with the [`NOVEMBER`] calendar and no quotes, its administrator, and a
/// pro member's key.
pub async fn spawn_for_imports() -> (TestApp, Session, Key) {
    let app = spawn_with_sql(NOVEMBER).await;
    let admin = app.admin().await;
    let key = app.key_of_tier(&admin, "petra", "pro").await;
    (app, admin, key)
}

/// Every base index ([`BASES`]) on each of `days`, one `unit` of weight 1 at a price
/// of its own (1000 for the first index, 2000 for the second, and so on, plus 10 a day):
/// quotes from which the composite is computed too.
pub fn every_base_on(days: &[&str]) -> Vec<(String, String, String, String, String)> {
    let mut quotes = Vec::new();
    for (d, date) in days.iter().enumerate() {
        for (i, code) in BASES.iter().enumerate() {
            let price = 1000 * (i + 1) + 10 * d;
            quotes.push((
                date.to_string(),
                code.to_string(),
                "unit".to_string(),
                "1".to_string(),
                price.to_string(),
            ));
        }
    }
    quotes
}

/// The header line of a quote file.
pub const HEADER: &str = "trade_date,index_code,specification,weight,price\n";

/// `quotes` as a CSV import file: [`HEADER`], then a line per quote (trade_date,
/// index_code, specification, weight, price), each written as given.
pub fn csv<S: AsRef<str>>(quotes: &[(S, S, S, S, S)]) -> Vec<u8> {
    let mut text = String::from(HEADER);
    for (date, code, spec, weight, price) in quotes {
        let (date, code, spec) = (date.as_ref(), code.as_ref(), spec.as_ref());
        let (weight, price) = (weight.as_ref(), price.as_ref());
        text.push_str(&format!("{date},{code},{spec},{weight},{price}\n"));
    }
    text.into_bytes()
}

/// `POST /api/v1/admin/imports` with `quotes` as the CSV file `file_name`, asserting it
/// was accepted; answers the import's reply.
pub async fn import<S: AsRef<str>>(
    app: &TestApp,
    admin: &Session,
    file_name: &str,
    quotes: &[(S, S, S, S, S)],
) -> Reply {
    import_noted(app, admin, file_name, quotes, None).await
}

/// [`import`] with the import's `note` (D26), when given.
pub async fn import_noted<S: AsRef<str>>(
    app: &TestApp,
    admin: &Session,
    file_name: &str,
    quotes: &[(S, S, S, S, S)],
    note: Option<&str>,
) -> Reply {
    let reply = app.import_noted(admin, file_name, csv(quotes), note).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    reply
}
