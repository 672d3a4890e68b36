//! Users in the back office: creating them (`POST /api/v1/admin/users`, with a tier or
//! a role, signed in at once), changing them (`PATCH`) and reading them
//! (`GET /api/v1/admin/users`, one user).

use serde_json::{json, Value};

use crate::{Reply, Session, TestApp, PASSWORD};

impl TestApp {
    /// Creates a user through the back office and signs them in.
    pub async fn user(&self, admin: &Session, username: &str, tier: &str) -> Session {
        let reply = self
            .send_as(
                admin,
                reqwest::Method::POST,
                "/api/v1/admin/users",
                json!({"username": username, "password": PASSWORD, "tier": tier}),
            )
            .await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        self.login_ok(username).await
    }

    /// Creates a user with `tier` as the super administrator (setting the service up
    /// the first time) and signs them in: a test's member when it needs no administrator.
    pub async fn member(&self, username: &str, tier: &str) -> Session {
        let admin = self.admin().await;
        self.user(&admin, username, tier).await
    }

    /// The start of a test about one member: this service, with [`TestApp::member`]
    /// `username` of `tier` signed in (`spawn_app().await.with_member("alice", "free")`).
    pub async fn with_member(self, username: &str, tier: &str) -> (TestApp, Session) {
        let member = self.member(username, tier).await;
        (self, member)
    }

    /// `POST /api/v1/admin/users` with any body.
    pub async fn create_user(&self, admin: &Session, body: Value) -> Reply {
        self.send_as(admin, reqwest::Method::POST, "/api/v1/admin/users", body)
            .await
    }

    /// Creates a user with `role` and signs them in.
    pub async fn user_with_role(&self, admin: &Session, username: &str, role: &str) -> Session {
        let body = json!({"username": username, "password": PASSWORD, "role": role});
        let reply = self.create_user(admin, body).await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        assert_eq!(reply.data()["role"], role, "{}", reply.body);
        self.login_ok(username).await
    }

    /// `PATCH /api/v1/admin/users/{id}`.
    pub async fn patch_user(&self, admin: &Session, id: &str, body: Value) -> Reply {
        let path = format!("/api/v1/admin/users/{id}");
        self.send_as(admin, reqwest::Method::PATCH, &path, body)
            .await
    }

    /// `GET /api/v1/admin/users?{query}`.
    pub async fn admin_users(&self, session: &Session, query: &str) -> Reply {
        self.get_as(session, &Self::with_query("/api/v1/admin/users", query))
            .await
    }

    /// `GET /api/v1/admin/users/{id}`.
    pub async fn admin_user(&self, session: &Session, id: &str) -> Reply {
        self.get_as(session, &format!("/api/v1/admin/users/{id}"))
            .await
    }
}
