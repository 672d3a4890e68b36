//! The service's real answers match the document: one tour through every operation, its
//! successes and its refusals, each answer checked by [`Tour`].

use std::collections::BTreeSet;

use iq_actors::catalogue::DATASETS;
use reqwest::Method;
use serde_json::{json, Value};

use super::conformance::Conformance;
use super::operations;
use super::tour::Tour;
use crate::helpers::{spawn_with_fixture, PASSWORD};

#[actix_web::test]
async fn real_answers_match_the_document() {
    let app = spawn_with_fixture().await;
    let doc: Value = serde_json::from_str(iq_service::routes::json()).unwrap();
    let mut tour = Tour {
        app: &app,
        conformance: Conformance { doc: &doc },
        problems: Vec::new(),
        seen: BTreeSet::new(),
        last: None,
    };
    let get = Method::GET;
    let post = Method::POST;
    let patch = Method::PATCH;
    let put = Method::PUT;

    for probe in [
        "/healthz",
        "/readyz",
        "/api/v1/config",
        "/api/v1/membership",
    ] {
        tour.call(get.clone(), probe, probe, None, None).await;
    }
    let root = json!({"username": "root", "password": PASSWORD});
    let setup = tour
        .call(
            post.clone(),
            "/api/v1/setup",
            "/api/v1/setup",
            Some(root),
            None,
        )
        .await;
    assert_eq!(setup.code(), 0, "{}", setup.body);
    tour.again().await.assert_error(409, 40901);
    let (login, admin) = app.login("root", PASSWORD).await;
    tour.record("POST", "/api/v1/auth/login", &login);
    let admin = admin.expect("root logs in");
    let (wrong, _) = app.login("root", "not the password at all").await;
    tour.record("POST", "/api/v1/auth/login", &wrong);
    wrong.assert_error(401, 40102);

    // A member with a key, through every key endpoint.
    let kim = json!({"username": "kim", "password": PASSWORD, "tier": "pro"});
    let users = "/api/v1/admin/users";
    let created = tour
        .call(post.clone(), users, users, Some(kim), Some(&admin))
        .await;
    assert_eq!(created.code(), 0, "{}", created.body);
    tour.again().await.assert_error(409, 40901);
    let kim_id = created.data()["id"].as_str().unwrap().to_string();
    let kim = app.login_ok("kim").await;
    tour.call(
        get.clone(),
        "/api/v1/membership",
        "/api/v1/membership",
        None,
        Some(&kim),
    )
    .await;
    let keys = "/api/v1/keys";
    let new_key = json!({"name": "laptop", "index_codes": ["Server_Index", "GPU_Index"],
                         "expires_at": "2030-01-01T00:00:00Z"});
    let key = tour
        .call(post.clone(), keys, keys, Some(new_key), Some(&kim))
        .await;
    assert_eq!(key.code(), 0, "{}", key.body);
    let key_id = key.data()["id"].as_str().unwrap().to_string();
    let no_csrf = app
        .call(
            post.clone(),
            keys,
            Some(json!({"name": "x"})),
            Some(&kim),
            false,
        )
        .await;
    tour.record("POST", keys, &no_csrf);
    no_csrf.assert_error(403, 40301);
    tour.call(get.clone(), keys, keys, None, Some(&kim)).await;
    let one = format!("/api/v1/keys/{key_id}");
    tour.call(
        patch.clone(),
        "/api/v1/keys/{id}",
        &one,
        Some(json!({"name": "work"})),
        Some(&kim),
    )
    .await;
    let rotated = tour
        .call(
            post.clone(),
            "/api/v1/keys/{id}/rotate",
            &format!("{one}/rotate"),
            None,
            Some(&kim),
        )
        .await;
    let secret = rotated.data()["key"].as_str().unwrap().to_string();
    let usage = "/api/v1/keys/{id}/usage";
    tour.call(
        get.clone(),
        usage,
        &format!("{one}/usage?days=3"),
        None,
        Some(&kim),
    )
    .await;
    tour.call(
        get.clone(),
        usage,
        &format!("{one}/usage?days=0"),
        None,
        Some(&kim),
    )
    .await
    .assert_error(400, 40001);
    let membership = app.membership_with(&secret).await;
    tour.record("GET", "/api/v1/membership", &membership);

    // Every dataset, as the key and as a visitor; refusals.
    for dataset in &DATASETS {
        let body = json!({"api_name": dataset.api_name, "limit": 3});
        let all_fields: Vec<&str> = dataset.fields.iter().map(|f| f.name).collect();
        let with_all = json!({"api_name": dataset.api_name, "fields": all_fields});
        let reply = tour.query(with_all, Some(&secret)).await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        tour.query(body, None).await;
    }
    // Tushare's wire (D24): every dataset named in the path, one in the body, and a
    // refusal (HTTP 200 with the service's code).
    for dataset in &iq_actors::catalogue::TUSHARE_DATASETS {
        let name = dataset.api_name.trim_start_matches("tushare.");
        let body = json!({"api_name": name, "token": secret, "params": {"ts_type_name": "x"},
                          "fields": ""});
        let path = format!("/tushare/{name}");
        let reply = tour
            .call(post.clone(), "/tushare/{api_name}", &path, Some(body), None)
            .await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
    }
    let body = json!({"api_name": "index_basic", "token": secret});
    let reply = tour
        .call(post.clone(), "/tushare", "/tushare", Some(body), None)
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    let nope = json!({"api_name": "nope"});
    let reply = tour
        .call(post.clone(), "/tushare", "/tushare", Some(nope), None)
        .await;
    reply.assert_status_code(200, 40001, "an unknown api_name");
    let served = tour
        .query(json!({"api_name": "index_daily"}), Some(&secret))
        .await;
    assert!(
        !served.items().is_empty(),
        "the fixture has rows: {}",
        served.body
    );
    tour.query(json!({"api_name": "nope"}), None)
        .await
        .assert_error(400, 40001);
    tour.query(json!({"api_name": "index_daily"}), Some("iq_wrong"))
        .await
        .assert_error(401, 40102);
    tour.query(
        json!({"api_name": "index_daily", "params": {"index_code": "SSD_Index"}}),
        Some(&secret),
    )
    .await
    .assert_error(403, 40302);

    // The back office.
    tour.call(
        get.clone(),
        users,
        &format!("{users}?limit=5&q=i"),
        None,
        Some(&admin),
    )
    .await;
    tour.call(get.clone(), users, users, None, Some(&kim))
        .await
        .assert_error(403, 40301);
    let user = "/api/v1/admin/users/{id}";
    tour.call(
        get.clone(),
        user,
        &format!("{users}/{kim_id}"),
        None,
        Some(&admin),
    )
    .await;
    tour.call(
        get.clone(),
        user,
        &format!("{users}/nobody"),
        None,
        Some(&admin),
    )
    .await;
    tour.call(
        patch.clone(),
        user,
        &format!("{users}/{kim_id}"),
        Some(json!({"api_access": true})),
        Some(&admin),
    )
    .await;
    let all_keys = "/api/v1/admin/keys";
    tour.call(
        get.clone(),
        all_keys,
        &format!("{all_keys}?user_id={kim_id}"),
        None,
        Some(&admin),
    )
    .await;
    let admin_key = format!("{all_keys}/{key_id}");
    tour.call(
        patch.clone(),
        "/api/v1/admin/keys/{id}",
        &admin_key,
        Some(json!({"per_minute": 100, "ip_allowlist": ["203.0.113.0/24", "127.0.0.1"]})),
        Some(&admin),
    )
    .await;
    tour.call(
        get.clone(),
        "/api/v1/admin/keys/{id}/usage",
        &format!("{admin_key}/usage"),
        None,
        Some(&admin),
    )
    .await;
    let tiers = tour
        .call(
            get.clone(),
            "/api/v1/admin/tiers",
            "/api/v1/admin/tiers",
            None,
            Some(&admin),
        )
        .await;
    let mut pro = tiers.data()[1].clone();
    if pro["tier"] != "pro" {
        pro = tiers.data()[0].clone();
    }
    pro.as_object_mut().unwrap().remove("tier");
    tour.call(
        put.clone(),
        "/api/v1/admin/tiers/{tier}",
        "/api/v1/admin/tiers/pro",
        Some(pro.clone()),
        Some(&admin),
    )
    .await;
    tour.call(
        put.clone(),
        "/api/v1/admin/tiers/{tier}",
        "/api/v1/admin/tiers/gold",
        Some(pro),
        Some(&admin),
    )
    .await
    .assert_error(404, 40401);
    tour.call(
        patch.clone(),
        "/api/v1/admin/indexes/{index_code}",
        "/api/v1/admin/indexes/SSD_Index",
        Some(json!({"sort_no": 7})),
        Some(&admin),
    )
    .await;
    let calendar = "/api/v1/admin/calendar";
    tour.call(
        put.clone(),
        calendar,
        calendar,
        Some(json!({"from_year": 2027, "to_year": 2027})),
        Some(&admin),
    )
    .await;
    tour.call(
        put.clone(),
        calendar,
        calendar,
        Some(json!({"open_days": ["20261102"]})),
        Some(&admin),
    )
    .await
    .assert_error(409, 40901);

    // Imports: an accepted file, a rejected one, the list and the records.
    let good = "trade_date,index_code,specification,weight,price\n\
                20261112,SSD_Index,a,0.5,480\n20261112,SSD_Index,b,0.5,482\n";
    let accepted = app.import_file(&admin, "good.csv", good.into()).await;
    tour.record("POST", "/api/v1/admin/imports", &accepted);
    let bad = "trade_date,index_code,specification,weight,price\n20261114,SSD_Index,a,1,480\n";
    let rejected = app.import_file(&admin, "bad.csv", bad.into()).await;
    tour.record("POST", "/api/v1/admin/imports", &rejected);
    rejected.assert_error(422, 40002);
    let imports = "/api/v1/admin/imports";
    let list = tour
        .call(
            get.clone(),
            imports,
            &format!("{imports}?limit=10"),
            None,
            Some(&admin),
        )
        .await;
    for record in list.data().as_array().unwrap() {
        let id = record["id"].as_str().unwrap();
        tour.call(
            get.clone(),
            "/api/v1/admin/imports/{id}",
            &format!("{imports}/{id}"),
            None,
            Some(&admin),
        )
        .await;
    }
    tour.call(
        get.clone(),
        "/api/v1/admin/imports/{id}",
        &format!("{imports}/0"),
        None,
        Some(&admin),
    )
    .await
    .assert_error(404, 40401);

    // The event feed, after the import: a page, a bad cursor, no key.
    let events = "/api/v1/events";
    let page = app.events_with(&secret, "limit=10").await;
    tour.record("GET", events, &page);
    assert_eq!(page.code(), 0, "{}", page.body);
    let bad_cursor = app.events_with(&secret, "after=42").await;
    tour.record("GET", events, &bad_cursor);
    bad_cursor.assert_error(400, 40001);
    tour.call(get.clone(), events, events, None, None)
        .await
        .assert_error(401, 40101);

    // A webhook: made, listed, tested, its log, a replay, deleted.
    let hooks = "/api/v1/webhooks";
    let made = tour
        .call(
            post.clone(),
            hooks,
            hooks,
            Some(json!({"url": "https://hooks.example.com/iq", "events": ["index.published"]})),
            Some(&kim),
        )
        .await;
    made.assert_status_code(201, 0, "a webhook");
    let hook = made.data()["id"].as_str().unwrap().to_string();
    tour.call(get.clone(), hooks, hooks, None, Some(&kim)).await;
    let every = "/api/v1/admin/webhooks";
    tour.call(get.clone(), every, every, None, Some(&admin))
        .await;
    tour.call(get.clone(), every, every, None, Some(&kim))
        .await
        .assert_error(403, 40301);
    let audit = "/api/v1/admin/audit";
    tour.call(get.clone(), audit, audit, None, Some(&admin))
        .await;
    let filtered = format!("{audit}?action=webhook.created&target=webhook:{hook}&from=2026-01-01");
    tour.call(get.clone(), audit, &filtered, None, Some(&admin))
        .await;
    tour.call(get.clone(), audit, audit, None, Some(&kim))
        .await
        .assert_error(403, 40301);
    let one_hook = format!("{hooks}/{hook}");
    tour.call(
        post.clone(),
        "/api/v1/webhooks/{id}/test",
        &format!("{one_hook}/test"),
        None,
        Some(&kim),
    )
    .await;
    let log = "/api/v1/webhooks/{id}/deliveries";
    let attempted = crate::helpers::eventually(std::time::Duration::from_secs(20), || async {
        let reply = app.webhook_deliveries(&kim, &hook).await;
        reply.data().as_array().is_some_and(|a| !a.is_empty())
    })
    .await;
    assert!(attempted, "the test message was attempted");
    let attempts = tour
        .call(
            get.clone(),
            log,
            &format!("{one_hook}/deliveries"),
            None,
            Some(&kim),
        )
        .await;
    let delivery = attempts.data()[0]["delivery_id"]
        .as_str()
        .unwrap()
        .to_string();
    tour.call(
        post.clone(),
        "/api/v1/webhooks/{id}/deliveries/{delivery_id}/replay",
        &format!("{one_hook}/deliveries/{delivery}/replay"),
        None,
        Some(&kim),
    )
    .await;
    // Its secret rotated, its failed deliveries recovered (none), a bad instant refused.
    tour.call(
        post.clone(),
        "/api/v1/webhooks/{id}/rotate-secret",
        &format!("{one_hook}/rotate-secret"),
        None,
        Some(&kim),
    )
    .await;
    let recover = "/api/v1/webhooks/{id}/recover";
    let since = (iq_actors::clock::Clock::now(&*app.clock) - chrono::Duration::hours(1))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    tour.call(
        post.clone(),
        recover,
        &format!("{one_hook}/recover"),
        Some(json!({ "since": since })),
        Some(&kim),
    )
    .await;
    tour.call(
        post.clone(),
        recover,
        &format!("{one_hook}/recover"),
        Some(json!({ "since": "yesterday" })),
        Some(&kim),
    )
    .await
    .assert_error(400, 40001);
    tour.call(
        Method::DELETE,
        "/api/v1/webhooks/{id}",
        &one_hook,
        None,
        Some(&kim),
    )
    .await;
    tour.again().await.assert_error(404, 40401);

    // One's sessions and password; a reset link for kim.
    let sessions = "/api/v1/auth/sessions";
    let other = app.login_ok("kim").await;
    tour.call(get.clone(), sessions, sessions, None, Some(&kim))
        .await;
    let listed = app.get_as(&other, sessions).await;
    let number = listed
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["current"] == true)
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let one_session = format!("{sessions}/{number}");
    tour.call(
        Method::DELETE,
        "/api/v1/auth/sessions/{id}",
        &one_session,
        None,
        Some(&kim),
    )
    .await;
    tour.again().await.assert_error(404, 40401);
    let password = "/api/v1/auth/password";
    let change = json!({"current_password": PASSWORD, "new_password": "kim's new passphrase"});
    tour.call(post.clone(), password, password, Some(change), Some(&kim))
        .await;
    tour.again().await.assert_error(400, 40001);
    let reset = format!("/api/v1/admin/users/{kim_id}/password-reset");
    tour.call(
        post.clone(),
        "/api/v1/admin/users/{id}/password-reset",
        &reset,
        None,
        Some(&admin),
    )
    .await;
    tour.call(
        post.clone(),
        "/api/v1/admin/users/{id}/password-reset",
        &reset,
        None,
        Some(&kim),
    )
    .await
    .assert_error(403, 40301);

    // The end of a key and of a session.
    tour.call(Method::DELETE, "/api/v1/keys/{id}", &one, None, Some(&kim))
        .await;
    tour.again().await.assert_error(404, 40401);
    tour.call(
        post.clone(),
        "/api/v1/auth/logout",
        "/api/v1/auth/logout",
        None,
        Some(&kim),
    )
    .await;
    tour.call(get.clone(), keys, keys, None, Some(&kim))
        .await
        .assert_error(401, 40102);
    tour.call(get.clone(), keys, keys, None, None)
        .await
        .assert_error(401, 40101);
    tour.call(
        get.clone(),
        "/api/v1/openapi.json",
        "/api/v1/openapi.json?api_key=x",
        None,
        None,
    )
    .await
    .assert_error(400, 40001);

    assert!(
        tour.problems.is_empty(),
        "answers that differ from the document:\n{}",
        tour.problems.join("\n")
    );
    // Every JSON operation was exercised, with a success.
    for (method, path, operation) in operations(&doc) {
        let json = operation["responses"]["200"]["content"]["application/json"].is_object();
        if json && path != "/api/v1/openapi.json" {
            assert!(
                tour.seen.contains(&(method.clone(), path.clone(), 200)),
                "{method} {path} answered 200 nowhere in this test"
            );
        }
    }
}
