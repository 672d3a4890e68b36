//! [`eventually`]: polling a condition with a deadline, for what crosses instances. It
//! must never be a sleep of fixed length: it returns as soon as the condition holds.

use std::time::Duration;

/// Polls `check` until it holds or `within` has passed; whether it held. Changes reach
/// other instances through PostgreSQL NOTIFY, which is prompt but not synchronous, so
/// tests of "within a second" poll instead of sleeping.
pub async fn eventually<F, Fut>(within: Duration, check: F) -> bool
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + within;
    loop {
        if check().await {
            return true;
        }
        if std::time::Instant::now() > deadline {
            return false;
        }
        actix_web::rt::time::sleep(Duration::from_millis(10)).await;
    }
}
