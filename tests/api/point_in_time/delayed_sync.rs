//! A caller with a delay syncing with `updated_since`: the days that entered its
//! window since are answered even though they were published long before.

use chrono::{Datelike, Duration as Days, NaiveDate, Utc, Weekday};
use serde_json::json;

use super::*;
use crate::helpers::quotes::import;

/// The weekdays of the calendar the delayed-sync test builds around the real today.
const CALENDAR_AROUND_TODAY: &str = "INSERT INTO trade_calendar (trade_date) \
    SELECT d::date FROM generate_series(current_date - 40, current_date + 40, '1 day') AS d \
    WHERE extract(isodow FROM d) < 6;";

/// The free tier's cutoff (7 open days back, weekdays only) on `day`.
fn weekday_cutoff(day: NaiveDate, delay: usize) -> NaiveDate {
    let mut open = Vec::new();
    let mut d = day;
    while open.len() <= delay {
        if !matches!(d.weekday(), Weekday::Sat | Weekday::Sun) {
            open.push(d);
        }
        d = d.pred_opt().unwrap();
    }
    open[delay]
}

#[actix_web::test]
async fn a_delayed_sync_gets_the_days_that_entered_its_window_since() {
    let app = spawn_with_sql(CALENDAR_AROUND_TODAY).await;
    // The service's today is the real one, so the last four weeks are not after it.
    app.clock.set(Utc::now());
    let admin = app.admin().await;
    let free = app.key_of_tier(&admin, "fred", "free").await;
    let tz = chrono_tz::Asia::Shanghai;
    let today = Utc::now().with_timezone(&tz).date_naive();
    // Server_Index on every weekday of the last four weeks, published now.
    let mut file = Vec::new();
    let mut day = today - Days::days(28);
    while day < today {
        if !matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
            let date = day.format("%Y%m%d").to_string();
            file.push(quote(&date, "Server_Index", "8x H100", "1", "250000"));
        }
        day += Days::days(1);
    }
    let published = instant(&published_at(
        &import(&app, &admin, "quotes.csv", &file).await,
    ));
    // A sync at `since`; four days later the window has moved on.
    let since = published + Days::seconds(1);
    app.clock.set(since + Days::days(4));
    let since_day = since.with_timezone(&tz).date_naive();
    let from = weekday_cutoff(since_day, 7);
    let to = weekday_cutoff(since_day + Days::days(4), 7);
    assert!(from < to);

    let fields = ["trade_date", "index_code", "index_value"];
    let params = json!({"index_code": "Server_Index", "updated_since": rfc3339(since)});
    let got: Vec<String> = rows(&app, &free, "index_daily", &fields, params)
        .await
        .iter()
        .map(|r| r[0].as_str().unwrap().to_string())
        .collect();
    let expected: Vec<String> = file
        .iter()
        .map(|q| NaiveDate::parse_from_str(&q.0, "%Y%m%d").unwrap())
        .filter(|d| *d > from && *d <= to)
        .map(|d| d.format("%Y%m%d").to_string())
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(got, expected);
    // The same for quotes, by day.
    let params = json!({"index_code": "Server_Index", "updated_since": rfc3339(since)});
    let reply = app
        .query_with(
            json!({"api_name": "index_quote", "params": params}),
            Some(&free.key),
        )
        .await;
    // Server_Index is `aggregate`: its quotes are open to every key.
    assert_eq!(reply.code(), 0, "{}", reply.body);
    let dates: Vec<String> = reply
        .column("trade_date")
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(dates, expected);
}
