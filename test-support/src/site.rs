//! Driving the website over plain HTTP: pages as text with their headers, forms posted
//! with their CSRF token and cookies, redirects left for the test to see. The real
//! browser tests use [`crate::browser`] instead.

use reqwest::header::HeaderMap;

use crate::{Session, TestApp};

/// A page: status, headers, cookies set and the HTML.
pub struct PageReply {
    pub status: u16,
    pub headers: HeaderMap,
    pub set_cookies: Vec<String>,
    pub html: String,
}

impl PageReply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The text of the page's `<code id="{id}">`, its entities read back: a code
    /// example as a reader copies it.
    pub fn code_block(&self, id: &str) -> String {
        let start_tag = format!(r#"<code id="{id}">"#);
        let start = self
            .html
            .find(&start_tag)
            .unwrap_or_else(|| panic!("no code block {id}"))
            + start_tag.len();
        let end = start + self.html[start..].find("</code>").expect("its end");
        self.html[start..end]
            .replace("&#34;", "\"")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&")
    }

    /// The CSRF token of the page's forms.
    pub fn csrf(&self) -> String {
        self.field_value("csrf")
    }

    /// The value of the page's first form field `name` that carries one in its markup
    /// (`name="NAME" value="…"`, as a hidden field does); a page without one fails the
    /// test.
    pub fn field_value(&self, name: &str) -> String {
        let marker = format!(r#"name="{name}" value=""#);
        let start = self
            .html
            .find(&marker)
            .unwrap_or_else(|| panic!("no form field {name} with a value in:\n{}", self.html))
            + marker.len();
        let end = self.html[start..].find('"').expect("the value's end") + start;
        self.html[start..end].to_owned()
    }

    /// The secret of a key just created or rotated, which the page shows once: asserts
    /// that the page is answered (200) and never stored (`private, no-store`).
    pub fn shown_key(&self) -> String {
        assert_eq!(self.status, 200, "{}", self.html);
        assert_eq!(self.header("cache-control"), Some("private, no-store"));
        let marker = r#"<code id="new-key" class="secret">"#;
        let start = self.html.find(marker).expect("the new key") + marker.len();
        let end = self.html[start..].find('<').expect("the key's end") + start;
        self.html[start..end].to_owned()
    }

    /// The `name=value` of the cookie `name` this answer sets, if it sets it.
    pub fn cookie(&self, name: &str) -> Option<String> {
        self.set_cookies
            .iter()
            .find(|c| c.starts_with(&format!("{name}=")))
            .map(|c| c.split(';').next().unwrap_or_default().to_owned())
    }

    /// Asserts the page says `text` (as HTML source).
    pub fn assert_has(&self, text: &str) {
        assert!(self.html.contains(text), "no {text:?} in:\n{}", self.html);
    }

    pub fn assert_lacks(&self, text: &str) {
        assert!(
            !self.html.contains(text),
            "{text:?} found in:\n{}",
            self.html
        );
    }
}

/// The cookies of a browser that signed in through the login form.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub cookies: String,
}

impl TestApp {
    fn plain_client() -> reqwest::Client {
        crate::http_client_builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("an HTTP client")
    }

    /// `GET path` with `cookies` (a `Cookie` header value, or empty).
    pub async fn page_with(&self, cookies: &str, path: &str) -> PageReply {
        let mut request = Self::plain_client().get(format!("{}{path}", self.address));
        if !cookies.is_empty() {
            request = request.header("Cookie", cookies);
        }
        page_reply(request.send().await.expect("request")).await
    }

    /// A page as a visitor sees it.
    pub async fn page(&self, path: &str) -> PageReply {
        self.page_with("", path).await
    }

    /// A page as the API session's browser sees it.
    pub async fn page_as(&self, session: &Session, path: &str) -> PageReply {
        self.page_with(&session.cookie, path).await
    }

    /// The keys page's form for a new key (`POST /account/keys`), sent by `member` with
    /// the page's `csrf` token and `fields`.
    pub async fn post_key_form(
        &self,
        member: &SignedIn,
        csrf: &str,
        fields: &[(&str, &str)],
    ) -> PageReply {
        self.submit(member, "/account/keys", csrf, fields).await
    }

    /// A page's form as a signed-in browser sends it: `fields` posted to `path` after
    /// the page's `csrf` token, with the browser's cookies; redirects are not followed.
    pub async fn submit(
        &self,
        browser: &SignedIn,
        path: &str,
        csrf: &str,
        fields: &[(&str, &str)],
    ) -> PageReply {
        let fields: Vec<_> = [("csrf", csrf)].iter().chain(fields).copied().collect();
        self.post_form(&browser.cookies, path, &fields).await
    }

    /// Posts a form with `cookies`; redirects are not followed.
    pub async fn post_form(&self, cookies: &str, path: &str, fields: &[(&str, &str)]) -> PageReply {
        let body: String = fields
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        let mut request = Self::plain_client()
            .post(format!("{}{path}", self.address))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(body);
        if !cookies.is_empty() {
            request = request.header("Cookie", cookies);
        }
        page_reply(request.send().await.expect("request")).await
    }

    /// The login form posted with the pre-session `cookie` (`iq_form`) and `csrf` token
    /// of a login page: the answer as it comes, accepted or not.
    pub async fn post_login(
        &self,
        cookie: &str,
        csrf: &str,
        username: &str,
        password: &str,
    ) -> PageReply {
        let fields = [
            ("csrf", csrf),
            ("username", username),
            ("password", password),
        ];
        self.post_form(cookie, "/login", &fields).await
    }

    /// The second step of a login that waits for a code: the form of `code_page` (the
    /// answer to [`TestApp::post_login`] that asked for the code; its hidden fields, the
    /// CSRF token, the sign-in ticket and the user name) posted with the pre-session
    /// `cookie` and `code`; the answer as it comes, accepted or not.
    pub async fn post_login_code(
        &self,
        cookie: &str,
        code_page: &PageReply,
        code: &str,
    ) -> PageReply {
        let hidden = ["csrf", "ticket", "username"].map(|name| code_page.field_value(name));
        let fields = [
            ("csrf", hidden[0].as_str()),
            ("ticket", hidden[1].as_str()),
            ("username", hidden[2].as_str()),
            ("code", code),
        ];
        self.post_form(cookie, "/login/code", &fields).await
    }

    /// Signs in through the login form as a browser would: the form's page first (for
    /// its cookie and token), then the post. Panics unless it is accepted.
    pub async fn form_login(&self, username: &str, password: &str) -> SignedIn {
        let form = self.page("/login").await;
        let pre = form.cookie("iq_form").expect("the login page sets iq_form");
        let answer = self
            .post_login(&pre, &form.csrf(), username, password)
            .await;
        assert_eq!(answer.status, 303, "{}", answer.html);
        let session = answer.cookie("iq_session").expect("a session cookie");
        SignedIn {
            cookies: format!("{pre}; {session}"),
        }
    }
}

async fn page_reply(response: reqwest::Response) -> PageReply {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let set_cookies = headers
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap_or_default().to_owned())
        .collect();
    let html = response.text().await.expect("body");
    PageReply {
        status,
        headers,
        set_cookies,
        html,
    }
}

/// Form encoding (`application/x-www-form-urlencoded`) of one name or value.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'*' => {
                (b as char).to_string()
            }
            b' ' => "+".to_owned(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
