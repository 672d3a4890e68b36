//! Hostile requests: a key anywhere but the headers (D12), duplicate JSON names (D13),
//! fields asked in any order, secrets that must never be stored or cached (D16), and an
//! allow-list entry that is not an address range.

use reqwest::Method;
use serde_json::{json, Value};

use super::still_serving;
use crate::helpers::{select_column, spawn_with_demo, TestApp, PASSWORD};

#[actix_web::test]
async fn keys_are_taken_from_the_headers_d12_and_nowhere_else() {
    let app = spawn_with_demo().await;
    let key = app.member_key("kim", "pro").await;
    let url = format!("{}/api/v1/query", app.address);
    let body = json!({"api_name": "index_latest"});
    let send = |headers: Vec<(&'static str, String)>, url: String| {
        let mut request = app.http.post(url).json(&body);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        async move { TestApp::reply(request.send().await.unwrap()).await }
    };

    // Bearer is the same key, with the same answer and the quota headers.
    let bearer = send(
        vec![("Authorization", format!("bearer {}", key.key))],
        url.clone(),
    )
    .await;
    assert_eq!(bearer.code(), 0, "{}", bearer.body);
    assert!(bearer.header("x-ratelimit-limit").is_some());
    let same_twice = send(
        vec![
            ("X-API-Key", key.key.clone()),
            ("Authorization", format!("Bearer {}", key.key)),
        ],
        url.clone(),
    )
    .await;
    assert_eq!(same_twice.code(), 0, "{}", same_twice.body);

    // Ambiguity is refused before any key check: 401 / 40102.
    for headers in [
        vec![
            ("X-API-Key", key.key.clone()),
            ("Authorization", "Bearer iq_other".to_string()),
        ],
        vec![
            ("X-API-Key", key.key.clone()),
            ("X-API-Key", key.key.clone()),
        ],
        vec![("Authorization", "Basic cm9vdDpwYXNz".to_string())],
        vec![("Authorization", "Token abc".to_string())],
    ] {
        send(headers, url.clone()).await.assert_error(401, 40102);
    }

    // A key in the URL: 400 / 40001 on any endpoint under /api, never echoed.
    for path in [
        "/api/v1/query?api_key=",
        "/api/v1/query?apiKey=iq_x",
        "/api/v1/query?token=iq_x",
        "/api/v1/query?key=iq_x",
    ] {
        let reply = send(vec![], format!("{}{path}{}", app.address, key.key)).await;
        reply.assert_error(400, 40001);
        assert!(!reply.body.to_string().contains(&key.key), "{}", reply.body);
    }
    app.get(&format!("/api/v1/config?apikey={}", key.key))
        .await
        .assert_error(400, 40001);
    still_serving(&app).await;
}

#[actix_web::test]
async fn duplicate_json_names_are_refused_by_path_d13() {
    let app = spawn_with_demo().await;
    let reply = app
        .query_raw(
            r#"{"api_name":"index_daily","params":{"index_code":"GPU_Index","index_code":"CPU_Index"}}"#,
            "application/json",
        )
        .await;
    reply.assert_error_mentioning(400, 40001, "params.index_code");
    let reply = app
        .query_raw(
            r#"{"api_name":"index_daily","limit":1,"limit":5000}"#,
            "application/json",
        )
        .await;
    reply.assert_error_mentioning(400, 40001, "'limit'");
    // Back-office bodies too.
    let login = app
        .request(Method::POST, "/api/v1/auth/login")
        .header("Content-Type", "application/json")
        .body(r#"{"username":"a","username":"b","password":"x"}"#)
        .send()
        .await
        .unwrap();
    TestApp::reply(login).await.assert_error(400, 40001);
    still_serving(&app).await;
}

#[actix_web::test]
async fn permuted_fields_answer_in_the_order_asked() {
    let app = spawn_with_demo().await;
    let fields = ["pct_change", "trade_date", "index_value", "index_code"];
    let mut reference: Option<Vec<Value>> = None;
    for rotation in 0..fields.len() {
        let mut asked = fields.to_vec();
        asked.rotate_left(rotation);
        let reply = app
            .query(json!({
                "api_name": "index_daily",
                "params": {"index_code": "GPU_Index"},
                "fields": asked,
                "limit": 5
            }))
            .await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        assert_eq!(reply.fields(), asked);
        let rows: Vec<Value> = (0..fields.len())
            .map(|i| Value::Array(reply.column(fields[i])))
            .collect();
        match &reference {
            None => reference = Some(rows),
            Some(expected) => assert_eq!(&rows, expected),
        }
    }
}

#[actix_web::test]
async fn secrets_are_not_stored_or_cached() {
    let (app, admin) = spawn_with_demo().await.with_admin().await;
    // A password typed into the user-name box is never stored as typed.
    let typed = "my secret passphrase 42";
    let (reply, _) = app.login(typed, "whatever").await;
    reply.assert_error(401, 40102);
    let subjects: Vec<String> = select_column(&app.db, "SELECT subject FROM login_failures").await;
    assert!(!subjects.is_empty());
    for subject in subjects {
        assert!(
            !subject.contains("secret") && !subject.contains("127.0.0.1"),
            "{subject}"
        );
    }
    // Answers carrying a secret are never stored by a cache (D16).
    let (login, _) = app.login("root", PASSWORD).await;
    assert_eq!(login.header("cache-control"), Some("no-store"));
    let created = app
        .send_as(&admin, Method::POST, "/api/v1/keys", json!({"name": "k"}))
        .await;
    assert_eq!(created.code(), 0, "{}", created.body);
    assert_eq!(created.header("cache-control"), Some("no-store"));
}

#[actix_web::test]
async fn an_allow_list_holds_only_ranges() {
    let (app, admin) = spawn_with_demo().await.with_admin().await;
    let key = app
        .new_key(
            &admin,
            json!({"name": "k", "ip_allowlist": ["203.0.113.7"]}),
        )
        .await;
    // The database itself refuses an entry that is not a range.
    let garbage = app
        .db
        .execute(
            "UPDATE api_keys SET ip_allowlist = '{not-an-address}' WHERE key_id = $1",
            &[&key.id],
        )
        .await;
    assert!(garbage.is_err());
    // The stored range still binds: this client (127.0.0.1) is outside it.
    app.query_with(json!({"api_name": "index_basic"}), Some(&key.key))
        .await
        .assert_error(403, 40301);
}
