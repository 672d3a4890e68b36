//! The import form: a refused file lists every bad row and stores nothing, the fixed file
//! reaches the public index page at once, an upload without its CSRF token is refused
//! before it is read, and an import's own page shows its changes and its problems,
//! filtered by column and as a CSV file with formulas made inert.

use iq_test_support::site::{PageReply, SignedIn};
use reqwest::Method;

use super::root;
use crate::helpers::{header_text, spawn_with_fixture, TestApp};

/// Posts `file` to the import form, as a browser does.
async fn upload(app: &TestApp, browser: &SignedIn, file_name: &str, file: &str) -> PageReply {
    upload_noted(app, browser, file_name, file, "").await
}

/// [`upload`] with the form's "Why" field (`note`, D26) filled in.
async fn upload_noted(
    app: &TestApp,
    browser: &SignedIn,
    file_name: &str,
    file: &str,
    note: &str,
) -> PageReply {
    let token = app
        .page_with(&browser.cookies, "/admin/imports")
        .await
        .csrf();
    upload_with_token(app, browser, &token, file_name, (file, note)).await
}

/// Posts `file` to the import form with `token` as its CSRF token.
async fn upload_with_token(
    app: &TestApp,
    browser: &SignedIn,
    token: &str,
    file_name: &str,
    (file, note): (&str, &str),
) -> PageReply {
    let form = reqwest::multipart::Form::new()
        .text("csrf", token.to_owned())
        .text("note", note.to_owned())
        .part(
            "file",
            reqwest::multipart::Part::bytes(file.as_bytes().to_vec())
                .file_name(file_name.to_owned()),
        );
    let response = app
        .request(Method::POST, "/admin/imports")
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

    let accepted = upload_noted(
        &app,
        &root,
        "good.csv",
        GOOD,
        "Server_Index 5 Nov re-quoted",
    )
    .await;
    accepted.assert_has(r#"id="import-accepted""#);
    // The form's note is the publication's reason (D26); the form offers the field.
    let reason: Option<String> = crate::helpers::select_value(
        &app.db,
        "SELECT reason FROM vintages ORDER BY vintage DESC LIMIT 1",
    )
    .await;
    assert_eq!(reason.as_deref(), Some("Server_Index 5 Nov re-quoted"));
    app.page_with(&root.cookies, "/admin/imports")
        .await
        .assert_has(r#"<textarea id="import-note" name="note""#);
    // Its audit record names root and the request of the upload, though the import ran
    // in a task of its own.
    let records = app.audit_records("import.accepted", "import").await;
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["actor"]["username"], "root");
    assert_eq!(
        records[0]["request_id"].as_str(),
        accepted.header("x-request-id")
    );
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
    let refused = upload_with_token(&app, &root, &"0".repeat(64), "good.csv", (GOOD, "")).await;
    assert_eq!(refused.status, 403);
    app.page_with(&root.cookies, "/admin/imports")
        .await
        .assert_has("No imports yet.");
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
        .request(
            Method::GET,
            &format!("/admin/imports/{refused_id}/errors.csv"),
        )
        .header("Cookie", &root.cookies)
        .send()
        .await
        .unwrap();
    assert_eq!(csv.status(), 200);
    assert!(header_text(csv.headers(), "content-disposition").starts_with("attachment"));
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
