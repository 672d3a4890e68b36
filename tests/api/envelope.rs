//! The envelope, request ids and internal errors.

use std::collections::HashSet;

use serde_json::json;

use crate::helpers::{spawn_with_fixture, spawn_with_fixture_then};

#[actix_web::test]
async fn every_response_has_a_unique_request_id_also_in_the_header() {
    let app = spawn_with_fixture().await;
    let mut seen = HashSet::new();
    for _ in 0..20 {
        for reply in [
            app.query(json!({"api_name": "index_basic"})).await,
            app.query(json!({"api_name": "nope"})).await,
            app.get("/api/v1/nowhere").await,
            app.config().await,
        ] {
            let id = reply.body["request_id"].as_str().unwrap().to_string();
            assert!(id.starts_with("req_"), "{id}");
            assert_eq!(reply.request_id_header.as_deref(), Some(id.as_str()));
            // JSON is never sniffed as something else: on success and on every error.
            assert_eq!(reply.header("x-content-type-options"), Some("nosniff"));
            assert!(seen.insert(id), "request ids are unique");
        }
    }
}

#[actix_web::test]
async fn unknown_paths_and_methods_get_the_error_envelope() {
    let app = spawn_with_fixture().await;
    app.get("/api/v1/nowhere").await.assert_error(404, 40401);
    app.get("/api/v1/query").await.assert_error(404, 40401);
}

#[actix_web::test]
async fn an_internal_failure_is_50000_without_detail() {
    let app = spawn_with_fixture_then("ALTER TABLE index_quotes RENAME TO index_quotes_gone").await;
    let reply = app.query(json!({"api_name": "index_quote"})).await;
    reply.assert_error(500, 50000);
    assert_eq!(reply.message(), "internal error");
    assert!(
        !reply.body.to_string().contains("index_quotes"),
        "no internal detail"
    );
}
