//! Hostile connections, spoken in raw bytes: a body that trickles is cut, the connections
//! of one address are capped, and what the HTTP parser refuses is still an envelope.

use std::time::Duration;

use reqwest::Method;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::still_serving;
use crate::helpers::{spawn_with, spawn_with_demo, Spawn, TestApp};

/// Sends raw bytes on a new connection and reads the answer until the server closes.
async fn raw(app: &TestApp, request: &[u8]) -> String {
    let addr = app.address.trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request).await.expect("send");
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

/// The JSON envelope of a raw answer.
fn envelope_of(answer: &str) -> Value {
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not an envelope ({e}): {answer}"))
}

#[actix_web::test]
async fn a_body_that_trickles_is_cut() {
    let app = spawn_with(Spawn::demo().tuned(|s| {
        s.http.body_grace_secs = Duration::from_secs(1).into();
        s.http.body_min_bytes_per_sec = 1000;
    }))
    .await;
    let addr = app.address.trim_start_matches("http://").to_string();
    let mut stream = TcpStream::connect(&addr).await.unwrap();
    stream
        .write_all(
            b"POST /api/v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
              Content-Length: 500\r\n\r\n{",
        )
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(15), stream.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    let envelope = envelope_of(&answer);
    assert_eq!(envelope["code"], 40001);
    assert!(
        envelope["message"].as_str().unwrap().contains("too slowly"),
        "{answer}"
    );
    still_serving(&app).await;
}

#[actix_web::test]
async fn connections_per_address_are_capped() {
    let app = spawn_with(Spawn::demo().tuned(|s| s.http.max_connections_per_ip = 4)).await;
    let addr = app.address.trim_start_matches("http://").to_string();
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(TcpStream::connect(&addr).await.unwrap());
    }
    // Accepting is asynchronous: a fifth connection is refused once the four are seen.
    let mut refused = String::new();
    for _ in 0..50 {
        let answer = raw(&app, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await;
        if answer.starts_with("HTTP/1.1 429") {
            refused = answer;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(refused.starts_with("HTTP/1.1 429"), "{refused}");
    assert_eq!(envelope_of(&refused)["code"], 42901);
    assert!(
        refused
            .to_ascii_lowercase()
            .contains("\r\nretry-after: 1\r\n"),
        "{refused}"
    );
    // Closing them frees the address again.
    drop(held);
    let mut served = false;
    for _ in 0..50 {
        let reply = app.request(Method::GET, "/healthz").send().await;
        if reply.is_ok_and(|r| r.status() == 200) {
            served = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        served,
        "the address stayed blocked after its connections closed"
    );
}

#[actix_web::test]
async fn refusals_of_the_http_parser_are_envelopes() {
    let app = spawn_with_demo().await;
    let smuggled = raw(
        &app,
        b"POST /api/v1/query HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\
          Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    )
    .await;
    assert!(smuggled.starts_with("HTTP/1.1 400"), "{smuggled}");
    let envelope = envelope_of(&smuggled);
    assert_eq!(envelope["code"], 40001);
    assert!(envelope["request_id"].as_str().unwrap().starts_with("req_"));
    assert!(envelope["data"].is_null());

    let mut many = b"GET /healthz HTTP/1.1\r\nHost: x\r\n".to_vec();
    for i in 0..200 {
        many.extend_from_slice(format!("X-Filler-{i}: y\r\n").as_bytes());
    }
    many.extend_from_slice(b"\r\n");
    let too_many = raw(&app, &many).await;
    assert!(too_many.starts_with("HTTP/1.1 431"), "{too_many}");
    assert_eq!(envelope_of(&too_many)["code"], 40001);
    still_serving(&app).await;
}
