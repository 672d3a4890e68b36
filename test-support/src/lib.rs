//! The test harness of the service, shared by its black-box tests and benchmarks:
//! `spawn_app()` and the [`TestApp`] every test drives, one typed method per endpoint,
//! [`Reply`] to read answers, [`eventually`] to poll, and a database per test cloned
//! from a migrated template ([`database`]).
//!
//! Time is a `ManualClock` fixed at [`now`], so the delay cutoff is known.

pub mod browser;
pub mod database;
pub mod server;
pub mod site;

pub use database::{create_database, database_url, server_url, DropDatabase};

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use iq_actors::accounts::SessionPolicy;
use iq_actors::clock::ManualClock;
use iq_actors::db::PoolSettings;
use iq_actors::imports::ImportLimits;
use iq_actors::quota::{QuotaActor, QuotaSettings};
use iq_service::http::body_pace::BodyPace;
use iq_service::settings::{Database, KeySecret, LogFormat, Settings};
use iq_service::startup::Application;
use serde_json::{json, Value};
use tokio_postgres::NoTls;

/// Friday 20 November 2026, 12:00 in Shanghai.
pub fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 20, 4, 0, 0).unwrap()
}

pub struct TestApp {
    pub address: String,
    pub http: reqwest::Client,
    pub db: tokio_postgres::Client,
    pub clock: Arc<ManualClock>,
    pub database_url: String,
    /// The instance's QuotaActor (in-process instances only), for its statement count.
    pub quota: Option<actix::Addr<QuotaActor>>,
    /// The database's owner, shared by every instance on it (`None` when attached to a
    /// service whose test drops the database itself).
    _database: Option<Arc<DropDatabase>>,
}

/// Options for [`spawn_with`].
pub struct Spawn {
    pub demo_data: bool,
    pub max_limit: u32,
    /// SQL run on the migrated database before the service starts.
    pub setup_sql: &'static str,
    /// `TRUSTED_PROXIES`.
    pub trusted_proxies: &'static [&'static str],
    /// Step 7 on (always, except to measure the key path without it).
    pub quota_enforced: bool,
    /// `None`: the tests' (a flush every 50 ms, so usage lands fast).
    pub quota: Option<QuotaSettings>,
    /// Any other change to the settings, applied last.
    pub tune: fn(&mut Settings),
}

impl Default for Spawn {
    fn default() -> Self {
        Spawn {
            demo_data: false,
            max_limit: 5000,
            setup_sql: "",
            trusted_proxies: &[],
            quota_enforced: true,
            quota: None,
            tune: |_| {},
        }
    }
}

/// Settings for a test instance: one worker, a small pool and cache, the given clock.
pub fn test_settings(database: Database, clock: Arc<ManualClock>) -> Settings {
    Settings {
        listen_addr: "127.0.0.1:0".into(),
        metrics_addr: None,
        database,
        service_tz: chrono_tz::Asia::Shanghai,
        max_limit: 5000,
        site_name: "Test Index".into(),
        demo_data: false,
        log_format: LogFormat::Json,
        workers: Some(1),
        pool: PoolSettings {
            max_size: 4,
            ..PoolSettings::default()
        },
        page_cache_bytes: 16 * 1024 * 1024,
        page_ttl: Duration::from_secs(300),
        key_secret: Some(
            KeySecret::new(b"a test secret of at least thirty-two bytes".to_vec()).unwrap(),
        ),
        trusted_proxies: Vec::new(),
        cookie_secure: false,
        sessions: SessionPolicy::default(),
        // Flush often, so usage read back by a test lands fast.
        quota: QuotaSettings {
            flush_interval: Duration::from_millis(50),
            ..QuotaSettings::default()
        },
        quota_enforced: true,
        import_max_bytes: 4 * 1024 * 1024,
        import_limits: ImportLimits::default(),
        website_per_minute: 300,
        body_pace: BodyPace::default(),
        max_connections_per_ip: 0,
        access_log: Default::default(),
        clock,
    }
}

/// The service on the demo data set (generated for the test clock's today).
pub async fn spawn_with_demo() -> TestApp {
    spawn_with(Spawn {
        demo_data: true,
        ..Spawn::default()
    })
    .await
}

/// The service on an empty (migrated) database.
pub async fn spawn_app() -> TestApp {
    spawn_with(Spawn::default()).await
}

/// The service on the small hand-made data set of [`FIXTURE`].
pub async fn spawn_with_fixture() -> TestApp {
    spawn_with(Spawn {
        setup_sql: FIXTURE,
        ..Spawn::default()
    })
    .await
}

pub async fn spawn_with(options: Spawn) -> TestApp {
    let database_url = create_database().await;
    let clock = Arc::new(ManualClock::new(now()));
    let mut settings = test_settings(Database::Url(database_url.clone()), clock.clone());
    settings.max_limit = options.max_limit;
    settings.demo_data = options.demo_data;
    settings.quota_enforced = options.quota_enforced;
    if let Some(quota) = options.quota {
        settings.quota = quota;
    }
    (options.tune)(&mut settings);
    settings.trusted_proxies = options
        .trusted_proxies
        .iter()
        .map(|n| n.parse().unwrap())
        .collect();
    // The database is a clone of the migrated template, so a fixture can fill its
    // tables before the service starts.
    let (db, connection) = tokio_postgres::connect(&database_url, NoTls)
        .await
        .expect("connect to test database");
    actix_web::rt::spawn(connection);
    if !options.setup_sql.is_empty() {
        db.batch_execute(options.setup_sql).await.expect("fixture");
    }
    let owner = Arc::new(DropDatabase(database_url.clone()));
    start(settings, db, clock, owner).await
}

async fn start(
    settings: Settings,
    db: tokio_postgres::Client,
    clock: Arc<ManualClock>,
    owner: Arc<DropDatabase>,
) -> TestApp {
    let database_url = owner.0.clone();
    let app = Application::build(settings)
        .await
        .expect("build application");
    let address = format!("http://127.0.0.1:{}", app.port());
    let quota = Some(app.quota());
    actix_web::rt::spawn(app.run_until_stopped());
    TestApp {
        address,
        http: reqwest::Client::new(),
        db,
        clock,
        database_url,
        quota,
        _database: Some(owner),
    }
}

impl TestApp {
    /// A `TestApp` for a service running elsewhere (a child process) at `address`; its
    /// `clock` is not that service's, which keeps the system clock.
    pub async fn attach(address: &str, database_url: &str) -> TestApp {
        let (db, connection) = tokio_postgres::connect(database_url, NoTls)
            .await
            .expect("connect to test database");
        actix_web::rt::spawn(connection);
        TestApp {
            address: address.to_string(),
            http: reqwest::Client::new(),
            db,
            clock: Arc::new(ManualClock::new(now())),
            database_url: database_url.to_string(),
            quota: None,
            _database: None,
        }
    }

    /// Another instance of the service on the same database, with its own caches and
    /// the same clock: what a second replica behind a load balancer is.
    pub async fn another_instance(&self) -> TestApp {
        let settings = test_settings(Database::Url(self.database_url.clone()), self.clock.clone());
        let (db, connection) = tokio_postgres::connect(&self.database_url, NoTls)
            .await
            .expect("connect to test database");
        actix_web::rt::spawn(connection);
        let owner = match &self._database {
            Some(owner) => owner.clone(),
            None => Arc::new(DropDatabase(self.database_url.clone())),
        };
        start(settings, db, self.clock.clone(), owner).await
    }
}

impl TestApp {
    /// Makes the test database unreachable for the service: ends every connection to
    /// it and refuses new ones, until [`TestApp::restore_database`]. (The test's own
    /// `db` connection goes too.)
    pub async fn cut_database(&self) {
        self.database_access(false).await;
    }

    pub async fn restore_database(&self) {
        self.database_access(true).await;
    }

    async fn database_access(&self, allow: bool) {
        let database = self.database_url.rsplit('/').next().unwrap().to_string();
        let (server, connection) = tokio_postgres::connect(&server_url(), NoTls)
            .await
            .expect("connect to the test server");
        actix_web::rt::spawn(connection);
        let mut sql = format!("ALTER DATABASE \"{database}\" WITH ALLOW_CONNECTIONS {allow};");
        if !allow {
            sql += &format!(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{database}';"
            );
        }
        server
            .batch_execute(&sql)
            .await
            .expect("change database access");
        // pg_terminate_backend only signals: wait until the backends are really gone,
        // or a query could still slip through one of them.
        if allow {
            return;
        }
        loop {
            let left: i64 = server
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = $1",
                    &[&database],
                )
                .await
                .expect("count backends")
                .get(0);
            if left == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// Polls `check` until it holds or `within` has passed; whether it held. Changes reach
/// other instances through PostgreSQL NOTIFY, which is prompt but not synchronous, so
/// tests of "within a second" poll instead of sleeping.
pub async fn eventually<F, Fut>(within: Duration, check: F) -> bool
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + within;
    loop {
        if check().await {
            return true;
        }
        if std::time::Instant::now() > deadline {
            return false;
        }
        actix_web::rt::time::sleep(Duration::from_millis(10)).await;
    }
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
        let text = self.header("x-ratelimit-remaining");
        text.expect("X-RateLimit-Remaining")
            .parse()
            .expect("a number")
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

    /// Column `name` of every row.
    pub fn column(&self, name: &str) -> Vec<Value> {
        let i = self
            .fields()
            .iter()
            .position(|f| *f == name)
            .expect("column");
        self.items().iter().map(|row| row[i].clone()).collect()
    }

    /// Asserts an error envelope with this HTTP status and code.
    pub fn assert_error(&self, status: u16, code: i64) {
        assert_eq!((self.status, self.code()), (status, code), "{}", self.body);
        assert!(self.body["data"].is_null(), "{}", self.body);
        assert!(self.body["request_id"]
            .as_str()
            .unwrap()
            .starts_with("req_"));
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

    pub async fn get(&self, path: &str) -> Reply {
        let response = self
            .http
            .get(format!("{}{path}", self.address))
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
}

/// A small hand-made data set with values chosen to test formatting, ordering and the
/// delay cutoff. With the clock at [`now`] (Friday 20 Nov 2026) and 16 Nov a holiday,
/// the free tier's cutoff (7 open days) is Tuesday 10 Nov 2026.
pub const FIXTURE: &str = r#"
INSERT INTO trade_calendar (trade_date)
SELECT d::date FROM generate_series('2026-11-02'::date, '2026-11-30'::date, '1 day') AS d
WHERE extract(isodow FROM d) < 6 AND d::date <> '2026-11-16';

INSERT INTO index_daily (trade_date, index_code, index_value, weighted_price, pre_value, change, pct_change) VALUES
 ('2026-11-09', 'Server_Index', 1000, 250000.5, NULL, NULL, NULL),
 ('2026-11-10', 'Server_Index', 1010.123456, 252531.36, 1000, 10.123456, 1.0123456),
 ('2026-11-11', 'Server_Index', 999.5, 249875.12, 1010.123456, -10.623456, -1.051698),
 ('2026-11-09', 'SSD_Index', 1000, 480.25, NULL, NULL, NULL),
 ('2026-11-10', 'SSD_Index', 1002, 481.2105, 1000, 2, 0.2),
 ('2026-11-09', 'GPU_Index', 1000, 30000, NULL, NULL, NULL),
 ('2026-11-10', 'GPU_Index', 990, 29700, 1000, -10, -1),
 ('2026-11-09', 'Hardware_Index', 1000, NULL, NULL, NULL, NULL),
 ('2026-11-10', 'Hardware_Index', 1003.3, NULL, 1000, 3.3, 0.33);

INSERT INTO index_quotes (trade_date, index_code, specification, weight, price) VALUES
 ('2026-11-10', 'Server_Index', 'b 8x H100 SXM 80GB', 0.5, 250000.1),
 ('2026-11-10', 'Server_Index', 'B 8x H200 SXM 141GB', 0.4, 255328.2),
 ('2026-11-10', 'Server_Index', 'Ä 8x B200 SXM 180GB', 0.1, 465000),
 ('2026-11-11', 'Server_Index', 'B 8x H200 SXM 141GB', 1, 249875.12),
 ('2026-11-10', 'GPU_Index', 'H100 SXM5 80GB', 1, 29700);
"#;

/// A password every test account uses; it passes the policy.
pub const PASSWORD: &str = "correct horse battery";

/// A signed-in website session: the cookie to send and the CSRF token from login.
#[derive(Debug, Clone)]
pub struct Session {
    pub cookie: String,
    pub csrf: String,
    pub user_id: String,
}

/// A created API key.
#[derive(Debug, Clone)]
pub struct Key {
    pub id: String,
    pub key: String,
}

impl TestApp {
    /// Any request; `session` adds the cookie and, when `csrf`, the CSRF header.
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
        session: Option<&Session>,
        csrf: bool,
    ) -> Reply {
        let mut request = self.http.request(method, format!("{}{path}", self.address));
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

    /// `POST /api/v1/auth/login`; the session when it succeeded.
    pub async fn login(&self, username: &str, password: &str) -> (Reply, Option<Session>) {
        let body = json!({"username": username, "password": password});
        let reply = self
            .call(
                reqwest::Method::POST,
                "/api/v1/auth/login",
                Some(body),
                None,
                false,
            )
            .await;
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

    pub async fn login_ok(&self, username: &str) -> Session {
        let (reply, session) = self.login(username, PASSWORD).await;
        session.unwrap_or_else(|| panic!("login of {username} failed: {}", reply.body))
    }

    /// Initialises the service with super administrator `root` and signs in.
    pub async fn admin(&self) -> Session {
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

    /// Creates a user through the back office and signs them in.
    pub async fn user(&self, admin: &Session, username: &str, tier: &str) -> Session {
        let reply = self
            .send_as(
                admin,
                reqwest::Method::POST,
                "/api/v1/admin/users",
                json!({"username": username, "password": PASSWORD, "tier": tier}),
            )
            .await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        self.login_ok(username).await
    }

    pub async fn new_key(&self, owner: &Session, body: Value) -> Key {
        let reply = self
            .send_as(owner, reqwest::Method::POST, "/api/v1/keys", body)
            .await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        Key {
            id: reply.data()["id"].as_str().unwrap().to_string(),
            key: reply.data()["key"].as_str().unwrap().to_string(),
        }
    }

    /// A user of `tier` with one key covering everything.
    pub async fn key_of_tier(&self, admin: &Session, username: &str, tier: &str) -> Key {
        let user = self.user(admin, username, tier).await;
        self.new_key(&user, json!({"name": "test"})).await
    }

    /// `PATCH /api/v1/admin/keys/{id}`, asserting success.
    pub async fn patch_key(&self, admin: &Session, key: &Key, body: Value) {
        let path = format!("/api/v1/admin/keys/{}", key.id);
        let reply = self
            .send_as(admin, reqwest::Method::PATCH, &path, body)
            .await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
    }
}

/// One typed method per back-office endpoint, answering the raw [`Reply`] so a test can
/// assert refusals as well as successes.
impl TestApp {
    /// An anonymous `POST` with a JSON body.
    pub async fn post_json(&self, path: &str, body: Value) -> Reply {
        self.call(reqwest::Method::POST, path, Some(body), None, false)
            .await
    }

    /// `POST /api/v1/admin/users` with any body.
    pub async fn create_user(&self, admin: &Session, body: Value) -> Reply {
        self.send_as(admin, reqwest::Method::POST, "/api/v1/admin/users", body)
            .await
    }

    /// Creates a user with `role` and signs them in.
    pub async fn user_with_role(&self, admin: &Session, username: &str, role: &str) -> Session {
        let body = json!({"username": username, "password": PASSWORD, "role": role});
        let reply = self.create_user(admin, body).await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        assert_eq!(reply.data()["role"], role, "{}", reply.body);
        self.login_ok(username).await
    }

    /// `POST /api/v1/keys` with any body.
    pub async fn create_key(&self, owner: &Session, body: Value) -> Reply {
        self.send_as(owner, reqwest::Method::POST, "/api/v1/keys", body)
            .await
    }

    /// `DELETE /api/v1/keys/{id}`.
    pub async fn delete_key(&self, owner: &Session, id: &str) -> Reply {
        let path = format!("/api/v1/keys/{id}");
        self.send_as(owner, reqwest::Method::DELETE, &path, json!({}))
            .await
    }

    /// `GET /api/v1/keys`.
    pub async fn list_keys(&self, owner: &Session) -> Reply {
        self.get_as(owner, "/api/v1/keys").await
    }

    /// One tier's settings as `GET /api/v1/admin/tiers` lists them.
    pub async fn tier(&self, admin: &Session, name: &str) -> Value {
        let reply = self.get_as(admin, "/api/v1/admin/tiers").await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        reply
            .data()
            .as_array()
            .and_then(|tiers| tiers.iter().find(|t| t["tier"] == name))
            .unwrap_or_else(|| panic!("no tier {name}: {}", reply.body))
            .clone()
    }

    /// `PUT /api/v1/admin/tiers/{tier}`.
    pub async fn put_tier(&self, admin: &Session, tier: &str, body: Value) -> Reply {
        let path = format!("/api/v1/admin/tiers/{tier}");
        self.send_as(admin, reqwest::Method::PUT, &path, body).await
    }

    /// `PATCH /api/v1/admin/indexes/{code}`.
    pub async fn patch_index(&self, admin: &Session, code: &str, body: Value) -> Reply {
        let path = format!("/api/v1/admin/indexes/{code}");
        self.send_as(admin, reqwest::Method::PATCH, &path, body)
            .await
    }

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

    /// `GET /api/v1/membership` as this session.
    pub async fn membership_as(&self, session: &Session) -> Reply {
        self.get_as(session, "/api/v1/membership").await
    }
}

/// The back office's lists and details (users, every key, imports) and an owner's key
/// care (rotation, renaming, usage). `query` is a raw query string (`"limit=2&q=ann"`,
/// or `""`), so a test can send bad parameters as well as good ones.
impl TestApp {
    fn with_query(path: &str, query: &str) -> String {
        if query.is_empty() {
            path.to_string()
        } else {
            format!("{path}?{query}")
        }
    }

    /// `GET /api/v1/admin/users?{query}`.
    pub async fn admin_users(&self, session: &Session, query: &str) -> Reply {
        self.get_as(session, &Self::with_query("/api/v1/admin/users", query))
            .await
    }

    /// `GET /api/v1/admin/users/{id}`.
    pub async fn admin_user(&self, session: &Session, id: &str) -> Reply {
        self.get_as(session, &format!("/api/v1/admin/users/{id}"))
            .await
    }

    /// `GET /api/v1/admin/keys?{query}`.
    pub async fn admin_keys(&self, session: &Session, query: &str) -> Reply {
        self.get_as(session, &Self::with_query("/api/v1/admin/keys", query))
            .await
    }

    /// `GET /api/v1/admin/keys/{id}/usage?{query}`.
    pub async fn admin_key_usage(&self, session: &Session, id: &str, query: &str) -> Reply {
        let path = Self::with_query(&format!("/api/v1/admin/keys/{id}/usage"), query);
        self.get_as(session, &path).await
    }

    /// `POST /api/v1/keys/{id}/rotate` (no body), with the CSRF token.
    pub async fn rotate_key(&self, owner: &Session, id: &str) -> Reply {
        let path = format!("/api/v1/keys/{id}/rotate");
        self.call(reqwest::Method::POST, &path, None, Some(owner), true)
            .await
    }

    /// `PATCH /api/v1/keys/{id}` with any body, with the CSRF token.
    pub async fn rename_key(&self, owner: &Session, id: &str, body: Value) -> Reply {
        let path = format!("/api/v1/keys/{id}");
        self.send_as(owner, reqwest::Method::PATCH, &path, body)
            .await
    }

    /// `GET /api/v1/keys/{id}/usage?{query}`.
    pub async fn own_key_usage(&self, owner: &Session, id: &str, query: &str) -> Reply {
        let path = Self::with_query(&format!("/api/v1/keys/{id}/usage"), query);
        self.get_as(owner, &path).await
    }

    /// `POST /api/v1/admin/imports` with `bytes` as the `file` field named `file_name`.
    pub async fn import_file(&self, session: &Session, file_name: &str, bytes: Vec<u8>) -> Reply {
        let part = reqwest::multipart::Part::bytes(bytes).file_name(file_name.to_string());
        let form = reqwest::multipart::Form::new().part("file", part);
        let response = self
            .http
            .post(format!("{}/api/v1/admin/imports", self.address))
            .header("Cookie", &session.cookie)
            .header("X-CSRF-Token", &session.csrf)
            .multipart(form)
            .send()
            .await
            .expect("upload");
        Self::reply(response).await
    }

    /// `GET /api/v1/admin/imports?{query}`.
    pub async fn imports(&self, session: &Session, query: &str) -> Reply {
        self.get_as(session, &Self::with_query("/api/v1/admin/imports", query))
            .await
    }

    /// `GET /api/v1/admin/imports/{id}`.
    pub async fn import_detail(&self, session: &Session, id: &str) -> Reply {
        self.get_as(session, &format!("/api/v1/admin/imports/{id}"))
            .await
    }
}
