//! API keys: an owner's (`/api/v1/keys`: create, list, rotate, rename, delete, usage)
//! and the back office's (`/api/v1/admin/keys`: list, change, usage); [`Key`] is a
//! created key.

use serde_json::{json, Value};

use crate::{Reply, Session, TestApp};

/// A created API key.
#[derive(Debug, Clone)]
pub struct Key {
    pub id: String,
    pub key: String,
}

impl TestApp {
    pub async fn new_key(&self, owner: &Session, body: Value) -> Key {
        let reply = self
            .send_as(owner, reqwest::Method::POST, "/api/v1/keys", body)
            .await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        Key {
            id: reply.data()["id"].as_str().unwrap().to_string(),
            key: reply.data()["key"].as_str().unwrap().to_string(),
        }
    }

    /// A key of `owner` named `name` that reaches only the indexes `index_codes`.
    pub async fn key_for_indexes(&self, owner: &Session, name: &str, index_codes: &[&str]) -> Key {
        let body = json!({"name": name, "index_codes": index_codes});
        self.new_key(owner, body).await
    }

    /// A user of `tier` with one key covering everything.
    pub async fn key_of_tier(&self, admin: &Session, username: &str, tier: &str) -> Key {
        let user = self.user(admin, username, tier).await;
        self.new_key(&user, json!({"name": "test"})).await
    }

    /// [`TestApp::key_of_tier`] through the super administrator (setting the service up
    /// the first time): the key of a test that needs no administrator.
    pub async fn member_key(&self, username: &str, tier: &str) -> Key {
        let admin = self.admin().await;
        self.key_of_tier(&admin, username, tier).await
    }

    /// `PATCH /api/v1/admin/keys/{id}`, asserting success.
    pub async fn patch_key(&self, admin: &Session, key: &Key, body: Value) {
        let path = format!("/api/v1/admin/keys/{}", key.id);
        let reply = self
            .send_as(admin, reqwest::Method::PATCH, &path, body)
            .await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
    }

    /// `POST /api/v1/keys` with any body.
    pub async fn create_key(&self, owner: &Session, body: Value) -> Reply {
        self.send_as(owner, reqwest::Method::POST, "/api/v1/keys", body)
            .await
    }

    /// `DELETE /api/v1/keys/{id}`.
    pub async fn delete_key(&self, owner: &Session, id: &str) -> Reply {
        let path = format!("/api/v1/keys/{id}");
        self.send_as(owner, reqwest::Method::DELETE, &path, json!({}))
            .await
    }

    /// `GET /api/v1/keys`.
    pub async fn list_keys(&self, owner: &Session) -> Reply {
        self.get_as(owner, "/api/v1/keys").await
    }

    /// `GET /api/v1/admin/keys?{query}`.
    pub async fn admin_keys(&self, session: &Session, query: &str) -> Reply {
        self.get_as(session, &Self::with_query("/api/v1/admin/keys", query))
            .await
    }

    /// `GET /api/v1/admin/keys/{id}/usage?{query}`.
    pub async fn admin_key_usage(&self, session: &Session, id: &str, query: &str) -> Reply {
        let path = Self::with_query(&format!("/api/v1/admin/keys/{id}/usage"), query);
        self.get_as(session, &path).await
    }

    /// `POST /api/v1/keys/{id}/rotate` (no body), with the CSRF token.
    pub async fn rotate_key(&self, owner: &Session, id: &str) -> Reply {
        let path = format!("/api/v1/keys/{id}/rotate");
        self.call(reqwest::Method::POST, &path, None, Some(owner), true)
            .await
    }

    /// `PATCH /api/v1/keys/{id}` with any body, with the CSRF token.
    pub async fn rename_key(&self, owner: &Session, id: &str, body: Value) -> Reply {
        let path = format!("/api/v1/keys/{id}");
        self.send_as(owner, reqwest::Method::PATCH, &path, body)
            .await
    }

    /// `GET /api/v1/keys/{id}/usage?{query}`.
    pub async fn own_key_usage(&self, owner: &Session, id: &str, query: &str) -> Reply {
        let path = Self::with_query(&format!("/api/v1/keys/{id}/usage"), query);
        self.get_as(owner, &path).await
    }
}
