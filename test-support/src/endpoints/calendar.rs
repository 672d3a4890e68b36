//! The trading calendar: `PUT /api/v1/admin/calendar`.

use serde_json::Value;

use crate::{Reply, Session, TestApp};

impl TestApp {
    /// `PUT /api/v1/admin/calendar`.
    pub async fn put_calendar(&self, session: &Session, body: Value) -> Reply {
        self.send_as(
            session,
            reqwest::Method::PUT,
            "/api/v1/admin/calendar",
            body,
        )
        .await
    }
}
