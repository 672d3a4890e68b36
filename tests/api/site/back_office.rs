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

/// The first `data-key-id` of a page.
fn first_key_id(page: &PageReply) -> String {
    let start = page.html.find("data-key-id=\"").expect("a key row") + 13;
    page.html[start..start + page.html[start..].find('"').unwrap()].to_owned()
}

#[actix_web::test]
async fn users_are_found_created_and_changed_from_their_pages() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    app.user(&admin, "anna", "free").await;
    app.user(&admin, "ben_x", "free").await;
    let root = app.form_login("root", PASSWORD).await;
    let all = app.page_with(&root.cookies, "/admin/users").await;
    assert_eq!(all.status, 200);
    for name in ["root", "anna", "ben_x"] {
        all.assert_has(&format!(r#"data-user="{name}""#));
    }
    // A search is a substring, and `_` is only itself.
    let found = app.page_with(&root.cookies, "/admin/users?q=n_").await;
    found.assert_has(r#"data-user="ben_x""#);
    found.assert_lacks(r#"data-user="anna""#);
    let token = all.csrf();
    let created = app
        .post_form(
            &root.cookies,
            "/admin/users",
            &[
                ("csrf", &token),
                ("username", "cleo"),
                ("password", PASSWORD),
                ("role", "user"),
                ("tier", "free"),
            ],
        )
        .await;
    assert_eq!(created.status, 303, "{}", created.html);
    let location = created.header("location").unwrap().to_owned();
    let duplicate = app
        .post_form(
            &root.cookies,
            "/admin/users",
            &[
                ("csrf", &token),
                ("username", "cleo"),
                ("password", PASSWORD),
            ],
        )
        .await;
    assert_eq!(duplicate.status, 400, "{}", duplicate.html);
    duplicate.assert_has(r#"id="user-problem""#);
    // Cleo becomes a pro member, without API access.
    let saved = app
        .post_form(
            &root.cookies,
            &location,
            &[
                ("csrf", &token),
                ("tier", "pro"),
                ("role", "user"),
                ("active", "1"),
            ],
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.html);
    let page = app
        .page_with(&root.cookies, &format!("{location}?saved=1"))
        .await;
    page.assert_has(r#"<option value="pro" selected>"#);
    page.assert_has(r#"id="user-saved""#);
    let cleo = app.login_ok("cleo").await;
    assert_eq!(app.membership_as(&cleo).await.data()["tier"], "pro");
}

#[actix_web::test]
async fn a_key_is_listed_with_its_owner_and_edited_from_its_page() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let key = app.key_of_tier(&admin, "kim", "pro").await;
    let root = app.form_login("root", PASSWORD).await;
    let list = app.page_with(&root.cookies, "/admin/keys").await;
    assert_eq!(list.status, 200);
    list.assert_has(&format!(r#"data-key-id="{}""#, key.id));
    list.assert_has(">kim</a>");
    let page = app
        .page_with(&root.cookies, &format!("/admin/keys/{}", key.id))
        .await;
    assert_eq!(page.status, 200, "{}", page.html);
    let token = page.csrf();
    let path = format!("/admin/keys/{}", key.id);
    let bad = app
        .post_form(
            &root.cookies,
            &path,
            &[("csrf", &token), ("active", "1"), ("per_day", "many")],
        )
        .await;
    assert_eq!(bad.status, 400);
    bad.assert_has("Calls a day must be a whole number.");
    let saved = app
        .post_form(
            &root.cookies,
            &path,
            &[
                ("csrf", &token),
                ("active", "1"),
                ("per_day", "5"),
                ("scope", "index:read"),
                ("index_codes", "Server_Index, GPU_Index"),
            ],
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.html);
    let reply = app
        .query_with(json!({"api_name": "index_latest"}), Some(&key.key))
        .await;
    assert_eq!(reply.header("x-ratelimit-limit"), Some("5"));
    assert_eq!(
        reply.column("index_code"),
        [json!("Server_Index"), json!("GPU_Index")]
    );
    // Only the scope kept: quotes are refused now.
    let quotes = app
        .query_with(json!({"api_name": "index_quote"}), Some(&key.key))
        .await;
    assert_eq!(quotes.status, 403);
}

#[actix_web::test]
async fn a_deleted_or_unknown_key_has_no_page() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let key = app.key_of_tier(&admin, "kim", "pro").await;
    let root = app.form_login("root", PASSWORD).await;
    let kim = app.login_ok("kim").await;
    assert_eq!(app.delete_key(&kim, &key.id).await.status, 200);
    for id in [key.id.as_str(), "key_doesnotexist00"] {
        let page = app
            .page_with(&root.cookies, &format!("/admin/keys/{id}"))
            .await;
        assert_eq!(page.status, 404, "{id}: {}", page.html);
        page.assert_has("There is no such key (it may have been deleted).");
    }
}

#[actix_web::test]
async fn an_owner_rotates_and_renames_a_key_from_the_keys_page() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let kim_session = app.user(&admin, "kim", "pro").await;
    let old = app
        .new_key(
            &kim_session,
            json!({"name": "laptop", "index_codes": ["GPU_Index"]}),
        )
        .await;
    let kim = app.form_login("kim", PASSWORD).await;
    let keys = app.page_with(&kim.cookies, "/account/keys").await;
    let id = first_key_id(&keys);
    assert_eq!(id, old.id);
    let rotated = app
        .post_form(
            &kim.cookies,
            &format!("/account/keys/{id}/rotate"),
            &[("csrf", &keys.csrf())],
        )
        .await;
    assert_eq!(rotated.status, 200, "{}", rotated.html);
    assert_eq!(rotated.header("cache-control"), Some("private, no-store"));
    let start = rotated
        .html
        .find(r#"<code id="new-key" class="secret">"#)
        .unwrap()
        + 34;
    let new = rotated.html[start..start + rotated.html[start..].find('<').unwrap()].to_owned();
    assert_ne!(new, old.key);
    app.query_with(json!({"api_name": "index_latest"}), Some(&old.key))
        .await
        .assert_error(401, 40102);
    let works = app
        .query_with(json!({"api_name": "index_latest"}), Some(&new))
        .await;
    assert_eq!(works.column("index_code"), [json!("GPU_Index")]);

    let renamed = app
        .post_form(
            &kim.cookies,
            &format!("/account/keys/{id}/rename"),
            &[("csrf", &keys.csrf()), ("name", "desktop")],
        )
        .await;
    assert_eq!(renamed.status, 303);
    app.page_with(&kim.cookies, "/account/keys")
        .await
        .assert_has(r#"value="desktop""#);
    let empty = app
        .post_form(
            &kim.cookies,
            &format!("/account/keys/{id}/rename"),
            &[("csrf", &keys.csrf()), ("name", "  ")],
        )
        .await;
    assert_eq!(empty.status, 400);
    empty.assert_has(r#"id="key-problem""#);
    // Someone else's key is not found, whatever the form says.
    let admin_browser = app.form_login("root", PASSWORD).await;
    let root_keys = app.page_with(&admin_browser.cookies, "/account/keys").await;
    let foreign = app
        .post_form(
            &admin_browser.cookies,
            &format!("/account/keys/{id}/rotate"),
            &[("csrf", &root_keys.csrf())],
        )
        .await;
    assert_eq!(foreign.status, 404);
}

#[actix_web::test]
async fn an_imports_record_shows_its_changes_and_its_problems_filtered_and_as_csv() {
    let app = spawn_with_fixture().await;
    let root = root(&app).await;
    let accepted = upload(&app, &root, "good.csv", GOOD).await;
    accepted.assert_has(r#"<tr data-index="Server_Index">"#);
    let formula = "trade_date,index_code,specification,weight,price\n\
        2026-11-05,=HYPERLINK(1),8x H100,1,100\n\
        2026-11-07,Server_Index,8x H100,1,100\n";
    upload(&app, &root, "formula.csv", formula)
        .await
        .assert_has(r#"id="import-refused""#);
    let history = app.page_with(&root.cookies, "/admin/imports").await;
    let ids: Vec<String> = history
        .html
        .match_indices("data-import-id=\"")
        .map(|(i, m)| {
            let start = i + m.len();
            history.html[start..start + history.html[start..].find('"').unwrap()].to_owned()
        })
        .collect();
    let (refused_id, accepted_id) = (&ids[0], &ids[1]);

    let good = app
        .page_with(&root.cookies, &format!("/admin/imports/{accepted_id}"))
        .await;
    assert_eq!(good.status, 200, "{}", good.html);
    good.assert_has(r#"id="import-result">accepted<"#);
    good.assert_has(r#"<tr data-index="Server_Index"><td><a href="/indexes/Server_Index">Server_Index</a></td><td class="num">1</td><td class="num">0</td>"#);

    let bad = app
        .page_with(&root.cookies, &format!("/admin/imports/{refused_id}"))
        .await;
    bad.assert_has(r#"id="errors-shown">2 of 2"#);
    let filtered = app
        .page_with(
            &root.cookies,
            &format!("/admin/imports/{refused_id}?column=trade_date"),
        )
        .await;
    filtered.assert_has(r#"id="errors-shown">1 of 2"#);
    filtered.assert_lacks(r#"data-column="index_code""#);
    let csv = app
        .http
        .get(format!(
            "{}/admin/imports/{refused_id}/errors.csv",
            app.address
        ))
        .header("Cookie", &root.cookies)
        .send()
        .await
        .unwrap();
    assert_eq!(csv.status(), 200);
    assert!(csv.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .starts_with("attachment"));
    let text = csv.text().await.unwrap();
    assert!(text.starts_with("row,column,problem\r\n"), "{text}");
    assert!(text.contains("2,index_code,"), "{text}");
    // A cell holding a formula is made inert.
    assert!(
        !text.contains(",=HYPERLINK") && !text.contains("\"=HYPERLINK"),
        "{text}"
    );
    // Administrators only.
    assert_eq!(
        app.page(&format!("/admin/imports/{refused_id}/errors.csv"))
            .await
            .status,
        303
    );
}

#[actix_web::test]
async fn roles_change_from_the_user_page_but_the_last_super_administrator_stays() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    app.user(&admin, "ada", "free").await;
    let root = app.form_login("root", PASSWORD).await;
    let users = app.page_with(&root.cookies, "/admin/users?q=ada").await;
    let start = users.html.find(r#"<a href="/admin/users/"#).unwrap() + 9;
    let ada_page = users.html[start..start + users.html[start..].find('"').unwrap()].to_owned();
    let token = users.csrf();
    let promoted = app
        .post_form(
            &root.cookies,
            &ada_page,
            &[
                ("csrf", &token),
                ("tier", "free"),
                ("role", "admin"),
                ("active", "1"),
                ("api_access", "1"),
            ],
        )
        .await;
    assert_eq!(promoted.status, 303, "{}", promoted.html);
    let ada = app.form_login("ada", PASSWORD).await;
    assert_eq!(
        app.page_with(&ada.cookies, "/admin/imports").await.status,
        200
    );
    // Root may not step down while no other super administrator exists.
    let me = app.page_with(&root.cookies, "/admin/users?q=root").await;
    let start = me.html.find(r#"<a href="/admin/users/"#).unwrap() + 9;
    let root_page = me.html[start..start + me.html[start..].find('"').unwrap()].to_owned();
    let refused = app
        .post_form(
            &root.cookies,
            &root_page,
            &[
                ("csrf", &token),
                ("tier", "free"),
                ("role", "admin"),
                ("active", "1"),
                ("api_access", "1"),
            ],
        )
        .await;
    assert_eq!(refused.status, 400, "{}", refused.html);
    refused.assert_has("last active super administrator");
    assert_eq!(
        app.page_with(&root.cookies, "/admin/tiers").await.status,
        200
    );
}
