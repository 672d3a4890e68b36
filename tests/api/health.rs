//! `/healthz` and `/readyz`: probes for load balancers, without credentials.

use crate::helpers::{select_value, spawn_app};

#[actix_web::test]
async fn healthz_answers_while_the_process_runs() {
    let app = spawn_app().await;
    let reply = app.get("/healthz").await;
    assert_eq!((reply.status, reply.code()), (200, 0), "{}", reply.body);
    assert_eq!(reply.data()["status"], "up");
}

#[actix_web::test]
async fn readyz_follows_the_database_and_the_migrations() {
    let app = spawn_app().await;
    let ready = app.get("/readyz").await;
    assert_eq!((ready.status, ready.code()), (200, 0), "{}", ready.body);
    assert_eq!(ready.data()["status"], "ready");

    // A database missing this build's newest migration is not ready.
    let newest: i32 =
        select_value(&app.db, "SELECT max(version) FROM refinery_schema_history").await;
    app.db
        .execute(
            "UPDATE refinery_schema_history SET version = -version WHERE version = $1",
            &[&newest],
        )
        .await
        .unwrap();
    let behind = app.get("/readyz").await;
    assert_eq!(
        (behind.status, behind.code()),
        (503, 50000),
        "{}",
        behind.body
    );
    assert!(
        behind.message().contains("migrations behind"),
        "{}",
        behind.body
    );
    app.db
        .execute(
            "UPDATE refinery_schema_history SET version = -version WHERE version = $1",
            &[&-newest],
        )
        .await
        .unwrap();

    // The database out of reach: unready; back: ready again, by itself.
    app.cut_database().await;
    let down = app.get("/readyz").await;
    app.restore_database().await;
    assert_eq!((down.status, down.code()), (503, 50000), "{}", down.body);
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
