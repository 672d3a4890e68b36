//! Start-up and shutdown: resolve the database (external or embedded), migrate, load
//! demo data where asked, start the actors (singletons, before the HTTP workers), bind
//! the listener and serve until SIGINT/SIGTERM.
//!
//! Tests build an [`Application`] on port 0 and read the real port from it.

use std::net::TcpListener;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use actix::Actor;
use actix_web::dev::Server;
use actix_web::middleware::from_fn;
use actix_web::{web, App, HttpServer};
use iq_actors::accounts::api_key::KeyHasher;
use iq_actors::accounts::{Accounts, IndexSettings, Tiers};
use iq_actors::auth::AuthActor;
use iq_actors::calendar::{service_today, Calendar};
use iq_actors::changes::ChangeBus;
use iq_actors::dataset::{DatasetActor, DatasetSettings};
use iq_actors::events::{ChangeSignal, EventFeed, WindowKeeper};
use iq_actors::imports::Importer;
use iq_actors::quota::{Drain, QuotaActor, QuotaShards, QuotaStore};
use iq_actors::webhooks::{Deliverer, SecretKeeper, Webhooks};

use crate::embedded_pg::EmbeddedPostgres;
use crate::front_actor::Fronts;
use crate::http::compress::compress;
use crate::http::drain::{close_when_draining, stop_on_signal, Draining, Listening, StopSignals};
use crate::http::listener::{self, ListenOptions};
use crate::http::protection::Protection;
use crate::http::request_context::request_context;
use crate::migrations;
use crate::routes;
use crate::settings::{Database, KeySecret, Settings};
use crate::site;
use crate::site::visitor_cache::PageInvalidator;
use crate::state::AppState;
use crate::state::{FormTokens, Site, VisitorPages};
use crate::webhooks::HttpTransport;
use crate::{demo_accounts, local_secret};

#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error("embedded PostgreSQL: {0}")]
    Embedded(#[from] crate::embedded_pg::EmbeddedError),
    #[error("DATABASE_URL is not a valid PostgreSQL URL: {0}")]
    DatabaseUrl(tokio_postgres::Error),
    #[error("database: {0}")]
    Database(String),
    #[error("configuration: {0}")]
    Config(String),
    #[error("cannot listen on {addr} ({setting}): {source}; set {setting} to another address")]
    Listen {
        addr: String,
        /// The variable that sets the address.
        setting: &'static str,
        source: std::io::Error,
    },
}

/// The `METRICS_ADDR` listener: `/metrics` only, one worker, no signal handling of its
/// own (the main server's shutdown stops it).
fn metrics_server(addr: &str, state: web::Data<AppState>) -> Result<(u16, Server), StartupError> {
    let listen = |source| StartupError::Listen {
        addr: addr.to_owned(),
        setting: "METRICS_ADDR",
        source,
    };
    let listener = TcpListener::bind(addr).map_err(listen)?;
    let port = listener.local_addr().map_err(listen)?.port();
    let server = HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .configure(routes::mount_metrics)
    })
    .workers(1)
    .disable_signals()
    .listen(listener)
    .map_err(listen)?
    .run();
    Ok((port, server))
}

/// How long shutdown waits for the last quota flush when the database is slow.
pub const DRAIN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The database's connection settings, starting the embedded cluster when no
/// `DATABASE_URL` is set (the caller stops it, if it was started here).
pub async fn open_database(
    database: &Database,
) -> Result<(tokio_postgres::Config, Option<EmbeddedPostgres>), StartupError> {
    match database {
        Database::Url(url) => Ok((url.parse().map_err(StartupError::DatabaseUrl)?, None)),
        Database::Embedded { dir } => {
            let dir = dir.clone();
            let pg = tokio::task::spawn_blocking(move || EmbeddedPostgres::start(&dir))
                .await
                .map_err(|e| StartupError::Database(e.to_string()))??;
            Ok((pg.config(), Some(pg)))
        }
    }
}

/// The key secret: `KEY_SECRET`, else (embedded database only) one kept beside the
/// cluster, made at its first start.
fn key_secret(settings: &Settings, database: &Database) -> Result<KeySecret, StartupError> {
    match (&settings.accounts.key_secret, database) {
        (Some(secret), _) => Ok(secret.clone()),
        (None, Database::Embedded { dir }) => {
            let secret = local_secret::load_or_create(&dir.join("key-secret"))
                .map_err(StartupError::Config)?;
            KeySecret::new(secret).map_err(StartupError::Config)
        }
        (None, Database::Url(_)) => Err(StartupError::Config(format!(
            "KEY_SECRET must be set (at least {} characters, the same on every instance) \
             when DATABASE_URL is used",
            KeySecret::MIN_LEN
        ))),
    }
}

/// Migrations, and the demo data where asked (always on the embedded database);
/// whether the demo data was loaded now.
async fn prepare_schema(
    settings: &Settings,
    db_config: &tokio_postgres::Config,
    embedded: bool,
) -> Result<bool, StartupError> {
    let clock = settings.clock().clone();
    let service_tz = settings.site.service_tz;
    let today = service_today(clock.now(), service_tz);
    let load_demo = settings.database.demo_data || embedded;
    migrations::prepare(db_config, clock, service_tz, load_demo.then_some(today))
        .await
        .map_err(StartupError::Database)
}

/// The connection pools: the shared one, and each HTTP worker's own for dataset reads.
struct Pools {
    shared: deadpool_postgres::Pool,
    reads: Vec<deadpool_postgres::Pool>,
    workers: usize,
}

impl Pools {
    fn open(
        settings: &Settings,
        db_config: &tokio_postgres::Config,
    ) -> Result<Pools, StartupError> {
        let workers = settings.http.workers().unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        });
        let (shared, read) = settings.database.pool().split(workers);
        // The shared pool's connections are driven by this (the main) runtime, which
        // outlives the HTTP workers: the last quota flush runs after they stop.
        let pool = iq_actors::db::build_shared_pool(
            db_config.clone(),
            &shared,
            tokio::runtime::Handle::current(),
        )
        .map_err(StartupError::Database)?;
        let reads = match &read {
            Some(read) => (0..workers)
                .map(|_| {
                    iq_actors::db::build_pool(db_config.clone(), read)
                        .map_err(StartupError::Database)
                })
                .collect::<Result<Vec<_>, _>>()?,
            None => Vec::new(),
        };
        Ok(Pools {
            shared: pool,
            reads,
            workers,
        })
    }
}

/// The singleton actors, started before the HTTP workers: the AuthActor and the
/// DatasetActor (every worker gets clones of them, see `Fronts`, sharing their caches)
/// and one quota shard per worker, each owning a share of the accounts.
struct Actors {
    auth_actor: AuthActor,
    auth: actix::Addr<AuthActor>,
    datasets_actor: DatasetActor,
    datasets: actix::Addr<DatasetActor>,
    quota: QuotaShards,
}

impl Actors {
    fn start(settings: &Settings, pools: &Pools, hasher: &KeyHasher) -> Actors {
        let (pool, clock) = (&pools.shared, settings.clock());
        let auth_actor = AuthActor::new(
            pool.clone(),
            clock.clone(),
            hasher.clone(),
            settings.accounts.sessions(),
        );
        let datasets_actor = DatasetActor::new(
            pool.clone(),
            clock.clone(),
            DatasetSettings {
                service_tz: settings.site.service_tz,
                max_limit: settings.site.max_limit,
                page_cache_bytes: settings.site.page_cache_bytes(),
                page_ttl: settings.site.page_cache_ttl_secs.0,
            },
        );
        let quota = {
            let (pool, clock) = (pool.clone(), clock.clone());
            let quota_settings = settings.quota.settings();
            // A store each: its statement counters are the shard's own.
            QuotaShards::start(pools.workers, move || {
                let store = QuotaStore::new(pool.clone());
                QuotaActor::new(store, clock.clone(), quota_settings.clone())
            })
        };
        Actors {
            auth: auth_actor.clone().start(),
            auth_actor,
            datasets: datasets_actor.clone().start(),
            datasets_actor,
            quota,
        }
    }
}

/// What a data change reaches: the change bus (listening to the database's
/// notifications), the visitors' kept pages, and the signal that wakes the event feed's
/// long polls and the background work.
struct Changes {
    bus: ChangeBus,
    visitor_pages: VisitorPages,
    signal: ChangeSignal,
}

impl Changes {
    async fn listen(
        actors: &Actors,
        db_config: tokio_postgres::Config,
    ) -> Result<Changes, StartupError> {
        // The pages come last: they are made from what the others cache.
        let visitor_pages = VisitorPages::default();
        // Not a cache: it wakes the event feed's long polls and the window keeper.
        let signal = ChangeSignal::default();
        let bus = ChangeBus::new(vec![
            actors.auth.clone().recipient(),
            actors.datasets.clone().recipient(),
            PageInvalidator(visitor_pages.clone()).start().recipient(),
            signal.clone().start().recipient(),
        ]);
        bus.listen(db_config)
            .await
            .map_err(StartupError::Database)?;
        Ok(Changes {
            bus,
            visitor_pages,
            signal,
        })
    }
}

/// The work that runs beside the requests: the window keeper (events as days enter
/// members' windows) and the webhooks' deliverer; the webhooks' service for the API.
fn start_background_work(
    settings: &Settings,
    pool: &deadpool_postgres::Pool,
    changes: &Changes,
    key_secret: &KeySecret,
) -> Result<Webhooks, StartupError> {
    let clock = settings.clock();
    let keeper = WindowKeeper {
        pool: pool.clone(),
        clock: clock.clone(),
        service_tz: settings.site.service_tz,
        bus: changes.bus.clone(),
    };
    actix_web::rt::spawn(keeper.run(changes.signal.subscribe()));
    let webhooks = Webhooks {
        pool: pool.clone(),
        clock: clock.clone(),
        secrets: SecretKeeper::new(key_secret.expose()),
        allow_private: settings.webhooks.webhook_allow_private,
    };
    let transport = HttpTransport::new(settings.webhooks.webhook_allow_private)
        .map_err(StartupError::Config)?;
    let deliverer = Deliverer {
        pool: pool.clone(),
        clock: clock.clone(),
        secrets: webhooks.secrets.clone(),
        transport: Arc::new(transport),
    };
    actix_web::rt::spawn(deliverer.run(changes.signal.subscribe(), changes.bus.stopping()));
    Ok(webhooks)
}

/// The demo accounts when the demo data was loaded now; the set-up link's token while
/// no super administrator exists (each start prints a way to create one).
async fn prepare_accounts(
    accounts: &Accounts,
    demo_loaded: bool,
) -> Result<Option<String>, StartupError> {
    if demo_loaded {
        demo_accounts::create(accounts)
            .await
            .map_err(|e| StartupError::Database(e.to_string()))?;
    }
    Ok(accounts
        .issue_setup_link()
        .await
        .map_err(|e| StartupError::Database(e.to_string()))?
        .map(|token| token.expose().to_owned()))
}

/// What the application state is made of, beside the settings.
struct StateParts<'a> {
    actors: &'a Actors,
    pools: &'a Pools,
    changes: Changes,
    accounts: Accounts,
    webhooks: Webhooks,
    key_secret: &'a KeySecret,
    draining: Draining,
}

/// The state every handler reads (`AppState`).
fn app_state(settings: &Settings, parts: StateParts<'_>) -> web::Data<AppState> {
    let StateParts {
        actors,
        pools,
        changes,
        accounts,
        webhooks,
        key_secret,
        draining,
    } = parts;
    let (pool, clock, service_tz) = (&pools.shared, settings.clock(), settings.site.service_tz);
    let bus = &changes.bus;
    let front = Fronts::new(
        actors.auth_actor.clone(),
        settings
            .runtime
            .quota_enforced
            .then(|| actors.quota.clone()),
        actors.datasets_actor.clone(),
        pools.reads.clone(),
        clock.clone(),
        &settings.site.site_name,
        settings.site.max_limit,
    );
    web::Data::new(AppState {
        draining,
        front,
        accounts,
        tiers: Tiers::new(pool.clone(), bus.clone()),
        index_settings: IndexSettings::new(pool.clone(), bus.clone()),
        trusted_proxies: settings.http.trusted_proxies.clone(),
        cookie_secure: settings
            .accounts
            .cookie_secure(settings.site.public_url.as_deref()),
        setup_token_required: settings.accounts.setup_token_required,
        import_max_bytes: settings.imports.max_bytes(),
        calendar: Calendar::new(pool.clone(), bus.clone()),
        events: EventFeed::new(pool.clone(), changes.signal),
        webhooks,
        importer: Importer {
            pool: pool.clone(),
            clock: clock.clone(),
            bus: bus.clone(),
            limits: settings.imports.limits(),
            service_tz,
        },
        pool: pool.clone(),
        protection: Protection::new(clock.clone(), settings.site.website_per_minute),
        initialized: AtomicBool::new(false),
        site: Site {
            name: settings.site.site_name.clone(),
            forms: FormTokens::new(key_secret.expose()),
            clock: clock.clone(),
            service_tz,
            visitor_pages: changes.visitor_pages,
            public_url: settings.site.public_url.clone(),
        },
    })
}

/// The HTTP server on `LISTEN_ADDR` (and `/metrics` on `METRICS_ADDR` when set), bound
/// but not yet running.
struct Serving {
    port: u16,
    server: Server,
    metrics: Option<(u16, Server)>,
    signals: StopSignals,
    listening: Listening,
}

fn serve(
    settings: &Settings,
    state: web::Data<AppState>,
    accounts: Accounts,
    draining: Draining,
) -> Result<Serving, StartupError> {
    let listen = |source| StartupError::Listen {
        addr: settings.http.listen_addr.clone(),
        setting: "LISTEN_ADDR",
        source,
    };
    // What the HTTP edge reads, as app data of its own: it never reads the state.
    let edge_accounts = web::Data::new(accounts);
    let edge_draining = web::Data::new(draining);
    // Before either listener accepts a connection: a stop signal from then on
    // drains (see `StopSignals`).
    let signals = StopSignals::listen();
    let listener = TcpListener::bind(&settings.http.listen_addr).map_err(listen)?;
    let port = listener.local_addr().map_err(listen)?.port();
    let listening = Listening::of(&listener).map_err(listen)?;
    let separate_metrics = settings.http.metrics_listener().is_some();
    let metrics = match settings.http.metrics_listener() {
        Some(addr) => Some(metrics_server(addr, state.clone())?),
        None => None,
    };
    let body_pace = settings.http.body_pace();
    let access_log = settings.telemetry.access_log;
    let options = ListenOptions {
        workers: settings.http.workers(),
        max_connections_per_ip: settings.http.max_connections_per_ip,
        trusted_proxies: settings.http.trusted_proxies.clone(),
    };
    let server = listener::serve(listener, options, move || {
        App::new()
            .wrap(from_fn(close_when_draining))
            .wrap(from_fn(request_context))
            .wrap(from_fn(compress))
            .app_data(state.clone())
            .app_data(edge_accounts.clone())
            .app_data(edge_draining.clone())
            .app_data(site::PAGE_REFUSALS)
            .app_data(body_pace)
            .app_data(access_log)
            .configure(|cfg| routes::mount(cfg, !separate_metrics))
    })
    .map_err(listen)?;
    Ok(Serving {
        port,
        server,
        metrics,
        signals,
        listening,
    })
}

pub struct Application {
    port: u16,
    server: Server,
    /// The `METRICS_ADDR` listener and its port, when `/metrics` has its own.
    metrics: Option<(u16, Server)>,
    quota: QuotaShards,
    bus: ChangeBus,
    pool: deadpool_postgres::Pool,
    /// The workers' own pools for dataset reads (see `PoolSettings::split`).
    read_pools: Vec<deadpool_postgres::Pool>,
    embedded: Option<EmbeddedPostgres>,
    /// Set by a stop signal; read by `/readyz` and the `Connection: close` middleware.
    draining: Draining,
    /// Listened for since before the server accepted its first connection.
    signals: StopSignals,
    /// The listener's socket, for the stop to refuse new connections.
    listening: Listening,
    shutdown_delay: std::time::Duration,
    /// The set-up link's token issued at this start, while the service is not set up.
    setup_token: Option<String>,
}

impl Application {
    /// The service, ready to serve: each step below is a function of this file.
    pub async fn build(settings: Settings) -> Result<Application, StartupError> {
        let database = settings.database.database();
        let (db_config, embedded) = open_database(&database).await?;
        let key_secret = key_secret(&settings, &database)?;
        let demo_loaded = prepare_schema(&settings, &db_config, embedded.is_some()).await?;
        let pools = Pools::open(&settings, &db_config)?;
        let hasher = KeyHasher::new(key_secret.expose());
        let actors = Actors::start(&settings, &pools, &hasher);
        let changes = Changes::listen(&actors, db_config).await?;
        let webhooks = start_background_work(&settings, &pools.shared, &changes, &key_secret)?;
        let accounts = Accounts::new(
            pools.shared.clone(),
            hasher,
            settings.clock().clone(),
            settings.accounts.sessions(),
            changes.bus.clone(),
        );
        let setup_token = prepare_accounts(&accounts, demo_loaded).await?;
        let draining = Draining::default();
        let bus = changes.bus.clone();
        let parts = StateParts {
            actors: &actors,
            pools: &pools,
            changes,
            accounts: accounts.clone(),
            webhooks,
            key_secret: &key_secret,
            draining: draining.clone(),
        };
        let state = app_state(&settings, parts);
        let serving = serve(&settings, state, accounts, draining.clone())?;
        Ok(Application {
            port: serving.port,
            server: serving.server,
            metrics: serving.metrics,
            quota: actors.quota,
            bus,
            pool: pools.shared,
            read_pools: pools.reads,
            embedded,
            draining,
            signals: serving.signals,
            listening: serving.listening,
            shutdown_delay: settings.http.shutdown_delay_ms.0,
            setup_token,
        })
    }

    /// The one-time set-up page's path and query (`/setup?token=...`) while no super
    /// administrator exists: for the start-up lines on standard output, never a log.
    pub fn setup_path(&self) -> Option<String> {
        self.setup_token
            .as_ref()
            .map(|token| format!("/setup?token={token}"))
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The port of the `METRICS_ADDR` listener, when there is one.
    pub fn metrics_port(&self) -> Option<u16> {
        self.metrics.as_ref().map(|(port, _)| *port)
    }

    /// Stops the server from elsewhere (tests; signals do this in production).
    pub fn handle(&self) -> actix_web::dev::ServerHandle {
        self.server.handle()
    }

    /// The quota shards, for benchmarks and tests that count their statements.
    pub fn quota(&self) -> QuotaShards {
        self.quota.clone()
    }

    /// Serves until SIGINT/SIGTERM: drains for `SHUTDOWN_DELAY_MS` (see
    /// [`crate::http::drain`]), stops accepting, lets in-flight requests finish,
    /// gives quota leases back and writes usage and the call log, then stops the
    /// embedded PostgreSQL if this process started one.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let metrics = self.metrics.map(|(_, server)| {
            let handle = server.handle();
            (actix_web::rt::spawn(server), handle)
        });
        let signals = actix_web::rt::spawn(stop_on_signal(
            self.signals,
            self.server.handle(),
            self.listening,
            self.draining.clone(),
            self.shutdown_delay,
        ));
        let result = self.server.await;
        signals.abort();
        if let Some((task, handle)) = metrics {
            handle.stop(false).await;
            let _ = task.await;
        }
        tracing::info!("stopped accepting; writing quota usage");
        match self
            .quota
            .drain(Drain {
                timeout: DRAIN_TIMEOUT,
            })
            .await
        {
            Ok(report) if report.lost_windows + report.lost_calls == 0 => {
                tracing::info!("quota usage written")
            }
            Ok(_) => {} // the actor logged what it lost
            Err(err) => tracing::error!(error = %err, "quota actor gone before shutdown"),
        }
        // Close every connection on purpose, so a database stopped next is not taken
        // for an outage (reconnect attempts, warnings).
        self.bus.stop_listening();
        self.pool.close();
        for pool in &self.read_pools {
            pool.close();
        }
        if let Some(pg) = self.embedded {
            let _ = tokio::task::spawn_blocking(move || pg.stop()).await;
        }
        result
    }
}
