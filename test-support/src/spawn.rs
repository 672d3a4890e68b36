//! Starting the service for a test: [`spawn_app`] and its variants build the real
//! `Application` on port 0 with [`test_settings`] against a database of its own (cloned
//! by [`crate::database`]); [`TestApp::another_instance`] starts a second replica on the
//! same database, and [`TestApp::attach`] drives a service running elsewhere. It must
//! never send requests or assert on answers: the endpoint methods do that.

use std::sync::Arc;
use std::time::Duration;

use iq_actors::accounts::SessionPolicy;
use iq_actors::clock::ManualClock;
use iq_actors::db::PoolSettings;
use iq_actors::imports::ImportLimits;
use iq_actors::quota::QuotaSettings;
use iq_service::http::body_pace::BodyPace;
use iq_service::settings::{Database, KeySecret, Settings};
use iq_service::startup::Application;
use iq_service::telemetry::LogFormat;
use tokio_postgres::NoTls;

use crate::database::{create_database, DropDatabase};
use crate::{now, TestApp, FIXTURE};

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
        shutdown_delay: Duration::ZERO,
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
