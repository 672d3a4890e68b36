//! The back office's tiers (`/api/v1/admin/tiers`) and index settings
//! (`/api/v1/admin/indexes/{code}`).

use serde_json::Value;

use crate::{Reply, Session, TestApp};

impl TestApp {
    /// One tier's settings as `GET /api/v1/admin/tiers` lists them.
    pub async fn tier(&self, admin: &Session, name: &str) -> Value {
        let reply = self.get_as(admin, "/api/v1/admin/tiers").await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        reply
            .data()
            .as_array()
            .and_then(|tiers| tiers.iter().find(|t| t["tier"] == name))
            .unwrap_or_else(|| panic!("no tier {name}: {}", reply.body))
            .clone()
    }

    /// `PUT /api/v1/admin/tiers/{tier}`.
    pub async fn put_tier(&self, admin: &Session, tier: &str, body: Value) -> Reply {
        let path = format!("/api/v1/admin/tiers/{tier}");
        self.send_as(admin, reqwest::Method::PUT, &path, body).await
    }

    /// `PATCH /api/v1/admin/indexes/{code}`.
    pub async fn patch_index(&self, admin: &Session, code: &str, body: Value) -> Reply {
        let path = format!("/api/v1/admin/indexes/{code}");
        self.send_as(admin, reqwest::Method::PATCH, &path, body)
            .await
    }
}
