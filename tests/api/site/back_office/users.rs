//! The users' pages: found by a part of their name, created, given a tier and a role,
//! and the last active super administrator kept from stepping down.

use super::back_office;
use crate::helpers::site::{PageReply, SignedIn};
use crate::helpers::{TestApp, PASSWORD};

/// The address of the first user page a search for `q` links to, and the search page's
/// CSRF token.
async fn first_user_page(app: &TestApp, admin: &SignedIn, q: &str) -> (String, String) {
    let users = app
        .page_with(&admin.cookies, &format!("/admin/users?q={q}"))
        .await;
    let start = users.html.find(r#"<a href="/admin/users/"#).unwrap() + 9;
    let page = users.html[start..start + users.html[start..].find('"').unwrap()].to_owned();
    (page, users.csrf())
}

/// Saves the user page `page` as a free, active administrator with API access.
async fn make_admin(app: &TestApp, admin: &SignedIn, page: &str, token: &str) -> PageReply {
    app.submit(
        admin,
        page,
        token,
        &[
            ("tier", "free"),
            ("role", "admin"),
            ("active", "1"),
            ("api_access", "1"),
        ],
    )
    .await
}

#[actix_web::test]
async fn users_are_found_created_and_changed_from_their_pages() {
    let (app, admin, root) = back_office().await;
    app.user(&admin, "anna", "free").await;
    app.user(&admin, "ben_x", "free").await;
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
        .submit(
            &root,
            "/admin/users",
            &token,
            &[
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
        .submit(
            &root,
            "/admin/users",
            &token,
            &[("username", "cleo"), ("password", PASSWORD)],
        )
        .await;
    assert_eq!(duplicate.status, 400, "{}", duplicate.html);
    duplicate.assert_has(r#"id="user-problem""#);
    // Cleo becomes a pro member, without API access.
    let saved = app
        .submit(
            &root,
            &location,
            &token,
            &[("tier", "pro"), ("role", "user"), ("active", "1")],
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
async fn roles_change_from_the_user_page_but_the_last_super_administrator_stays() {
    let (app, admin, root) = back_office().await;
    app.user(&admin, "ada", "free").await;
    let (ada_page, token) = first_user_page(&app, &root, "ada").await;
    let promoted = make_admin(&app, &root, &ada_page, &token).await;
    assert_eq!(promoted.status, 303, "{}", promoted.html);
    let ada = app.form_login("ada", PASSWORD).await;
    assert_eq!(
        app.page_with(&ada.cookies, "/admin/imports").await.status,
        200
    );
    // Root may not step down while no other super administrator exists.
    let (root_page, _) = first_user_page(&app, &root, "root").await;
    let refused = make_admin(&app, &root, &root_page, &token).await;
    assert_eq!(refused.status, 400, "{}", refused.html);
    refused.assert_has("last active super administrator");
    assert_eq!(
        app.page_with(&root.cookies, "/admin/tiers").await.status,
        200
    );
}
