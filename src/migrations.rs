//! Schema migrations (`sql/V*__*.sql`, embedded at build time), the restatements they
//! leave owing (D26) and the demo-data load, before the service's pool is built.
//!
//! An advisory lock serialises instances that start together on one database.

use std::sync::Arc;

use chrono::NaiveDate;
use iq_actors::clock::Clock;
use iq_actors::db::Traced;
use iq_actors::imports::Importer;
use tokio_postgres::NoTls;

mod embedded {
    refinery::embed_migrations!("sql");
}

/// The newest migration this build carries: `/readyz` checks the database has it.
pub fn latest_version() -> i32 {
    embedded::migrations::runner()
        .get_migrations()
        .iter()
        .map(|m| m.version())
        .max()
        .unwrap_or(0)
}

/// A fingerprint of this build's schema (every migration's version and checksum):
/// databases migrated by builds with the same fingerprint have the same schema. The
/// test harness names its template database with it.
pub fn fingerprint() -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for migration in embedded::migrations::runner().get_migrations() {
        for part in [
            u64::from(migration.version().unsigned_abs()),
            migration.checksum(),
        ] {
            hash = (hash ^ part).wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

/// Whether the database answers and has every migration of this build applied.
pub async fn check_ready(pool: &deadpool_postgres::Pool) -> Result<(), String> {
    let client = pool
        .get()
        .await
        .map_err(|e| format!("database unreachable: {e}"))?;
    let row = client
        .query_one_named(
            "readiness.schema_version",
            "SELECT coalesce(max(version), 0) FROM refinery_schema_history",
            &[],
        )
        .await
        .map_err(|e| format!("database unreachable: {e}"))?;
    let applied: i32 = row.try_get(0).map_err(|e| e.to_string())?;
    let expected = latest_version();
    if applied < expected {
        return Err(format!(
            "migrations behind: the database has version {applied}, this build needs {expected}"
        ));
    }
    Ok(())
}

/// Any key unique to this service; held only while migrating.
const MIGRATION_LOCK: i64 = 0x1A5E_0001;

/// The import path on a small pool of its own (the service's does not exist yet), for
/// restatements and the demo data. No actor listens here yet; NOTIFY tells any running
/// instance.
fn side_importer(
    config: &tokio_postgres::Config,
    clock: Arc<dyn Clock>,
    service_tz: chrono_tz::Tz,
) -> Result<Importer, String> {
    let settings = iq_actors::db::PoolSettings {
        max_size: 2,
        ..iq_actors::db::PoolSettings::default()
    };
    Ok(Importer {
        pool: iq_actors::db::build_pool(config.clone(), &settings)?,
        clock,
        bus: iq_actors::changes::ChangeBus::new(Vec::new()),
        limits: iq_actors::imports::ImportLimits::default(),
        service_tz,
    })
}

/// Runs `statement`, an advisory lock function taking the lock's number, on the lock
/// that serialises migrating instances.
async fn on_migration_lock(
    client: &tokio_postgres::Client,
    name: &'static str,
    statement: &str,
) -> Result<(), String> {
    client
        .execute_named(name, statement, &[&MIGRATION_LOCK])
        .await
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// Applies pending migrations and pays the restatements they owe, then loads demo data
/// when `demo` (its last day) is given and the database holds no market data yet.
/// `clock` and `service_tz` date what is published. Answers whether it loaded demo
/// data.
pub async fn prepare(
    config: &tokio_postgres::Config,
    clock: Arc<dyn Clock>,
    service_tz: chrono_tz::Tz,
    demo: Option<NaiveDate>,
) -> Result<bool, String> {
    let (mut client, connection) = config
        .connect(NoTls)
        .await
        .map_err(|e| format!("cannot connect to PostgreSQL: {e}"))?;
    let connection = tokio::spawn(connection);
    on_migration_lock(&client, "migrations.lock", "SELECT pg_advisory_lock($1)").await?;
    let report = embedded::migrations::runner()
        .run_async(&mut client)
        .await
        .map_err(|e| format!("migration failed: {e}"))?;
    for applied in report.applied_migrations() {
        tracing::info!(migration = %applied, "applied migration");
    }
    let importer = side_importer(config, clock, service_tz)?;
    importer.restate_due().await.map_err(|e| e.to_string())?;
    let mut loaded_demo = false;
    if let Some(today) = demo {
        if iq_actors::demo::is_empty(&client)
            .await
            .map_err(|e| e.to_string())?
        {
            loaded_demo = true;
            tracing::info!("loading demo data (calendar and a year of quotes)");
            let loaded = iq_actors::demo::load(&importer, today)
                .await
                .map_err(|e| e.to_string())?;
            tracing::info!(
                quotes = loaded.quotes,
                daily_rows = loaded.daily_rows,
                "demo data loaded"
            );
        }
    }
    on_migration_lock(
        &client,
        "migrations.unlock",
        "SELECT pg_advisory_unlock($1)",
    )
    .await?;
    drop(client);
    let _ = connection.await;
    Ok(loaded_demo)
}
