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

use reqwest::Method;
use serde_json::json;
use tokio_postgres::NoTls;

use crate::helpers::{create_database, server_url, Reply, Session, TestApp, PASSWORD};

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

/// Records the `request_id` of each reply, to find them in the logs later.
fn track(ids: &mut Vec<String>, reply: Reply) -> Reply {
    let id = reply.body["request_id"].as_str().expect("request_id");
    assert_eq!(reply.request_id_header.as_deref(), Some(id));
    ids.push(id.to_string());
    reply
}

/// The value of a session's cookie (`iq_session=<value>`).
fn cookie_value(session: &Session) -> String {
    session.cookie["iq_session=".len()..].to_string()
}

#[actix_web::test]
async fn keys_passwords_session_ids_and_csrf_tokens_never_reach_the_logs() {
    let database_url = create_database().await;
    let database_name = database_url.rsplit('/').next().unwrap().to_string();
    let mut service = Service::spawn(&database_url);
    service.wait_until_ready(&reqwest::Client::new()).await;
    let app = TestApp::attach(&service.base, &database_url).await;
    let mut ids = Vec::new();
    let query = json!({"api_name": "index_basic"});

    // Set-up, logins wrong and right, a user, a refused password.
    let root = app.admin().await;
    for username in ["root", "nobody"] {
        let (reply, _) = app.login(username, WRONG_PASSWORD).await;
        track(&mut ids, reply).assert_error(401, 40102);
    }
    let alice = app.user(&root, "alice", "pro").await;
    let bob = json!({"username": "bob", "password": SHORT_PASSWORD});
    let reply = app
        .send_as(&root, Method::POST, "/api/v1/admin/users", bob)
        .await;
    track(&mut ids, reply).assert_error(400, 40001);

    // A key, and a mutation with the right session but a wrong CSRF token.
    let key = app.new_key(&alice, json!({"name": "k"})).await;
    let forged = Session {
        csrf: BOGUS_CSRF.to_string(),
        ..alice.clone()
    };
    let reply = app
        .send_as(&forged, Method::POST, "/api/v1/keys", json!({"name": "k2"}))
        .await;
    track(&mut ids, reply).assert_error(403, 40301);

    // Queries: the valid key, a malformed one, the valid one mistyped, the session.
    let reply = app.query_with(query.clone(), Some(&key.key)).await;
    assert_eq!(track(&mut ids, reply).code(), 0);
    let mistyped_key = mistyped(&key.key);
    assert_ne!(mistyped_key, key.key);
    for bad in [MALFORMED_KEY, &mistyped_key] {
        let reply = app.query_with(query.clone(), Some(bad)).await;
        track(&mut ids, reply).assert_error(401, 40102);
    }
    let reply = app
        .call(
            Method::POST,
            "/api/v1/query",
            Some(query.clone()),
            Some(&alice),
            false,
        )
        .await;
    assert_eq!(track(&mut ids, reply).code(), 0);

    // Reads with the session, and with a session id that does not exist.
    let reply = app.get_as(&alice, "/api/v1/keys").await;
    assert_eq!(track(&mut ids, reply).code(), 0);
    let bogus = Session {
        cookie: format!("iq_session={BOGUS_SESSION}"),
        ..alice.clone()
    };
    let reply = app.get_as(&bogus, "/api/v1/keys").await;
    track(&mut ids, reply).assert_error(401, 40102);

    // The key deleted, then presented again (a database look-up that finds it deleted).
    let path = format!("/api/v1/keys/{}", key.id);
    let reply = app.send_as(&alice, Method::DELETE, &path, json!({})).await;
    assert_eq!(track(&mut ids, reply).code(), 0);
    let reply = app.query_with(query.clone(), Some(&key.key)).await;
    track(&mut ids, reply).assert_error(401, 40102);

    // Logout, then the closed session presented again.
    for session in [&alice, &root] {
        let reply = app
            .send_as(session, Method::POST, "/api/v1/auth/logout", json!({}))
            .await;
        assert_eq!(track(&mut ids, reply).code(), 0);
    }
    let reply = app.get_as(&alice, "/api/v1/keys").await;
    track(&mut ids, reply).assert_error(401, 40102);

    let output = service.stop();
    drop_database(&database_name).await;
    let logs = format!("{}\n{}", output.stdout, output.stderr);
    assert!(
        !output.stderr.trim().is_empty(),
        "the service logged nothing (exit: {})",
        output.status
    );
    for id in &ids {
        assert!(
            logs.contains(id.as_str()),
            "no log line carries request_id {id}"
        );
    }

    let secrets = [
        ("the accounts' password", PASSWORD.to_string()),
        ("the wrong password", WRONG_PASSWORD.to_string()),
        ("the refused short password", SHORT_PASSWORD.to_string()),
        ("root's session id", cookie_value(&root)),
        ("alice's session id", cookie_value(&alice)),
        ("the unknown session id", BOGUS_SESSION.to_string()),
        ("root's CSRF token", root.csrf.clone()),
        ("alice's CSRF token", alice.csrf.clone()),
        ("the wrong CSRF token", BOGUS_CSRF.to_string()),
        ("the API key", key.key.clone()),
        (
            "the API key without its prefix",
            key.key["iq_".len()..].to_string(),
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
