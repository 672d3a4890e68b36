//! [`Reply`]: one answer of the service read back (status, headers, cookies, the JSON
//! envelope), with accessors for its parts and [`Reply::assert_error`] and its kin;
//! [`header_text`] reads a header of any response.
//! Reading a response is [`TestApp::reply`]. It must never send a request.

use serde_json::Value;

use crate::TestApp;

/// The header `name` of any response (`headers`), as text; a missing or non-text one
/// fails the test.
pub fn header_text(headers: &reqwest::header::HeaderMap, name: &str) -> String {
    let value = headers
        .get(name)
        .unwrap_or_else(|| panic!("no {name} header"));
    value.to_str().expect("header text").to_owned()
}

/// A response: status, the `X-Request-Id` header and the JSON body.
pub struct Reply {
    pub status: u16,
    pub request_id_header: Option<String>,
    /// Every `Set-Cookie` header, raw.
    pub set_cookies: Vec<String>,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Reply {
    pub fn code(&self) -> i64 {
        self.body["code"].as_i64().expect("code")
    }

    /// A response header, as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(name)
            .map(|v| v.to_str().expect("header text"))
    }

    /// `X-RateLimit-Remaining`, which every key-authenticated query answer carries.
    pub fn rate_remaining(&self) -> i64 {
        self.number_header("X-RateLimit-Remaining")
    }

    /// `X-RateLimit-Limit`, which every key-authenticated query answer carries.
    pub fn rate_limit(&self) -> i64 {
        self.number_header("X-RateLimit-Limit")
    }

    /// Header `name`, which must be there, as a number.
    fn number_header(&self, name: &str) -> i64 {
        let text = self.header(&name.to_ascii_lowercase());
        text.expect(name).parse().expect("a number")
    }

    pub fn message(&self) -> &str {
        self.body["message"].as_str().unwrap_or_default()
    }

    pub fn data(&self) -> &Value {
        &self.body["data"]
    }

    pub fn fields(&self) -> Vec<&str> {
        self.data()["fields"]
            .as_array()
            .expect("fields")
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect()
    }

    pub fn items(&self) -> &Vec<Value> {
        self.data()["items"].as_array().expect("items")
    }

    /// Member `key` of every item of a list answer whose items are objects, as text.
    pub fn item_texts(&self, key: &str) -> Vec<String> {
        self.data()["items"]
            .as_array()
            .unwrap_or_else(|| panic!("items: {}", self.body))
            .iter()
            .map(|item| item[key].as_str().unwrap().to_string())
            .collect()
    }

    /// Column `name` of every row.
    pub fn column(&self, name: &str) -> Vec<Value> {
        let i = self
            .fields()
            .iter()
            .position(|f| *f == name)
            .expect("column");
        self.items().iter().map(|row| row[i].clone()).collect()
    }

    /// Asserts this HTTP status and envelope code; `context` says which of several calls
    /// a failure is about (an attempt, an endpoint), before the body.
    #[track_caller]
    pub fn assert_status_code(&self, status: u16, code: i64, context: impl std::fmt::Display) {
        assert_eq!(
            (self.status, self.code()),
            (status, code),
            "{context}: {}",
            self.body
        );
    }

    /// Asserts an error envelope with this HTTP status and code.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: i64) {
        assert_eq!((self.status, self.code()), (status, code), "{}", self.body);
        assert!(self.body["data"].is_null(), "{}", self.body);
        assert!(self.body["request_id"]
            .as_str()
            .unwrap()
            .starts_with("req_"));
    }

    /// Asserts an error envelope as [`Reply::assert_error`] does, whose message names
    /// `text` (the field or value it is about).
    #[track_caller]
    pub fn assert_error_mentioning(&self, status: u16, code: i64, text: &str) {
        self.assert_error(status, code);
        assert!(self.message().contains(text), "{}", self.body);
    }
}

impl TestApp {
    /// Reads any response of the service into a [`Reply`].
    pub async fn reply(response: reqwest::Response) -> Reply {
        let status = response.status().as_u16();
        let request_id_header = response
            .headers()
            .get("x-request-id")
            .map(|v| v.to_str().unwrap().to_string());
        let set_cookies = response
            .headers()
            .get_all("set-cookie")
            .iter()
            .map(|v| v.to_str().unwrap().to_string())
            .collect();
        let headers = response.headers().clone();
        let text = response.text().await.expect("body");
        let body = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"));
        Reply {
            status,
            request_id_header,
            set_cookies,
            headers,
            body,
        }
    }
}
