//! The website's password pages: the member's "Password and sessions" page (change the
//! password, list and end sessions) and a super administrator's reset link, used on the
//! reset page; all as plain forms.

use crate::helpers::site::{PageReply, SignedIn};
use crate::helpers::{spawn_with_fixture, TestApp, PASSWORD};

const NEW_PASSWORD: &str = "another long passphrase";

/// The security page's password form, sent by `browser` with the page's `csrf` token:
/// the current password, then [`NEW_PASSWORD`] and `confirmation` of it.
async fn change_password(
    app: &TestApp,
    browser: &SignedIn,
    csrf: &str,
    confirmation: &str,
) -> PageReply {
    let fields = [
        ("current_password", PASSWORD),
        ("new_password", NEW_PASSWORD),
        ("confirm_password", confirmation),
    ];
    app.submit(browser, "/account/password", csrf, &fields)
        .await
}

/// The reset page's form, sent with its `cookie` and `csrf` token: the link's `token`
/// and `password`, confirmed.
async fn reset_to(
    app: &TestApp,
    cookie: &str,
    csrf: &str,
    token: &str,
    password: &str,
) -> PageReply {
    let fields = [
        ("csrf", csrf),
        ("token", token),
        ("new_password", password),
        ("confirm_password", password),
    ];
    app.post_form(cookie, "/reset", &fields).await
}

#[actix_web::test]
async fn a_member_changes_the_password_and_ends_a_session_from_the_security_page() {
    let (app, _) = spawn_with_fixture().await.with_member("pat", "free").await;
    let laptop = app.form_login("pat", PASSWORD).await;
    let phone = app.form_login("pat", PASSWORD).await;

    let page = app.page_with(&laptop.cookies, "/account/security").await;
    assert_eq!(page.status, 200, "{}", page.html);
    // Both browsers' sessions, this one marked, plus the API login of `member`.
    assert_eq!(
        page.html.matches("data-session=").count(),
        3,
        "{}",
        page.html
    );
    page.assert_has("(this session)");

    // Confirmation that differs, then a wrong current password: the form again, and
    // nothing changed (the change below is made with the current password).
    let differs = change_password(&app, &laptop, &page.csrf(), "something else entirely").await;
    assert_eq!(differs.status, 400);
    differs.assert_has(r#"id="password-problem""#);
    let fields = [
        ("current_password", "not the password at all"),
        ("new_password", NEW_PASSWORD),
        ("confirm_password", NEW_PASSWORD),
    ];
    let wrong = app
        .submit(&laptop, "/account/password", &page.csrf(), &fields)
        .await;
    assert_eq!(wrong.status, 400, "{}", wrong.html);
    wrong.assert_has(r#"id="password-problem""#);
    let changed = change_password(&app, &laptop, &page.csrf(), NEW_PASSWORD).await;
    assert_eq!(changed.status, 303, "{}", changed.html);
    assert_eq!(
        changed.header("location"),
        Some("/account/security?changed=2")
    );
    let after = app
        .page_with(&laptop.cookies, "/account/security?changed=2")
        .await;
    after.assert_has("2 other session(s) ended");
    assert_eq!(after.html.matches("data-session=").count(), 1);
    // The phone is signed out.
    let phone_page = app.page_with(&phone.cookies, "/account/security").await;
    assert_eq!(phone_page.status, 303);

    // A new session elsewhere, ended from here.
    let tablet = app.form_login("pat", NEW_PASSWORD).await;
    let page = app.page_with(&laptop.cookies, "/account/security").await;
    let start = page.html.find(r#"action="/account/sessions/"#).unwrap() + 8;
    let action = &page.html[start..start + page.html[start..].find('"').unwrap()];
    let ended = app.submit(&laptop, action, &page.csrf(), &[]).await;
    assert_eq!(ended.status, 303, "{}", ended.html);
    assert_eq!(app.page_with(&tablet.cookies, "/account").await.status, 303);
    assert_eq!(app.page_with(&laptop.cookies, "/account").await.status, 200);
}

#[actix_web::test]
async fn a_reset_link_from_the_users_page_sets_a_password_once() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let quinn = app.user(&admin, "quinn", "free").await;
    let root = app.form_login("root", PASSWORD).await;
    let user_page = app
        .page_with(&root.cookies, &format!("/admin/users/{}", quinn.user_id))
        .await;
    let issued = app
        .submit(
            &root,
            &format!("/admin/users/{}/reset", quinn.user_id),
            &user_page.csrf(),
            &[],
        )
        .await;
    assert_eq!(issued.status, 200, "{}", issued.html);
    assert_eq!(issued.header("cache-control"), Some("private, no-store"));
    let start = issued.html.find("/reset?token=").unwrap();
    let link = &issued.html[start..start + issued.html[start..].find('<').unwrap()];

    let form = app.page(link).await;
    assert_eq!(form.status, 200, "{}", form.html);
    form.assert_has("For <strong>quinn</strong>");
    let cookie = form.cookie("iq_form").unwrap();
    let token = link.split_once("token=").unwrap().1;
    let short = reset_to(&app, &cookie, &form.csrf(), token, "short").await;
    assert_eq!(short.status, 400);
    short.assert_has(r#"id="reset-problem""#);
    let done = reset_to(&app, &cookie, &form.csrf(), token, NEW_PASSWORD).await;
    assert_eq!(done.status, 200, "{}", done.html);
    done.assert_has(r#"id="reset-done""#);
    app.form_login("quinn", NEW_PASSWORD).await;
    let used = app.page(link).await;
    assert_eq!(used.status, 400);
    used.assert_has(r#"id="reset-problem""#);
}
