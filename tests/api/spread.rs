//! Concurrent clients spreading queries over instances and keys, counting the calls
//! admitted and refused: how the quota tests across instances (`quota_account`,
//! `quota_instances`) drive the service hard enough for races to show.

use std::sync::Arc;

use serde_json::json;

use crate::helpers::TestApp;

/// Sends `calls` `index_latest` queries round-robin over `(instance, key)` pairs from
/// `clients` concurrent clients; answers (admitted, refused with `refusal`). Any other
/// answer fails the test, with the rate-limit headers that explain it.
pub async fn spread(
    targets: Vec<(String, String)>,
    calls: usize,
    clients: usize,
    refusal: i64,
) -> (usize, usize) {
    let http = crate::helpers::http_client();
    let targets = Arc::new(targets);
    let mut tasks = Vec::new();
    for client in 0..clients {
        let (http, targets) = (http.clone(), targets.clone());
        tasks.push(actix_web::rt::spawn(async move {
            let (mut admitted, mut refused) = (0, 0);
            for n in (client..calls).step_by(clients) {
                let (instance, key) = &targets[n % targets.len()];
                let response = http
                    .post(format!("{instance}/api/v1/query"))
                    .header("X-API-Key", key)
                    .json(&json!({"api_name": "index_latest"}))
                    .send()
                    .await
                    .expect("request");
                let reply = TestApp::reply(response).await;
                match reply.code() {
                    0 => admitted += 1,
                    code if code == refusal => refused += 1,
                    _ => panic!(
                        "unexpected answer: {} (RateLimit-Policy {:?}, RateLimit {:?})",
                        reply.body,
                        reply.header("ratelimit-policy"),
                        reply.header("ratelimit")
                    ),
                }
            }
            (admitted, refused)
        }));
    }
    let mut total = (0, 0);
    for task in tasks {
        let (admitted, refused) = task.await.expect("client");
        total = (total.0 + admitted, total.1 + refused);
    }
    total
}
