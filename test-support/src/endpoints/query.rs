//! The public data endpoints: `POST /api/v1/query` (JSON or raw, anonymous or with a
//! key, one page or every page), `GET /api/v1/config`, `GET /api/v1/membership` and
//! the event feed, `GET /api/v1/events`; and Tushare's `POST /tushare/{api_name}`.

use serde_json::{json, Value};

use crate::{Reply, Session, TestApp};

impl TestApp {
    /// `POST /api/v1/query` with a JSON body.
    pub async fn query(&self, body: Value) -> Reply {
        self.query_with(body, None).await
    }

    pub async fn query_with(&self, body: Value, api_key: Option<&str>) -> Reply {
        let mut request = self
            .http
            .post(format!("{}/api/v1/query", self.address))
            .json(&body);
        if let Some(key) = api_key {
            request = request.header("X-API-Key", key);
        }
        Self::reply(request.send().await.expect("request")).await
    }

    /// `POST /api/v1/query` with a raw body and content type.
    pub async fn query_raw(&self, body: impl Into<String>, content_type: &str) -> Reply {
        let response = self
            .http
            .post(format!("{}/api/v1/query", self.address))
            .header("Content-Type", content_type)
            .body(body.into())
            .send()
            .await
            .expect("request");
        Self::reply(response).await
    }

    pub async fn config(&self) -> Reply {
        self.get("/api/v1/config").await
    }

    pub async fn membership(&self) -> Reply {
        self.get("/api/v1/membership").await
    }

    /// `GET /api/v1/membership` with the key in `X-API-Key`.
    pub async fn membership_with(&self, api_key: &str) -> Reply {
        self.get_with_key("/api/v1/membership", api_key).await
    }

    /// `GET /api/v1/events?{query}` with the key in `X-API-Key`.
    pub async fn events_with(&self, api_key: &str, query: &str) -> Reply {
        self.get_with_key(&format!("/api/v1/events?{query}"), api_key)
            .await
    }

    /// Any `GET` with the key in `X-API-Key`.
    pub async fn get_with_key(&self, path: &str, api_key: &str) -> Reply {
        let response = self
            .request(reqwest::Method::GET, path)
            .header("X-API-Key", api_key)
            .send()
            .await
            .expect("request");
        Self::reply(response).await
    }

    /// Every page of a query, walked as spec 4.3 says.
    pub async fn walk(&self, mut body: Value, limit: u64) -> Vec<Value> {
        let mut rows = Vec::new();
        let mut offset = 0;
        loop {
            body["limit"] = json!(limit);
            body["offset"] = json!(offset);
            let page = self.query(body.clone()).await;
            assert_eq!(page.code(), 0, "{}", page.body);
            rows.extend(page.items().iter().cloned());
            offset += page.data()["returned"].as_u64().unwrap();
            if !page.data()["has_more"].as_bool().unwrap() {
                return rows;
            }
        }
    }

    /// `GET /api/v1/membership` as this session.
    pub async fn membership_as(&self, session: &Session) -> Reply {
        self.get_as(session, "/api/v1/membership").await
    }
}

impl TestApp {
    /// `POST /tushare/{api_name}` (D24) with Tushare's body as its official SDK sends it:
    /// `token` (a key, or empty), `params` with `ts_type_name`, `fields` as a string.
    pub async fn tushare(&self, api_name: &str, token: &str, params: Value, fields: &str) -> Reply {
        let mut params = params;
        params["ts_type_name"] = Value::from(format!("{}/tushare", self.address));
        let body = json!({
            "api_name": api_name, "token": token, "params": params, "fields": fields,
        });
        let response = self
            .http
            .post(format!("{}/tushare/{api_name}", self.address))
            .json(&body)
            .send()
            .await
            .expect("tushare call");
        Self::reply(response).await
    }
}
