//! The service's settings from their pages: a tier change previewed with its reach and
//! felt at once by a key, indexes renamed, hidden and moved, and the trading calendar,
//! where a ticked holiday closes a day unless it holds quotes.

use serde_json::json;

use super::{back_office, root};
use crate::helpers::site::{PageReply, SignedIn};
use crate::helpers::{spawn_with_fixture, TestApp};

/// The indexes a visitor sees, in display order.
async fn order(app: &TestApp) -> Vec<serde_json::Value> {
    app.query(json!({"api_name": "index_basic", "fields": ["index_code"]}))
        .await
        .column("index_code")
}

/// The super administrator, signed in through the form, and the indexes page they see.
async fn indexes_page(app: &TestApp) -> (SignedIn, PageReply) {
    let root = root(app).await;
    let page = app.page_with(&root.cookies, "/admin/indexes").await;
    assert_eq!(page.status, 200);
    (root, page)
}

/// Saves index `code`'s form (from a page whose CSRF token is `token`) with this name
/// and visibility.
async fn save_index(
    app: &TestApp,
    root: &SignedIn,
    token: &str,
    code: &str,
    name: &str,
    visibility: &str,
) -> PageReply {
    let fields = [
        ("action", "save"),
        ("index_name", name),
        ("visibility", visibility),
    ];
    app.submit(root, &format!("/admin/indexes/{code}"), token, &fields)
        .await
}

#[actix_web::test]
async fn a_tier_change_is_previewed_with_its_reach_then_felt_at_once_by_a_key() {
    let (app, admin, root) = back_office().await;
    let key = app.key_of_tier(&admin, "fred", "free").await;
    let tiers = app.page_with(&root.cookies, "/admin/tiers").await;
    let free = app.tier(&admin, "free").await;
    let fields = |per_day: &str, action: &str| {
        vec![
            ("csrf".to_owned(), tiers.csrf()),
            ("action".to_owned(), action.to_owned()),
            ("per_minute".to_owned(), free["per_minute"].to_string()),
            ("per_day".to_owned(), per_day.to_owned()),
            ("max_rows".to_owned(), free["max_rows"].to_string()),
            (
                "max_keys".to_owned(),
                free["max_keys"]
                    .as_i64()
                    .map(|n| n.to_string())
                    .unwrap_or_default(),
            ),
            ("delay_days".to_owned(), free["delay_days"].to_string()),
        ]
    };
    let post = |fields: Vec<(String, String)>| {
        let app = &app;
        let cookies = root.cookies.clone();
        async move {
            let pairs: Vec<(&str, &str)> = fields
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            app.post_form(&cookies, "/admin/tiers/free", &pairs).await
        }
    };
    let preview = post(fields("7", "preview")).await;
    assert_eq!(preview.status, 200, "{}", preview.html);
    preview.assert_has("<strong>1</strong> active user");
    preview.assert_has("<th scope=\"row\">Calls a day</th>");
    // Nothing is saved by a preview.
    assert_eq!(app.tier(&admin, "free").await["per_day"], free["per_day"]);
    let bad = post(fields("lots", "save")).await;
    assert_eq!(bad.status, 400);
    bad.assert_has("Calls a day must be a whole number.");
    let saved = post(fields("7", "save")).await;
    assert_eq!(saved.status, 303, "{}", saved.html);
    let reply = app
        .query_with(json!({"api_name": "index_basic"}), Some(&key.key))
        .await;
    assert_eq!(reply.rate_limit(), 7);
}

#[actix_web::test]
async fn indexes_are_renamed_hidden_and_moved_from_their_page() {
    let app = spawn_with_fixture().await;
    let (root, page) = indexes_page(&app).await;
    page.assert_has(r#"data-index="Hardware_Index""#);
    let token = page.csrf();
    let before = order(&app).await;
    let second = before[1].as_str().unwrap().to_owned();
    let moved = app
        .submit(
            &root,
            &format!("/admin/indexes/{second}"),
            &token,
            &[("action", "up")],
        )
        .await;
    assert_eq!(moved.status, 303);
    let after = order(&app).await;
    assert_eq!(
        (after[0].clone(), after[1].clone()),
        (before[1].clone(), before[0].clone())
    );
    let hidden = save_index(&app, &root, &token, "GPU_Index", "Accelerators", "private").await;
    assert_eq!(hidden.status, 303);
    let home = app.page("/").await;
    home.assert_lacks("GPU_Index");
    let bad = save_index(&app, &root, &token, "SSD_Index", "x", "secret").await;
    assert_eq!(bad.status, 400);
    bad.assert_has(r#"id="index-problem""#);
}

/// D20 from the back office: an index's facts edited in its form reach the API and its
/// page at once; a bad one is the page again, with the API's message, nothing saved.
#[actix_web::test]
async fn an_indexs_facts_are_edited_from_its_form() {
    let app = spawn_with_fixture().await;
    let (root, page) = indexes_page(&app).await;
    page.assert_has(r#"id="facts-GPU_Index""#);
    page.assert_has(r#"name="publish_time" type="time" value="18:00""#);
    let token = page.csrf();
    let facts = |currency: &'static str| {
        vec![
            ("csrf", token.clone()),
            ("action", "facts".to_owned()),
            ("description", "Accelerator modules.".to_owned()),
            ("unit", "points".to_owned()),
            ("currency", currency.to_owned()),
            ("price_basis", "Unit price, tax excluded".to_owned()),
            ("source", "Distributors".to_owned()),
            ("publish_time", "17:30".to_owned()),
            ("methodology_version", "1.1".to_owned()),
        ]
    };
    let post = |fields: Vec<(&'static str, String)>| {
        let cookies = root.cookies.clone();
        let app = &app;
        async move {
            let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
            app.post_form(&cookies, "/admin/indexes/GPU_Index", &fields)
                .await
        }
    };
    let saved = post(facts("EUR")).await;
    assert_eq!(saved.status, 303, "{}", saved.html);
    let row = app
        .query(
            json!({"api_name": "index_basic", "params": {"index_code": "GPU_Index"},
                      "fields": ["currency", "publish_time", "methodology_version"]}),
        )
        .await;
    assert_eq!(row.items()[0], json!(["EUR", "17:30", "1.1"]));
    app.page("/indexes/GPU_Index")
        .await
        .assert_has(r#"<dd id="fact-currency">EUR"#);
    let bad = post(facts("eur")).await;
    assert_eq!(bad.status, 400);
    bad.assert_has(r#"id="index-problem""#);
    bad.assert_has("field &#39;currency&#39; must be three capital letters");
    let row = app
        .query(
            json!({"api_name": "index_basic", "params": {"index_code": "GPU_Index"},
                      "fields": ["currency"]}),
        )
        .await;
    assert_eq!(row.items()[0], json!(["EUR"]));
}

#[actix_web::test]
async fn a_holiday_ticked_on_the_calendar_closes_the_day_unless_it_has_quotes() {
    let app = spawn_with_fixture().await;
    let root = root(&app).await;
    let page = app
        .page_with(&root.cookies, "/admin/calendar?year=2026")
        .await;
    assert_eq!(page.status, 200);
    // 16 November is closed in the fixture: its box is ticked.
    page.assert_has(r#"value="20261116" checked"#);
    let token = page.csrf();
    // Keep the fixture's holiday and add 27 November.
    let save = |holidays: Vec<&'static str>| {
        let mut fields = vec![("csrf", token.as_str()), ("year", "2026")];
        fields.extend(holidays.into_iter().map(|h| ("holiday", h)));
        let cookies = root.cookies.clone();
        let app = &app;
        async move { app.post_form(&cookies, "/admin/calendar", &fields).await }
    };
    // The fixture's calendar is November only; the year form opens every other weekday.
    let november: Vec<&'static str> = vec!["20261116", "20261127"];
    let saved = save(november).await;
    assert_eq!(saved.status, 303, "{}", saved.html);
    let days = app
        .query(json!({"api_name": "trade_calendar", "params": {"start_date": "20261126", "end_date": "20261130"}}))
        .await
        .column("trade_date");
    assert_eq!(days, [json!("20261126"), json!("20261130")]);
    // 10 November holds quotes: closing it is refused, and said so.
    let refused = save(vec!["20261110", "20261116"]).await;
    assert_eq!(refused.status, 409, "{}", refused.html);
    refused.assert_has(r#"id="calendar-problem""#);
}
