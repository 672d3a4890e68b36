//! Conformance fuzzing: schemathesis (from PyPI, pinned) generates requests from the
//! service's own OpenAPI document, valid and invalid, and checks every answer against
//! it: no server error, and each status, content type, header and body as documented.
//!
//! The tool lives in its own virtual environment, `target/schemathesis-venv`, built
//! like the Python client's (`python_venv`), reinstalled only when the pinned version
//! changes. It fuzzes the service (the fixture data) four times, each run with one
//! caller, since a present key header means key identity even with a cookie:
//!
//! - with a `pro` member's API key: the query, the site's configuration and membership,
//!   the probes, the metrics and this document;
//! - with another key of that member and `Accept: text/csv`: the query's CSV answers;
//! - with no credentials: the query and the site, as a visitor;
//! - with a super administrator's session (cookie and CSRF token): setup, login, the
//!   member's own keys, the back office and the imports.
//!
//! The runs have a budget: `--max-examples` per operation and phase, the seed fixed so
//! that a failure reproduces (`IQ_SCHEMATHESIS_SEED` tries another), and a hard
//! wall-clock limit for the runs together, past which schemathesis is killed. The
//! stateful phase is off: the document has no links.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::helpers::{spawn_with_fixture, TestApp};
use crate::python_run::run_until;
use crate::python_venv::{self, Venv};

/// The schemathesis release the checks below are written for.
const SCHEMATHESIS: &str = "schemathesis==4.32.5";
/// How long the runs together may take before schemathesis is killed.
const DEADLINE: Duration = Duration::from_secs(120);
/// Test cases per operation and phase.
const MAX_EXAMPLES: &str = "25";
/// The default seed: the same requests on every run.
const SEED: &str = "20260101";
/// Every answer must be documented: status, content type, headers and body.
const CHECKS: &str = "not_a_server_error,status_code_conformance,content_type_conformance,\
response_headers_conformance,response_schema_conformance";

fn venv() -> PathBuf {
    let python = python_venv::build(&Venv::pinned(
        "schemathesis-venv",
        ".iq-schemathesis-stamp",
        SCHEMATHESIS,
        "the schemathesis test needs python3 with the venv module \
         (Debian: apt-get install python3-venv)",
    ));
    python.with_file_name("schemathesis")
}

/// One run against `app` with `headers` on every request; success and the report.
fn run(
    schemathesis: &Path,
    app_address: &str,
    headers: &[String],
    filters: &[&str],
    seed: &str,
    deadline: Instant,
) -> (bool, String) {
    let work = tempfile::tempdir().expect("a working directory for schemathesis");
    let mut command = Command::new(schemathesis);
    command
        .args(["--no-color", "run"])
        .arg(format!("{app_address}/api/v1/openapi.json"))
        .args(["--checks", CHECKS])
        .args(["--phases", "examples,coverage,fuzzing"])
        .args(["--max-examples", MAX_EXAMPLES])
        .args(["--seed", seed])
        .args(["--workers", "2"])
        .args(["--request-timeout", "10"])
        .args(["--generation-database", "none"])
        .args(["--output-truncate", "false"])
        .args(filters);
    for header in headers {
        command.arg("-H").arg(header);
    }
    command.current_dir(work.path()).env("COLUMNS", "120");
    run_until(
        &mut command,
        &schemathesis.display().to_string(),
        deadline,
        || format!("schemathesis was killed: the runs took more than {DEADLINE:?}"),
    )
}

/// What the key fuzzes: the query, the site's configuration and membership, the probes,
/// the metrics, this document and its page.
const KEY_OPERATIONS: &[&str] = &[
    "--include-tag",
    "query",
    "--include-tag",
    "site",
    "--include-tag",
    "operations",
];
/// The query alone.
const QUERY: &[&str] = &["--include-path", "/api/v1/query"];
/// A visitor: the query and the site without credentials.
const VISITOR_OPERATIONS: &[&str] = &["--include-tag", "query", "--include-tag", "site"];
/// What the session fuzzes: everything else. Not logout, nor ending a session by its
/// number (a small number is likely to be the run's own): either would end the session
/// the rest of the run is signed in with, and every later request would only be refused.
/// Setup stays (it answers 409 at once, as documented), and so does login (wrong
/// passwords, then the login limit's 429).
const SESSION_OPERATIONS: &[&str] = &[
    "--include-tag",
    "auth",
    "--include-tag",
    "keys",
    "--include-tag",
    "admin",
    "--include-tag",
    "imports",
    "--exclude-path",
    "/api/v1/auth/logout",
    "--exclude-path",
    "/api/v1/auth/sessions/{id}",
];

/// `-H` values for each caller.
struct Callers {
    key: Vec<String>,
    csv: Vec<String>,
    session: Vec<String>,
}

/// A super administrator's session, and two keys of a `pro` member: one for JSON, one
/// asking for CSV (each with its own quota, so neither run starves the other).
async fn callers(app: &TestApp) -> Callers {
    let admin = app.admin().await;
    let pro = app.user(&admin, "fuzz_pro", "pro").await;
    let json_key = app.new_key(&pro, json!({"name": "json"})).await;
    let csv_key = app.new_key(&pro, json!({"name": "csv"})).await;
    Callers {
        key: vec![format!("X-API-Key: {}", json_key.key)],
        csv: vec![
            format!("X-API-Key: {}", csv_key.key),
            "Accept: text/csv".to_string(),
        ],
        session: vec![
            format!("Cookie: {}", admin.cookie),
            format!("X-CSRF-Token: {}", admin.csrf),
        ],
    }
}

#[actix_web::test]
async fn the_service_answers_as_its_openapi_document_says() {
    iq_test_support::require!(Python);
    let schemathesis = python_venv::prepared(venv).await;
    let app = spawn_with_fixture().await;
    let callers = callers(&app).await;
    let seed = std::env::var("IQ_SCHEMATHESIS_SEED").unwrap_or_else(|_| SEED.to_string());
    let address = app.address.clone();

    // schemathesis runs on a blocking thread while this runtime goes on serving.
    let started = Instant::now();
    let deadline = started + DEADLINE;
    let results = tokio::task::spawn_blocking(move || {
        let fuzz = |headers: &[String], operations: &[&str]| {
            run(
                &schemathesis,
                &address,
                headers,
                operations,
                &seed,
                deadline,
            )
        };
        [
            ("a pro member's key", fuzz(&callers.key, KEY_OPERATIONS)),
            (
                "a pro member's key asking for CSV",
                fuzz(&callers.csv, QUERY),
            ),
            ("no credentials (a visitor)", fuzz(&[], VISITOR_OPERATIONS)),
            (
                "a super administrator's session",
                fuzz(&callers.session, SESSION_OPERATIONS),
            ),
        ]
        .map(|(caller, (passed, output))| (caller, passed, output, seed.clone()))
    })
    .await
    .expect("run schemathesis");
    let took = started.elapsed();
    let mut failed = Vec::new();
    for (caller, passed, output, seed) in &results {
        if *passed {
            println!("schemathesis with {caller}:\n{output}");
        } else {
            failed.push(format!(
                "--- schemathesis with {caller} (seed {seed}) found answers that differ from \
                 the document:\n{output}"
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "conformance fuzzing failed ({took:.1?}):\n{}",
        failed.join("\n")
    );
}
