//! Keys, passwords and session ids never appear in logs.
//!
//! The real binary runs as a subprocess, so its real log set-up (`src/telemetry.rs`:
//! JSON lines on stderr, filtered by `RUST_LOG`) is what gets captured, at the most
//! verbose level. The test walks every path that handles a secret — set-up, logins
//! right and wrong, user and key creation, queries with good, malformed, mistyped and
//! deleted keys, session reads and mutations with good and bad CSRF tokens, logout —
//! then searches everything the process wrote for each secret.

use std::io::Read;
use std::net::TcpListener;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio_postgres::NoTls;

use crate::helpers::{create_database, server_url};

const ROOT_PASSWORD: &str = "Sup3r-Secret-Passw0rd-XYZ";
const ALICE_PASSWORD: &str = "Al1ce-Hidden-Passphrase-QRS";
const WRONG_PASSWORD: &str = "Wr0ng-Guess-Passw0rd-JKL";
const SHORT_PASSWORD: &str = "Sh0rt-LeakZ";
const MALFORMED_KEY: &str = "iq_NotARealKeyButLooksSecret123";
const BOGUS_SESSION: &str = "BogusSessionIdLooksSecret42";
const BOGUS_CSRF: &str = "BogusCsrfTokenLooksSecret77";
const KEY_SECRET: &str = "server-key-secret-for-the-log-test-0123456789";

const READY_DEADLINE: Duration = Duration::from_secs(30);
const STOP_DEADLINE: Duration = Duration::from_secs(15);

async fn drop_database(name: &str) {
    if let Ok((admin, connection)) = tokio_postgres::connect(&server_url(), NoTls).await {
        actix_web::rt::spawn(connection);
        let _ = admin
            .execute(
                &format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"),
                &[],
            )
            .await;
    }
}

/// A port nothing listens on right now.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    listener.local_addr().unwrap().port()
}

fn drain(mut pipe: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// The service binary running as a child process, its output drained by two threads.
/// Dropping it kills the child, so a failing test leaves no process behind.
struct Service {
    child: Option<Child>,
    stdout: Option<JoinHandle<Vec<u8>>>,
    stderr: Option<JoinHandle<Vec<u8>>>,
    base: String,
}

/// Everything the process wrote.
struct Output {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl Service {
    fn spawn(database_url: &str) -> Service {
        let port = free_port();
        let mut command = Command::new(env!("CARGO_BIN_EXE_iq-service"));
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("DATABASE_URL", database_url)
            .env("LISTEN_ADDR", format!("127.0.0.1:{port}"))
            .env("KEY_SECRET", KEY_SECRET)
            .env("LOG_FORMAT", "json")
            .env("RUST_LOG", "trace")
            .env("WORKERS", "1")
            .env("DB_POOL_SIZE", "4")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("start the iq-service binary");
        let stdout = drain(child.stdout.take().unwrap());
        let stderr = drain(child.stderr.take().unwrap());
        Service {
            child: Some(child),
            stdout: Some(stdout),
            stderr: Some(stderr),
            base: format!("http://127.0.0.1:{port}"),
        }
    }

    /// Polls `GET /api/v1/config` until it answers; panics with the output if the
    /// process exits or the deadline passes first.
    async fn wait_until_ready(&mut self, http: &reqwest::Client) {
        let deadline = Instant::now() + READY_DEADLINE;
        loop {
            let answer = http
                .get(format!("{}/api/v1/config", self.base))
                .timeout(Duration::from_secs(2))
                .send()
                .await;
            if answer.is_ok_and(|r| r.status().is_success()) {
                return;
            }
            let exited = self.child.as_mut().unwrap().try_wait().unwrap();
            if exited.is_some() || Instant::now() > deadline {
                let output = self.stop();
                panic!(
                    "the service did not become ready (exit: {}):\nstdout:\n{}\nstderr:\n{}",
                    output.status, output.stdout, output.stderr
                );
            }
            actix_web::rt::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// SIGTERM (graceful shutdown, so shutdown logging is captured too), SIGKILL if it
    /// does not exit in time; then everything it wrote.
    fn stop(&mut self) -> Output {
        let mut child = self.child.take().expect("the service is running");
        // nix is built without its `signal` feature; the `kill` utility sends SIGTERM.
        let termed = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        let deadline = Instant::now() + STOP_DEADLINE;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if !termed || Instant::now() > deadline {
                let _ = child.kill();
                break child.wait().unwrap();
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let text = |h: Option<JoinHandle<Vec<u8>>>| {
            String::from_utf8_lossy(&h.unwrap().join().unwrap()).into_owned()
        };
        Output {
            status,
            stdout: text(self.stdout.take()),
            stderr: text(self.stderr.take()),
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

struct Reply {
    status: u16,
    body: Value,
    set_cookies: Vec<String>,
}

impl Reply {
    fn code(&self) -> i64 {
        self.body["code"].as_i64().expect("code")
    }

    fn data(&self) -> &Value {
        &self.body["data"]
    }
}

/// Sends requests and records the `request_id` of every envelope it gets back.
struct Client {
    http: reqwest::Client,
    base: String,
    request_ids: Vec<String>,
}

impl Client {
    async fn send(
        &mut self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
        headers: &[(&str, &str)],
    ) -> Reply {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(body) = body {
            request = request.json(&body);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        let header_id = response
            .headers()
            .get("x-request-id")
            .map(|v| v.to_str().unwrap().to_string());
        let set_cookies = response
            .headers()
            .get_all("set-cookie")
            .iter()
            .map(|v| v.to_str().unwrap().to_string())
            .collect();
        let text = response.text().await.expect("body");
        let body: Value =
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("{path}: not JSON: {text}"));
        let request_id = body["request_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{path}: no request_id: {body}"))
            .to_string();
        assert!(request_id.starts_with("req_"), "{body}");
        assert_eq!(header_id.as_deref(), Some(request_id.as_str()));
        self.request_ids.push(request_id);
        Reply {
            status,
            body,
            set_cookies,
        }
    }

    async fn post(&mut self, path: &str, body: Value, headers: &[(&str, &str)]) -> Reply {
        self.send(reqwest::Method::POST, path, Some(body), headers)
            .await
    }

    /// Logs in; on success, the session cookie's value and the CSRF token.
    async fn login(&mut self, username: &str, password: &str) -> (Reply, Option<(String, String)>) {
        let reply = self
            .post(
                "/api/v1/auth/login",
                json!({"username": username, "password": password}),
                &[],
            )
            .await;
        let session = reply
            .set_cookies
            .iter()
            .find_map(|c| c.strip_prefix("iq_session="))
            .map(|rest| rest.split(';').next().unwrap().to_string())
            .filter(|_| reply.code() == 0)
            .map(|id| {
                let csrf = reply.data()["csrf_token"].as_str().expect("csrf_token");
                (id, csrf.to_string())
            });
        (reply, session)
    }
}

fn assert_code(reply: &Reply, status: u16, code: i64) {
    assert_eq!(
        (reply.status, reply.code()),
        (status, code),
        "{}",
        reply.body
    );
}

/// The valid key with one character of its random body changed.
fn mistyped(key: &str) -> String {
    let mut chars: Vec<char> = key.chars().collect();
    let i = 10;
    chars[i] = if chars[i] == 'A' { 'B' } else { 'A' };
    chars.into_iter().collect()
}

/// The part of a long log line around `needle`.
fn around<'a>(line: &'a str, needle: &str) -> &'a str {
    const MARGIN: usize = 200;
    let at = line.find(needle).unwrap_or(0);
    let mut start = at.saturating_sub(MARGIN);
    while !line.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + needle.len() + MARGIN).min(line.len());
    while !line.is_char_boundary(end) {
        end += 1;
    }
    &line[start..end]
}

#[actix_web::test]
async fn keys_passwords_session_ids_and_csrf_tokens_never_reach_the_logs() {
    let database_url = create_database().await;
    let database_name = database_url.rsplit('/').next().unwrap().to_string();
    let http = reqwest::Client::new();
    let mut service = Service::spawn(&database_url);
    service.wait_until_ready(&http).await;
    let mut client = Client {
        http,
        base: service.base.clone(),
        request_ids: Vec::new(),
    };

    // Set-up and the super administrator's logins, wrong then right.
    let reply = client
        .post(
            "/api/v1/setup",
            json!({"username": "root", "password": ROOT_PASSWORD}),
            &[],
        )
        .await;
    assert_code(&reply, 200, 0);
    let (reply, none) = client.login("root", WRONG_PASSWORD).await;
    assert_code(&reply, 401, 40102);
    assert!(none.is_none());
    let (reply, none) = client.login("nobody", WRONG_PASSWORD).await;
    assert_code(&reply, 401, 40102);
    assert!(none.is_none());
    let (reply, root) = client.login("root", ROOT_PASSWORD).await;
    let (root_session, root_csrf) = root.unwrap_or_else(|| panic!("root login: {}", reply.body));
    let root_cookie = format!("iq_session={root_session}");
    let root_headers = [
        ("Cookie", root_cookie.as_str()),
        ("X-CSRF-Token", root_csrf.as_str()),
    ];

    // A user created through the back office, a refused password, and alice's login.
    let reply = client
        .post(
            "/api/v1/admin/users",
            json!({"username": "alice", "password": ALICE_PASSWORD, "tier": "pro"}),
            &root_headers,
        )
        .await;
    assert_code(&reply, 200, 0);
    let reply = client
        .post(
            "/api/v1/admin/users",
            json!({"username": "bob", "password": SHORT_PASSWORD, "tier": "free"}),
            &root_headers,
        )
        .await;
    assert_code(&reply, 400, 40001);
    let (reply, alice) = client.login("alice", ALICE_PASSWORD).await;
    let (alice_session, alice_csrf) =
        alice.unwrap_or_else(|| panic!("alice login: {}", reply.body));
    let alice_cookie = format!("iq_session={alice_session}");
    let alice_headers = [
        ("Cookie", alice_cookie.as_str()),
        ("X-CSRF-Token", alice_csrf.as_str()),
    ];

    // A key, and a mutation with the right session but a wrong CSRF token.
    let reply = client
        .post("/api/v1/keys", json!({"name": "k"}), &alice_headers)
        .await;
    assert_code(&reply, 200, 0);
    let key = reply.data()["key"].as_str().expect("key").to_string();
    let key_id = reply.data()["id"].as_str().expect("id").to_string();
    let reply = client
        .post(
            "/api/v1/keys",
            json!({"name": "k2"}),
            &[
                ("Cookie", alice_cookie.as_str()),
                ("X-CSRF-Token", BOGUS_CSRF),
            ],
        )
        .await;
    assert_code(&reply, 403, 40301);

    // Queries: the valid key, a malformed one, the valid one mistyped, the session.
    let query = json!({"api_name": "index_basic"});
    let reply = client
        .post("/api/v1/query", query.clone(), &[("X-API-Key", &key)])
        .await;
    assert_code(&reply, 200, 0);
    let reply = client
        .post(
            "/api/v1/query",
            query.clone(),
            &[("X-API-Key", MALFORMED_KEY)],
        )
        .await;
    assert_code(&reply, 401, 40102);
    let mistyped_key = mistyped(&key);
    assert_ne!(mistyped_key, key);
    let reply = client
        .post(
            "/api/v1/query",
            query.clone(),
            &[("X-API-Key", &mistyped_key)],
        )
        .await;
    assert_code(&reply, 401, 40102);
    let reply = client
        .post(
            "/api/v1/query",
            query.clone(),
            &[("Cookie", alice_cookie.as_str())],
        )
        .await;
    assert_code(&reply, 200, 0);

    // Reads with the session, and with a session id that does not exist.
    let reply = client
        .send(
            reqwest::Method::GET,
            "/api/v1/keys",
            None,
            &[("Cookie", alice_cookie.as_str())],
        )
        .await;
    assert_code(&reply, 200, 0);
    let bogus_cookie = format!("iq_session={BOGUS_SESSION}");
    let reply = client
        .send(
            reqwest::Method::GET,
            "/api/v1/keys",
            None,
            &[("Cookie", bogus_cookie.as_str())],
        )
        .await;
    assert_eq!(reply.status, 401, "{}", reply.body);

    // The key deleted, then presented again (a database look-up that finds it deleted).
    let reply = client
        .send(
            reqwest::Method::DELETE,
            &format!("/api/v1/keys/{key_id}"),
            None,
            &alice_headers,
        )
        .await;
    assert_code(&reply, 200, 0);
    let reply = client
        .post("/api/v1/query", query.clone(), &[("X-API-Key", &key)])
        .await;
    assert_code(&reply, 401, 40102);

    // Logout, then the closed session presented again.
    let reply = client
        .post("/api/v1/auth/logout", json!({}), &alice_headers)
        .await;
    assert_code(&reply, 200, 0);
    let reply = client
        .send(
            reqwest::Method::GET,
            "/api/v1/keys",
            None,
            &[("Cookie", alice_cookie.as_str())],
        )
        .await;
    assert_eq!(reply.status, 401, "{}", reply.body);
    let reply = client
        .post("/api/v1/auth/logout", json!({}), &root_headers)
        .await;
    assert_code(&reply, 200, 0);

    let output = service.stop();
    drop_database(&database_name).await;
    let logs = format!("{}\n{}", output.stdout, output.stderr);

    // Logging was on and captured the requests: otherwise the search proves nothing.
    assert!(
        !output.stderr.trim().is_empty(),
        "the service logged nothing (exit: {})",
        output.status
    );
    for id in &client.request_ids {
        assert!(
            logs.contains(id.as_str()),
            "no log line carries request_id {id}"
        );
    }

    let secrets = [
        ("root's password", ROOT_PASSWORD.to_string()),
        ("alice's password", ALICE_PASSWORD.to_string()),
        ("the wrong password", WRONG_PASSWORD.to_string()),
        ("the refused short password", SHORT_PASSWORD.to_string()),
        ("root's session id", root_session.clone()),
        ("alice's session id", alice_session.clone()),
        ("the unknown session id", BOGUS_SESSION.to_string()),
        ("root's CSRF token", root_csrf.clone()),
        ("alice's CSRF token", alice_csrf.clone()),
        ("the wrong CSRF token", BOGUS_CSRF.to_string()),
        ("the API key", key.clone()),
        (
            "the API key without its prefix",
            key["iq_".len()..].to_string(),
        ),
        ("the malformed key", MALFORMED_KEY.to_string()),
        ("the mistyped key", mistyped_key.clone()),
        ("KEY_SECRET", KEY_SECRET.to_string()),
        // Stored forms are secrets too: a password hash can be attacked offline.
        ("a password hash", "$argon2id$".to_string()),
    ];
    let leaks: Vec<String> = secrets
        .iter()
        .filter_map(|(what, secret)| {
            let lines: Vec<&str> = logs
                .lines()
                .filter(|line| line.contains(secret.as_str()))
                .take(3)
                .map(|line| around(line, secret))
                .collect();
            (!lines.is_empty())
                .then(|| format!("{what} ({secret}) appears in:\n{}", lines.join("\n")))
        })
        .collect();
    assert!(
        leaks.is_empty(),
        "secrets in the logs:\n{}",
        leaks.join("\n\n")
    );
}
