//! `iq-service import [--note TEXT] FILE...`: the back office's quote import from a shell, for
//! operators and large files. It takes the same path as `POST /api/v1/admin/imports`
//! (same rules, same transaction, same record, same NOTIFY, so running instances drop
//! their caches), printing each stage as it goes.
//!
//! It never starts the HTTP service; with no `DATABASE_URL` it uses the embedded
//! cluster, and stops it afterwards only if it started it.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use iq_actors::audit::Author;
use iq_actors::changes::ChangeBus;
use iq_actors::imports::{Importer, Source};

use crate::migrations;
use crate::settings::Settings;
use crate::startup::open_database;

pub async fn run(settings: Settings, files: &[String], note: Option<&str>) -> ExitCode {
    if files.is_empty() {
        eprintln!("usage: iq-service import FILE.xlsx|FILE.csv ...");
        return ExitCode::from(2);
    }
    let (config, embedded) = match open_database(&settings.database.database()).await {
        Ok(opened) => opened,
        Err(err) => {
            eprintln!("import: {err}");
            return ExitCode::FAILURE;
        }
    };
    let code = import_all(&settings, config, files, note).await;
    if let Some(pg) = embedded {
        let _ = tokio::task::spawn_blocking(move || pg.stop()).await;
    }
    code
}

async fn import_all(
    settings: &Settings,
    config: tokio_postgres::Config,
    files: &[String],
    note: Option<&str>,
) -> ExitCode {
    let clock = settings.clock().clone();
    if let Err(err) = migrations::prepare(&config, clock, settings.site.service_tz, None).await {
        eprintln!("import: {err}");
        return ExitCode::FAILURE;
    }
    let pool = match iq_actors::db::build_pool(config, &settings.database.pool()) {
        Ok(pool) => pool,
        Err(err) => {
            eprintln!("import: {err}");
            return ExitCode::FAILURE;
        }
    };
    let importer = Importer {
        pool,
        clock: settings.clock().clone(),
        // No local actors to tell; NOTIFY still reaches every running instance.
        bus: ChangeBus::new(Vec::new()),
        limits: settings.imports.limits(),
        service_tz: settings.site.service_tz,
    };
    let mut failed = false;
    for file in files {
        let started = Instant::now();
        let name = Path::new(file)
            .file_name()
            .map_or_else(|| file.clone(), |n| n.to_string_lossy().into_owned());
        let bytes = match std::fs::read(file) {
            Ok(bytes) => bytes,
            Err(err) => {
                eprintln!("{file}: {err}");
                failed = true;
                continue;
            }
        };
        let progress = |stage: &str| eprintln!("{name}: {stage}");
        match importer
            .import(
                &Author::system(),
                Source::Command,
                &name,
                (bytes, note),
                &progress,
            )
            .await
        {
            Ok(outcome) => {
                // A closed pipe must not stop the imports still to come.
                let _ = crate::cli::print_line(&format!(
                    "{name}: imported (id {}): {} quotes, {} daily rows recalculated, in {:.1} s",
                    outcome.import_id,
                    outcome.quotes,
                    outcome.daily_rows,
                    started.elapsed().as_secs_f64()
                ));
            }
            Err(err) => {
                failed = true;
                eprintln!("{name}: {} {}", err.code.as_u32(), err.message);
                for row in &err.errors {
                    eprintln!("  row {}, {}: {}", row.row, row.column, row.reason);
                }
                let unlisted = err.errors_total.saturating_sub(err.errors.len());
                if unlisted > 0 {
                    eprintln!("  ... and {unlisted} more problems, not listed");
                }
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
