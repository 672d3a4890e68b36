//! Two-factor sign-in (D23): set up on the account's page, then required at every
//! login (a code once, a recovery code once); with `STAFF_TWO_FACTOR` the back office
//! refuses administrators until they have it, and they cannot turn it off.

use iq_actors::accounts::two_factor::code_for;
use iq_test_support::site::PageReply;

use super::*;

/// The text of the element `id` in `page` (its first text, up to the next tag).
fn text_of(page: &PageReply, id: &str) -> String {
    let marker = format!("id=\"{id}\"");
    let at = page
        .html
        .find(&marker)
        .unwrap_or_else(|| panic!("no #{id} in {}", page.html));
    let start = at + page.html[at..].find('>').unwrap() + 1;
    let end = start + page.html[start..].find('<').unwrap();
    page.html[start..end].to_owned()
}

/// The security `page`'s form that confirms two-factor sign-in, sent for `session` with
/// the password and `code`.
async fn confirm_with(app: &TestApp, session: &Session, page: &PageReply, code: &str) -> PageReply {
    let csrf = page.csrf();
    let fields = [
        ("csrf", csrf.as_str()),
        ("current_password", PASSWORD),
        ("code", code),
    ];
    app.post_form(&session.cookie, "/account/two-factor/confirm", &fields)
        .await
}

/// The security `page`'s form that turns two-factor sign-in off, sent for `session`
/// with `password` as the current password.
async fn turn_off_with(
    app: &TestApp,
    session: &Session,
    page: &PageReply,
    password: &str,
) -> PageReply {
    let csrf = page.csrf();
    let fields = [("csrf", csrf.as_str()), ("current_password", password)];
    app.post_form(&session.cookie, "/account/two-factor/disable", &fields)
        .await
}

/// Sets up two-factor sign-in for `session`'s user on the security page; the secret
/// and the recovery codes. The clock then moves on a step, so the next code is new.
pub(crate) async fn enrol(app: &TestApp, session: &Session) -> (String, Vec<String>) {
    let page = app.page_as(session, "/account/security").await;
    let started = app
        .post_form(
            &session.cookie,
            "/account/two-factor/start",
            &[("csrf", &page.csrf())],
        )
        .await;
    assert_eq!(started.status, 303, "{}", started.html);
    let page = app.page_as(session, "/account/security").await;
    let secret = text_of(&page, "two-factor-secret");
    let wrong = confirm_with(app, session, &page, "000000").await;
    assert_eq!(wrong.status, 400, "{}", wrong.html);
    wrong.assert_has(r#"id="two-factor-problem""#);
    let code = code_for(&secret, app.clock.now());
    let confirmed = confirm_with(app, session, &page, &code).await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.html);
    confirmed.assert_has(r#"id="two-factor-on""#);
    let codes: Vec<String> = text_of(&confirmed, "recovery-codes")
        .lines()
        .map(str::to_owned)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(codes.len(), 10, "{codes:?}");
    app.clock.advance(Duration::seconds(30));
    (secret, codes)
}

pub(crate) async fn login_with(app: &TestApp, username: &str, code: Option<&str>) -> Reply {
    let mut body = json!({"username": username, "password": PASSWORD});
    if let Some(code) = code {
        body["code"] = json!(code);
    }
    app.call(Method::POST, "/api/v1/auth/login", Some(body), None, false)
        .await
}

#[actix_web::test]
async fn once_set_up_every_login_needs_a_fresh_code_or_an_unused_recovery_code() {
    let (app, session) = spawn_app().await.with_member("tess", "pro").await;
    let (secret, recovery) = enrol(&app, &session).await;

    let without = login_with(&app, "tess", None).await;
    without.assert_error(401, 40102);
    assert!(without.message().contains("'code'"), "{}", without.body);
    login_with(&app, "tess", Some("123456"))
        .await
        .assert_error(401, 40102);
    let code = code_for(&secret, app.clock.now());
    let with = login_with(&app, "tess", Some(&code)).await;
    assert_eq!(with.code(), 0, "{}", with.body);
    // The same code is not taken twice.
    login_with(&app, "tess", Some(&code))
        .await
        .assert_error(401, 40102);
    // A recovery code, once.
    let rescued = login_with(&app, "tess", Some(&recovery[0])).await;
    assert_eq!(rescued.code(), 0, "{}", rescued.body);
    login_with(&app, "tess", Some(&recovery[0]))
        .await
        .assert_error(401, 40102);

    // The website's login asks for the code on a second page.
    let form = app.page("/login").await;
    let pre = form.cookie("iq_form").unwrap();
    let first = app.post_login(&pre, &form.csrf(), "tess", PASSWORD).await;
    assert_eq!(first.status, 200, "{}", first.html);
    first.assert_has(r#"id="code-form""#);
    assert!(first.cookie("iq_session").is_none());
    let post = async |code: &str| app.post_login_code(&pre, &first, code).await;
    let wrong = post("654321").await;
    assert_eq!(wrong.status, 401, "{}", wrong.html);
    wrong.assert_has(r#"id="code-problem""#);
    app.clock.advance(Duration::seconds(30));
    let right = post(&code_for(&secret, app.clock.now())).await;
    assert_eq!(right.status, 303, "{}", right.html);
    assert_eq!(right.header("location"), Some("/account"));
    // Guessing with waiting code forms meets the login limits before any code is
    // checked: past five wrong codes a minute, even the right one is refused (two
    // tickets, so that neither dies of its own five first).
    app.clock.advance(Duration::minutes(1));
    let second = app.post_login(&pre, &form.csrf(), "tess", PASSWORD).await;
    second.assert_has(r#"id="code-form""#);
    for _ in 0..3 {
        assert_eq!(post("000001").await.status, 401);
    }
    for _ in 0..2 {
        let wrong = app.post_login_code(&pre, &second, "000001").await;
        assert_eq!(wrong.status, 401);
    }
    let right = code_for(&secret, app.clock.now());
    let limited = app.post_login_code(&pre, &second, &right).await;
    assert_eq!(limited.status, 429, "{}", limited.html);
    assert!(limited.header("retry-after").is_some());
    // A ticket lasts five minutes.
    app.clock.advance(Duration::minutes(6));
    let late = post(&code_for(&secret, app.clock.now())).await;
    assert_eq!(late.status, 401);
    late.assert_has("start again with the password");

    let records = app
        .audit_records(
            "user.two_factor_enabled",
            &format!("user:{}", session.user_id),
        )
        .await;
    assert_eq!(records.len(), 1);
    assert!(!records[0].to_string().contains(&secret));
}

#[actix_web::test]
async fn with_staff_two_factor_the_back_office_waits_for_it_and_it_stays_on() {
    let app = spawn_with(Spawn::default().tuned(|s| s.accounts.staff_two_factor = true)).await;
    let root = app.admin().await;
    let refused = app.get_as(&root, "/api/v1/admin/users").await;
    refused.assert_error(403, 40301);
    assert!(
        refused.message().contains("second factor"),
        "{}",
        refused.body
    );
    assert_eq!(app.page_as(&root, "/admin").await.status, 403);

    // A second session, opened with the password alone before the factor was set up,
    // ends when it is; and a session's own proof is what counts, not the user's.
    let (_, other) = app.login("root", PASSWORD).await;
    let other = other.unwrap();
    let (_, _) = enrol(&app, &root).await;
    app.get_as(&other, "/api/v1/admin/users")
        .await
        .assert_error(401, 40102);
    assert_eq!(app.get_as(&root, "/api/v1/admin/users").await.code(), 0);
    // A member is not staff: nothing changes for them.
    let member = app.user_with_role(&root, "moe", "user").await;
    assert_eq!(app.list_keys(&member).await.code(), 0);
    assert_eq!(app.page_as(&root, "/admin").await.status, 200);
    let page = app.page_as(&root, "/account/security").await;
    page.assert_has("Administrators must keep it on here.");
    let off = turn_off_with(&app, &root, &page, PASSWORD).await;
    assert_eq!(off.status, 409, "{}", off.html);
}

#[actix_web::test]
async fn a_member_turns_it_off_with_the_password() {
    let (app, session) = spawn_app().await.with_member("otto", "free").await;
    enrol(&app, &session).await;
    let page = app.page_as(&session, "/account/security").await;
    let wrong = turn_off_with(&app, &session, &page, "not the password at all").await;
    assert_eq!(wrong.status, 400);
    let off = turn_off_with(&app, &session, &page, PASSWORD).await;
    assert_eq!(off.status, 303, "{}", off.html);
    assert_eq!(login_with(&app, "otto", None).await.code(), 0);
    let target = format!("user:{}", session.user_id);
    assert_eq!(
        app.audit_records("user.two_factor_disabled", &target)
            .await
            .len(),
        1
    );
}
