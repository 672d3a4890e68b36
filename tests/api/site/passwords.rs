//! The website's password pages: the member's "Password and sessions" page (change the
//! password, list and end sessions) and a super administrator's reset link, used on the
//! reset page; all as plain forms.

use crate::helpers::{spawn_with_fixture, PASSWORD};

const NEW_PASSWORD: &str = "another long passphrase";

#[actix_web::test]
async fn a_member_changes_the_password_and_ends_a_session_from_the_security_page() {
    let app = spawn_with_fixture().await;
    app.member("pat", "free").await;
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

    // Confirmation that differs, then a wrong current password: the form again.
    let differs = app
        .post_form(
            &laptop.cookies,
            "/account/password",
            &[
                ("csrf", &page.csrf()),
                ("current_password", PASSWORD),
                ("new_password", NEW_PASSWORD),
                ("confirm_password", "something else entirely"),
            ],
        )
        .await;
    assert_eq!(differs.status, 400);
    differs.assert_has(r#"id="password-problem""#);
    let changed = app
        .post_form(
            &laptop.cookies,
            "/account/password",
            &[
                ("csrf", &page.csrf()),
                ("current_password", PASSWORD),
                ("new_password", NEW_PASSWORD),
                ("confirm_password", NEW_PASSWORD),
            ],
        )
        .await;
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
    let ended = app
        .post_form(&laptop.cookies, action, &[("csrf", &page.csrf())])
        .await;
    assert_eq!(ended.status, 303, "{}", ended.html);
    assert_eq!(app.page_with(&tablet.cookies, "/account").await.status, 303);
    assert_eq!(app.page_with(&laptop.cookies, "/account").await.status, 200);
}

#[actix_web::test]
async fn a_reset_link_from_the_users_page_sets_a_password_once() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    let quinn = app.user(&admin, "quinn", "free").await;
    let root = app.form_login("root", PASSWORD).await;
    let user_page = app
        .page_with(&root.cookies, &format!("/admin/users/{}", quinn.user_id))
        .await;
    let issued = app
        .post_form(
            &root.cookies,
            &format!("/admin/users/{}/reset", quinn.user_id),
            &[("csrf", &user_page.csrf())],
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
    let short = app
        .post_form(
            &cookie,
            "/reset",
            &[
                ("csrf", &form.csrf()),
                ("token", token),
                ("new_password", "short"),
                ("confirm_password", "short"),
            ],
        )
        .await;
    assert_eq!(short.status, 400);
    short.assert_has(r#"id="reset-problem""#);
    let done = app
        .post_form(
            &cookie,
            "/reset",
            &[
                ("csrf", &form.csrf()),
                ("token", token),
                ("new_password", NEW_PASSWORD),
                ("confirm_password", NEW_PASSWORD),
            ],
        )
        .await;
    assert_eq!(done.status, 200, "{}", done.html);
    done.assert_has(r#"id="reset-done""#);
    app.form_login("quinn", NEW_PASSWORD).await;
    let used = app.page(link).await;
    assert_eq!(used.status, 400);
    used.assert_has(r#"id="reset-problem""#);
}
