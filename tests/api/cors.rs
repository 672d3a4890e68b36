//! Cross-origin reads (D16): the query, membership and config endpoints answer browsers
//! on other origins when no cookie is sent; nothing answers with credentials.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{header_text, spawn_with_demo, TestApp};

const ORIGIN: &str = "https://notebook.example";

#[actix_web::test]
async fn open_endpoints_answer_other_origins_without_cookies_only() {
    let app = spawn_with_demo().await;
    // Every request comes from a page on another origin.
    let from_elsewhere =
        |method: Method, path: &str| app.request(method, path).header("Origin", ORIGIN);

    let preflight = from_elsewhere(Method::OPTIONS, "/api/v1/query")
        .header("Access-Control-Request-Method", "POST")
        .header("Access-Control-Request-Headers", "content-type, x-api-key")
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), 204);
    let allowed = header_text(preflight.headers(), "access-control-allow-headers");
    assert!(allowed.contains("X-API-Key") && allowed.contains("Authorization"));
    assert_eq!(preflight.headers()["access-control-allow-origin"], "*");

    let query = from_elsewhere(Method::POST, "/api/v1/query")
        .json(&json!({"api_name": "index_latest"}))
        .send()
        .await
        .unwrap();
    assert_eq!(query.headers()["access-control-allow-origin"], "*");
    let exposed = header_text(query.headers(), "access-control-expose-headers");
    assert!(exposed.contains("X-Request-Id") && exposed.contains("Retry-After"));
    // A CSV answer's page headers are readable too.
    assert!(exposed.contains("X-Has-More"), "{exposed}");
    // The OpenAPI document is open to editors and generators on other origins.
    let document = from_elsewhere(Method::GET, "/api/v1/openapi.json")
        .send()
        .await
        .unwrap();
    assert_eq!(document.headers()["access-control-allow-origin"], "*");
    let reply = TestApp::reply(query).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);

    // With a cookie, or on the back office: no CORS headers at all.
    let with_cookie =
        from_elsewhere(Method::GET, "/api/v1/membership").header("Cookie", "iq_session=whatever");
    let back_office = from_elsewhere(Method::OPTIONS, "/api/v1/keys")
        .header("Access-Control-Request-Method", "POST");
    for (what, request) in [("with a cookie", with_cookie), ("back office", back_office)] {
        let response = request.send().await.unwrap();
        let allowed = response.headers().get("access-control-allow-origin");
        assert!(allowed.is_none(), "{what}: {allowed:?}");
    }
}
