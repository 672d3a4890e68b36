//! A member's webhook endpoints: `/api/v1/webhooks` and what hangs below it.

use serde_json::{json, Value};

use crate::{Reply, Session, TestApp};

impl TestApp {
    /// `POST /api/v1/webhooks` with any body.
    pub async fn create_webhook(&self, owner: &Session, body: Value) -> Reply {
        self.send_as(owner, reqwest::Method::POST, "/api/v1/webhooks", body)
            .await
    }

    /// `POST /api/v1/webhooks` for `events` at `url`, asserting 201; the answer's data
    /// (with the secret).
    pub async fn new_webhook(&self, owner: &Session, url: &str, events: &[&str]) -> Value {
        let reply = self
            .create_webhook(owner, json!({"url": url, "events": events}))
            .await;
        reply.assert_status_code(201, 0, "a new webhook");
        reply.data().clone()
    }

    /// `GET /api/v1/webhooks`.
    pub async fn webhooks(&self, owner: &Session) -> Reply {
        self.get_as(owner, "/api/v1/webhooks").await
    }

    /// `POST /api/v1/webhooks/{id}/test`.
    pub async fn test_webhook(&self, owner: &Session, id: &str) -> Reply {
        let path = format!("/api/v1/webhooks/{id}/test");
        self.send_as(owner, reqwest::Method::POST, &path, json!({}))
            .await
    }

    /// `GET /api/v1/webhooks/{id}/deliveries`.
    pub async fn webhook_deliveries(&self, owner: &Session, id: &str) -> Reply {
        self.get_as(owner, &format!("/api/v1/webhooks/{id}/deliveries"))
            .await
    }

    /// `DELETE /api/v1/webhooks/{id}`.
    pub async fn delete_webhook(&self, owner: &Session, id: &str) -> Reply {
        let path = format!("/api/v1/webhooks/{id}");
        self.send_as(owner, reqwest::Method::DELETE, &path, json!({}))
            .await
    }

    /// `POST /api/v1/webhooks/{id}/deliveries/{delivery}/replay`.
    pub async fn replay_delivery(&self, owner: &Session, id: &str, delivery: &str) -> Reply {
        let path = format!("/api/v1/webhooks/{id}/deliveries/{delivery}/replay");
        self.send_as(owner, reqwest::Method::POST, &path, json!({}))
            .await
    }

    /// `POST /api/v1/webhooks/{id}/rotate-secret`.
    pub async fn rotate_webhook_secret(&self, owner: &Session, id: &str) -> Reply {
        let path = format!("/api/v1/webhooks/{id}/rotate-secret");
        self.send_as(owner, reqwest::Method::POST, &path, json!({}))
            .await
    }

    /// `POST /api/v1/webhooks/{id}/recover` with `{"since": since}`.
    pub async fn recover_webhook(&self, owner: &Session, id: &str, since: &str) -> Reply {
        let path = format!("/api/v1/webhooks/{id}/recover");
        self.send_as(
            owner,
            reqwest::Method::POST,
            &path,
            json!({ "since": since }),
        )
        .await
    }
}
