//! Signing in: the shared test [`PASSWORD`], the [`Session`] a login answers,
//! `POST /api/v1/auth/login` and the first-run `POST /api/v1/setup` of the super
//! administrator.

use serde_json::json;

use crate::{Reply, TestApp};

/// A password every test account uses; it passes the policy.
pub const PASSWORD: &str = "correct horse battery";

/// A signed-in website session: the cookie to send and the CSRF token from login.
#[derive(Debug, Clone)]
pub struct Session {
    pub cookie: String,
    pub csrf: String,
    pub user_id: String,
}

impl TestApp {
    /// `POST /api/v1/auth/login`; the session when it succeeded.
    pub async fn login(&self, username: &str, password: &str) -> (Reply, Option<Session>) {
        self.login_from(username, password, None).await
    }

    /// [`TestApp::login`] from the client address `from`, sent as `X-Forwarded-For` (the
    /// service must trust 127.0.0.1 as a proxy for it to count).
    pub async fn login_from(
        &self,
        username: &str,
        password: &str,
        from: Option<&str>,
    ) -> (Reply, Option<Session>) {
        self.login_with_device(username, password, from, None).await
    }

    /// [`TestApp::login_from`] from a browser holding the device cookie `device` (the
    /// `iq_device=...` pair a sign-in set, D28).
    pub async fn login_with_device(
        &self,
        username: &str,
        password: &str,
        from: Option<&str>,
        device: Option<&str>,
    ) -> (Reply, Option<Session>) {
        let body = json!({"username": username, "password": password});
        let mut request = self
            .request(reqwest::Method::POST, "/api/v1/auth/login")
            .json(&body);
        if let Some(address) = from {
            request = request.header("X-Forwarded-For", address);
        }
        if let Some(device) = device {
            request = request.header("Cookie", device);
        }
        let reply = Self::reply(request.send().await.expect("request")).await;
        let session = reply
            .set_cookies
            .iter()
            .find(|c| c.starts_with("iq_session="))
            .filter(|_| reply.code() == 0)
            .map(|set_cookie| Session {
                cookie: set_cookie.split(';').next().unwrap().to_string(),
                csrf: reply.data()["csrf_token"].as_str().unwrap().to_string(),
                user_id: reply.data()["user"]["id"].as_str().unwrap().to_string(),
            });
        (reply, session)
    }

    /// The device cookie (`iq_device=...`) a successful sign-in's answer set.
    pub fn device_cookie(reply: &Reply) -> String {
        reply
            .set_cookies
            .iter()
            .find(|c| c.starts_with("iq_device="))
            .map(|c| c.split(';').next().unwrap().to_string())
            .unwrap_or_else(|| panic!("no device cookie in {:?}", reply.set_cookies))
    }

    pub async fn login_ok(&self, username: &str) -> Session {
        let (reply, session) = self.login(username, PASSWORD).await;
        session.unwrap_or_else(|| panic!("login of {username} failed: {}", reply.body))
    }

    /// The super administrator `root`'s session: the first call initialises the service
    /// with `root` and signs in, later ones answer the same session.
    pub async fn admin(&self) -> Session {
        self.root.get_or_init(|| self.set_up_root()).await.clone()
    }

    /// The start of a test that works through the back office: this service, with
    /// [`TestApp::admin`]'s session (`spawn_app().await.with_admin()`).
    pub async fn with_admin(self) -> (TestApp, Session) {
        let admin = self.admin().await;
        (self, admin)
    }

    async fn set_up_root(&self) -> Session {
        let reply = self
            .call(
                reqwest::Method::POST,
                "/api/v1/setup",
                Some(json!({"username": "root", "password": PASSWORD})),
                None,
                false,
            )
            .await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        self.login_ok("root").await
    }
}
