//! `iq-service`: serves the API. Settings come from options or environment variables
//! (`iq-service --help`); with no `DATABASE_URL` it runs an embedded PostgreSQL with
//! demo data.

use std::process::ExitCode;

use iq_service::cli::{print_line, Cli, Command};
use iq_service::settings::Settings;
use iq_service::startup::Application;
use iq_service::telemetry;

/// Every request allocates and frees a few hundred small blocks on several threads;
/// glibc's allocator spent an eighth of a cached request's CPU on them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[actix_web::main]
async fn main() -> ExitCode {
    // Parsed before anything else: help, a version, a typo or a bad setting touches
    // nothing.
    let (command, settings) = Cli::parse_or_exit().chosen();
    if let Command::Catalogue = command {
        // The dataset catalogue as JSON, the source the docs and the Python client's
        // local checks are generated from.
        let printed = serde_json::to_string_pretty(&iq_actors::catalogue::DATASETS)
            .map_err(std::io::Error::other)
            .and_then(|json| print_line(&json));
        return exit_of(printed);
    }
    if let Command::Openapi = command {
        // The API's OpenAPI document, built from the code alone: no settings, no database.
        return exit_of(print_line(&iq_service::routes::pretty_json()));
    }
    if let Command::Import { files, note } = command {
        // Quote files from a shell, through the import path.
        let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        let telemetry = telemetry::init(
            settings.telemetry.log_format(),
            settings.telemetry.rust_log.as_deref(),
            "warn",
        );
        let code = iq_service::import_command::run(settings, &files, note.as_deref()).await;
        telemetry.shutdown();
        return code;
    }
    let telemetry = telemetry::init(
        settings.telemetry.log_format(),
        settings.telemetry.rust_log.as_deref(),
        "info",
    );
    let app = match Application::build(settings.clone()).await {
        Ok(app) => app,
        Err(err) => {
            tracing::error!(error = %err, "start-up failed");
            eprintln!("start-up failed: {err}");
            telemetry.shutdown();
            return ExitCode::FAILURE;
        }
    };
    announce(&app, &settings);
    if let Some(port) = app.metrics_port() {
        tracing::info!(port, "serving /metrics on METRICS_ADDR");
    }
    let code = match app.run_until_stopped().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!(error = %err, "server failed");
            ExitCode::FAILURE
        }
    };
    // Last, so the spans of shutdown itself are exported too.
    telemetry.shutdown();
    code
}

/// Tells the person who started the service where to look: the website and the API
/// on standard output, with the one-time set-up link while there is no super
/// administrator, and a first query in the log.
fn announce(app: &Application, settings: &Settings) {
    let host = settings
        .http
        .listen_addr
        .rsplit_once(':')
        .map_or("127.0.0.1", |(h, _)| h);
    println!(
        "Website: http://{host}:{port}/  (log in with a demo account to see the member area)\n\
         API:     http://{host}:{port}/api/v1/query",
        port = app.port()
    );
    // The set-up link is a secret: standard output, for the person who started the
    // service, and never the structured log.
    if let Some(path) = app.setup_path() {
        let base = settings
            .site
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{host}:{}", app.port()));
        println!(
            "Set-up:  {base}{path}\n         \
             (one-time link for a day: create the super administrator there; its token is \
             also what SETUP_TOKEN_REQUIRED asks POST /api/v1/setup for)"
        );
    }
    tracing::info!(
        url = %format!("http://{host}:{}", app.port()),
        "listening; try: curl -s -X POST http://{host}:{}/api/v1/query -H 'Content-Type: application/json' -d '{{\"api_name\":\"index_latest\"}}'",
        app.port()
    );
}

/// A command's exit status from whether its output was written.
fn exit_of(printed: std::io::Result<()>) -> ExitCode {
    match printed {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{err}");
            ExitCode::FAILURE
        }
    }
}
