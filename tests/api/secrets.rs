//! Keys, passwords and session ids never appear in logs.
//!
//! The real binary runs as a subprocess, so its real log set-up (`src/telemetry/`:
//! JSON lines on stderr, filtered by `RUST_LOG`) is what gets captured, at the most
//! verbose level. The test walks every path that handles a secret — set-up, logins
//! right and wrong, user and key creation, queries with good, malformed, mistyped and
//! deleted keys, session reads and mutations with good and bad CSRF tokens, logout —
//! then searches everything the process wrote for each secret.

use reqwest::Method;
use serde_json::json;

use crate::child::{database_name, drop_database, Service, KEY_SECRET};
use crate::helpers::{create_database, Reply, Session, TestApp, PASSWORD};

const WRONG_PASSWORD: &str = "Wr0ng-Guess-Passw0rd-JKL";
const SHORT_PASSWORD: &str = "Sh0rt-LeakZ";
const MALFORMED_KEY: &str = "iq_NotARealKeyButLooksSecret123";
const BOGUS_SESSION: &str = "BogusSessionIdLooksSecret42";
const BOGUS_CSRF: &str = "BogusCsrfTokenLooksSecret77";

/// The valid key with one character of its random body changed.
fn mistyped(key: &str) -> String {
    let mut chars: Vec<char> = key.chars().collect();
    let i = 10;
    chars[i] = if chars[i] == 'A' { 'B' } else { 'A' };
    chars.into_iter().collect()
}

/// The part of a long log line around `needle`.
fn around<'a>(line: &'a str, needle: &str) -> &'a str {
    const MARGIN: usize = 200;
    let at = line.find(needle).unwrap_or(0);
    let mut start = at.saturating_sub(MARGIN);
    while !line.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + needle.len() + MARGIN).min(line.len());
    while !line.is_char_boundary(end) {
        end += 1;
    }
    &line[start..end]
}

/// Records the `request_id` of each reply, to find them in the logs later.
fn track(ids: &mut Vec<String>, reply: Reply) -> Reply {
    let id = reply.body["request_id"].as_str().expect("request_id");
    assert_eq!(reply.request_id_header.as_deref(), Some(id));
    ids.push(id.to_string());
    reply
}

/// The value of a session's cookie (`iq_session=<value>`).
fn cookie_value(session: &Session) -> String {
    session.cookie["iq_session=".len()..].to_string()
}

#[actix_web::test]
async fn keys_passwords_session_ids_and_csrf_tokens_never_reach_the_logs() {
    let database_url = create_database().await;
    let database_name = database_name(&database_url);
    let mut service = Service::start(&database_url, &[]).await;
    let app = TestApp::attach(&service.base, &database_url).await;
    let mut ids = Vec::new();
    let query = json!({"api_name": "index_basic"});

    // Set-up, logins wrong and right, a user, a refused password.
    let root = app.admin().await;
    for username in ["root", "nobody"] {
        let (reply, _) = app.login(username, WRONG_PASSWORD).await;
        track(&mut ids, reply).assert_error(401, 40102);
    }
    let alice = app.user(&root, "alice", "pro").await;
    let bob = json!({"username": "bob", "password": SHORT_PASSWORD});
    let reply = app
        .send_as(&root, Method::POST, "/api/v1/admin/users", bob)
        .await;
    track(&mut ids, reply).assert_error(400, 40001);

    // A key, and a mutation with the right session but a wrong CSRF token.
    let key = app.new_key(&alice, json!({"name": "k"})).await;
    let forged = Session {
        csrf: BOGUS_CSRF.to_string(),
        ..alice.clone()
    };
    let reply = app
        .send_as(&forged, Method::POST, "/api/v1/keys", json!({"name": "k2"}))
        .await;
    track(&mut ids, reply).assert_error(403, 40301);

    // Queries: the valid key, a malformed one, the valid one mistyped, the session.
    let reply = app.query_with(query.clone(), Some(&key.key)).await;
    assert_eq!(track(&mut ids, reply).code(), 0);
    let mistyped_key = mistyped(&key.key);
    assert_ne!(mistyped_key, key.key);
    for bad in [MALFORMED_KEY, &mistyped_key] {
        let reply = app.query_with(query.clone(), Some(bad)).await;
        track(&mut ids, reply).assert_error(401, 40102);
    }
    let reply = app
        .send_without_csrf(&alice, Method::POST, "/api/v1/query", Some(query.clone()))
        .await;
    assert_eq!(track(&mut ids, reply).code(), 0);

    // Reads with the session, and with a session id that does not exist.
    let reply = app.get_as(&alice, "/api/v1/keys").await;
    assert_eq!(track(&mut ids, reply).code(), 0);
    let bogus = Session {
        cookie: format!("iq_session={BOGUS_SESSION}"),
        ..alice.clone()
    };
    let reply = app.get_as(&bogus, "/api/v1/keys").await;
    track(&mut ids, reply).assert_error(401, 40102);

    // The key deleted, then presented again (a database look-up that finds it deleted).
    let path = format!("/api/v1/keys/{}", key.id);
    let reply = app.send_as(&alice, Method::DELETE, &path, json!({})).await;
    assert_eq!(track(&mut ids, reply).code(), 0);
    let reply = app.query_with(query.clone(), Some(&key.key)).await;
    track(&mut ids, reply).assert_error(401, 40102);

    // Logout, then the closed session presented again.
    for session in [&alice, &root] {
        let reply = app
            .send_as(session, Method::POST, "/api/v1/auth/logout", json!({}))
            .await;
        assert_eq!(track(&mut ids, reply).code(), 0);
    }
    let reply = app.get_as(&alice, "/api/v1/keys").await;
    track(&mut ids, reply).assert_error(401, 40102);

    let output = service.stop();
    drop_database(&database_name).await;
    let logs = output.logs();
    assert!(
        !output.stderr.trim().is_empty(),
        "the service logged nothing (exit: {})",
        output.status
    );
    for id in &ids {
        assert!(
            logs.contains(id.as_str()),
            "no log line carries request_id {id}"
        );
    }

    let secrets = [
        ("the accounts' password", PASSWORD.to_string()),
        ("the wrong password", WRONG_PASSWORD.to_string()),
        ("the refused short password", SHORT_PASSWORD.to_string()),
        ("root's session id", cookie_value(&root)),
        ("alice's session id", cookie_value(&alice)),
        ("the unknown session id", BOGUS_SESSION.to_string()),
        ("root's CSRF token", root.csrf.clone()),
        ("alice's CSRF token", alice.csrf.clone()),
        ("the wrong CSRF token", BOGUS_CSRF.to_string()),
        ("the API key", key.key.clone()),
        (
            "the API key without its prefix",
            key.key["iq_".len()..].to_string(),
        ),
        ("the malformed key", MALFORMED_KEY.to_string()),
        ("the mistyped key", mistyped_key.clone()),
        ("KEY_SECRET", KEY_SECRET.to_string()),
        // Stored forms are secrets too: a password hash can be attacked offline.
        ("a password hash", "$argon2id$".to_string()),
    ];
    let leaks: Vec<String> = secrets
        .iter()
        .filter_map(|(what, secret)| {
            let lines: Vec<&str> = logs
                .lines()
                .filter(|line| line.contains(secret.as_str()))
                .take(3)
                .map(|line| around(line, secret))
                .collect();
            (!lines.is_empty())
                .then(|| format!("{what} ({secret}) appears in:\n{}", lines.join("\n")))
        })
        .collect();
    assert!(
        leaks.is_empty(),
        "secrets in the logs:\n{}",
        leaks.join("\n\n")
    );
}
