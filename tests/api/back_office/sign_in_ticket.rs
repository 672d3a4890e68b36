//! The ticket the website's code step carries (D23) is void once the password changes:
//! whoever holds it cannot finish a login with a code after the owner changed it. It
//! dies after five wrong codes, and a user meets at most twenty an hour (D28).

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

#[actix_web::test]
async fn a_ticket_dies_after_five_wrong_codes() {
    let (app, session) = spawn_app().await.with_member("tara", "pro").await;
    let (secret, _) = enrol(&app, &session).await;
    let form = app.page("/login").await;
    let pre = form.cookie("iq_form").unwrap();
    let code_page = app.post_login(&pre, &form.csrf(), "tara", PASSWORD).await;
    code_page.assert_has(r#"id="code-form""#);
    for n in 1..=5 {
        let wrong = app.post_login_code(&pre, &code_page, "000000").await;
        assert_eq!(wrong.status, 401, "wrong code {n}: {}", wrong.html);
        wrong.assert_has("Wrong, expired or already used code.");
    }
    // The sixth try finds the ticket dead, even with the right code.
    let right = code_for(&secret, app.clock.now());
    let dead = app.post_login_code(&pre, &code_page, &right).await;
    assert_eq!(dead.status, 401, "{}", dead.html);
    dead.assert_has("5 wrong codes; start again with the password");
    // A new sign-in with the password (the next minute: the wrong codes counted
    // toward this one's login limits) gets a new ticket.
    app.clock.advance(Duration::minutes(1));
    let right = code_for(&secret, app.clock.now());
    let again = app.post_login(&pre, &form.csrf(), "tara", PASSWORD).await;
    let opened = app.post_login_code(&pre, &again, &right).await;
    assert_eq!(opened.status, 303, "{}", opened.html);
}

#[actix_web::test]
async fn a_user_meets_twenty_wrong_codes_an_hour_at_most() {
    let (app, session) = spawn_app().await.with_member("tara", "pro").await;
    let (secret, _) = enrol(&app, &session).await;
    // Five a minute (the login limits), four minutes: twenty wrong codes.
    for minute in 0..4 {
        for n in 0..5 {
            let reply = super::two_factor::login_with(&app, "tara", Some("000000")).await;
            reply.assert_status_code(401, 40102, format_args!("minute {minute}, code {n}"));
        }
        app.clock.advance(Duration::minutes(1));
    }
    let right = code_for(&secret, app.clock.now());
    let refused = super::two_factor::login_with(&app, "tara", Some(&right)).await;
    refused.assert_error_mentioning(429, 42901, "20 wrong two-factor codes this hour");
    let retry: i64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!(retry > 60 && retry <= 3600, "Retry-After {retry}");
    // The next hour it is heard again.
    app.clock.advance(Duration::hours(1));
    let right = code_for(&secret, app.clock.now());
    let opened = super::two_factor::login_with(&app, "tara", Some(&right)).await;
    assert_eq!(opened.code(), 0, "{}", opened.body);
}
