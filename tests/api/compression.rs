//! Compression (D16): answers of 1 KiB or more are gzip-compressed when the request
//! accepts gzip, smaller ones and answers to requests that do not are sent as they
//! are, and a query answered from a cached page carries its own `request_id` in a
//! compressed body whose page part was compressed once.

use std::io::Read;

use flate2::read::GzDecoder;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{spawn_with_demo, spawn_with_fixture, TestApp};

struct Answer {
    encoding: Option<String>,
    vary: Option<String>,
    request_id: String,
    /// The body, decompressed when it was compressed.
    body: Vec<u8>,
    /// The bytes as they came over the wire.
    sent: usize,
}

async fn post(app: &TestApp, body: &Value, accept: Option<&str>, csv: bool) -> Answer {
    let mut request = app.request(Method::POST, "/api/v1/query").json(body);
    if let Some(accept) = accept {
        request = request.header("Accept-Encoding", accept);
    }
    if csv {
        request = request.header("Accept", "text/csv");
    }
    read(request.send().await.expect("request")).await
}

async fn read(response: reqwest::Response) -> Answer {
    let header =
        |name: &str| (response.headers().get(name)).map(|v| v.to_str().unwrap().to_string());
    let (encoding, vary) = (header("content-encoding"), header("vary"));
    let request_id = header("x-request-id").expect("X-Request-Id");
    let raw = response.bytes().await.expect("body").to_vec();
    let body = match encoding.as_deref() {
        Some("gzip") => {
            let mut out = Vec::new();
            GzDecoder::new(&raw[..])
                .read_to_end(&mut out)
                .expect("a valid gzip body");
            out
        }
        None => raw.clone(),
        Some(other) => panic!("unexpected Content-Encoding {other}"),
    };
    Answer {
        encoding,
        vary,
        request_id,
        body,
        sent: raw.len(),
    }
}

fn large_query() -> Value {
    json!({"api_name": "index_daily"})
}

#[actix_web::test]
async fn a_large_answer_is_gzipped_with_its_own_request_id_on_every_cache_hit() {
    let app = spawn_with_demo().await;
    let plain = post(&app, &large_query(), None, false).await;
    assert!(plain.body.len() >= 1024, "the precondition: a large answer");
    assert_eq!(plain.encoding, None);
    assert_eq!(plain.vary.as_deref(), Some("accept-encoding"));

    let mut data = Vec::new();
    for _ in 0..3 {
        let gz = post(&app, &large_query(), Some("gzip, deflate, br"), false).await;
        assert_eq!(gz.encoding.as_deref(), Some("gzip"));
        assert_eq!(gz.vary.as_deref(), Some("accept-encoding"));
        assert!(
            gz.sent < gz.body.len() / 2,
            "{} of {} bytes",
            gz.sent,
            gz.body.len()
        );
        let envelope: Value = serde_json::from_slice(&gz.body).expect("JSON inside");
        assert_eq!(envelope["code"], 0);
        assert_eq!(envelope["request_id"], gz.request_id.as_str());
        data.push(envelope["data"].clone());
    }
    // Three answers of one cached page: the same data, each its own request id.
    let plain: Value = serde_json::from_slice(&plain.body).unwrap();
    assert!(data.iter().all(|d| *d == plain["data"]));
}

#[actix_web::test]
async fn small_answers_and_clients_refusing_gzip_get_plain_bytes() {
    let app = spawn_with_fixture().await;
    let small = post(&app, &json!({"api_name": 1}), Some("gzip"), false).await;
    assert!(small.body.len() < 1024);
    assert_eq!(small.encoding, None, "an error envelope is small");
    for refusing in ["gzip;q=0", "identity", "br"] {
        let answer = post(&app, &large_query(), Some(refusing), false).await;
        assert_eq!(answer.encoding, None, "Accept-Encoding: {refusing}");
        let envelope: Value = serde_json::from_slice(&answer.body).unwrap();
        assert_eq!(envelope["code"], 0);
    }
}

#[actix_web::test]
async fn csv_answers_and_pages_are_compressed_too() {
    let app = spawn_with_demo().await;
    let csv = post(&app, &large_query(), Some("gzip"), true).await;
    assert_eq!(csv.encoding.as_deref(), Some("gzip"));
    assert!(String::from_utf8(csv.body)
        .unwrap()
        .starts_with("trade_date"));
    let page = app
        .request(Method::GET, "/")
        .header("Accept-Encoding", "gzip")
        .send()
        .await
        .expect("home page");
    assert_eq!(page.status(), 200);
    let page = read(page).await;
    assert_eq!(page.encoding.as_deref(), Some("gzip"));
    assert!(String::from_utf8(page.body).unwrap().contains("<html"));
}
