//! Keys: creation shown once, listing, deletion, tier key counts, IP allow-lists.

use super::*;

#[actix_web::test]
async fn a_new_key_is_shown_once_and_never_listed() {
    let (app, carol) = spawn_app().await.with_member("carol", "free").await;

    let created = app.create_key(&carol, json!({"name": "laptop"})).await;
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

    let listed = app.list_keys(&carol).await;
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
    let (app, carol) = spawn_app().await.with_member("carol", "free").await;
    let first = app.new_key(&carol, json!({"name": "one"})).await;

    let second = app.create_key(&carol, json!({"name": "two"})).await;
    second.assert_error(409, 40901);

    let deleted = app.delete_key(&carol, &first.id).await;
    assert_eq!(deleted.code(), 0, "{}", deleted.body);
    assert_eq!(app.list_keys(&carol).await.data(), &json!([]));
    // The deleted key is refused.
    app.query_with(json!({"api_name": "trade_calendar"}), Some(&first.key))
        .await
        .assert_error(401, 40102);

    let third = app.new_key(&carol, json!({"name": "three"})).await;
    assert_ne!(third.key, first.key);
    let listed = app.list_keys(&carol).await;
    assert_eq!(listed.data().as_array().unwrap().len(), 1);
    assert_eq!(listed.data()[0]["id"], third.id.as_str());
}

#[actix_web::test]
async fn only_the_owner_deletes_a_key_and_only_once() {
    let (app, carol) = spawn_app().await.with_member("carol", "free").await;
    let dave = app.member("dave", "pro").await;
    let carols = app.new_key(&carol, json!({"name": "carol's"})).await;
    let daves = app.new_key(&dave, json!({"name": "dave's"})).await;

    app.delete_key(&carol, &daves.id)
        .await
        .assert_error(404, 40401);
    // Dave's key is untouched.
    let listed = app.list_keys(&dave).await;
    assert_eq!(listed.data()[0]["id"], daves.id.as_str(), "{}", listed.body);
    let reply = app
        .query_with(json!({"api_name": "trade_calendar"}), Some(&daves.key))
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);

    let once = app.delete_key(&carol, &carols.id).await;
    assert_eq!(once.code(), 0, "{}", once.body);
    app.delete_key(&carol, &carols.id)
        .await
        .assert_error(404, 40401);
    app.delete_key(&carol, "key_doesnotexist00")
        .await
        .assert_error(404, 40401);
    // Deleting needs the CSRF token.
    app.send_without_csrf(
        &dave,
        Method::DELETE,
        &format!("/api/v1/keys/{}", daves.id),
        None,
    )
    .await
    .assert_error(403, 40301);
}

#[actix_web::test]
async fn key_creation_validates_the_body() {
    let (app, dave) = spawn_app().await.with_member("dave", "pro").await;

    let unknown_index = app
        .create_key(
            &dave,
            json!({"name": "x", "index_codes": ["GPU_Index", "Nope_Index"]}),
        )
        .await;
    unknown_index.assert_error_mentioning(400, 40001, "index_codes");

    for entry in ["10.0.0.300", "not an address", "10.0.0.0/33"] {
        let bad_ip = app
            .create_key(&dave, json!({"name": "x", "ip_allowlist": [entry]}))
            .await;
        bad_ip.assert_error_mentioning(400, 40001, "ip_allowlist");
    }

    let past = app
        .create_key(
            &dave,
            json!({"name": "x", "expires_at": "2026-11-19T00:00:00Z"}),
        )
        .await;
    past.assert_error_mentioning(400, 40001, "expires_at");

    // A date alone is refused with the form that works, not a parser's words.
    let date_only = app
        .create_key(&dave, json!({"name": "x", "expires_at": "2027-01-31"}))
        .await;
    date_only.assert_error(400, 40001);
    let message = date_only.message();
    assert!(
        message.contains("expires_at") && message.contains("RFC 3339"),
        "{}",
        date_only.body
    );

    let unknown_field = app
        .create_key(&dave, json!({"name": "x", "colour": "red"}))
        .await;
    unknown_field.assert_error_mentioning(400, 40001, "colour");

    let no_name = app.create_key(&dave, json!({})).await;
    no_name.assert_error_mentioning(400, 40001, "name");

    // None of those created a key.
    assert_eq!(app.list_keys(&dave).await.data(), &json!([]));

    // Valid values are kept.
    let future = Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap();
    let ok = app
        .create_key(
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
    let (app, carol) = spawn_app().await.with_member("carol", "free").await;
    let dave = app.member("dave", "pro").await;

    let free = app
        .create_key(
            &carol,
            json!({"name": "x", "ip_allowlist": ["203.0.113.7"]}),
        )
        .await;
    free.assert_error(403, 40301);
    assert_eq!(app.list_keys(&carol).await.data(), &json!([]));

    let pro = app
        .create_key(
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
    let (app, dave) = spawn_app().await.with_member("dave", "pro").await;
    let mut keys = Vec::new();
    for n in 0..4 {
        keys.push(
            app.new_key(&dave, json!({"name": format!("key {n}")}))
                .await,
        );
    }
    let listed = app.list_keys(&dave).await;
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
