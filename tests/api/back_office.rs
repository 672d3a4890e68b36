//! The back office (D6 login limit, D7, D9 membership): set-up, login and sessions, the
//! guard (session, CSRF token, role), users, keys, tiers and index settings.

use chrono::{Duration, TimeZone, Utc};
use iq_actors::clock::Clock;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{now, spawn_app, spawn_with_fixture, Reply, Session, TestApp, PASSWORD};

/// The three scopes of the public datasets, sorted.
const ALL_SCOPES: [&str; 3] = ["calendar:read", "index:read", "quote:read"];

/// The free tier's settings as the migration seeds them.
fn free_defaults() -> Value {
    json!({"per_minute": 10, "per_day": 10, "max_rows": 5000, "max_keys": 1,
           "delay_days": 7, "member_indexes": false})
}

/// An anonymous `POST` with a JSON body.
async fn post(app: &TestApp, path: &str, body: Value) -> Reply {
    app.call(Method::POST, path, Some(body), None, false).await
}

/// Creates a user with any body through the back office.
async fn create_user(app: &TestApp, admin: &Session, body: Value) -> Reply {
    app.send_as(admin, Method::POST, "/api/v1/admin/users", body)
        .await
}

/// Creates a user with `role` and signs them in.
async fn user_with_role(app: &TestApp, admin: &Session, username: &str, role: &str) -> Session {
    let reply = create_user(
        app,
        admin,
        json!({"username": username, "password": PASSWORD, "role": role}),
    )
    .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    assert_eq!(reply.data()["role"], role, "{}", reply.body);
    app.login_ok(username).await
}

async fn create_key(app: &TestApp, owner: &Session, body: Value) -> Reply {
    app.send_as(owner, Method::POST, "/api/v1/keys", body).await
}

async fn delete_key(app: &TestApp, owner: &Session, id: &str) -> Reply {
    app.send_as(
        owner,
        Method::DELETE,
        &format!("/api/v1/keys/{id}"),
        json!({}),
    )
    .await
}

async fn list_keys(app: &TestApp, owner: &Session) -> Reply {
    app.get_as(owner, "/api/v1/keys").await
}

async fn put_tier(app: &TestApp, admin: &Session, tier: &str, body: Value) -> Reply {
    app.send_as(
        admin,
        Method::PUT,
        &format!("/api/v1/admin/tiers/{tier}"),
        body,
    )
    .await
}

async fn patch_index(app: &TestApp, admin: &Session, code: &str, body: Value) -> Reply {
    app.send_as(
        admin,
        Method::PATCH,
        &format!("/api/v1/admin/indexes/{code}"),
        body,
    )
    .await
}

/// `GET /api/v1/membership` as this session.
async fn membership_of(app: &TestApp, session: &Session) -> Reply {
    app.get_as(session, "/api/v1/membership").await
}

/// Every string in a JSON value, object keys included.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                strings(v, out);
            }
        }
        _ => {}
    }
}

fn sorted_scopes(data: &Value) -> Vec<String> {
    let mut scopes: Vec<String> = data["scopes"]
        .as_array()
        .expect("scopes")
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    scopes.sort();
    scopes
}

/// `index_code` of every row a visitor's `index_basic` returns.
async fn visitor_index_codes(app: &TestApp) -> Vec<Value> {
    let reply = app.query(json!({"api_name": "index_basic"})).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    reply.column("index_code")
}

// ---------------------------------------------------------------------------------------
// 1. Set-up

#[actix_web::test]
async fn setup_creates_the_first_super_admin_once_and_flips_initialized() {
    let app = spawn_app().await;
    let before = app.config().await;
    assert_eq!(before.code(), 0, "{}", before.body);
    assert_eq!(
        before.data()["initialized"],
        json!(false),
        "{}",
        before.body
    );

    let short = post(
        &app,
        "/api/v1/setup",
        json!({"username": "root", "password": "too short"}),
    )
    .await;
    short.assert_error(400, 40001);
    assert!(short.message().contains("password"), "{}", short.body);
    assert!(!short.message().contains("too short"), "{}", short.body);

    let long = "a".repeat(65);
    for username in ["x", "has space", "semi;colon", long.as_str()] {
        let bad = post(
            &app,
            "/api/v1/setup",
            json!({"username": username, "password": PASSWORD}),
        )
        .await;
        bad.assert_error(400, 40001);
        assert!(bad.message().contains("username"), "{}", bad.body);
    }
    // Refused set-ups leave the service uninitialised.
    assert_eq!(app.config().await.data()["initialized"], json!(false));

    let first = post(
        &app,
        "/api/v1/setup",
        json!({"username": "root", "password": PASSWORD}),
    )
    .await;
    assert_eq!((first.status, first.code()), (200, 0), "{}", first.body);
    let data = first.data();
    assert!(
        data["id"].as_str().is_some_and(|id| !id.is_empty()),
        "{data}"
    );
    assert_eq!(data["username"], "root");
    assert_eq!(data["role"], "super_admin");
    assert!(data.get("password").is_none() && data.get("password_hash").is_none());

    let after = app.config().await;
    assert_eq!(after.data()["initialized"], json!(true), "{}", after.body);

    let second = post(
        &app,
        "/api/v1/setup",
        json!({"username": "another", "password": PASSWORD}),
    )
    .await;
    second.assert_error(409, 40901);
    // The first administrator can sign in; the refused one does not exist.
    app.login_ok("root").await;
    let (refused, _) = app.login("another", PASSWORD).await;
    refused.assert_error(401, 40102);
}

// ---------------------------------------------------------------------------------------
// 2. Login and membership

#[actix_web::test]
async fn login_sets_an_httponly_lax_cookie_and_returns_the_csrf_token_and_user() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    app.user(&admin, "alice", "pro").await;

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
    let app = spawn_app().await;
    let admin = app.admin().await;
    app.user(&admin, "alice", "free").await;

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
    let app = spawn_app().await;
    let admin = app.admin().await;
    app.user(&admin, "alice", "free").await;
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
    create_key(&app, &crossed, json!({"name": "x"}))
        .await
        .assert_error(403, 40301);
}

#[actix_web::test]
async fn membership_describes_the_session_or_the_visitor() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    let pro = app.user(&admin, "paula", "pro").await;
    let free = app.user(&admin, "fred", "free").await;

    let reply = membership_of(&app, &pro).await;
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

    let reply = membership_of(&app, &free).await;
    assert_eq!(reply.data()["identity"], "session");
    assert_eq!(reply.data()["user"]["username"], "fred");
    assert_eq!(reply.data()["tier"], "free");
    assert_eq!(reply.data()["delay_days"], 7);

    let root = membership_of(&app, &admin).await;
    assert_eq!(root.data()["user"]["role"], "super_admin");

    let visitor = app.membership().await;
    assert_eq!(visitor.code(), 0, "{}", visitor.body);
    assert_eq!(visitor.data()["identity"], "visitor");
    assert_eq!(visitor.data()["user"], Value::Null);
    assert_eq!(visitor.data()["tier"], "free");
}

// ---------------------------------------------------------------------------------------
// 3. Logout

#[actix_web::test]
async fn logout_needs_the_csrf_token_and_ends_the_session() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    let alice = app.user(&admin, "alice", "free").await;

    let without = app
        .call(
            Method::POST,
            "/api/v1/auth/logout",
            None,
            Some(&alice),
            false,
        )
        .await;
    without.assert_error(403, 40301);
    // The refused logout left the session alone.
    assert_eq!(list_keys(&app, &alice).await.code(), 0);

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

    list_keys(&app, &alice).await.assert_error(401, 40102);
    // The session is gone for membership too: a logged-out cookie is not a session.
    let membership = membership_of(&app, &alice).await;
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

// ---------------------------------------------------------------------------------------
// 4. Session expiry

#[actix_web::test]
async fn an_idle_session_expires_after_sixty_minutes() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    let alice = app.user(&admin, "alice", "free").await;

    app.clock.advance(Duration::minutes(59));
    assert_eq!(
        list_keys(&app, &alice).await.code(),
        0,
        "59 minutes idle is fine"
    );

    app.clock.advance(Duration::minutes(61));
    list_keys(&app, &alice).await.assert_error(401, 40103);
    // The other session (admin's) also idled 120 minutes in total.
    list_keys(&app, &admin).await.assert_error(401, 40103);
    // A fresh login works again.
    let again = app.login_ok("alice").await;
    assert_eq!(list_keys(&app, &again).await.code(), 0);
}

#[actix_web::test]
async fn an_active_session_still_ends_after_twelve_hours() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    let alice = app.user(&admin, "alice", "free").await;
    let start = app.clock.now();

    let mut elapsed = Duration::zero();
    loop {
        app.clock.advance(Duration::minutes(50));
        elapsed += Duration::minutes(50);
        let reply = list_keys(&app, &alice).await;
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

// ---------------------------------------------------------------------------------------
// 5. Login limit (D6)

#[actix_web::test]
async fn five_failures_for_a_user_name_block_it_until_the_next_calendar_minute() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    app.user(&admin, "alice", "free").await;
    // 04:00:00 at the start.
    assert_eq!(app.clock.now(), now());

    for attempt in 1..=5 {
        let (reply, _) = app.login("alice", "wrong password here").await;
        assert_eq!(
            (reply.status, reply.code()),
            (401, 40102),
            "attempt {attempt}: {}",
            reply.body
        );
    }
    let (blocked, session) = app.login("alice", PASSWORD).await;
    blocked.assert_error(429, 42901);
    assert!(session.is_none());
    // Other user names are not affected.
    app.login_ok("root").await;

    // Still the same calendar minute.
    app.clock.advance(Duration::seconds(59));
    let (still, _) = app.login("alice", PASSWORD).await;
    still.assert_error(429, 42901);

    // 04:01:00: a new minute.
    app.clock.advance(Duration::seconds(1));
    app.login_ok("alice").await;
}

#[actix_web::test]
async fn twenty_failures_from_one_address_block_it_until_the_next_calendar_minute() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    app.user(&admin, "alice", "free").await;

    for n in 1..=20 {
        let (reply, _) = app
            .login(&format!("nobody{n}"), "wrong password here")
            .await;
        assert_eq!(
            (reply.status, reply.code()),
            (401, 40102),
            "attempt {n}: {}",
            reply.body
        );
    }
    let (fresh_name, _) = app.login("nobody21", "wrong password here").await;
    fresh_name.assert_error(429, 42901);
    let (right, _) = app.login("alice", PASSWORD).await;
    right.assert_error(429, 42901);

    app.clock.advance(Duration::minutes(1));
    app.login_ok("alice").await;
}

// ---------------------------------------------------------------------------------------
// 6. The guard

#[actix_web::test]
async fn keys_need_a_valid_session() {
    let app = spawn_app().await;
    app.get("/api/v1/keys").await.assert_error(401, 40101);
    post(&app, "/api/v1/keys", json!({"name": "x"}))
        .await
        .assert_error(401, 40101);

    let garbage = Session {
        cookie: "iq_session=not-a-session-at-all".into(),
        csrf: "whatever".into(),
        user_id: "0".into(),
    };
    list_keys(&app, &garbage).await.assert_error(401, 40102);
    create_key(&app, &garbage, json!({"name": "x"}))
        .await
        .assert_error(401, 40102);
}

#[actix_web::test]
async fn mutations_need_the_sessions_csrf_token() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    let alice = app.user(&admin, "alice", "free").await;

    let without = app
        .call(
            Method::POST,
            "/api/v1/keys",
            Some(json!({"name": "x"})),
            Some(&alice),
            false,
        )
        .await;
    without.assert_error(403, 40301);
    assert!(
        without.message().contains("X-CSRF-Token"),
        "{}",
        without.body
    );

    let wrong = Session {
        csrf: "a-wrong-token".into(),
        ..alice.clone()
    };
    create_key(&app, &wrong, json!({"name": "x"}))
        .await
        .assert_error(403, 40301);
    let empty = Session {
        csrf: String::new(),
        ..alice.clone()
    };
    create_key(&app, &empty, json!({"name": "x"}))
        .await
        .assert_error(403, 40301);

    // None of those created a key.
    let listed = list_keys(&app, &alice).await;
    assert_eq!(listed.data(), &json!([]), "{}", listed.body);
}

/// Every super-administrator endpoint, each with a body that would otherwise succeed.
async fn admin_endpoints(app: &TestApp, admin: &Session) -> Vec<(Method, String, Option<Value>)> {
    let victim = app.user(admin, "victim", "free").await;
    let key = app.new_key(&victim, json!({"name": "victim's"})).await;
    vec![
        (
            Method::POST,
            "/api/v1/admin/users".into(),
            Some(json!({"username": "intruder", "password": PASSWORD, "role": "super_admin"})),
        ),
        (
            Method::PATCH,
            format!("/api/v1/admin/users/{}", victim.user_id),
            Some(json!({"tier": "pro"})),
        ),
        (Method::GET, "/api/v1/admin/tiers".into(), None),
        (
            Method::PUT,
            "/api/v1/admin/tiers/free".into(),
            Some(
                json!({"per_minute": 1, "per_day": 1, "max_rows": 1, "max_keys": 0,
                        "delay_days": 0, "member_indexes": true}),
            ),
        ),
        (
            Method::PATCH,
            format!("/api/v1/admin/keys/{}", key.id),
            Some(json!({"active": false})),
        ),
        (
            Method::PATCH,
            "/api/v1/admin/indexes/GPU_Index".into(),
            Some(json!({"sort_no": 1})),
        ),
    ]
}

async fn assert_refused_everywhere(
    app: &TestApp,
    session: &Session,
    endpoints: &[(Method, String, Option<Value>)],
) {
    for (method, path, body) in endpoints {
        let csrf = *method != Method::GET;
        let reply = app
            .call(method.clone(), path, body.clone(), Some(session), csrf)
            .await;
        assert_eq!(
            (reply.status, reply.code()),
            (403, 40301),
            "{method} {path}: {}",
            reply.body
        );
        assert!(reply.body["data"].is_null());
    }
}

#[actix_web::test]
async fn a_plain_user_is_refused_on_every_admin_endpoint() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    let endpoints = admin_endpoints(&app, &admin).await;
    let alice = app.user(&admin, "alice", "pro").await;
    assert_refused_everywhere(&app, &alice, &endpoints).await;

    // Without any session they are 40101.
    for (method, path, body) in &endpoints {
        let reply = app
            .call(method.clone(), path, body.clone(), None, false)
            .await;
        assert_eq!(
            (reply.status, reply.code()),
            (401, 40101),
            "{method} {path}: {}",
            reply.body
        );
    }

    // Nothing changed.
    let (intruder, _) = app.login("intruder", PASSWORD).await;
    intruder.assert_error(401, 40102);
    let tiers = app.get_as(&admin, "/api/v1/admin/tiers").await;
    let free = tiers
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tier"] == "free")
        .unwrap()
        .clone();
    assert_eq!(free["per_minute"], 10);
    let victim = app.login_ok("victim").await;
    assert_eq!(membership_of(&app, &victim).await.data()["tier"], "free");
    let keys = list_keys(&app, &victim).await;
    assert_eq!(keys.data()[0]["state"], "active", "{}", keys.body);
    assert_eq!(visitor_index_codes(&app).await[0], "Server_Index");
}

#[actix_web::test]
async fn an_admin_is_refused_on_the_super_admin_endpoints() {
    let app = spawn_app().await;
    let root = app.admin().await;
    let endpoints = admin_endpoints(&app, &root).await;
    let admin = user_with_role(&app, &root, "operator", "admin").await;
    assert_refused_everywhere(&app, &admin, &endpoints).await;
    // A super_admin created through the back office is allowed.
    let second_root = user_with_role(&app, &root, "root2", "super_admin").await;
    let tiers = app.get_as(&second_root, "/api/v1/admin/tiers").await;
    assert_eq!(tiers.code(), 0, "{}", tiers.body);
}

// ---------------------------------------------------------------------------------------
// 7. Users

#[actix_web::test]
async fn creating_users_validates_the_body() {
    let app = spawn_app().await;
    let admin = app.admin().await;

    let created = create_user(
        &app,
        &admin,
        json!({"username": "bob", "password": PASSWORD}),
    )
    .await;
    assert_eq!(created.code(), 0, "{}", created.body);
    let data = created.data();
    assert!(data["id"].is_string(), "{data}");
    assert_eq!(data["username"], "bob");
    assert_eq!(data["role"], "user", "role defaults to user");
    assert_eq!(data["tier"], "free", "tier defaults to free");
    assert!(data.get("password").is_none() && data.get("password_hash").is_none());

    let duplicate = create_user(
        &app,
        &admin,
        json!({"username": "bob", "password": PASSWORD, "tier": "pro"}),
    )
    .await;
    duplicate.assert_error(409, 40901);

    let role = create_user(
        &app,
        &admin,
        json!({"username": "carol", "password": PASSWORD, "role": "owner"}),
    )
    .await;
    role.assert_error(400, 40001);
    assert!(role.message().contains("role"), "{}", role.body);

    let tier = create_user(
        &app,
        &admin,
        json!({"username": "carol", "password": PASSWORD, "tier": "gold"}),
    )
    .await;
    tier.assert_error(400, 40001);
    assert!(tier.message().contains("tier"), "{}", tier.body);

    let unknown = create_user(
        &app,
        &admin,
        json!({"username": "carol", "password": PASSWORD, "email": "c@example.com"}),
    )
    .await;
    unknown.assert_error(400, 40001);
    assert!(unknown.message().contains("email"), "{}", unknown.body);

    let short = create_user(
        &app,
        &admin,
        json!({"username": "carol", "password": "short"}),
    )
    .await;
    short.assert_error(400, 40001);
    assert!(short.message().contains("password"), "{}", short.body);

    // None of the refused bodies created carol.
    let (carol, _) = app.login("carol", PASSWORD).await;
    carol.assert_error(401, 40102);
}

#[actix_web::test]
async fn patching_an_unknown_user_is_404() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    for id in ["999999", "not-an-id"] {
        app.send_as(
            &admin,
            Method::PATCH,
            &format!("/api/v1/admin/users/{id}"),
            json!({"active": false}),
        )
        .await
        .assert_error(404, 40401);
    }
    let bob = app.user(&admin, "bob", "free").await;
    let bad = app
        .send_as(
            &admin,
            Method::PATCH,
            &format!("/api/v1/admin/users/{}", bob.user_id),
            json!({"tier": "gold"}),
        )
        .await;
    bad.assert_error(400, 40001);
    assert!(bad.message().contains("tier"), "{}", bad.body);
}

#[actix_web::test]
async fn a_disabled_user_can_neither_log_in_nor_use_an_open_session() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob", "free").await;
    assert_eq!(list_keys(&app, &bob).await.code(), 0);

    let patched = app
        .send_as(
            &admin,
            Method::PATCH,
            &format!("/api/v1/admin/users/{}", bob.user_id),
            json!({"active": false}),
        )
        .await;
    assert_eq!(patched.code(), 0, "{}", patched.body);
    assert_eq!(patched.data()["active"], false);
    assert_eq!(patched.data()["username"], "bob");

    let (login, session) = app.login("bob", PASSWORD).await;
    login.assert_error(403, 40301);
    assert!(session.is_none());
    list_keys(&app, &bob).await.assert_error(403, 40301);

    // Re-enabled, the account works again.
    let enabled = app
        .send_as(
            &admin,
            Method::PATCH,
            &format!("/api/v1/admin/users/{}", bob.user_id),
            json!({"active": true}),
        )
        .await;
    assert_eq!(enabled.code(), 0, "{}", enabled.body);
    app.login_ok("bob").await;
}

// ---------------------------------------------------------------------------------------
// 8. Keys

#[actix_web::test]
async fn a_new_key_is_shown_once_and_never_listed() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    let carol = app.user(&admin, "carol", "free").await;

    let created = create_key(&app, &carol, json!({"name": "laptop"})).await;
    assert_eq!(
        (created.status, created.code()),
        (200, 0),
        "{}",
        created.body
    );
    let data = created.data();
    let key = data["key"].as_str().expect("key").to_string();
    assert!(iq_actors::accounts::api_key::is_well_formed(&key), "{key}");
    let id = data["id"].as_str().expect("id").to_string();
    assert!(!id.is_empty());
    assert_eq!(data["name"], "laptop");
    let hint = data["key_hint"].as_str().expect("key_hint");
    assert!(!hint.is_empty() && hint.len() < key.len(), "{hint}");
    assert_eq!(data["state"], "active");
    assert_eq!(sorted_scopes(data), ALL_SCOPES);
    assert_eq!(data["index_codes"], Value::Null);

    let listed = list_keys(&app, &carol).await;
    assert_eq!(listed.code(), 0, "{}", listed.body);
    let items = listed.data().as_array().expect("a list");
    assert_eq!(items.len(), 1, "{}", listed.body);
    let item = &items[0];
    assert!(item.get("key").is_none(), "{item}");
    assert_eq!(item["id"], id.as_str());
    assert_eq!(item["name"], "laptop");
    assert_eq!(item["key_hint"], hint);
    assert_eq!(item["state"], "active");
    assert_eq!(sorted_scopes(item), ALL_SCOPES);
    let mut all = Vec::new();
    strings(&listed.body, &mut all);
    assert!(
        !all.iter().any(|s| s.contains(&key)),
        "the listing reveals the key: {}",
        listed.body
    );

    // The key works as a key.
    let reply = app
        .query_with(json!({"api_name": "trade_calendar"}), Some(&key))
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
}

#[actix_web::test]
async fn a_free_user_holds_one_key_until_it_is_deleted() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    let carol = app.user(&admin, "carol", "free").await;
    let first = app.new_key(&carol, json!({"name": "one"})).await;

    let second = create_key(&app, &carol, json!({"name": "two"})).await;
    second.assert_error(409, 40901);

    let deleted = delete_key(&app, &carol, &first.id).await;
    assert_eq!(deleted.code(), 0, "{}", deleted.body);
    assert_eq!(list_keys(&app, &carol).await.data(), &json!([]));
    // The deleted key is refused.
    app.query_with(json!({"api_name": "trade_calendar"}), Some(&first.key))
        .await
        .assert_error(401, 40102);

    let third = app.new_key(&carol, json!({"name": "three"})).await;
    assert_ne!(third.key, first.key);
    let listed = list_keys(&app, &carol).await;
    assert_eq!(listed.data().as_array().unwrap().len(), 1);
    assert_eq!(listed.data()[0]["id"], third.id.as_str());
}

#[actix_web::test]
async fn only_the_owner_deletes_a_key_and_only_once() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    let carol = app.user(&admin, "carol", "free").await;
    let dave = app.user(&admin, "dave", "pro").await;
    let carols = app.new_key(&carol, json!({"name": "carol's"})).await;
    let daves = app.new_key(&dave, json!({"name": "dave's"})).await;

    delete_key(&app, &carol, &daves.id)
        .await
        .assert_error(404, 40401);
    // Dave's key is untouched.
    let listed = list_keys(&app, &dave).await;
    assert_eq!(listed.data()[0]["id"], daves.id.as_str(), "{}", listed.body);
    let reply = app
        .query_with(json!({"api_name": "trade_calendar"}), Some(&daves.key))
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);

    let once = delete_key(&app, &carol, &carols.id).await;
    assert_eq!(once.code(), 0, "{}", once.body);
    delete_key(&app, &carol, &carols.id)
        .await
        .assert_error(404, 40401);
    delete_key(&app, &carol, "key_doesnotexist00")
        .await
        .assert_error(404, 40401);
    // Deleting needs the CSRF token.
    app.call(
        Method::DELETE,
        &format!("/api/v1/keys/{}", daves.id),
        None,
        Some(&dave),
        false,
    )
    .await
    .assert_error(403, 40301);
}

#[actix_web::test]
async fn key_creation_validates_the_body() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    let dave = app.user(&admin, "dave", "pro").await;

    let unknown_index = create_key(
        &app,
        &dave,
        json!({"name": "x", "index_codes": ["GPU_Index", "Nope_Index"]}),
    )
    .await;
    unknown_index.assert_error(400, 40001);
    assert!(
        unknown_index.message().contains("index_codes"),
        "{}",
        unknown_index.body
    );

    for entry in ["10.0.0.300", "not an address", "10.0.0.0/33"] {
        let bad_ip = create_key(&app, &dave, json!({"name": "x", "ip_allowlist": [entry]})).await;
        bad_ip.assert_error(400, 40001);
        assert!(bad_ip.message().contains("ip_allowlist"), "{}", bad_ip.body);
    }

    let past = create_key(
        &app,
        &dave,
        json!({"name": "x", "expires_at": "2026-11-19T00:00:00Z"}),
    )
    .await;
    past.assert_error(400, 40001);
    assert!(past.message().contains("expires_at"), "{}", past.body);

    let unknown_field = create_key(&app, &dave, json!({"name": "x", "colour": "red"})).await;
    unknown_field.assert_error(400, 40001);
    assert!(
        unknown_field.message().contains("colour"),
        "{}",
        unknown_field.body
    );

    let no_name = create_key(&app, &dave, json!({})).await;
    no_name.assert_error(400, 40001);
    assert!(no_name.message().contains("name"), "{}", no_name.body);

    // None of those created a key.
    assert_eq!(list_keys(&app, &dave).await.data(), &json!([]));

    // Valid values are kept.
    let future = Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap();
    let ok = create_key(
        &app,
        &dave,
        json!({"name": "ranged", "index_codes": ["GPU_Index"], "expires_at": future}),
    )
    .await;
    assert_eq!(ok.code(), 0, "{}", ok.body);
    assert_eq!(ok.data()["index_codes"], json!(["GPU_Index"]));
    assert_eq!(ok.data()["state"], "active");
}

#[actix_web::test]
async fn ip_allowlists_are_for_pro_members() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    let carol = app.user(&admin, "carol", "free").await;
    let dave = app.user(&admin, "dave", "pro").await;

    let free = create_key(
        &app,
        &carol,
        json!({"name": "x", "ip_allowlist": ["203.0.113.7"]}),
    )
    .await;
    free.assert_error(403, 40301);
    assert_eq!(list_keys(&app, &carol).await.data(), &json!([]));

    let pro = create_key(
        &app,
        &dave,
        json!({"name": "x", "ip_allowlist": ["203.0.113.7", "10.0.0.0/8"]}),
    )
    .await;
    assert_eq!(pro.code(), 0, "{}", pro.body);
    let mut listed: Vec<String> = pro.data()["ip_allowlist"]
        .as_array()
        .expect("ip_allowlist")
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    listed.sort();
    assert_eq!(listed, ["10.0.0.0/8", "203.0.113.7/32"]);
}

#[actix_web::test]
async fn a_pro_user_can_create_several_keys() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    let dave = app.user(&admin, "dave", "pro").await;
    let mut keys = Vec::new();
    for n in 0..4 {
        keys.push(
            app.new_key(&dave, json!({"name": format!("key {n}")}))
                .await,
        );
    }
    let listed = list_keys(&app, &dave).await;
    let ids: Vec<&str> = listed
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["id"].as_str().unwrap())
        .collect();
    let mut created: Vec<&str> = keys.iter().map(|k| k.id.as_str()).collect();
    let mut ids = ids;
    ids.sort();
    created.sort();
    assert_eq!(ids, created);
    let distinct: std::collections::BTreeSet<&str> = keys.iter().map(|k| k.key.as_str()).collect();
    assert_eq!(distinct.len(), 4);
}

// ---------------------------------------------------------------------------------------
// 9. Tiers

#[actix_web::test]
async fn tiers_list_the_seeded_defaults() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    let reply = app.get_as(&admin, "/api/v1/admin/tiers").await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    let tiers = reply.data().as_array().expect("a list");
    let find = |name: &str| {
        tiers
            .iter()
            .find(|t| t["tier"] == name)
            .unwrap_or_else(|| panic!("no tier {name}: {}", reply.body))
            .clone()
    };
    let mut free = free_defaults();
    free["tier"] = json!("free");
    assert_eq!(find("free"), free);
    assert_eq!(
        find("pro"),
        json!({"tier": "pro", "per_minute": 10000, "per_day": 10000, "max_rows": 5000,
               "max_keys": null, "delay_days": 0, "member_indexes": true})
    );
    assert_eq!(tiers.len(), 2);
}

#[actix_web::test]
async fn raising_max_keys_lets_a_free_user_hold_two_keys() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    let carol = app.user(&admin, "carol", "free").await;
    app.new_key(&carol, json!({"name": "one"})).await;
    create_key(&app, &carol, json!({"name": "two"}))
        .await
        .assert_error(409, 40901);

    let mut body = free_defaults();
    body["max_keys"] = json!(2);
    let put = put_tier(&app, &admin, "free", body).await;
    assert_eq!(put.code(), 0, "{}", put.body);
    assert_eq!(put.data()["max_keys"], 2);

    app.new_key(&carol, json!({"name": "two"})).await;
    create_key(&app, &carol, json!({"name": "three"}))
        .await
        .assert_error(409, 40901);
    assert_eq!(
        list_keys(&app, &carol)
            .await
            .data()
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        membership_of(&app, &carol).await.data()["quota"]["max_keys"],
        2
    );
}

#[actix_web::test]
async fn a_tier_delay_change_shows_in_membership_at_once() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    let carol = app.user(&admin, "carol", "free").await;
    assert_eq!(membership_of(&app, &carol).await.data()["delay_days"], 7);
    assert_eq!(app.membership().await.data()["delay_days"], 7);

    let mut body = free_defaults();
    body["delay_days"] = json!(0);
    let put = put_tier(&app, &admin, "free", body).await;
    assert_eq!(put.code(), 0, "{}", put.body);

    let reply = membership_of(&app, &carol).await;
    assert_eq!(reply.data()["delay_days"], 0, "{}", reply.body);
    assert_eq!(app.membership().await.data()["delay_days"], 0);
}

#[actix_web::test]
async fn tier_changes_are_validated() {
    let app = spawn_app().await;
    let admin = app.admin().await;

    put_tier(&app, &admin, "gold", free_defaults())
        .await
        .assert_error(404, 40401);

    let mut zero_rows = free_defaults();
    zero_rows["max_rows"] = json!(0);
    let reply = put_tier(&app, &admin, "free", zero_rows).await;
    reply.assert_error(400, 40001);
    assert!(reply.message().contains("max_rows"), "{}", reply.body);

    let mut negative = free_defaults();
    negative["per_day"] = json!(-1);
    put_tier(&app, &admin, "free", negative)
        .await
        .assert_error(400, 40001);

    let mut extra = free_defaults();
    extra["colour"] = json!("red");
    let reply = put_tier(&app, &admin, "free", extra).await;
    reply.assert_error(400, 40001);
    assert!(reply.message().contains("colour"), "{}", reply.body);

    for field in [
        "per_minute",
        "per_day",
        "max_rows",
        "delay_days",
        "member_indexes",
    ] {
        let mut missing = free_defaults();
        missing.as_object_mut().unwrap().remove(field);
        let reply = put_tier(&app, &admin, "free", missing).await;
        assert_eq!(
            (reply.status, reply.code()),
            (400, 40001),
            "without {field}: {}",
            reply.body
        );
        assert!(reply.message().contains(field), "{}", reply.body);
    }

    // Nothing changed.
    let tiers = app.get_as(&admin, "/api/v1/admin/tiers").await;
    let mut free = free_defaults();
    free["tier"] = json!("free");
    assert!(
        tiers.data().as_array().unwrap().contains(&free),
        "{}",
        tiers.body
    );
}

#[actix_web::test]
async fn a_tier_put_without_max_keys_is_refused() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    let mut missing = free_defaults();
    missing.as_object_mut().unwrap().remove("max_keys");
    let reply = put_tier(&app, &admin, "free", missing).await;
    reply.assert_error(400, 40001);
    assert!(reply.message().contains("max_keys"), "{}", reply.body);
    // The free tier still allows one key.
    let tiers = app.get_as(&admin, "/api/v1/admin/tiers").await;
    let free = tiers
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tier"] == "free")
        .unwrap()
        .clone();
    assert_eq!(free["max_keys"], 1, "{}", tiers.body);
}

// ---------------------------------------------------------------------------------------
// 10. Index settings

#[actix_web::test]
async fn a_new_sort_no_reorders_index_basic_at_once() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    assert_eq!(visitor_index_codes(&app).await[0], "Server_Index");

    let patched = patch_index(&app, &admin, "GPU_Index", json!({"sort_no": 1})).await;
    assert_eq!(patched.code(), 0, "{}", patched.body);
    assert_eq!(patched.data()["sort_no"], 1);
    assert_eq!(patched.data()["index_code"], "GPU_Index");

    let reply = app.query(json!({"api_name": "index_basic"})).await;
    let codes = reply.column("index_code");
    assert_eq!(codes[0], "GPU_Index", "{}", reply.body);
    assert_eq!(reply.column("sort_no")[0], 1);
    assert_eq!(codes.len(), 7);
    let membership = app.membership().await;
    assert_eq!(
        membership.data()["indexes"][0],
        "GPU_Index",
        "{}",
        membership.body
    );
}

#[actix_web::test]
async fn a_private_index_disappears_from_index_basic_at_once() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;
    assert!(visitor_index_codes(&app)
        .await
        .contains(&json!("GPU_Index")));

    let patched = patch_index(&app, &admin, "GPU_Index", json!({"visibility": "private"})).await;
    assert_eq!(patched.code(), 0, "{}", patched.body);
    assert_eq!(patched.data()["visibility"], "private");

    let codes = visitor_index_codes(&app).await;
    assert!(!codes.contains(&json!("GPU_Index")), "{codes:?}");
    assert_eq!(codes.len(), 6);
    // Not for a session either, not even the super administrator's.
    let reply = app
        .call(
            Method::POST,
            "/api/v1/query",
            Some(json!({"api_name": "index_basic"})),
            Some(&admin),
            false,
        )
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    assert!(!reply.column("index_code").contains(&json!("GPU_Index")));
}

#[actix_web::test]
async fn index_settings_are_validated() {
    let app = spawn_with_fixture().await;
    let admin = app.admin().await;

    let bad = patch_index(&app, &admin, "GPU_Index", json!({"visibility": "secret"})).await;
    bad.assert_error(400, 40001);
    assert!(bad.message().contains("visibility"), "{}", bad.body);

    let unknown_field = patch_index(&app, &admin, "GPU_Index", json!({"colour": "red"})).await;
    unknown_field.assert_error(400, 40001);
    assert!(
        unknown_field.message().contains("colour"),
        "{}",
        unknown_field.body
    );

    patch_index(&app, &admin, "Nope_Index", json!({"sort_no": 1}))
        .await
        .assert_error(404, 40401);

    // GPU_Index is unchanged.
    let reply = app
        .query(json!({"api_name": "index_basic", "params": {"index_code": "GPU_Index"}}))
        .await;
    assert_eq!(
        reply.column("visibility"),
        [json!("index_only")],
        "{}",
        reply.body
    );
}

// ---------------------------------------------------------------------------------------

/// D6: at most 5 failed logins per user name per minute, even when they arrive at once
/// (the limit is the defence against password guessing; parallel guesses must not beat it).
#[actix_web::test]
async fn concurrent_failures_do_not_exceed_the_per_user_limit() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    app.user(&admin, "alice", "free").await;
    let attempts = (0..20).map(|_| app.login("alice", "wrong password here"));
    let replies = futures_util::future::join_all(attempts).await;
    let codes: Vec<i64> = replies.iter().map(|(r, _)| r.code()).collect();
    let failures = codes.iter().filter(|c| **c == 40102).count();
    assert!(failures <= 5, "{failures} failures were checked: {codes:?}");
    // Every other attempt was turned away by the limit, not by some other failure.
    assert!(
        codes.iter().all(|c| *c == 40102 || *c == 42901),
        "{codes:?}"
    );
}

/// PostgreSQL text cannot hold NUL: such input is the client's mistake, never a 500.
#[actix_web::test]
async fn nul_characters_are_refused_as_bad_input() {
    let app = spawn_app().await;
    let admin = app.admin().await;
    let login = post(
        &app,
        "/api/v1/auth/login",
        json!({"username": "ro\u{0}ot", "password": PASSWORD}),
    )
    .await;
    login.assert_error(400, 40001);
    assert!(login.message().contains("username"), "{}", login.body);
    let key = app
        .send_as(
            &admin,
            Method::POST,
            "/api/v1/keys",
            json!({"name": "a\u{0}b"}),
        )
        .await;
    key.assert_error(400, 40001);
    let delete = app
        .send_as(&admin, Method::DELETE, "/api/v1/keys/key_a%00b", json!({}))
        .await;
    delete.assert_error(404, 40401);
    let tier = app
        .send_as(
            &admin,
            Method::PUT,
            "/api/v1/admin/tiers/fr%00ee",
            free_defaults(),
        )
        .await;
    tier.assert_error(404, 40401);
}
