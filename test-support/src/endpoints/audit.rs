//! The audit trail (`GET /api/v1/admin/audit`): the raw page, and the records of one
//! action on one target, as a test asks "what did this change leave behind?".

use serde_json::Value;

use crate::{Reply, Session, TestApp};

impl TestApp {
    /// `GET /api/v1/admin/audit?{query}`.
    pub async fn audit(&self, session: &Session, query: &str) -> Reply {
        self.get_as(session, &Self::with_query("/api/v1/admin/audit", query))
            .await
    }

    /// Every record of `action` on `target` (`kind:id`), newest first, read as the super
    /// administrator.
    pub async fn audit_records(&self, action: &str, target: &str) -> Vec<Value> {
        let admin = self.admin().await;
        let query = format!("action={action}&target={target}&limit=500");
        let reply = self.audit(&admin, &query).await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        reply.data()["items"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}
