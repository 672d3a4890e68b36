//! `HEAD` answers as `GET` would, without the body: pages, probes and the API's `GET`
//! endpoints; a path that takes no `GET` answers 404 as for any method it does not take.

use crate::helpers::spawn_with_demo;
use reqwest::Method;

#[actix_web::test]
async fn head_answers_the_head_of_what_get_answers() {
    let app = spawn_with_demo().await;
    for path in [
        "/",
        "/indexes/GPU_Index",
        "/healthz",
        "/api/v1/config",
        "/docs",
    ] {
        let url = format!("{}{path}", app.address);
        let get = app.http.get(&url).send().await.unwrap();
        let (get_status, get_type) = (get.status(), get.headers().get("content-type").cloned());
        let get_length = get.bytes().await.unwrap().len();
        let head = app.http.head(&url).send().await.unwrap();
        assert_eq!(head.status(), get_status, "{path}");
        assert_eq!(
            head.headers().get("content-type"),
            get_type.as_ref(),
            "{path}"
        );
        assert!(head.headers().contains_key("x-request-id"), "{path}");
        let length = head
            .headers()
            .get("content-length")
            .map(|v| v.to_str().unwrap().to_owned());
        assert_eq!(
            length,
            Some(get_length.to_string()),
            "{path}: the length GET's body has"
        );
        assert!(head.bytes().await.unwrap().is_empty(), "{path}: no body");
    }
    // The query takes POST only: no GET, so no HEAD either.
    let query = app
        .request(Method::HEAD, "/api/v1/query")
        .send()
        .await
        .unwrap();
    assert_eq!(query.status(), 404);
    assert!(query.bytes().await.unwrap().is_empty());
}
