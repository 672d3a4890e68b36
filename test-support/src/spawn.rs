//! Starting the service for a test: [`spawn_app`] and its variants build the real
//! `Application` on port 0 with [`test_settings`] against a database of its own (cloned
//! by [`crate::database`]); [`TestApp::another_instance`] starts a second replica on the
//! same database, and [`TestApp::attach`] drives a service running elsewhere. It must
//! never send requests or assert on answers: the endpoint methods do that.

use std::sync::Arc;
use std::time::Duration;

use iq_actors::clock::ManualClock;
use iq_service::http::listener::KEEP_ALIVE;
use iq_service::settings::{Database, KeySecret, Millis, Settings};
use iq_service::startup::Application;
use iq_service::telemetry::LogFormat;

use crate::database::{connect, create_database, run_sql, DropDatabase};
use crate::{now, TestApp, FIXTURE};

/// Options for [`spawn_with`]: [`Spawn::default`] (an empty database), [`Spawn::demo`]
/// or [`Spawn::sql`], then [`Spawn::tuned`] for settings of the test's own.
pub struct Spawn {
    pub demo_data: bool,
    /// SQL run on the migrated database before the service starts.
    pub setup_sql: &'static str,
    /// Any change to the settings, applied last.
    pub tune: fn(&mut Settings),
}

impl Default for Spawn {
    fn default() -> Self {
        Spawn {
            demo_data: false,
            setup_sql: "",
            tune: |_| {},
        }
    }
}

impl Spawn {
    /// On the demo data set (generated for the test clock's today).
    pub fn demo() -> Spawn {
        Spawn {
            demo_data: true,
            ..Spawn::default()
        }
    }

    /// On a database that `setup_sql` has filled (a calendar, a data set).
    pub fn sql(setup_sql: &'static str) -> Spawn {
        Spawn {
            setup_sql,
            ..Spawn::default()
        }
    }

    /// These options, with `tune` changing the settings last.
    pub fn tuned(self, tune: fn(&mut Settings)) -> Spawn {
        Spawn { tune, ..self }
    }
}

/// The tests' HTTP client: it forgets an idle connection well before the service closes
/// it ([`KEEP_ALIVE`]), so a request is never sent on a connection the service is closing
/// at that moment (the upload of a phone test was lost that way, as `IncompleteMessage`).
pub fn http_client() -> reqwest::Client {
    http_client_builder().build().expect("an HTTP client")
}

/// [`http_client`]'s settings, for a test that adds its own (a timeout, no redirects).
/// Every test client starts here: reqwest needs the process's TLS crypto installed
/// before it builds any client.
pub fn http_client_builder() -> reqwest::ClientBuilder {
    iq_service::tls::install_crypto();
    reqwest::Client::builder().pool_idle_timeout(KEEP_ALIVE / 2)
}

/// Settings for a test instance, from the declaration's defaults: one worker, a small
/// pool and cache, usage flushed every 50 ms (so a test reads it back fast), the given
/// clock.
pub fn test_settings(database: Database, clock: Arc<ManualClock>) -> Settings {
    let mut settings = Settings::defaults();
    settings.database.set_database(database);
    settings.database.db_pool_size = 4;
    settings.http.listen_addr = "127.0.0.1:0".into();
    settings.http.metrics_on_api();
    settings.http.workers = 1;
    settings.http.max_connections_per_ip = 0;
    settings.accounts.key_secret =
        Some(KeySecret::new(b"a test secret of at least thirty-two bytes".to_vec()).unwrap());
    settings.quota.quota_flush_ms = Millis(Duration::from_millis(50));
    settings.imports.import_max_mb = 4;
    settings.site.site_name = "Test Index".into();
    settings.site.page_cache_mb = 16;
    settings.telemetry.log_format = Some(LogFormat::Json);
    settings.webhooks.webhook_allow_private = true;
    settings.runtime.clock = clock;
    settings
}

/// The service on the demo data set (generated for the test clock's today).
pub async fn spawn_with_demo() -> TestApp {
    spawn_with(Spawn::demo()).await
}

/// The service on an empty (migrated) database.
pub async fn spawn_app() -> TestApp {
    spawn_with(Spawn::default()).await
}

/// The service on the small hand-made data set of [`FIXTURE`].
pub async fn spawn_with_fixture() -> TestApp {
    spawn_with_sql(FIXTURE).await
}

/// The service on a database that `setup_sql` has filled (a calendar, a data set).
pub async fn spawn_with_sql(setup_sql: &'static str) -> TestApp {
    spawn_with(Spawn::sql(setup_sql)).await
}

/// The service on the [`FIXTURE`], then changed by `statements` (fixed SQL, never
/// input): a state the API cannot make, set up once the service runs.
pub async fn spawn_with_fixture_then(statements: &str) -> TestApp {
    let app = spawn_with_fixture().await;
    run_sql(&app.db, statements).await;
    app
}

pub async fn spawn_with(options: Spawn) -> TestApp {
    let database_url = create_database().await;
    let clock = Arc::new(ManualClock::new(now()));
    let mut settings = test_settings(Database::Url(database_url.clone()), clock.clone());
    settings.database.demo_data = options.demo_data;
    (options.tune)(&mut settings);
    // The database is a clone of the migrated template, so a fixture can fill its
    // tables before the service starts.
    let db = connect(&database_url).await;
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
        http: http_client(),
        db,
        clock,
        database_url,
        quota,
        _database: Some(owner),
        root: Default::default(),
    }
}

impl TestApp {
    /// A `TestApp` for a service running elsewhere (a child process) at `address`; its
    /// `clock` is not that service's, which keeps the system clock.
    pub async fn attach(address: &str, database_url: &str) -> TestApp {
        let db = connect(database_url).await;
        TestApp {
            address: address.to_string(),
            http: http_client(),
            db,
            clock: Arc::new(ManualClock::new(now())),
            database_url: database_url.to_string(),
            quota: None,
            _database: None,
            root: Default::default(),
        }
    }

    /// Another instance of the service on the same database, with its own caches and
    /// the same clock: what a second replica behind a load balancer is.
    pub async fn another_instance(&self) -> TestApp {
        let settings = test_settings(Database::Url(self.database_url.clone()), self.clock.clone());
        let db = connect(&self.database_url).await;
        let owner = match &self._database {
            Some(owner) => owner.clone(),
            None => Arc::new(DropDatabase(self.database_url.clone())),
        };
        start(settings, db, self.clock.clone(), owner).await
    }
}
