//! [`Tour`]: sends requests and checks every answer against the document (its status,
//! body and headers, and each query value as its dataset's schema types it), noting
//! which operations answered what. It must never decide what to send: `answers.rs` does.

use std::collections::BTreeSet;

use iq_service::openapi::query::fields_schema_name;
use reqwest::Method;
use serde_json::Value;

use super::conformance::Conformance;
use crate::helpers::{Reply, Session, TestApp};

/// Sends requests and checks every answer against the document.
pub(super) struct Tour<'a> {
    pub(super) app: &'a TestApp,
    pub(super) conformance: Conformance<'a>,
    pub(super) problems: Vec<String>,
    pub(super) seen: BTreeSet<(String, String, u16)>,
    /// What [`Tour::call`] sent last, for [`Tour::again`].
    pub(super) last: Option<Sent>,
}

/// A request as [`Tour::call`] takes it: method, template, URL, body and session.
pub(super) type Sent = (Method, String, String, Option<Value>, Option<Session>);

impl Tour<'_> {
    pub(super) fn record(&mut self, method: &str, path: &str, reply: &Reply) {
        self.problems
            .extend(self.conformance.answer(method, path, reply));
        self.seen
            .insert((method.to_string(), path.to_string(), reply.status));
    }

    /// `method` on `url` (a path with its ids) as `session`, checked as `template`.
    pub(super) async fn call(
        &mut self,
        method: Method,
        template: &str,
        url: &str,
        body: Option<Value>,
        session: Option<&Session>,
    ) -> Reply {
        self.last = Some((
            method.clone(),
            template.to_string(),
            url.to_string(),
            body.clone(),
            session.cloned(),
        ));
        let reply = self
            .app
            .call(method.clone(), url, body, session, true)
            .await;
        self.record(method.as_str(), template, &reply);
        reply
    }

    /// The request [`Tour::call`] sent last, sent again: its answer meets what the first
    /// made, changed or deleted.
    pub(super) async fn again(&mut self) -> Reply {
        let (method, template, url, body, session) = self.last.clone().expect("a call before");
        self.call(method, &template, &url, body, session.as_ref())
            .await
    }

    pub(super) async fn query(&mut self, body: Value, key: Option<&str>) -> Reply {
        let dataset = body["api_name"]
            .as_str()
            .and_then(iq_actors::catalogue::dataset);
        let reply = self.app.query_with(body, key).await;
        self.record("POST", "/api/v1/query", &reply);
        // Each value as its dataset's `...Fields` schema types it.
        if let (Some(dataset), 0) = (dataset, reply.code()) {
            let doc = self.conformance.doc;
            let typed = &doc["components"]["schemas"][fields_schema_name(dataset)];
            let fields = reply.fields();
            for (r, row) in reply.items().iter().enumerate() {
                for (field, value) in fields.iter().zip(row.as_array().unwrap()) {
                    let at = format!("{}[{r}].{field}", dataset.api_name);
                    let schema = &typed["properties"][*field];
                    self.conformance
                        .check(schema, value, &at, &mut self.problems);
                }
            }
        }
        // A valid key's answers carry them, refusals included; an unknown key has none.
        if key.is_some() && reply.status != 401 {
            for header in [
                "x-ratelimit-limit",
                "x-ratelimit-remaining",
                "x-ratelimit-reset",
            ] {
                if reply.header(header).is_none() {
                    self.problems
                        .push(format!("query with a key -> {}: no {header}", reply.status));
                }
            }
        }
        reply
    }
}
