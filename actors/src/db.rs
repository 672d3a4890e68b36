//! The PostgreSQL connection pool every actor shares, and [`Traced`], the one way
//! statements are run.
//!
//! Every statement runs under a server-side `statement_timeout` and every pool wait is
//! bounded, so a database outage answers 50000 quickly instead of hanging a request.
//! Nothing here may record a statement's parameters.

use std::future::Future;
use std::time::{Duration, Instant};

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Error, GenericClient, NoTls, Row, ToStatement};
use tracing::Instrument;

use crate::metrics::{metrics, StatementLabels};

#[derive(Debug, Clone)]
pub struct PoolSettings {
    pub max_size: usize,
    /// Longest a request waits for a connection or for a connection to be made.
    pub acquire_timeout: Duration,
    pub statement_timeout: Duration,
}

impl Default for PoolSettings {
    fn default() -> Self {
        PoolSettings {
            max_size: 16,
            acquire_timeout: Duration::from_secs(3),
            statement_timeout: Duration::from_secs(10),
        }
    }
}

/// Builds the pool. Connections are made lazily, so this does not touch the database.
pub fn build_pool(
    mut config: tokio_postgres::Config,
    settings: &PoolSettings,
) -> Result<Pool, String> {
    let timeout_ms = settings.statement_timeout.as_millis();
    config.options(format!("-c statement_timeout={timeout_ms}"));
    config.connect_timeout(settings.acquire_timeout);
    config.application_name("iq-service");
    let manager = Manager::from_config(
        config,
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(manager)
        .max_size(settings.max_size)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(settings.acquire_timeout))
        .create_timeout(Some(settings.acquire_timeout))
        .recycle_timeout(Some(settings.acquire_timeout))
        .build()
        .map_err(|e| e.to_string())
}

/// Every statement the service runs goes through these, so each one gets a `sql` span
/// (statement name, rows, duration; never a parameter value, which may be a secret's
/// hash) and a sample in `iq_db_query_duration_seconds`.
///
/// `name` is a short, fixed description (`keys.lookup`): it is a metric label, so it
/// must never be built from input.
pub trait Traced: GenericClient + Sync {
    fn query_named<'a, T>(
        &'a self,
        name: &'static str,
        statement: &'a T,
        params: &'a [&'a (dyn ToSql + Sync)],
    ) -> impl Future<Output = Result<Vec<Row>, Error>> + Send + 'a
    where
        T: ?Sized + ToStatement + Sync + Send,
    {
        traced(name, async move {
            let rows = self.query(statement, params).await?;
            Ok((rows.len() as u64, rows))
        })
    }

    fn query_one_named<'a, T>(
        &'a self,
        name: &'static str,
        statement: &'a T,
        params: &'a [&'a (dyn ToSql + Sync)],
    ) -> impl Future<Output = Result<Row, Error>> + Send + 'a
    where
        T: ?Sized + ToStatement + Sync + Send,
    {
        traced(name, async move {
            Ok((1, self.query_one(statement, params).await?))
        })
    }

    fn query_opt_named<'a, T>(
        &'a self,
        name: &'static str,
        statement: &'a T,
        params: &'a [&'a (dyn ToSql + Sync)],
    ) -> impl Future<Output = Result<Option<Row>, Error>> + Send + 'a
    where
        T: ?Sized + ToStatement + Sync + Send,
    {
        traced(name, async move {
            let row = self.query_opt(statement, params).await?;
            Ok((u64::from(row.is_some()), row))
        })
    }

    fn execute_named<'a, T>(
        &'a self,
        name: &'static str,
        statement: &'a T,
        params: &'a [&'a (dyn ToSql + Sync)],
    ) -> impl Future<Output = Result<u64, Error>> + Send + 'a
    where
        T: ?Sized + ToStatement + Sync + Send,
    {
        traced(name, async move {
            let n = self.execute(statement, params).await?;
            Ok((n, n))
        })
    }

    /// Statements without parameters, or several at once (`SET LOCAL`, `LOCK`).
    fn batch_execute_named<'a>(
        &'a self,
        name: &'static str,
        sql: &'a str,
    ) -> impl Future<Output = Result<(), Error>> + Send + 'a {
        traced(name, async move {
            self.batch_execute(sql).await?;
            Ok((0, ()))
        })
    }
}

impl<C: GenericClient + Sync> Traced for C {}

/// Runs `work` (which answers its row count with its result) inside a `sql` span and
/// records its latency; for statements the methods above do not cover (COPY).
pub async fn traced<R>(
    name: &'static str,
    work: impl Future<Output = Result<(u64, R), Error>>,
) -> Result<R, Error> {
    let span = tracing::info_span!(
        "sql",
        otel.name = name,
        otel.kind = "client",
        db.system.name = "postgresql",
        db.statement.name = name,
        db.rows = tracing::field::Empty,
        error = tracing::field::Empty,
    );
    let started = Instant::now();
    let result = work.instrument(span.clone()).await;
    let labels = StatementLabels { statement: name };
    let m = metrics();
    m.db_queries
        .get_or_create(&labels)
        .observe(started.elapsed().as_secs_f64());
    match result {
        Ok((rows, value)) => {
            span.record("db.rows", rows);
            Ok(value)
        }
        Err(err) => {
            m.db_errors.get_or_create(&labels).inc();
            // The driver's message names the failing constraint or condition; it never
            // carries parameter values.
            span.record("error", tracing::field::display(&err));
            Err(err)
        }
    }
}
