//! Login, membership, logout, session expiry and the login limits (D23).

use super::*;

#[actix_web::test]
async fn login_sets_an_httponly_lax_cookie_and_returns_the_csrf_token_and_user() {
    let (app, _) = spawn_app().await.with_member("alice", "pro").await;

    let (reply, _) = app.login("alice", PASSWORD).await;
    assert_eq!((reply.status, reply.code()), (200, 0), "{}", reply.body);
    let set_cookie = reply
        .set_cookies
        .iter()
        .find(|c| c.starts_with("iq_session="))
        .unwrap_or_else(|| panic!("no iq_session cookie in {:?}", reply.set_cookies));
    let attributes: Vec<String> = set_cookie
        .split(';')
        .map(|a| a.trim().to_ascii_lowercase())
        .collect();
    assert!(attributes.iter().any(|a| a == "httponly"), "{set_cookie}");
    assert!(
        attributes.iter().any(|a| a == "samesite=lax"),
        "{set_cookie}"
    );
    // Not configured to be secure in the tests.
    assert!(!attributes.iter().any(|a| a == "secure"), "{set_cookie}");
    let value = set_cookie.split(';').next().unwrap()["iq_session=".len()..].to_string();
    assert!(value.len() >= 20, "{set_cookie}");

    let data = reply.data();
    let csrf = data["csrf_token"].as_str().expect("csrf_token");
    assert!(csrf.len() >= 20, "{data}");
    assert_ne!(csrf, value, "the CSRF token is not the session id");
    assert!(data["user"]["id"].as_str().is_some_and(|s| !s.is_empty()));
    assert_eq!(data["user"]["username"], "alice");
    assert_eq!(data["user"]["role"], "user");
    // The session id itself does not appear in the body.
    let mut body_strings = Vec::new();
    strings(&reply.body, &mut body_strings);
    assert!(!body_strings.iter().any(|s| s.contains(&value)));
}

#[actix_web::test]
async fn wrong_password_and_unknown_user_are_the_same_40102() {
    let (app, _) = spawn_app().await.with_member("alice", "free").await;

    let (wrong, _) = app.login("alice", "not the right password").await;
    wrong.assert_error(401, 40102);
    assert!(!wrong
        .set_cookies
        .iter()
        .any(|c| c.starts_with("iq_session=") && !c.starts_with("iq_session=;")));
    let (unknown, _) = app.login("nobody", PASSWORD).await;
    unknown.assert_error(401, 40102);
    assert_eq!(wrong.message(), unknown.message());
}

#[actix_web::test]
async fn two_logins_give_two_different_sessions_both_usable() {
    let (app, _) = spawn_app().await.with_member("alice", "free").await;
    let first = app.login_ok("alice").await;
    let second = app.login_ok("alice").await;
    assert_ne!(first.cookie, second.cookie);
    assert_ne!(first.csrf, second.csrf);
    assert_eq!(first.user_id, second.user_id);
    // One session's CSRF token is no good for the other.
    let crossed = Session {
        csrf: second.csrf.clone(),
        ..first.clone()
    };
    app.create_key(&crossed, json!({"name": "x"}))
        .await
        .assert_error(403, 40301);
}

#[actix_web::test]
async fn membership_describes_the_session_or_the_visitor() {
    let (app, admin) = spawn_app().await.with_admin().await;
    let pro = app.user(&admin, "paula", "pro").await;
    let free = app.user(&admin, "fred", "free").await;

    let reply = app.membership_as(&pro).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    let data = reply.data();
    assert_eq!(data["identity"], "session");
    assert_eq!(
        data["user"],
        json!({"id": pro.user_id, "username": "paula", "role": "user"})
    );
    assert_eq!(data["tier"], "pro");
    assert_eq!(data["delay_days"], 0);
    assert_eq!(data["quota"]["max_keys"], Value::Null);

    let reply = app.membership_as(&free).await;
    assert_eq!(reply.data()["identity"], "session");
    assert_eq!(reply.data()["user"]["username"], "fred");
    assert_eq!(reply.data()["tier"], "free");
    assert_eq!(reply.data()["delay_days"], 7);

    let root = app.membership_as(&admin).await;
    assert_eq!(root.data()["user"]["role"], "super_admin");

    let visitor = app.membership().await;
    assert_eq!(visitor.code(), 0, "{}", visitor.body);
    assert_eq!(visitor.data()["identity"], "visitor");
    assert_eq!(visitor.data()["user"], Value::Null);
    assert_eq!(visitor.data()["tier"], "free");
}

#[actix_web::test]
async fn logout_needs_the_csrf_token_and_ends_the_session() {
    let (app, alice) = spawn_app().await.with_member("alice", "free").await;

    let without = app
        .send_without_csrf(&alice, Method::POST, "/api/v1/auth/logout", None)
        .await;
    without.assert_error(403, 40301);
    // The refused logout left the session alone.
    assert_eq!(app.list_keys(&alice).await.code(), 0);

    let wrong = Session {
        csrf: "not-the-token".into(),
        ..alice.clone()
    };
    app.call(
        Method::POST,
        "/api/v1/auth/logout",
        None,
        Some(&wrong),
        true,
    )
    .await
    .assert_error(403, 40301);

    let out = app
        .call(
            Method::POST,
            "/api/v1/auth/logout",
            None,
            Some(&alice),
            true,
        )
        .await;
    assert_eq!((out.status, out.code()), (200, 0), "{}", out.body);

    app.list_keys(&alice).await.assert_error(401, 40102);
    // The session is gone for membership too: a logged-out cookie is not a session.
    let membership = app.membership_as(&alice).await;
    assert_ne!(
        membership.data()["identity"],
        "session",
        "{}",
        membership.body
    );
    // Logging out with no session at all is 40101.
    app.call(Method::POST, "/api/v1/auth/logout", None, None, false)
        .await
        .assert_error(401, 40101);
}

#[actix_web::test]
async fn an_idle_session_expires_after_sixty_minutes() {
    let (app, admin) = spawn_app().await.with_admin().await;
    let alice = app.user(&admin, "alice", "free").await;

    app.clock.advance(Duration::minutes(59));
    assert_eq!(
        app.list_keys(&alice).await.code(),
        0,
        "59 minutes idle is fine"
    );

    app.clock.advance(Duration::minutes(61));
    app.list_keys(&alice).await.assert_error(401, 40103);
    // The other session (admin's) also idled 120 minutes in total.
    app.list_keys(&admin).await.assert_error(401, 40103);
    // A fresh login works again.
    let again = app.login_ok("alice").await;
    assert_eq!(app.list_keys(&again).await.code(), 0);
}

#[actix_web::test]
async fn an_active_session_still_ends_after_twelve_hours() {
    let (app, alice) = spawn_app().await.with_member("alice", "free").await;
    let start = app.clock.now();

    let mut elapsed = Duration::zero();
    loop {
        app.clock.advance(Duration::minutes(50));
        elapsed += Duration::minutes(50);
        let reply = app.list_keys(&alice).await;
        if elapsed < Duration::hours(12) {
            assert_eq!(
                reply.code(),
                0,
                "after {} minutes: {}",
                elapsed.num_minutes(),
                reply.body
            );
        } else {
            reply.assert_error(401, 40103);
            break;
        }
    }
    assert!(app.clock.now() - start > Duration::hours(12));
}

#[actix_web::test]
async fn five_failures_for_a_name_from_one_address_block_that_pair_until_the_next_minute() {
    let app = spawn_behind_a_proxy().await;
    app.member("alice", "free").await;
    // 04:00:00 at the start.
    assert_eq!(app.clock.now(), now());
    let here = Some("203.0.113.5");

    for attempt in 1..=5 {
        let (reply, _) = app.login_from("alice", "wrong password here", here).await;
        reply.assert_status_code(401, 40102, format_args!("attempt {attempt}"));
    }
    let (blocked, session) = app.login_from("alice", PASSWORD, here).await;
    blocked.assert_error(429, 42901);
    assert!(session.is_none());
    // At 04:00:00 the next minute is a whole minute away.
    assert_eq!(blocked.header("retry-after"), Some("60"));
    // Other user names from the same address are not affected, nor the name elsewhere.
    let (root, _) = app.login_from("root", "wrong password here", here).await;
    root.assert_error(401, 40102);
    let (elsewhere, session) = app
        .login_from("alice", PASSWORD, Some("198.51.100.7"))
        .await;
    assert_eq!(elsewhere.code(), 0, "{}", elsewhere.body);
    assert!(session.is_some());

    // Still the same calendar minute.
    app.clock.advance(Duration::seconds(59));
    let (still, _) = app.login_from("alice", PASSWORD, here).await;
    still.assert_error(429, 42901);
    assert_eq!(still.header("retry-after"), Some("1"));

    // 04:01:00: a new minute.
    app.clock.advance(Duration::seconds(1));
    let (later, _) = app.login_from("alice", PASSWORD, here).await;
    assert_eq!(later.code(), 0, "{}", later.body);
}

#[actix_web::test]
async fn twenty_five_failures_from_one_address_do_not_lock_the_user_out_elsewhere() {
    let app = spawn_behind_a_proxy().await;
    app.member("alice", "free").await;
    let attacker = Some("203.0.113.66");

    let mut codes = Vec::new();
    for _ in 1..=25 {
        let (reply, _) = app
            .login_from("alice", "a guessed password", attacker)
            .await;
        codes.push(reply.code());
    }
    assert_eq!(codes[..5], [40102; 5]);
    assert!(codes[5..].iter().all(|&c| c == 42901), "{codes:?}");
    // The attacker's address stays refused, even with the right password ...
    let (theirs, _) = app.login_from("alice", PASSWORD, attacker).await;
    theirs.assert_error(429, 42901);
    assert!(theirs.header("retry-after").is_some());
    // ... and alice, at home, logs in.
    let (hers, session) = app
        .login_from("alice", PASSWORD, Some("198.51.100.7"))
        .await;
    assert_eq!(hers.code(), 0, "{}", hers.body);
    assert!(session.is_some());
}

#[actix_web::test]
async fn a_name_is_locked_only_when_many_addresses_fail_for_it() {
    let app = spawn_behind_a_proxy().await;
    app.member("alice", "free").await;
    // A hundred failures for one name, five from each of twenty addresses.
    for n in 0..100 {
        let from = format!("203.0.113.{}", n / 5);
        let (reply, _) = app
            .login_from("alice", "a guessed password", Some(&from))
            .await;
        reply.assert_status_code(401, 40102, format_args!("attempt {n}"));
    }
    let (locked, _) = app
        .login_from("alice", PASSWORD, Some("198.51.100.7"))
        .await;
    locked.assert_error(429, 42901);
    assert!(locked.header("retry-after").is_some());
    app.clock.advance(Duration::minutes(1));
    let (back, _) = app
        .login_from("alice", PASSWORD, Some("198.51.100.7"))
        .await;
    assert_eq!(back.code(), 0, "{}", back.body);
}

#[actix_web::test]
async fn twenty_failures_from_one_address_block_it_until_the_next_calendar_minute() {
    let (app, _) = spawn_app().await.with_member("alice", "free").await;

    for n in 1..=20 {
        let (reply, _) = app
            .login(&format!("nobody{n}"), "wrong password here")
            .await;
        reply.assert_status_code(401, 40102, format_args!("attempt {n}"));
    }
    let (fresh_name, _) = app.login("nobody21", "wrong password here").await;
    fresh_name.assert_error(429, 42901);
    let (right, _) = app.login("alice", PASSWORD).await;
    right.assert_error(429, 42901);

    app.clock.advance(Duration::minutes(1));
    app.login_ok("alice").await;
}
