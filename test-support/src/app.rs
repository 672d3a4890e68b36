//! The [`TestApp`] every test drives, and the one way to send it a request:
//! [`TestApp::call`] (any method, anonymous or as a [`Session`] with or without its CSRF
//! token) and its shorthands. The typed endpoint methods (`endpoints/`) are built on
//! these. It must never know an endpoint's path or start a service (`spawn.rs` does).

use std::sync::Arc;

use iq_actors::clock::ManualClock;
use iq_actors::quota::QuotaShards;
use serde_json::Value;

use crate::{DropDatabase, Reply, Session};

/// One instance of the service under test, with the test's own connection to its
/// database. Made by [`crate::spawn_app`] and its variants.
pub struct TestApp {
    pub address: String,
    pub http: reqwest::Client,
    pub db: tokio_postgres::Client,
    pub clock: Arc<ManualClock>,
    pub database_url: String,
    /// The instance's QuotaActor (in-process instances only), for its statement count.
    pub quota: Option<QuotaShards>,
    /// The database's owner, shared by every instance on it (`None` when attached to a
    /// service whose test drops the database itself).
    pub(crate) _database: Option<Arc<DropDatabase>>,
    /// The super administrator's session, once [`TestApp::admin`] has set the service up.
    pub(crate) root: tokio::sync::OnceCell<Session>,
}

impl TestApp {
    /// A request to `path` on the service, for a test that sets what the helpers below
    /// do not (its own headers or body, the raw response).
    pub fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http.request(method, format!("{}{path}", self.address))
    }

    /// Any request; `session` adds the cookie and, when `csrf`, the CSRF header.
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
        session: Option<&Session>,
        csrf: bool,
    ) -> Reply {
        let mut request = self.request(method, path);
        if let Some(body) = body {
            request = request.json(&body);
        }
        if let Some(session) = session {
            request = request.header("Cookie", &session.cookie);
            if csrf {
                request = request.header("X-CSRF-Token", &session.csrf);
            }
        }
        Self::reply(request.send().await.expect("request")).await
    }

    /// A mutation with the session's cookie and CSRF token.
    pub async fn send_as(
        &self,
        session: &Session,
        method: reqwest::Method,
        path: &str,
        body: Value,
    ) -> Reply {
        self.call(method, path, Some(body), Some(session), true)
            .await
    }

    pub async fn get_as(&self, session: &Session, path: &str) -> Reply {
        self.call(reqwest::Method::GET, path, None, Some(session), false)
            .await
    }

    pub async fn get(&self, path: &str) -> Reply {
        let response = self
            .request(reqwest::Method::GET, path)
            .send()
            .await
            .expect("request");
        Self::reply(response).await
    }

    /// A request with the session's cookie but without its CSRF token, which every
    /// mutation needs.
    pub async fn send_without_csrf(
        &self,
        session: &Session,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Reply {
        self.call(method, path, body, Some(session), false).await
    }

    /// An anonymous `POST` with a JSON body.
    pub async fn post_json(&self, path: &str, body: Value) -> Reply {
        self.call(reqwest::Method::POST, path, Some(body), None, false)
            .await
    }

    /// `path?query`, or `path` when `query` is empty: endpoints that list take a raw
    /// query string (`"limit=2&q=ann"`, or `""`), so a test can send bad parameters as
    /// well as good ones.
    pub(crate) fn with_query(path: &str, query: &str) -> String {
        if query.is_empty() {
            path.to_string()
        } else {
            format!("{path}?{query}")
        }
    }
}
