//! The super administrators' list of every key: owners, settings, filters, paging, roles.

use std::time::Duration as StdDuration;

use super::*;
use crate::helpers::eventually;

/// Creates a key a second after the previous one (the test clock stands still
/// otherwise), so "newest first" has an order to show.
async fn key_later(app: &TestApp, owner: &Session, body: Value) -> crate::helpers::Key {
    app.clock.advance(Duration::seconds(1));
    app.new_key(owner, body).await
}

#[actix_web::test]
async fn every_live_key_is_listed_with_its_owner_newest_first() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let carol = app.user(&admin, "carol", "free").await;
    let dave = app.user(&admin, "dave", "pro").await;
    let carols = key_later(&app, &carol, json!({"name": "50% off"})).await;
    let laptop = key_later(
        &app,
        &dave,
        json!({"name": "laptop", "index_codes": ["Server_Index", "GPU_Index"],
               "ip_allowlist": ["203.0.113.0/24"], "expires_at": "2027-01-31T00:00:00Z"}),
    )
    .await;
    let gone = key_later(&app, &dave, json!({"name": "gone"})).await;
    key_later(&app, &dave, json!({"name": "50 off"})).await;
    key_later(&app, &dave, json!({"name": "back\\slash"})).await;
    app.patch_key(
        &admin,
        &laptop,
        json!({"per_minute": 5, "per_day": 100, "active": false}),
    )
    .await;
    assert_eq!(app.delete_key(&dave, &gone.id).await.code(), 0);
    let reply = app
        .query_with(json!({"api_name": "trade_calendar"}), Some(&carols.key))
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);

    let all = app.admin_keys(&admin, "").await;
    assert_eq!(all.code(), 0, "{}", all.body);
    assert_eq!(
        all.item_texts("name"),
        ["back\\slash", "50 off", "laptop", "50% off"]
    );
    assert_eq!(
        (
            &all.data()["total"],
            &all.data()["has_more"],
            &all.data()["limit"]
        ),
        (&json!(4), &json!(false), &json!(50))
    );
    let listed = &all.data()["items"][2];
    assert_eq!(listed["id"], laptop.id.as_str());
    assert_eq!(
        listed["owner"],
        json!({"id": dave.user_id, "username": "dave"})
    );
    assert_eq!(listed["state"], "disabled");
    assert_eq!(listed["index_codes"], json!(["GPU_Index", "Server_Index"]));
    assert_eq!(listed["ip_allowlist"], json!(["203.0.113.0/24"]));
    assert_eq!(listed["expires_at"], "2027-01-31T00:00:00Z");
    assert_eq!(
        (&listed["per_minute"], &listed["per_day"]),
        (&json!(5), &json!(100))
    );
    assert_eq!(sorted_scopes(listed), ALL_SCOPES);
    assert!(
        listed["key_hint"].is_string() && listed.get("key").is_none(),
        "{listed}"
    );
    let mut all_strings = Vec::new();
    strings(&all.body, &mut all_strings);
    assert!(!all_strings.iter().any(|s| s.contains(&laptop.key)));

    // Calls today, as flushed.
    let counted = eventually(StdDuration::from_secs(5), || async {
        let reply = app.admin_keys(&admin, "").await;
        reply.data()["items"][3]["calls_today"] == 1
    })
    .await;
    assert!(counted, "carol's call never showed");
    assert_eq!(
        app.admin_keys(&admin, "").await.data()["items"][0]["calls_today"],
        0
    );

    // Paging.
    let page = app.admin_keys(&admin, "limit=3").await;
    assert_eq!(page.item_texts("name"), ["back\\slash", "50 off", "laptop"]);
    assert_eq!(
        (&page.data()["total"], &page.data()["has_more"]),
        (&json!(4), &json!(true))
    );
    let rest = app.admin_keys(&admin, "limit=3&offset=3").await;
    assert_eq!(rest.item_texts("name"), ["50% off"]);
    assert_eq!(rest.data()["has_more"], false);
    for bad in ["limit=0", "limit=501", "offset=-3", "owner=1", "offset=x"] {
        app.admin_keys(&admin, bad).await.assert_error(400, 40001);
    }
}

#[actix_web::test]
async fn keys_are_filtered_by_owner_and_by_a_part_of_their_name() {
    let (app, admin) = spawn_app().await.with_admin().await;
    let carol = app.user(&admin, "carol", "free").await;
    let dave = app.user(&admin, "dave", "pro").await;
    key_later(&app, &carol, json!({"name": "50% OFF"})).await;
    key_later(&app, &dave, json!({"name": "50 off"})).await;
    key_later(&app, &dave, json!({"name": "back\\slash"})).await;
    key_later(&app, &dave, json!({"name": "a_b"})).await;
    key_later(&app, &dave, json!({"name": "axb"})).await;

    let filter = async |query: String| {
        let reply = app.admin_keys(&admin, &query).await;
        assert_eq!(reply.code(), 0, "{query}: {}", reply.body);
        (
            reply.item_texts("name"),
            reply.data()["total"].as_i64().unwrap(),
        )
    };
    let dave_id = &dave.user_id;
    assert_eq!(
        filter(format!("user_id={dave_id}")).await,
        (
            vec![
                "axb".into(),
                "a_b".into(),
                "back\\slash".into(),
                "50 off".into()
            ],
            4
        )
    );
    assert_eq!(
        filter(format!("user_id={}", carol.user_id)).await,
        (vec!["50% OFF".into()], 1)
    );
    // `%`, `_` and `\` match only themselves; letter case does not matter.
    assert_eq!(filter("q=0%25".into()).await, (vec!["50% OFF".into()], 1));
    assert_eq!(filter("q=0%25+o".into()).await, (vec!["50% OFF".into()], 1));
    assert_eq!(filter("q=OFF".into()).await.1, 2);
    assert_eq!(filter("q=_".into()).await, (vec!["a_b".into()], 1));
    assert_eq!(
        filter("q=%5C".into()).await,
        (vec!["back\\slash".into()], 1)
    );
    assert_eq!(
        filter(format!("q=off&user_id={dave_id}")).await,
        (vec!["50 off".into()], 1)
    );
    // An id that is nobody's, or no id at all, matches nothing.
    assert_eq!(filter("user_id=999999".into()).await, (vec![], 0));
    assert_eq!(filter("user_id=nobody".into()).await, (vec![], 0));

    for bad in [
        format!("q={}", "k".repeat(101)),
        "q=%0A".to_string(),
        format!("user_id={}", "9".repeat(65)),
    ] {
        app.admin_keys(&admin, &bad).await.assert_error(400, 40001);
    }
}

#[actix_web::test]
async fn only_super_administrators_list_every_key() {
    let (app, admin) = spawn_app().await.with_admin().await;
    let ada = app.user_with_role(&admin, "ada", "admin").await;
    let bob = app.user(&admin, "bob", "free").await;
    app.admin_keys(&ada, "").await.assert_error(403, 40301);
    app.admin_keys(&bob, "").await.assert_error(403, 40301);
    app.get("/api/v1/admin/keys").await.assert_error(401, 40101);
    // The guard answers before the parameters are read.
    app.admin_keys(&bob, "limit=0")
        .await
        .assert_error(403, 40301);
}
