//! What each number is (D20): `index_basic`'s facts on demand (the default answer as it
//! was), the latest date each caller may see, the next publication as a schedule, and
//! the facts a super administrator edits, validated.

use serde_json::{json, Value};

use super::*;

const FACTS: [&str; 5] = [
    "currency",
    "price_basis",
    "source",
    "publish_time",
    "methodology_version",
];

fn basic(fields: &[&str]) -> Value {
    json!({"api_name": "index_basic", "fields": fields})
}

/// The one row of `index_code` in an `index_basic` answer, by field name.
fn row_of(reply: &crate::helpers::Reply, index_code: &str) -> serde_json::Map<String, Value> {
    let fields = reply.data()["fields"].as_array().expect("fields").clone();
    let item = reply
        .items()
        .iter()
        .find(|item| item[0] == index_code)
        .unwrap_or_else(|| panic!("{index_code} in {}", reply.body));
    fields
        .iter()
        .zip(item.as_array().expect("an item"))
        .map(|(f, v)| (f.as_str().unwrap().to_owned(), v.clone()))
        .collect()
}

#[actix_web::test]
async fn facts_come_on_demand_and_the_default_answer_is_unchanged() {
    let app = spawn_with_fixture().await;
    let plain = app.query(json!({"api_name": "index_basic"})).await;
    // The default field list itself is `datasets`' to hold; here: no fact joined it.
    let defaults = plain.data()["fields"].as_array().expect("fields").clone();
    for fact in FACTS
        .iter()
        .chain(&["latest_trade_date", "next_publication_at"])
    {
        assert!(!defaults.contains(&json!(fact)), "{fact} in {defaults:?}");
    }
    let mut fields = vec!["index_code"];
    fields.extend(FACTS);
    let reply = app.query(basic(&fields)).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    for item in reply.items() {
        let item = item.as_array().unwrap();
        assert_eq!(item[1], "USD", "{item:?}");
        for text in &item[2..4] {
            assert!(text.as_str().is_some_and(|t| t.len() > 10), "{item:?}");
        }
        assert_eq!(item[4], "18:00", "{item:?}");
        assert_eq!(item[5], "1.0", "{item:?}");
    }
}

#[actix_web::test]
async fn the_latest_date_is_each_callers_and_the_next_publication_everyones() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let pro = app.key_of_tier(&admin, "facts_pro", "pro").await;
    let free = app.key_of_tier(&admin, "facts_free", "free").await;
    // A delay that reaches back before the fixture's first day: the free key sees no
    // value, so its latest date is empty.
    let slower = json!({"per_minute": 10, "per_day": 10, "max_rows": 5000, "max_keys": 1,
                        "delay_days": 15, "member_indexes": false});
    let reply = app.put_tier(&admin, "free", slower).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    let fields = ["index_code", "latest_trade_date", "next_publication_at"];
    let mut schedules = Vec::new();
    for key in [Some(pro.key.as_str()), Some(free.key.as_str()), None] {
        let daily = app
            .query_with(
                json!({"api_name": "index_daily", "params": {"index_code": "GPU_Index"}}),
                key,
            )
            .await;
        assert_eq!(daily.code(), 0, "{}", daily.body);
        let latest = daily
            .column("trade_date")
            .into_iter()
            .max_by(|a, b| a.as_str().cmp(&b.as_str()))
            .unwrap_or(Value::Null);
        let reply = app.query_with(basic(&fields), key).await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        let row = row_of(&reply, "GPU_Index");
        assert_eq!(row["latest_trade_date"], latest, "{key:?}: {}", reply.body);
        schedules.push(row["next_publication_at"].clone());
    }
    // The free key's delay shows in its latest date, not in the schedule.
    let pro_latest = row_of(
        &app.query_with(basic(&fields), Some(&pro.key)).await,
        "GPU_Index",
    )["latest_trade_date"]
        .clone();
    let free_latest = row_of(
        &app.query_with(basic(&fields), Some(&free.key)).await,
        "GPU_Index",
    )["latest_trade_date"]
        .clone();
    assert!(
        free_latest.is_null() && pro_latest.is_string(),
        "{free_latest} {pro_latest}"
    );
    assert!(schedules.windows(2).all(|w| w[0] == w[1]), "{schedules:?}");

    // 18:00 in Shanghai on the first open day after the latest published date.
    let calendar = app
        .query_with(
            json!({"api_name": "trade_calendar", "params": {"start_date": pro_latest}}),
            Some(&pro.key),
        )
        .await;
    assert_eq!(calendar.code(), 0, "{}", calendar.body);
    let next_open = calendar
        .column("trade_date")
        .into_iter()
        .filter_map(|d| d.as_str().map(str::to_owned))
        .filter(|d| d.as_str() > pro_latest.as_str().unwrap())
        .min();
    let expected =
        next_open.map(|d| format!("{}-{}-{}T10:00:00.000000Z", &d[..4], &d[4..6], &d[6..]));
    assert!(expected.is_some(), "an open day after {pro_latest}");
    assert_eq!(schedules[0].as_str().map(str::to_owned), expected);
}

#[actix_web::test]
async fn a_super_administrator_edits_the_facts_and_bad_ones_are_refused() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let facts = json!({
        "currency": "EUR",
        "price_basis": "  Unit price, tax excluded  ",
        "source": "Distributors",
        "publish_time": "09:30",
        "methodology_version": "2.1",
        "description": "Accelerator modules.",
        "unit": "points (2024-01-02 = 1000)"
    });
    let patched = app.patch_index(&admin, "GPU_Index", facts).await;
    assert_eq!(patched.code(), 0, "{}", patched.body);
    assert_eq!(patched.data()["currency"], "EUR");
    assert_eq!(patched.data()["price_basis"], "Unit price, tax excluded");
    let mut fields = vec!["index_code", "description", "unit"];
    fields.extend(FACTS);
    let row = row_of(&app.query(basic(&fields)).await, "GPU_Index");
    assert_eq!(row["currency"], "EUR");
    assert_eq!(row["publish_time"], "09:30");
    assert_eq!(row["methodology_version"], "2.1");
    assert_eq!(row["description"], "Accelerator modules.");
    assert_eq!(row["unit"], "points (2024-01-02 = 1000)");

    for (body, names) in [
        (json!({"currency": "usd"}), "currency"),
        (json!({"currency": "US$"}), "currency"),
        (json!({"currency": "EURO"}), "currency"),
        (json!({"publish_time": "24:00"}), "publish_time"),
        (json!({"publish_time": "9:30"}), "publish_time"),
        (json!({"publish_time": "18:60"}), "publish_time"),
        (json!({"price_basis": "   "}), "price_basis"),
        (json!({"source": "=HYPERLINK(\"x\")"}), "source"),
        (json!({"unit": "u".repeat(51)}), "unit"),
        (
            json!({"methodology_version": "v\u{1b}2"}),
            "methodology_version",
        ),
    ] {
        let reply = app.patch_index(&admin, "GPU_Index", body.clone()).await;
        reply.assert_error(400, 40001);
        assert!(
            reply.body["message"]
                .as_str()
                .unwrap()
                .starts_with(&format!("field '{names}' ")),
            "{body}: {}",
            reply.body
        );
    }
    // Nothing of the refused bodies was stored.
    let row = row_of(&app.query(basic(&fields)).await, "GPU_Index");
    assert_eq!(row["currency"], "EUR");
    assert_eq!(row["publish_time"], "09:30");
}
