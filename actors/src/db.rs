//! The PostgreSQL connection pool every actor shares, and [`Traced`], the one way
//! statements are run.
//!
//! Every statement runs under a server-side `statement_timeout` and every pool wait is
//! bounded, so a database outage answers 50000 quickly instead of hanging a request.
//! Nothing here may record a statement's parameters.

use std::future::Future;
use std::time::{Duration, Instant};

use deadpool_postgres::{Connect, Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use futures_util::future::BoxFuture;
use tokio::task::JoinHandle;
use tokio_postgres::types::{FromSql, ToSql};
use tokio_postgres::{Error, GenericClient, NoTls, Row, ToStatement};
use tracing::Instrument;

use crate::metrics::{metrics, StatementLabels};

#[derive(Debug, Clone)]
pub struct PoolSettings {
    pub max_size: usize,
    /// Longest a request waits for a connection or for a connection to be made.
    pub acquire_timeout: Duration,
    pub statement_timeout: Duration,
    /// What PostgreSQL shows for the pool's connections (`pg_stat_activity`).
    pub application_name: &'static str,
}

impl Default for PoolSettings {
    fn default() -> Self {
        PoolSettings {
            max_size: 16,
            acquire_timeout: Duration::from_secs(3),
            statement_timeout: Duration::from_secs(10),
            application_name: "iq-service",
        }
    }
}

impl PoolSettings {
    /// How the `max_size` connections are shared out between the pool every actor
    /// shares and a read pool per worker thread, for the dataset reads: half of them,
    /// split evenly between `workers`, when that gives each worker at least one;
    /// otherwise there are no read pools (`None`) and every statement uses the shared
    /// pool. The shared pool keeps the rest, so the total stays `max_size`. The read
    /// pools' connections are named `iq-service/read` in `pg_stat_activity`.
    ///
    /// Why read pools: a pooled connection's driver task runs on the thread that
    /// opened it, so with one pool for all workers most statements went to another
    /// thread and their rows came back across it (two wake-ups a statement).
    pub fn split(&self, workers: usize) -> (PoolSettings, Option<PoolSettings>) {
        let workers = workers.max(1);
        let each = self.max_size / 2 / workers;
        if each == 0 {
            return (self.clone(), None);
        }
        let shared = PoolSettings {
            max_size: self.max_size - each * workers,
            ..self.clone()
        };
        let read = PoolSettings {
            max_size: each,
            application_name: "iq-service/read",
            ..self.clone()
        };
        (shared, Some(read))
    }
}

/// Builds the pool. Connections are made lazily, so this does not touch the database.
/// Each connection's driver task runs on the thread that opens it: right for a pool
/// one thread uses (a worker's read pool), wrong for one many threads share (see
/// [`build_shared_pool`]).
pub fn build_pool(config: tokio_postgres::Config, settings: &PoolSettings) -> Result<Pool, String> {
    pool_with(config, settings, None)
}

/// Builds a pool whose connections' driver tasks all run on `drivers`, a runtime that
/// outlives everything using the pool. Opened on the opener's thread instead, a
/// connection an HTTP worker opened dies when that worker stops at shutdown, in the
/// hands of whoever holds it then: the last quota flush failed that way, with an ERROR.
pub fn build_shared_pool(
    config: tokio_postgres::Config,
    settings: &PoolSettings,
    drivers: tokio::runtime::Handle,
) -> Result<Pool, String> {
    pool_with(config, settings, Some(drivers))
}

fn pool_with(
    mut config: tokio_postgres::Config,
    settings: &PoolSettings,
    drivers: Option<tokio::runtime::Handle>,
) -> Result<Pool, String> {
    let timeout_ms = settings.statement_timeout.as_millis();
    config.options(format!("-c statement_timeout={timeout_ms}"));
    config.connect_timeout(settings.acquire_timeout);
    config.application_name(settings.application_name);
    let manager_config = ManagerConfig {
        recycling_method: RecyclingMethod::Fast,
    };
    let manager = match drivers {
        None => Manager::from_config(config, NoTls, manager_config),
        Some(drivers) => Manager::from_connect(config, DrivenOn(drivers), manager_config),
    };
    Pool::builder(manager)
        .max_size(settings.max_size)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(settings.acquire_timeout))
        .create_timeout(Some(settings.acquire_timeout))
        .recycle_timeout(Some(settings.acquire_timeout))
        .build()
        .map_err(|e| e.to_string())
}

/// Opens connections whose driver tasks run on one runtime.
struct DrivenOn(tokio::runtime::Handle);

impl Connect for DrivenOn {
    fn connect(
        &self,
        pg_config: &tokio_postgres::Config,
    ) -> BoxFuture<'_, Result<(tokio_postgres::Client, JoinHandle<()>), Error>> {
        let pg_config = pg_config.clone();
        Box::pin(async move {
            let (client, connection) = pg_config.connect(NoTls).await?;
            let driver = self.0.spawn(async move {
                if let Err(error) = connection.await {
                    tracing::warn!(target: "deadpool.postgres", %error, "connection error");
                }
            });
            Ok((client, driver))
        })
    }
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

    /// The first column of every row, collected (a list, a set): the statements that
    /// read one column, with each value's conversion checked.
    fn query_column_named<'a, T, V, C>(
        &'a self,
        name: &'static str,
        statement: &'a T,
        params: &'a [&'a (dyn ToSql + Sync)],
    ) -> impl Future<Output = Result<C, Error>> + Send + 'a
    where
        T: ?Sized + ToStatement + Sync + Send,
        V: for<'r> FromSql<'r>,
        C: FromIterator<V>,
    {
        async move {
            let rows = self.query_named(name, statement, params).await?;
            rows.iter().map(|r| r.try_get(0)).collect()
        }
    }

    /// The first column of the one row: the statements that read one value (a count,
    /// an `EXISTS`, a lock taken or not), with its conversion checked.
    fn query_value_named<'a, T, V>(
        &'a self,
        name: &'static str,
        statement: &'a T,
        params: &'a [&'a (dyn ToSql + Sync)],
    ) -> impl Future<Output = Result<V, Error>> + Send + 'a
    where
        T: ?Sized + ToStatement + Sync + Send,
        V: for<'r> FromSql<'r>,
    {
        async move {
            let row = self.query_one_named(name, statement, params).await?;
            row.try_get(0)
        }
    }

    /// The first column of the row, if there is one: the statements that read one value
    /// of a thing that may not exist.
    fn query_opt_value_named<'a, T, V>(
        &'a self,
        name: &'static str,
        statement: &'a T,
        params: &'a [&'a (dyn ToSql + Sync)],
    ) -> impl Future<Output = Result<Option<V>, Error>> + Send + 'a
    where
        T: ?Sized + ToStatement + Sync + Send,
        V: for<'r> FromSql<'r>,
    {
        async move {
            let row = self.query_opt_named(name, statement, params).await?;
            row.map(|row| row.try_get(0)).transpose()
        }
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

#[cfg(test)]
mod tests {
    use super::PoolSettings;

    fn budget(max_size: usize) -> PoolSettings {
        PoolSettings {
            max_size,
            ..PoolSettings::default()
        }
    }

    #[test]
    fn the_read_pools_and_the_shared_pool_add_up_to_the_budget() {
        for max_size in 1..=40 {
            for workers in 0..=8 {
                let (shared, read) = budget(max_size).split(workers);
                let reads = read.as_ref().map_or(0, |r| r.max_size * workers.max(1));
                assert_eq!(shared.max_size + reads, max_size, "{max_size} / {workers}");
                assert!(
                    shared.max_size >= max_size.div_ceil(2),
                    "{max_size} / {workers}"
                );
                assert!(
                    read.is_none_or(|r| r.max_size >= 1),
                    "{max_size} / {workers}"
                );
            }
        }
        let (shared, read) = budget(16).split(4);
        assert_eq!((shared.max_size, read.map(|r| r.max_size)), (8, Some(2)));
        let (shared, read) = budget(3).split(2);
        assert_eq!((shared.max_size, read.map(|r| r.max_size)), (3, None));
    }
}
