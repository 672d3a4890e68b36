//! The back office's pages: role rules (a login form for nobody, a 403 page for a role
//! too low), imports with their streamed progress and every bad row, tiers with a
//! preview, indexes, the calendar, and CSRF on every form.

use iq_test_support::site::{PageReply, SignedIn};
use serde_json::json;

use crate::helpers::{spawn_with_fixture, TestApp, PASSWORD};

/// The super administrator `root`, signed in through the form.
async fn root(app: &TestApp) -> SignedIn {
    app.admin().await;
    app.form_login("root", PASSWORD).await
}

/// Posts `file` to the import form, as a browser does.
async fn upload(app: &TestApp, browser: &SignedIn, file_name: &str, file: &str) -> PageReply {
    let token = app
        .page_with(&browser.cookies, "/admin/imports")
        .await
        .csrf();
    let form = reqwest::multipart::Form::new().text("csrf", token).part(
        "file",
        reqwest::multipart::Part::bytes(file.as_bytes().to_vec()).file_name(file_name.to_owned()),
    );
    let response = app
        .http
        .post(format!("{}/admin/imports", app.address))
        .header("Cookie", &browser.cookies)
        .multipart(form)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    PageReply {
        status,
        headers,
        set_cookies: Vec::new(),
        html: response.text().await.unwrap(),
    }
}

#[actix_web::test]
async fn each_role_sees_its_pages_and_a_403_page_for_the_others() {
    let app = spawn_with_fixture().await;
    let admin_session = app.admin().await;
    app.user_with_role(&admin_session, "ada", "admin").await;
    app.user(&admin_session, "uma", "free").await;
    let root = app.form_login("root", PASSWORD).await;
    let ada = app.form_login("ada", PASSWORD).await;
    let uma = app.form_login("uma", PASSWORD).await;
    let admin_pages = ["/admin", "/admin/imports", "/admin/calendar"];
    let super_pages = ["/admin/tiers", "/admin/indexes"];
    for path in admin_pages.iter().chain(&super_pages) {
        let nobody = app.page(path).await;
        assert_eq!(
            (nobody.status, nobody.header("location")),
            (303, Some("/login")),
            "{path}"
        );
        let user = app.page_with(&uma.cookies, path).await;
        assert_eq!(user.status, 403, "{path}");
        user.assert_has("This page is for");
        assert_eq!(
            app.page_with(&root.cookies, path).await.status,
            200,
            "{path}"
        );
    }
    for path in admin_pages {
        assert_eq!(
            app.page_with(&ada.cookies, path).await.status,
            200,
            "{path}"
        );
    }
    for path in super_pages {
        let page = app.page_with(&ada.cookies, path).await;
        assert_eq!(page.status, 403, "{path}");
        page.assert_has("super administrators");
    }
    // The back office's link shows to administrators only.
    app.page_with(&ada.cookies, "/")
        .await
        .assert_has(r#"id="back-office-link""#);
    app.page_with(&uma.cookies, "/")
        .await
        .assert_lacks(r#"id="back-office-link""#);
    // Ada sees imports and the calendar on the landing page, not the rest.
    let home = app.page_with(&ada.cookies, "/admin").await;
    home.assert_has(r#"href="/admin/imports""#);
    home.assert_lacks(r#"href="/admin/tiers""#);
}

const BAD: &str = "trade_date,index_code,specification,weight,price\n\
    2026-11-05,Server_Index,8x H100,1,123456.5\n\
    2026-11-07,Server_Index,8x H100,1,123456.5\n\
    2026-11-06,Nope_Index,8x H100,1,100\n\
    2026-11-04,Server_Index,8x H100,abc,100\n";

const GOOD: &str = "trade_date,index_code,specification,weight,price\n\
    2026-11-05,Server_Index,8x H100,1,123456.5\n";

#[actix_web::test]
async fn a_refused_import_lists_every_bad_row_and_the_fixed_file_reaches_the_index_page() {
    let app = spawn_with_fixture().await;
    let root = root(&app).await;
    let refused = upload(&app, &root, "bad.csv", BAD).await;
    assert_eq!(refused.status, 200, "{}", refused.html);
    refused.assert_has(r#"id="import-refused""#);
    refused.assert_has("reading bad.csv");
    // Three bad rows, numbered as the spreadsheet shows them (the header is row 1).
    for row in [3, 4, 5] {
        refused.assert_has(&format!(r#"<td class="num">{row}</td>"#));
    }
    refused.assert_lacks(r#"<td class="num">2</td>"#);
    refused.assert_has(r#"data-column="index_code""#);
    // Nothing of it was stored.
    app.page("/indexes/Server_Index")
        .await
        .assert_lacks("123456.500000");

    let accepted = upload(&app, &root, "good.csv", GOOD).await;
    accepted.assert_has(r#"id="import-accepted""#);
    accepted.assert_has(r#"<a href="/indexes/Server_Index">Server_Index</a>"#);
    accepted.assert_has("20261105");
    // The public page shows it at once (its kept copy was dropped).
    app.page("/indexes/Server_Index")
        .await
        .assert_has("123456.500000");
    // Both attempts are in the history, newest first, with who made them.
    let history = app.page_with(&root.cookies, "/admin/imports").await;
    let good = history.html.find("good.csv").unwrap();
    let bad = history.html.find("bad.csv").unwrap();
    assert!(good < bad);
    history.assert_has("root");
    history.assert_has("3 problems");
}

#[actix_web::test]
async fn an_upload_without_its_token_is_refused_before_it_is_imported() {
    let app = spawn_with_fixture().await;
    let root = root(&app).await;
    let form = reqwest::multipart::Form::new()
        .text("csrf", "0".repeat(64))
        .part(
            "file",
            reqwest::multipart::Part::bytes(GOOD.as_bytes().to_vec()).file_name("good.csv"),
        );
    let response = app
        .http
        .post(format!("{}/admin/imports", app.address))
        .header("Cookie", &root.cookies)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    app.page_with(&root.cookies, "/admin/imports")
        .await
        .assert_has("No imports yet.");
}

#[actix_web::test]
async fn a_tier_change_is_previewed_with_its_reach_then_felt_at_once_by_a_key() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let key = app.key_of_tier(&admin, "fred", "free").await;
    let root = app.form_login("root", PASSWORD).await;
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
    assert_eq!(reply.header("x-ratelimit-limit"), Some("7"));
}

#[actix_web::test]
async fn indexes_are_renamed_hidden_and_moved_from_their_page() {
    let app = spawn_with_fixture().await;
    let root = root(&app).await;
    let page = app.page_with(&root.cookies, "/admin/indexes").await;
    assert_eq!(page.status, 200);
    page.assert_has(r#"data-index="Hardware_Index""#);
    let token = page.csrf();
    let before = order(&app).await;
    let second = before[1].as_str().unwrap().to_owned();
    let moved = app
        .post_form(
            &root.cookies,
            &format!("/admin/indexes/{second}"),
            &[("csrf", &token), ("action", "up")],
        )
        .await;
    assert_eq!(moved.status, 303);
    let after = order(&app).await;
    assert_eq!(
        (after[0].clone(), after[1].clone()),
        (before[1].clone(), before[0].clone())
    );
    let hidden = app
        .post_form(
            &root.cookies,
            "/admin/indexes/GPU_Index",
            &[
                ("csrf", &token),
                ("action", "save"),
                ("index_name", "Accelerators"),
                ("visibility", "private"),
            ],
        )
        .await;
    assert_eq!(hidden.status, 303);
    let home = app.page("/").await;
    home.assert_lacks("GPU_Index");
    let bad = app
        .post_form(
            &root.cookies,
            "/admin/indexes/SSD_Index",
            &[
                ("csrf", &token),
                ("action", "save"),
                ("index_name", "x"),
                ("visibility", "secret"),
            ],
        )
        .await;
    assert_eq!(bad.status, 400);
    bad.assert_has(r#"id="index-problem""#);
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

/// The indexes a visitor sees, in display order.
async fn order(app: &TestApp) -> Vec<serde_json::Value> {
    app.query(json!({"api_name": "index_basic", "fields": ["index_code"]}))
        .await
        .column("index_code")
}
