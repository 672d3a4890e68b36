//! Accounts and protection, third round (D28), from outside: a browser that signed in
//! before is not locked out by a botnet guessing its name; IPv6 clients are counted by
//! their /64; a user holds at most ten sessions, and all of them together one keyless
//! allowance a minute.

use super::*;

#[actix_web::test]
async fn a_known_device_signs_in_while_many_addresses_fail_for_its_name() {
    let app = spawn_behind_a_proxy().await;
    app.member("alice", "free").await;
    app.member("bob", "free").await;
    let home = Some("198.51.100.7");
    // Earlier in the day alice signed in at home: her browser keeps the device cookie.
    let (first, _) = app.login_from("alice", PASSWORD, home).await;
    assert_eq!(first.code(), 0, "{}", first.body);
    let device = TestApp::device_cookie(&first);
    let set = first
        .set_cookies
        .iter()
        .find(|c| c.starts_with("iq_device="))
        .unwrap();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Lax"),
        "{set}"
    );
    assert!(set.contains("Max-Age=31536000"), "a year: {set}");
    let (bobs, _) = app.login_from("bob", PASSWORD, Some("198.51.100.8")).await;
    let bobs_device = TestApp::device_cookie(&bobs);

    // 105 wrong passwords from 21 addresses, five each, within one minute.
    for n in 0..105 {
        let from = format!("203.0.113.{}", n / 5);
        let (reply, _) = app
            .login_from("alice", "a guessed password", Some(&from))
            .await;
        assert!(
            [40102, 42901].contains(&reply.code()),
            "attempt {n}: {}",
            reply.body
        );
    }
    // Without the cookie, or with someone else's, the name is locked this minute...
    let (locked, _) = app.login_from("alice", PASSWORD, home).await;
    locked.assert_error(429, 42901);
    let (borrowed, _) = app
        .login_with_device("alice", PASSWORD, home, Some(&bobs_device))
        .await;
    borrowed.assert_error(429, 42901);
    // ...and alice's own browser signs in.
    let (hers, session) = app
        .login_with_device("alice", PASSWORD, home, Some(&device))
        .await;
    assert_eq!(hers.code(), 0, "{}", hers.body);
    assert!(session.is_some());
    // The cookie is no password: a wrong one with it is still refused.
    let (wrong, _) = app
        .login_with_device("alice", "a guessed password", home, Some(&device))
        .await;
    wrong.assert_error(401, 40102);
}

#[actix_web::test]
async fn an_ipv6_client_is_counted_by_its_64() {
    let app = spawn_behind_a_proxy().await;
    app.member("alice", "free").await;
    // Five failures from five addresses of one /64: the pair's five.
    for n in 1..=5 {
        let from = format!("2001:db8:7:1::{n}");
        let (reply, _) = app
            .login_from("alice", "a guessed password", Some(&from))
            .await;
        reply.assert_status_code(401, 40102, format_args!("attempt {n}"));
    }
    let (same_64, _) = app
        .login_from("alice", PASSWORD, Some("2001:db8:7:1::99"))
        .await;
    same_64.assert_error(429, 42901);
    let (other_64, session) = app
        .login_from("alice", PASSWORD, Some("2001:db8:7:2::1"))
        .await;
    assert_eq!(other_64.code(), 0, "{}", other_64.body);
    assert!(session.is_some());
}

#[actix_web::test]
async fn the_eleventh_session_ends_the_first() {
    let (app, _) = spawn_app().await.with_member("alice", "free").await;
    let mut sessions = Vec::new();
    for _ in 0..11 {
        sessions.push(app.login_ok("alice").await);
        app.clock.advance(Duration::seconds(1));
    }
    app.list_keys(&sessions[0]).await.assert_error(401, 40102);
    for (n, session) in sessions.iter().enumerate().skip(1) {
        let reply = app.list_keys(session).await;
        assert_eq!(reply.code(), 0, "session {n}: {}", reply.body);
    }
    let listed = app.get_as(&sessions[10], "/api/v1/auth/sessions").await;
    assert_eq!(
        listed.data().as_array().unwrap().len(),
        10,
        "{}",
        listed.body
    );
}

#[actix_web::test]
async fn a_users_sessions_share_one_keyless_allowance_a_minute() {
    let app = spawn_with(Spawn::default().tuned(|s| s.site.website_per_minute = 6)).await;
    app.member("alice", "free").await;
    let (one, two) = (app.login_ok("alice").await, app.login_ok("alice").await);
    let query = json!({"api_name": "index_basic"});
    for n in 0..3 {
        for session in [&one, &two] {
            let reply = app
                .send_as(session, Method::POST, "/api/v1/query", query.clone())
                .await;
            assert_eq!(reply.code(), 0, "call {n}: {}", reply.body);
        }
    }
    // Six calls between the two sessions: the seventh, from either, waits.
    let refused = app
        .send_as(&two, Method::POST, "/api/v1/query", query.clone())
        .await;
    refused.assert_error(429, 42901);
    assert!(refused.header("retry-after").is_some());
    app.clock.advance(Duration::minutes(1));
    let again = app
        .send_as(&one, Method::POST, "/api/v1/query", query)
        .await;
    assert_eq!(again.code(), 0, "{}", again.body);
}

#[actix_web::test]
async fn links_come_from_public_url_and_its_https_makes_cookies_secure() {
    let app = spawn_with(Spawn::default().tuned(|s| {
        s.site.public_url = Some("https://indexes.example.com".into());
        s.accounts.cookie_secure = None;
    }))
    .await;
    app.member("alice", "free").await;
    // A client-chosen Host header never reaches a page's links.
    let page = app
        .request(Method::GET, "/examples")
        .header("Host", "evil.example")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains("https://indexes.example.com/api/v1/query"),
        "{page}"
    );
    assert!(!page.contains("evil.example"));
    let (reply, _) = app.login("alice", PASSWORD).await;
    for cookie in ["iq_session=", "iq_device="] {
        let set = reply
            .set_cookies
            .iter()
            .find(|c| c.starts_with(cookie))
            .unwrap_or_else(|| panic!("{cookie} in {:?}", reply.set_cookies));
        assert!(set.contains("Secure"), "{set}");
    }
}
