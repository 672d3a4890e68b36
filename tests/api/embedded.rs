//! The zero-configuration start: no DATABASE_URL runs an embedded PostgreSQL cluster in a
//! data folder, loads demo data on first start, and keeps it across restarts.

use std::sync::Arc;
use std::time::Duration;

use iq_actors::clock::ManualClock;
use iq_service::settings::{Database, LogFormat, Settings};
use iq_service::startup::Application;

fn settings(dir: &std::path::Path) -> Settings {
    Settings {
        listen_addr: "127.0.0.1:0".into(),
        database: Database::Embedded {
            dir: dir.to_path_buf(),
        },
        service_tz: chrono_tz::Asia::Shanghai,
        max_limit: 5000,
        site_name: "Embedded".into(),
        demo_data: false,
        log_format: LogFormat::Json,
        workers: Some(1),
        pool: Default::default(),
        page_cache_bytes: 1024 * 1024,
        page_ttl: Duration::from_secs(60),
        clock: Arc::new(ManualClock::new(crate::helpers::now())),
    }
}

async fn latest_rows(port: u16) -> usize {
    let body: serde_json::Value = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/api/v1/query"))
        .json(&serde_json::json!({"api_name": "index_latest"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    body["data"]["items"].as_array().unwrap().len()
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
