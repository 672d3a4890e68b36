//! The Tushare guide's complete example, run as the page prints it: copied from the page
//! (English and Chinese print the same script), run by the official `tushare` package
//! with a key in `IQ_API_KEY`, it prints the last five weekly closes of `GPU_Index`,
//! newest first, the values `index_weekly` answers on the native API.

use serde_json::json;

use crate::helpers::quotes::{every_base_on, import};
use crate::helpers::spawn_with_sql;

/// Every weekday of October and November 2026 as a trading day: room for more weeks
/// than the example prints.
const AUTUMN: &str = "INSERT INTO trade_calendar (trade_date) \
    SELECT d::date FROM generate_series('2026-10-01'::date, '2026-11-30'::date, '1 day') AS d \
    WHERE extract(isodow FROM d) < 6;";

#[actix_web::test]
async fn the_guides_example_prints_the_last_five_weekly_closes() {
    iq_test_support::require!(Python);
    let app = spawn_with_sql(AUTUMN).await;
    let admin = app.admin().await;
    let pro = app.key_of_tier(&admin, "petra", "pro").await;
    // One day in each of seven weeks, two in the last (up to the clock's 20 Nov).
    let days = [
        "20261007", "20261014", "20261021", "20261028", "20261104", "20261111", "20261116",
        "20261118",
    ];
    import(&app, &admin, "quotes.csv", &every_base_on(&days)).await;

    let english = app.page("/tushare-guide").await;
    let chinese = app.page("/zh-CN/tushare-guide").await;
    let script = english.code_block("guide-example");
    assert_eq!(
        chinese.code_block("guide-example"),
        script,
        "the two guides print different examples"
    );
    assert!(
        script.contains(&format!("{}/tushare", app.address)),
        "{script}"
    );

    let output = crate::tushare_sdk::run_script(&script, &[], &[("IQ_API_KEY", &pro.key)]).await;

    let mut lines = output.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines.next().expect("a header").split_whitespace().collect();
    assert_eq!(header, ["trade_date", "close"], "{output}");
    let printed: Vec<(String, f64)> = lines
        .map(|line| {
            let cells: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(cells.len(), 2, "{output}");
            (cells[0].to_owned(), cells[1].parse().expect("a close"))
        })
        .collect();

    let native = app
        .query_with(
            json!({"api_name": "index_weekly", "params": {"index_code": "GPU_Index"},
                   "fields": ["trade_date", "index_value"]}),
            Some(&pro.key),
        )
        .await;
    assert_eq!(native.items().len(), 7, "{}", native.body);
    let newest_five: Vec<(String, f64)> = native
        .items()
        .iter()
        .rev()
        .take(5)
        .map(|r| {
            (
                r[0].as_str().unwrap().to_owned(),
                r[1].as_str().unwrap().parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(printed, newest_five, "{output}");
    assert_eq!(printed[0].0, "20261118", "{output}");
}
