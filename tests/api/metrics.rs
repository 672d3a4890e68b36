//! `GET /metrics`: Prometheus text with the request, cache, quota, database and import
//! metrics, on its own address when `METRICS_ADDR` is set.
//!
//! Metrics are per process, so this runs the real binary as a child process: the counts
//! it asserts are exactly this test's.

use serde_json::json;

use crate::child::{database_name, drop_database, free_port, Service};
use crate::helpers::{create_database, header_text, select_value, TestApp};

/// The value of the series `name` (with its labels exactly as rendered), if present.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|value| value.split_whitespace().next()?.parse().ok())
}

#[actix_web::test]
async fn metrics_count_requests_caches_quotas_pool_statements_and_imports() {
    let database_url = create_database().await;
    let metrics_addr = format!("127.0.0.1:{}", free_port());
    let mut service = Service::start(
        &database_url,
        &[
            ("METRICS_ADDR", metrics_addr.as_str()),
            ("DEMO_DATA", "1"),
            ("RUST_LOG", "warn"),
        ],
    )
    .await;
    let app = TestApp::attach(&service.base, &database_url).await;
    let key = app.member_key("fay", "free").await;

    // Twice the same page: one miss, then a hit. Then the free key's 10 a day run out.
    let daily = json!({"api_name": "index_daily", "params": {"index_code": "GPU_Index"}});
    for _ in 0..2 {
        let reply = app.query_with(daily.clone(), Some(&key.key)).await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
    }
    let mut refused = 0;
    for _ in 0..10 {
        let reply = app.query_with(daily.clone(), Some(&key.key)).await;
        if reply.code() != 0 {
            assert_eq!(reply.code(), 42902, "{}", reply.body);
            refused += 1;
        }
    }
    assert_eq!(refused, 2, "10 a day: the 11th and 12th calls are refused");
    // The page was read through the worker's own pool: of DB_POOL_SIZE=4, the one
    // worker has two connections of its own (`PoolSettings::split`).
    let readers: i64 = select_value(
        &app.db,
        "SELECT count(*) FROM pg_stat_activity \
         WHERE datname = current_database() AND application_name = 'iq-service/read'",
    )
    .await;
    assert!(readers >= 1, "no connection of a read pool");

    // Not on the public listener when it has its own.
    let public = app
        .http
        .get(format!("{}/metrics", service.base))
        .send()
        .await
        .unwrap();
    assert_eq!(public.status(), 404);

    let scrape = app
        .http
        .get(format!("http://{metrics_addr}/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(scrape.status(), 200);
    let content_type = header_text(scrape.headers(), "content-type");
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    let text = scrape.text().await.unwrap();
    let context = || format!("metrics:\n{text}");
    // Asserts that `series` has this value in the scrape.
    let assert_sample = |series: &str, value: f64| {
        assert_eq!(
            sample(&text, series),
            Some(value),
            "{series}: {}",
            context()
        );
    };

    let query = |code: u32| {
        format!(
            "iq_http_request_duration_seconds_count{{route=\"/api/v1/query\",dataset=\"index_daily\",code=\"{code}\"}}"
        )
    };
    assert_sample(&query(0), 10.0);
    assert_sample(&query(42902), 2.0);
    assert_sample(
        "iq_http_request_duration_seconds_count{route=\"/api/v1/keys\",dataset=\"\",code=\"0\"}",
        1.0,
    );
    // The first query of the page missed; the next nine hit it.
    assert_sample(
        "iq_cache_lookups_total{cache=\"pages\",result=\"miss\"}",
        1.0,
    );
    assert_sample(
        "iq_cache_lookups_total{cache=\"pages\",result=\"hit\"}",
        9.0,
    );
    assert_sample("iq_quota_refusals_total{window=\"day\"}", 2.0);
    assert!(sample(&text, "iq_quota_refusals_total{window=\"minute\"}").is_none());
    // Every one of the 12 calls was charged once: the first waited for the shard's
    // lease statement; the two refusals were settled from memory.
    let memory = sample(&text, "iq_quota_charges_total{settled=\"memory\"}");
    let shard = sample(&text, "iq_quota_charges_total{settled=\"shard\"}");
    assert_eq!(
        memory.unwrap_or(0.0) + shard.unwrap_or(0.0),
        12.0,
        "{}",
        context()
    );
    assert!(shard.is_some_and(|n| n >= 1.0), "{}", context());
    assert!(memory.is_some_and(|n| n >= 2.0), "{}", context());
    // The pool as it stands, and the statements by name with their latency.
    assert_sample("iq_db_pool_max_connections", 4.0);
    assert!(sample(&text, "iq_db_pool_connections{state=\"idle\"}").is_some());
    assert_sample(
        "iq_db_query_duration_seconds_count{statement=\"index_daily\"}",
        1.0,
    );
    assert!(
        text.contains("iq_db_query_duration_seconds_bucket{le="),
        "{}",
        context()
    );
    // The demo data and its correction came in through two accepted imports.
    assert_sample("iq_import_duration_seconds_count{result=\"accepted\"}", 2.0);
    assert!(sample(&text, "iq_import_rows_total").is_some_and(|n| n > 100.0));
    // Never a key, a request id or a parameter value in a label.
    assert!(!text.contains(&key.key) && !text.contains(&key.id) && !text.contains("req_"));

    // A scrape is not a request of the API: it is not counted among them.
    assert!(!text.contains("route=\"/metrics\""), "{}", context());

    let output = service.stop();
    assert!(output.status.success(), "{}", output.logs());
    drop_database(&database_name(&database_url)).await;
}

#[actix_web::test]
async fn metrics_are_on_the_service_listener_only_when_asked() {
    let database_url = create_database().await;
    let mut service = Service::start(
        &database_url,
        &[("RUST_LOG", "warn"), ("METRICS_ADDR", "api")],
    )
    .await;
    let http = crate::helpers::http_client();
    let answer = http
        .get(format!("{}/metrics", service.base))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let text = answer.text().await.unwrap();
    assert!(
        text.contains("# TYPE iq_http_request_duration_seconds histogram"),
        "{text}"
    );
    assert!(text.contains("# HELP iq_db_pool_connections"), "{text}");
    service.stop();
    drop_database(&database_name(&database_url)).await;
}

/// A second instance on the same host, its metrics port taken by the first: start-up
/// fails, and the message names the setting that moves it (it named only the address).
#[actix_web::test]
async fn a_busy_metrics_port_names_the_setting_that_moves_it() {
    use std::sync::Arc;

    use iq_service::settings::Database;
    use iq_service::startup::Application;

    use crate::helpers::{create_database, now, test_settings, DropDatabase};

    let database_url = create_database().await;
    let _database = DropDatabase::new(database_url.clone());
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = taken.local_addr().expect("its address").to_string();
    let clock = Arc::new(iq_actors::clock::ManualClock::new(now()));
    let mut settings = test_settings(Database::Url(database_url), clock);
    settings.http.metrics_addr = addr.clone();
    let error = match Application::build(settings).await {
        Ok(_) => panic!("started with its metrics port taken"),
        Err(error) => error.to_string(),
    };
    assert!(
        error.starts_with(&format!("cannot listen on {addr} (METRICS_ADDR): "))
            && error.ends_with("set METRICS_ADDR to another address"),
        "{error}"
    );
}
