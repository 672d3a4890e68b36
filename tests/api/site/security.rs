//! The website's defences: security headers on every page, CSRF tokens on every form,
//! escaping of what the data holds, assets under content-hashed names.

use crate::helpers::{
    header_text, rename_fixture_specification, run_sql, spawn_with_fixture, PASSWORD,
};
use reqwest::Method;

#[actix_web::test]
async fn every_page_carries_the_security_headers() {
    let app = spawn_with_fixture().await;
    for path in super::VISITOR_PAGES {
        let page = app.page(path).await;
        let csp = page.header("content-security-policy").unwrap_or_default();
        assert!(
            csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"),
            "{path}: {csp}"
        );
        assert!(csp.contains("frame-ancestors 'none'"), "{path}");
        assert_eq!(
            page.header("x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
        assert_eq!(
            page.header("referrer-policy"),
            Some("same-origin"),
            "{path}"
        );
        // No inline script anywhere: the CSP would block it.
        assert!(!page.html.contains("<script>"), "{path}");
        assert!(!page.html.contains(" style="), "{path}");
    }
}

#[actix_web::test]
async fn forms_without_their_token_are_refused() {
    let (app, _) = spawn_with_fixture().await.with_member("pat", "pro").await;
    app.member("eve", "free").await;
    let pat = app.form_login("pat", PASSWORD).await;
    let eve = app.form_login("eve", PASSWORD).await;
    let eve_token = app.page_with(&eve.cookies, "/account").await.csrf();

    // Login without a token, and with a token of another browser.
    let no_token = app
        .post_form("", "/login", &[("username", "pat"), ("password", PASSWORD)])
        .await;
    assert_eq!(no_token.status, 403, "{}", no_token.html);
    assert!(no_token.cookie("iq_session").is_none());
    let form = app.page("/login").await;
    let pre = form.cookie("iq_form").unwrap();
    let foreign = app.post_login(&pre, &eve_token, "pat", PASSWORD).await;
    assert_eq!(foreign.status, 403);

    // A key form and logout with another session's token change nothing.
    let key = app.post_key_form(&pat, &eve_token, &[("name", "x")]).await;
    assert_eq!(key.status, 403);
    app.page_with(&pat.cookies, "/account/keys")
        .await
        .assert_has("You have no keys yet.");
    let logout = app.post_form(&pat.cookies, "/logout", &[]).await;
    assert_eq!(logout.status, 403);
    assert_eq!(app.page_with(&pat.cookies, "/account").await.status, 200);
    // A form body that is not a form.
    let json = app
        .request(Method::POST, "/logout")
        .header("Cookie", &pat.cookies)
        .header("Content-Type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(json.status(), 400);
}

#[actix_web::test]
async fn what_the_data_holds_is_escaped() {
    let app = spawn_with_fixture().await;
    rename_fixture_specification(&app.db, "<script>alert(1)</script>").await;
    run_sql(&app.db, "UPDATE indexes SET index_name = '<img src=x onerror=alert(2)>' WHERE index_code = 'Server_Index'").await;
    for path in ["/", "/indexes/Server_Index"] {
        let page = app.page(path).await;
        assert_eq!(page.status, 200);
        page.assert_lacks("<script>alert(1)");
        page.assert_lacks("<img src=x");
    }
    let index = app.page("/indexes/Server_Index").await;
    index.assert_has("&#60;script&#62;alert(1)&#60;/script&#62;");
}

#[actix_web::test]
async fn assets_have_hashed_names_and_long_lifetimes() {
    let app = spawn_with_fixture().await;
    let home = app.page("/").await;
    let start = home.html.find(r#"href="/assets/site."#).unwrap() + 6;
    let href = &home.html[start..start + home.html[start..].find('"').unwrap()];
    assert!(href.ends_with(".css"), "{href}");
    let css = app.request(Method::GET, href).send().await.unwrap();
    assert_eq!(css.status(), 200);
    assert_eq!(
        css.headers()["cache-control"].to_str().unwrap(),
        "public, max-age=31536000, immutable"
    );
    assert!(header_text(css.headers(), "content-type").starts_with("text/css"));
    let stale = app.page("/assets/site.0000.css").await;
    assert_eq!(stale.status, 404);
}
