//! The super administrators' user list and user detail: paging, search, roles.

use std::time::Duration as StdDuration;

use super::*;
use crate::helpers::eventually;

/// Creates users without signing them in (no login: quicker).
async fn create_users(app: &TestApp, admin: &Session, names: &[&str]) {
    for name in names {
        let reply = app
            .create_user(admin, json!({"username": name, "password": PASSWORD}))
            .await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
    }
}

#[actix_web::test]
async fn users_are_listed_by_name_a_page_at_a_time() {
    let (app, admin) = spawn_app().await.with_admin().await;
    create_users(
        &app,
        &admin,
        &["carol", "ann_lee", "Bob", "dave", "annxlee"],
    )
    .await;

    // By user name in code-point order: upper case first; root is a user too.
    let all = app.admin_users(&admin, "").await;
    assert_eq!(all.code(), 0, "{}", all.body);
    assert_eq!(
        all.item_texts("username"),
        ["Bob", "ann_lee", "annxlee", "carol", "dave", "root"]
    );
    let data = all.data();
    assert_eq!(
        (
            &data["total"],
            &data["limit"],
            &data["offset"],
            &data["has_more"]
        ),
        (&json!(6), &json!(50), &json!(0), &json!(false)),
        "{data}"
    );
    let root = &data["items"][5];
    assert_eq!(root["role"], "super_admin");
    assert_eq!(root["tier"], "pro");
    assert_eq!(root["active"], true);
    assert_eq!(root["api_access"], true);
    assert!(
        root["id"].is_string() && root["created_at"].is_string(),
        "{root}"
    );
    assert_eq!(
        (&root["key_count"], &root["calls_today"]),
        (&json!(0), &json!(0))
    );
    assert!(root.get("password_hash").is_none(), "{root}");

    let first = app.admin_users(&admin, "limit=2").await;
    assert_eq!(first.item_texts("username"), ["Bob", "ann_lee"]);
    assert_eq!(
        (&first.data()["total"], &first.data()["has_more"]),
        (&json!(6), &json!(true))
    );
    let last = app.admin_users(&admin, "limit=2&offset=4").await;
    assert_eq!(last.item_texts("username"), ["dave", "root"]);
    assert_eq!(last.data()["has_more"], false);
    let past = app.admin_users(&admin, "limit=2&offset=6").await;
    assert_eq!(past.item_texts("username"), Vec::<String>::new());
    assert_eq!(
        (
            &past.data()["total"],
            &past.data()["has_more"],
            &past.data()["offset"]
        ),
        (&json!(6), &json!(false), &json!(6))
    );
    let max = app.admin_users(&admin, "limit=500").await;
    assert_eq!(max.data()["limit"], 500);

    for bad in [
        "limit=0",
        "limit=501",
        "limit=ten",
        "offset=-1",
        "offset=1.5",
        "page=2",
        "limit=2&limit=3",
    ] {
        app.admin_users(&admin, bad).await.assert_error(400, 40001);
    }
}

#[actix_web::test]
async fn the_search_is_a_case_insensitive_part_of_the_name_with_wildcards_escaped() {
    let (app, admin) = spawn_app().await.with_admin().await;
    create_users(&app, &admin, &["ann_lee", "annxlee", "Bob", "bobby"]).await;

    let search = async |q: &str| {
        let reply = app.admin_users(&admin, &format!("q={q}")).await;
        assert_eq!(reply.code(), 0, "{q}: {}", reply.body);
        (
            reply.item_texts("username"),
            reply.data()["total"].as_i64().unwrap(),
        )
    };
    assert_eq!(
        search("ANN").await,
        (vec!["ann_lee".into(), "annxlee".into()], 2)
    );
    assert_eq!(search("bob").await, (vec!["Bob".into(), "bobby".into()], 2));
    // `_` and `%` are themselves, not LIKE wildcards (`%25` is `%` in a URL).
    assert_eq!(search("n_l").await, (vec!["ann_lee".into()], 1));
    assert_eq!(search("N_L").await, (vec!["ann_lee".into()], 1));
    assert_eq!(search("%25").await, (vec![], 0));
    assert_eq!(search("a%25e").await, (vec![], 0));
    assert_eq!(search("%5C").await, (vec![], 0));
    // Spaces around are ignored; an empty search lists everyone.
    assert_eq!(search("+bobby+").await, (vec!["bobby".into()], 1));
    assert_eq!(search("").await.1, 5);
    // Paging applies to the matches.
    let page = app.admin_users(&admin, "q=b&limit=1&offset=1").await;
    assert_eq!(page.item_texts("username"), ["bobby"]);
    assert_eq!(
        (&page.data()["total"], &page.data()["has_more"]),
        (&json!(2), &json!(false))
    );

    let long = "x".repeat(101);
    app.admin_users(&admin, &format!("q={long}"))
        .await
        .assert_error(400, 40001);
    let longest = app
        .admin_users(&admin, &format!("q={}", "x".repeat(100)))
        .await;
    assert_eq!(longest.code(), 0, "{}", longest.body);
    app.admin_users(&admin, "q=a%00b")
        .await
        .assert_error(400, 40001);
}

#[actix_web::test]
async fn only_super_administrators_list_and_read_users() {
    let (app, admin) = spawn_app().await.with_admin().await;
    let ada = app.user_with_role(&admin, "ada", "admin").await;
    let bob = app.user(&admin, "bob", "free").await;
    for path in [
        "/api/v1/admin/users".to_string(),
        format!("/api/v1/admin/users/{}", bob.user_id),
    ] {
        app.get_as(&ada, &path).await.assert_error(403, 40301);
        app.get_as(&bob, &path).await.assert_error(403, 40301);
        app.get(&path).await.assert_error(401, 40101);
    }
}

#[actix_web::test]
async fn a_users_detail_shows_their_keys_and_usage() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let carol = app.user(&admin, "carol", "pro").await;
    let laptop = app.new_key(&carol, json!({"name": "laptop"})).await;
    let server = app.new_key(&carol, json!({"name": "server"})).await;
    assert_eq!(app.delete_key(&carol, &server.id).await.code(), 0);
    for _ in 0..2 {
        let reply = app
            .query_with(json!({"api_name": "trade_calendar"}), Some(&laptop.key))
            .await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
    }

    // Usage is flushed every 50 ms in the tests.
    let listed = eventually(StdDuration::from_secs(5), || async {
        let reply = app.admin_users(&admin, "q=carol").await;
        reply.data()["items"][0]["calls_today"] == 2
    })
    .await;
    assert!(listed, "the list never showed carol's calls");
    let list = app.admin_users(&admin, "q=carol").await;
    assert_eq!(list.data()["items"][0]["key_count"], 1, "{}", list.body);

    let detail = app.admin_user(&admin, &carol.user_id).await;
    assert_eq!(detail.code(), 0, "{}", detail.body);
    let data = detail.data();
    assert_eq!(data["id"], carol.user_id.as_str());
    assert_eq!(data["username"], "carol");
    assert_eq!(data["tier"], "pro");
    // Live keys only, never the key itself.
    let keys = data["keys"].as_array().expect("keys");
    assert_eq!(keys.len(), 1, "{data}");
    assert_eq!(keys[0]["id"], laptop.id.as_str());
    assert_eq!(keys[0]["name"], "laptop");
    assert_eq!(keys[0]["calls_today"], 2);
    assert!(keys[0].get("key").is_none());
    let mut all = Vec::new();
    strings(&detail.body, &mut all);
    assert!(!all.iter().any(|s| s.contains(&laptop.key)));
    // Thirty UTC days, newest first, today (20 Nov 2026) included.
    let usage = data["usage"].as_array().expect("usage");
    assert_eq!(usage.len(), 30, "{data}");
    assert_eq!(usage[0], json!({"date": "20261120", "calls": 2}));
    assert_eq!(usage[29], json!({"date": "20261022", "calls": 0}));

    for id in ["999999", "not-an-id", "-1"] {
        app.admin_user(&admin, id).await.assert_error(404, 40401);
    }
}
