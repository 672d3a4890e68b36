//! The audit trail (D23): every back-office change leaves exactly one record, written
//! with the change, naming who, what before and after, and the request that made it; a
//! refused change leaves none; only staff read it; nothing changes a record.

use super::*;
use crate::helpers::count_rows;

/// The one record of `action` on `target`, checked against the reply of the request
/// that made the change: its `request_id`, and the actor's name.
async fn one_record(app: &TestApp, action: &str, target: &str, by: &str, made: &Reply) -> Value {
    assert_eq!(made.code(), 0, "{}", made.body);
    let records = app.audit_records(action, target).await;
    assert_eq!(records.len(), 1, "{action} on {target}: {records:?}");
    let record = records[0].clone();
    assert_eq!(record["action"], action);
    assert_eq!(
        format!(
            "{}:{}",
            record["target"]["kind"].as_str().unwrap(),
            record["target"]["id"].as_str().unwrap()
        ),
        target
    );
    assert_eq!(
        record["request_id"].as_str(),
        made.header("x-request-id"),
        "{record}"
    );
    assert_eq!(record["actor"]["username"], by, "{record}");
    record
}

/// Asserts that a record says `field` was `before` the change and is `after` it.
#[track_caller]
fn assert_changed(record: &Value, field: &str, before: Value, after: Value) {
    assert_eq!(
        (&record["before"][field], &record["after"][field]),
        (&before, &after),
        "{record}"
    );
}

#[actix_web::test]
async fn every_change_of_users_tiers_indexes_and_keys_leaves_one_record_of_its_request() {
    let (app, root) = spawn_app().await.with_admin().await;

    let created = app
        .create_user(
            &root,
            json!({"username": "carol", "password": PASSWORD, "tier": "free"}),
        )
        .await;
    let carol_id = created.data()["id"].as_str().unwrap().to_string();
    let target = format!("user:{carol_id}");
    let record = one_record(&app, "user.created", &target, "root", &created).await;
    assert_eq!(record["before"], Value::Null);
    assert_eq!(record["after"]["tier"], "free");
    // The password is nowhere in the record.
    assert!(!record.to_string().contains(PASSWORD), "{record}");

    let patched = app
        .patch_user(&root, &carol_id, json!({"tier": "pro"}))
        .await;
    let record = one_record(&app, "user.changed", &target, "root", &patched).await;
    assert_changed(&record, "tier", json!("free"), json!("pro"));

    let mut body = free_defaults();
    body["per_day"] = json!(20);
    let tier = app.put_tier(&root, "free", body).await;
    let record = one_record(&app, "tier.changed", "tier:free", "root", &tier).await;
    assert_changed(&record, "per_day", json!(10), json!(20));

    let index = app
        .patch_index(&root, "GPU_Index", json!({"visibility": "member"}))
        .await;
    let record = one_record(&app, "index.changed", "index:GPU_Index", "root", &index).await;
    assert_eq!(record["after"]["visibility"], "member");
    assert_ne!(record["before"]["visibility"], "member");

    // A member's own keys: created, renamed, rotated and deleted, each by its owner.
    let carol = app.login_ok("carol").await;
    let made = app.create_key(&carol, json!({"name": "desk"})).await;
    let key_id = made.data()["id"].as_str().unwrap().to_string();
    let secret = made.data()["key"].as_str().unwrap().to_string();
    let target = format!("key:{key_id}");
    one_record(&app, "key.created", &target, "carol", &made).await;
    let renamed = app
        .rename_key(&carol, &key_id, json!({"name": "desk 2"}))
        .await;
    let record = one_record(&app, "key.renamed", &target, "carol", &renamed).await;
    assert_changed(&record, "name", json!("desk"), json!("desk 2"));
    let rotated = app.rotate_key(&carol, &key_id).await;
    let new_secret = rotated.data()["key"].as_str().unwrap().to_string();
    one_record(&app, "key.rotated", &target, "carol", &rotated).await;
    // An administrator's change of the key.
    let limited = app
        .send_as(
            &root,
            Method::PATCH,
            &format!("/api/v1/admin/keys/{key_id}"),
            json!({"per_minute": 3}),
        )
        .await;
    let record = one_record(&app, "key.changed", &target, "root", &limited).await;
    assert_eq!(record["after"]["per_minute"], 3);
    let deleted = app.delete_key(&carol, &key_id).await;
    let record = one_record(&app, "key.deleted", &target, "carol", &deleted).await;
    assert_eq!(record["after"], Value::Null);
    assert_eq!(record["before"]["name"], "desk 2");

    // No key's value appears anywhere in the trail.
    let all = app.audit(&root, "limit=500").await;
    // Set-up, two of carol, one each of tier and index, five of the key.
    assert_eq!(all.data()["total"], 10, "{}", all.body);
    for value in [&secret, &new_secret] {
        assert!(!all.body.to_string().contains(value.as_str()));
    }
}

#[actix_web::test]
async fn the_calendar_imports_and_webhooks_are_recorded_with_the_change() {
    let app = crate::imports::spawn().await;
    let root = app.admin().await;
    let operator = app.user_with_role(&root, "operator", "admin").await;

    let file = "index_code,weight,price,specification,trade_date\n\
                Server_Index,1,165,8x H200,20261103\n";
    let imported = app.import_file(&operator, "fix.csv", file.into()).await;
    let import_id = imported.data()["import_id"].as_str().unwrap().to_string();
    let target = format!("import:{import_id}");
    let record = one_record(&app, "import.accepted", &target, "operator", &imported).await;
    assert_eq!(record["after"]["file_name"], "fix.csv");
    assert_eq!(record["after"]["quotes"], 1);

    // A refused file leaves no record (nothing was changed).
    let bad = app
        .import_file(&operator, "bad.csv", "index_code\nNope\n".into())
        .await;
    assert_ne!(bad.code(), 0);
    assert_eq!(
        app.audit_records("import.accepted", "import").await.len(),
        1
    );

    let calendar = app
        .put_calendar(
            &operator,
            json!({"from_year": 2027, "to_year": 2027, "holidays": ["20270101"]}),
        )
        .await;
    let record = one_record(
        &app,
        "calendar.changed",
        "calendar:trading",
        "operator",
        &calendar,
    )
    .await;
    assert_eq!(record["after"]["span"], json!(["20270101", "20271231"]));
    assert_eq!(record["after"]["summary"]["last"], "20271231");
    assert_eq!(record["before"]["last"], "20261113");

    let member = app.user(&root, "mia", "pro").await;
    let hook = app
        .create_webhook(
            &member,
            json!({"url": "https://hooks.example.com/iq", "events": ["index.published"]}),
        )
        .await;
    let hook_id = hook.data()["id"].as_str().unwrap().to_string();
    let secret = hook.data()["secret"].as_str().unwrap().to_string();
    let target = format!("webhook:{hook_id}");
    let record = one_record(&app, "webhook.created", &target, "mia", &hook).await;
    assert_eq!(record["after"]["url"], "https://hooks.example.com/iq");
    let gone = app.delete_webhook(&member, &hook_id).await;
    one_record(&app, "webhook.deleted", &target, "mia", &gone).await;
    let all = app.audit(&root, "limit=500").await;
    assert!(!all.body.to_string().contains(&secret), "{}", all.body);
}

#[actix_web::test]
async fn a_refused_change_leaves_no_record() {
    let (app, root) = spawn_app().await.with_admin().await;
    let before = app.audit(&root, "").await.data()["total"].as_i64().unwrap();

    // A user name taken, a tier that does not exist, an unknown user, a bad index
    // setting, a tier setting out of range: each refused with a 4xx.
    let mut bad_tier = free_defaults();
    bad_tier["per_day"] = json!(-1);
    for refused in [
        app.create_user(&root, json!({"username": "root", "password": PASSWORD}))
            .await,
        app.create_user(
            &root,
            json!({"username": "dan", "password": PASSWORD, "tier": "gold"}),
        )
        .await,
        app.patch_user(&root, "999999", json!({"tier": "pro"}))
            .await,
        app.patch_index(&root, "GPU_Index", json!({"visibility": "everyone"}))
            .await,
        app.put_tier(&root, "free", bad_tier).await,
    ] {
        assert!((400..500).contains(&refused.status), "{}", refused.body);
    }

    let after = app.audit(&root, "").await.data()["total"].as_i64().unwrap();
    assert_eq!(after, before);
}

#[actix_web::test]
async fn only_super_administrators_read_the_trail_and_filters_are_checked() {
    let (app, root) = spawn_app().await.with_admin().await;
    let member = app.user(&root, "pat", "pro").await;
    let operator = app.user_with_role(&root, "operator", "admin").await;

    app.audit(&member, "").await.assert_error(403, 40301);
    // Administrators do not see every user's and key's settings: nor the trail of them.
    app.audit(&operator, "").await.assert_error(403, 40301);
    app.call(Method::GET, "/api/v1/admin/audit", None, None, false)
        .await
        .assert_error(401, 40101);
    // Super administrators read it; filters by actor, action, target and day.
    let by_root = app.audit(&root, "actor=root&action=user.created").await;
    assert_eq!(by_root.code(), 0, "{}", by_root.body);
    assert_eq!(by_root.data()["total"], 2, "{}", by_root.body);
    // Records carry the database's time, not the test's manual clock.
    let day = |d: chrono::DateTime<Utc>| d.format("%Y-%m-%d").to_string();
    let (yesterday, tomorrow) = (
        day(Utc::now() - Duration::days(1)),
        day(Utc::now() + Duration::days(1)),
    );
    let around = app
        .audit(&root, &format!("from={yesterday}&to={tomorrow}"))
        .await;
    assert_eq!(around.data()["total"], 3, "{}", around.body);
    let later = app.audit(&root, "from=2999-01-01").await;
    assert_eq!(later.data()["total"], 0, "{}", later.body);
    let paged = app.audit(&root, "limit=1&offset=1").await;
    assert_eq!(paged.data()["items"].as_array().unwrap().len(), 1);
    assert_eq!(paged.data()["has_more"], true);

    for bad in [
        "action=user.exploded",
        "target=planet",
        "from=2026-02-30",
        "from=2026-02-02&to=2026-02-01",
        "colour=red",
        "limit=0",
    ] {
        app.audit(&root, bad).await.assert_error(400, 40001);
    }
}

#[actix_web::test]
async fn no_statement_can_change_or_delete_a_record() {
    let (app, _) = spawn_app().await.with_member("pat", "free").await;
    for statement in [
        "UPDATE audit_log SET actor = 'someone else'",
        "DELETE FROM audit_log",
        "TRUNCATE audit_log",
    ] {
        let error = app.db.batch_execute(statement).await.unwrap_err();
        assert!(
            format!("{error:?}").contains("append-only"),
            "{statement}: {error:?}"
        );
    }
    assert_eq!(count_rows(&app.db, "audit_log").await, 2);
}
