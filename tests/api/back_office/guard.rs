//! The guard: session, CSRF token and role on every back-office endpoint.

use super::*;

#[actix_web::test]
async fn keys_need_a_valid_session() {
    let app = spawn_app().await;
    app.get("/api/v1/keys").await.assert_error(401, 40101);
    app.post_json("/api/v1/keys", json!({"name": "x"}))
        .await
        .assert_error(401, 40101);

    let garbage = Session {
        cookie: "iq_session=not-a-session-at-all".into(),
        csrf: "whatever".into(),
        user_id: "0".into(),
    };
    app.list_keys(&garbage).await.assert_error(401, 40102);
    app.create_key(&garbage, json!({"name": "x"}))
        .await
        .assert_error(401, 40102);
}

#[actix_web::test]
async fn mutations_need_the_sessions_csrf_token() {
    let (app, alice) = spawn_app().await.with_member("alice", "free").await;

    let without = app
        .send_without_csrf(
            &alice,
            Method::POST,
            "/api/v1/keys",
            Some(json!({"name": "x"})),
        )
        .await;
    without.assert_error_mentioning(403, 40301, "X-CSRF-Token");

    let wrong = Session {
        csrf: "a-wrong-token".into(),
        ..alice.clone()
    };
    app.create_key(&wrong, json!({"name": "x"}))
        .await
        .assert_error(403, 40301);
    let empty = Session {
        csrf: String::new(),
        ..alice.clone()
    };
    app.create_key(&empty, json!({"name": "x"}))
        .await
        .assert_error(403, 40301);

    // None of those created a key.
    let listed = app.list_keys(&alice).await;
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
        reply.assert_status_code(403, 40301, format_args!("{method} {path}"));
        assert!(reply.body["data"].is_null());
    }
}

#[actix_web::test]
async fn a_plain_user_is_refused_on_every_admin_endpoint() {
    let (app, admin) = spawn_app().await.with_admin().await;
    let endpoints = admin_endpoints(&app, &admin).await;
    let alice = app.user(&admin, "alice", "pro").await;
    assert_refused_everywhere(&app, &alice, &endpoints).await;

    // Without any session they are 40101.
    for (method, path, body) in &endpoints {
        let reply = app
            .call(method.clone(), path, body.clone(), None, false)
            .await;
        reply.assert_status_code(401, 40101, format_args!("{method} {path}"));
    }

    // Nothing changed.
    let (intruder, _) = app.login("intruder", PASSWORD).await;
    intruder.assert_error(401, 40102);
    assert_eq!(app.tier(&admin, "free").await["per_minute"], 10);
    let victim = app.login_ok("victim").await;
    assert_eq!(app.membership_as(&victim).await.data()["tier"], "free");
    let keys = app.list_keys(&victim).await;
    assert_eq!(keys.data()[0]["state"], "active", "{}", keys.body);
    assert_eq!(visitor_index_codes(&app).await[0], "Server_Index");
}

#[actix_web::test]
async fn an_admin_is_refused_on_the_super_admin_endpoints() {
    let (app, root) = spawn_app().await.with_admin().await;
    let endpoints = admin_endpoints(&app, &root).await;
    let admin = app.user_with_role(&root, "operator", "admin").await;
    assert_refused_everywhere(&app, &admin, &endpoints).await;
    // A super_admin created through the back office is allowed.
    let second_root = app.user_with_role(&root, "root2", "super_admin").await;
    let tiers = app.get_as(&second_root, "/api/v1/admin/tiers").await;
    assert_eq!(tiers.code(), 0, "{}", tiers.body);
}
