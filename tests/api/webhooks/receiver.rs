//! A loopback webhook receiver: records every message (headers and body) and answers
//! with the status it is told to, on the test's actix runtime.

use std::net::TcpListener;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::web::{self, Bytes};
use actix_web::{App, HttpRequest, HttpResponse, HttpServer};
use serde_json::Value;

/// One message as it arrived.
#[derive(Debug, Clone)]
pub struct Received {
    /// The query string of the URL it was sent to (endpoints of one receiver differ
    /// by it).
    pub query: String,
    pub id: String,
    pub timestamp: String,
    pub signature: String,
    pub body: Bytes,
}

impl Received {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

#[derive(Default)]
struct Shared {
    received: Mutex<Vec<Received>>,
    status: AtomicU16,
    /// Bytes of the answer's body.
    body_bytes: std::sync::atomic::AtomicUsize,
    /// Never answers (a silent receiver): the sender gives up after its timeout.
    silent: std::sync::atomic::AtomicBool,
    /// Milliseconds each answer waits, at most (a slow receiver; each waits a share
    /// of it that varies from message to message).
    slow_ms: std::sync::atomic::AtomicU64,
}

pub struct Receiver {
    pub url: String,
    shared: Arc<Shared>,
    handle: actix_web::dev::ServerHandle,
}

impl Receiver {
    /// Answers 204 until told otherwise.
    pub fn start() -> Receiver {
        let shared = Arc::new(Shared {
            status: AtomicU16::new(204),
            body_bytes: std::sync::atomic::AtomicUsize::new(8),
            ..Shared::default()
        });
        let data = web::Data::from(shared.clone());
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the receiver");
        let port = listener.local_addr().unwrap().port();
        let server = HttpServer::new(move || {
            App::new().app_data(data.clone()).route(
                "/hook",
                web::post().to(
                    |request: HttpRequest, body: Bytes, shared: web::Data<Shared>| async move {
                        let header = |name: &str| {
                            request
                                .headers()
                                .get(name)
                                .and_then(|v| v.to_str().ok())
                                .unwrap_or_default()
                                .to_string()
                        };
                        // The answer is chosen before the message is seen: a test
                        // that sees it and changes the answer changes the next one.
                        let status = shared.status.load(Ordering::SeqCst);
                        let bytes = shared.body_bytes.load(Ordering::SeqCst);
                        let silent = shared.silent.load(Ordering::SeqCst);
                        shared.received.lock().unwrap().push(Received {
                            query: request.query_string().to_string(),
                            id: header("webhook-id"),
                            timestamp: header("webhook-timestamp"),
                            signature: header("webhook-signature"),
                            body,
                        });
                        if silent {
                            actix_web::rt::time::sleep(Duration::from_secs(120)).await;
                        }
                        let slow = shared.slow_ms.load(Ordering::SeqCst);
                        if slow > 0 {
                            let count = shared.received.lock().unwrap().len() as u64;
                            let wait = count.wrapping_mul(7919) % slow;
                            actix_web::rt::time::sleep(Duration::from_millis(wait)).await;
                        }
                        HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap())
                            // A redirect points back here: one followed would be received.
                            .insert_header(("location", "/hook"))
                            .body("r".repeat(bytes))
                    },
                ),
            )
        })
        .workers(1)
        .listen(listener)
        .expect("listen")
        .run();
        let handle = server.handle();
        actix_web::rt::spawn(server);
        Receiver {
            url: format!("http://127.0.0.1:{port}/hook"),
            shared,
            handle,
        }
    }

    /// Waits up to `most` before each answer.
    pub fn answer_slowly(&self, most: Duration) {
        let ms = u64::try_from(most.as_millis()).unwrap_or(u64::MAX);
        self.shared.slow_ms.store(ms, Ordering::SeqCst);
    }

    /// Takes every message and never answers.
    pub fn go_silent(&self) {
        self.shared.silent.store(true, Ordering::SeqCst);
    }

    pub fn answer_with(&self, status: u16) {
        self.shared.status.store(status, Ordering::SeqCst);
    }

    /// Answers with a body of `bytes` bytes.
    pub fn answer_bytes(&self, bytes: usize) {
        self.shared.body_bytes.store(bytes, Ordering::SeqCst);
    }

    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().unwrap().clone()
    }

    /// Waits until at least `count` messages arrived (at most `within`); all of them.
    pub async fn wait_for(&self, count: usize, within: Duration) -> Vec<Received> {
        let arrived = crate::helpers::eventually(within, || async {
            self.shared.received.lock().unwrap().len() >= count
        })
        .await;
        let received = self.received();
        assert!(
            arrived,
            "{count} messages expected, {} came: {received:?}",
            received.len()
        );
        received
    }

    /// Waits `within` for a message past the first `count` and fails the test if one
    /// comes: `what` says what it would be (a duplicate, a retry that must not be).
    pub async fn assert_no_more_than(&self, count: usize, within: Duration, what: &str) {
        let more = crate::helpers::eventually(within, || async {
            self.shared.received.lock().unwrap().len() > count
        })
        .await;
        assert!(!more, "{what}: {:?}", self.received());
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        drop(self.handle.stop(false));
    }
}
