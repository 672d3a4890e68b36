//! `/healthz` and `/readyz`: probes for load balancers, without credentials.

use serde_json::Value;

use crate::helpers::{select_value, spawn_app, TestApp};

/// The status the probe at `path` says, asserting it answers 200 with code 0.
async fn probe_status(app: &TestApp, path: &str) -> Value {
    let reply = app.get(path).await;
    reply.assert_status_code(200, 0, path);
    reply.data()["status"].clone()
}

#[actix_web::test]
async fn healthz_answers_while_the_process_runs() {
    let app = spawn_app().await;
    assert_eq!(probe_status(&app, "/healthz").await, "up");
}

#[actix_web::test]
async fn readyz_follows_the_database_and_the_migrations() {
    let app = spawn_app().await;
    assert_eq!(probe_status(&app, "/readyz").await, "ready");

    // A database missing this build's newest migration is not ready.
    let newest: i32 =
        select_value(&app.db, "SELECT max(version) FROM refinery_schema_history").await;
    let db = &app.db;
    let renumber = |version: i32| async move {
        let sql = "UPDATE refinery_schema_history SET version = -version WHERE version = $1";
        db.execute(sql, &[&version]).await.unwrap();
    };
    renumber(newest).await;
    let behind = app.get("/readyz").await;
    behind.assert_status_code(503, 50000, "behind");
    assert!(
        behind.message().contains("migrations behind"),
        "{}",
        behind.body
    );
    renumber(-newest).await;

    // The database out of reach: unready; back: ready again, by itself.
    app.cut_database().await;
    let down = app.get("/readyz").await;
    app.restore_database().await;
    down.assert_status_code(503, 50000, "database down");
    let mut status = 503;
    for _ in 0..100 {
        status = app.get("/readyz").await.status;
        if status == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(status, 200);
}
