//! The zero-configuration start: no DATABASE_URL runs an embedded PostgreSQL cluster in a
//! data folder, loads demo data on first start, and keeps it across restarts.

use std::sync::Arc;

use iq_actors::clock::ManualClock;
use iq_service::settings::Database;
use iq_service::startup::Application;

use crate::helpers::{now, test_settings, TestApp};

fn settings(dir: &std::path::Path) -> iq_service::settings::Settings {
    let database = Database::Embedded {
        dir: dir.to_path_buf(),
    };
    test_settings(database, Arc::new(ManualClock::new(now())))
}

async fn latest_rows(port: u16) -> usize {
    let response = crate::helpers::http_client()
        .post(format!("http://127.0.0.1:{port}/api/v1/query"))
        .json(&serde_json::json!({"api_name": "index_latest"}))
        .send()
        .await
        .unwrap();
    TestApp::reply(response).await.items().len()
}

#[actix_web::test]
async fn starts_an_embedded_cluster_with_demo_data_that_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    for start in 0..2 {
        let app = Application::build(settings(dir.path()))
            .await
            .expect("embedded start");
        let port = app.port();
        let handle = app.handle();
        let running = actix_web::rt::spawn(app.run_until_stopped());
        assert_eq!(
            latest_rows(port).await,
            7,
            "start {start}: the seven public indexes have data"
        );
        handle.stop(true).await;
        running.await.unwrap().unwrap();
    }
    assert!(dir.path().join("pg").join("PG_VERSION").exists());
}
