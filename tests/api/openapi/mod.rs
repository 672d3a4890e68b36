//! The OpenAPI document (`GET /api/v1/openapi.json`, `GET /docs`, `iq-service openapi`):
//! it is collected from the router (a handler is mounted only with its description), and
//! every operation it lists is routed; it lists every dataset of the catalogue and every
//! error code with its status; the service's real answers match it; the request bodies
//! it documents are the ones the domain reads; the page shows it.
//!
//! A file per topic: `document.rs` checks every operation is routed, and the document
//! lists every dataset and every error code;
//! `reference.rs` the `/docs` page and the `iq-service openapi` command;
//! `conformance.rs` checks JSON against the document's schemas, which `tour.rs` applies
//! to every answer `answers.rs` provokes; `bodies.rs` compares the documented request
//! bodies with the types the domain reads. This file holds only what several of them
//! read in the document; it must never hold a test.

mod answers;
mod bodies;
mod conformance;
mod document;
mod reference;
mod tour;

use std::collections::BTreeSet;

use serde_json::Value;

use crate::helpers::TestApp;

/// Every operation of the document: `(METHOD, path, operation)`.
fn operations(doc: &Value) -> Vec<(String, String, &Value)> {
    let mut all = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in [
            "get", "put", "post", "delete", "patch", "head", "options", "trace",
        ] {
            if let Some(operation) = item.get(method) {
                all.push((method.to_uppercase(), path.clone(), operation));
            }
        }
    }
    all
}

/// `value`, or the component its `$ref` names.
fn resolve<'d>(doc: &'d Value, value: &'d Value) -> &'d Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(target) => doc
            .pointer(target.trim_start_matches('#'))
            .unwrap_or_else(|| panic!("dangling reference {target}")),
        None => value,
    }
}

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn property_names(schema: &Value) -> BTreeSet<String> {
    schema["properties"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

async fn served_document(app: &TestApp) -> Value {
    let response = app
        .request(reqwest::Method::GET, "/api/v1/openapi.json")
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );
    assert!(response.headers().contains_key("x-request-id"));
    let text = response.text().await.unwrap();
    // Built once, served as built.
    assert_eq!(text, iq_service::routes::json());
    serde_json::from_str(&text).expect("the document is JSON")
}
