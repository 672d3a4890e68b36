//! Cross-origin reads (D16): the query, membership and config endpoints answer browsers
//! on other origins when no cookie is sent; nothing answers with credentials.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{spawn_with_demo, TestApp};

const ORIGIN: &str = "https://notebook.example";

#[actix_web::test]
async fn open_endpoints_answer_other_origins_without_cookies_only() {
    let app = spawn_with_demo().await;
    let url = |path: &str| format!("{}{path}", app.address);

    let preflight = app
        .http
        .request(Method::OPTIONS, url("/api/v1/query"))
        .header("Origin", ORIGIN)
        .header("Access-Control-Request-Method", "POST")
        .header("Access-Control-Request-Headers", "content-type, x-api-key")
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), 204);
    let allowed = preflight.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(allowed.contains("X-API-Key") && allowed.contains("Authorization"));
    assert_eq!(preflight.headers()["access-control-allow-origin"], "*");

    let query = app
        .http
        .post(url("/api/v1/query"))
        .header("Origin", ORIGIN)
        .json(&json!({"api_name": "index_latest"}))
        .send()
        .await
        .unwrap();
    assert_eq!(query.headers()["access-control-allow-origin"], "*");
    let exposed = query.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap();
    assert!(exposed.contains("X-Request-Id") && exposed.contains("Retry-After"));
    // A CSV answer's page headers are readable too.
    assert!(exposed.contains("X-Has-More"), "{exposed}");
    // The OpenAPI document is open to editors and generators on other origins.
    let document = app
        .http
        .get(url("/api/v1/openapi.json"))
        .header("Origin", ORIGIN)
        .send()
        .await
        .unwrap();
    assert_eq!(document.headers()["access-control-allow-origin"], "*");
    let reply = TestApp::reply(query).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);

    // With a cookie, or on the back office: no CORS headers at all.
    let with_cookie = app
        .http
        .get(url("/api/v1/membership"))
        .header("Origin", ORIGIN)
        .header("Cookie", "iq_session=whatever")
        .send()
        .await
        .unwrap();
    assert!(with_cookie
        .headers()
        .get("access-control-allow-origin")
        .is_none());
    let back_office = app
        .http
        .request(Method::OPTIONS, url("/api/v1/keys"))
        .header("Origin", ORIGIN)
        .header("Access-Control-Request-Method", "POST")
        .send()
        .await
        .unwrap();
    assert!(back_office
        .headers()
        .get("access-control-allow-origin")
        .is_none());
}
