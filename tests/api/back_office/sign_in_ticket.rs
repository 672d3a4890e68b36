//! The ticket the website's code step carries (D23) is void once the password changes:
//! whoever holds it cannot finish a login with a code after the owner changed it.

use iq_actors::accounts::two_factor::code_for;
use iq_test_support::site::PageReply;

use super::two_factor::enrol;
use super::*;

const NEW_PASSWORD: &str = "a brand new passphrase";

#[actix_web::test]
async fn a_password_change_voids_a_waiting_sign_in_ticket() {
    let (app, session) = spawn_app().await.with_member("tara", "pro").await;
    let (secret, _) = enrol(&app, &session).await;

    // Two code forms opened with the password (each with its pre-session cookie); the
    // second is kept for after the change.
    let mut forms = Vec::new();
    for _ in 0..2 {
        let form = app.page("/login").await;
        let pre = form.cookie("iq_form").unwrap();
        let first = app.post_login(&pre, &form.csrf(), "tara", PASSWORD).await;
        first.assert_has(r#"id="code-form""#);
        forms.push((pre, first));
    }
    let finish = async |(pre, page): &(String, PageReply), code: String| {
        app.post_login_code(pre, page, &code).await
    };
    // The ticket works while the password stands...
    let code = code_for(&secret, app.clock.now());
    let opened = finish(&forms[0], code).await;
    assert_eq!(opened.status, 303, "{}", opened.html);

    // ...and not after it changed, with a fresh code, within its five minutes.
    let changed = app
        .send_as(
            &session,
            Method::POST,
            "/api/v1/auth/password",
            json!({"current_password": PASSWORD, "new_password": NEW_PASSWORD}),
        )
        .await;
    assert_eq!(changed.code(), 0, "{}", changed.body);
    app.clock.advance(Duration::seconds(30));
    let late = finish(&forms[1], code_for(&secret, app.clock.now())).await;
    assert_eq!(late.status, 401, "{}", late.html);
    late.assert_has("start again with the password");
}
