//! The OpenBB provider (`clients/openbb`, distribution `openbb-iq`) against the service:
//! its fetchers pass OpenBB's own fetcher test (`Fetcher.test`) and answer the API's
//! values, in `target/openbb-venv` with the pinned `openbb-core` of its `test` extra.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::helpers::spawn_with_demo;
use crate::python_run;
use crate::python_venv;

fn provider_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/openbb")
}

fn python() -> PathBuf {
    python_venv::editable(
        "openbb-venv",
        &provider_dir(),
        "test",
        "the OpenBB provider's tests need python3 with the venv module \
         (Debian: apt-get install python3-venv)",
    )
}

/// The provider's code as CI holds it: the client's pinned ruff and its rules, and
/// mypy --strict (pinned in the provider's `test` extra, beside `openbb-core`).
#[test]
fn the_openbb_provider_passes_ruff_and_mypy_strict() {
    iq_test_support::require!(Python);
    let linters = crate::python_client::python();
    let (clean, said) =
        crate::python_client::in_dir(&linters, &provider_dir(), "ruff", &["check", "."]);
    assert!(clean, "ruff check:\n{said}");
    let (formatted, said) = crate::python_client::in_dir(
        &linters,
        &provider_dir(),
        "ruff",
        &["format", "--check", "."],
    );
    assert!(formatted, "ruff format --check:\n{said}");
    let (typed, said) = crate::python_client::in_dir(&python(), &provider_dir(), "mypy", &[]);
    assert!(typed, "mypy --strict:\n{said}");
}

#[actix_web::test]
async fn the_openbb_provider_passes_its_fetcher_tests_against_the_service() {
    iq_test_support::require!(Python);
    let python = python_venv::prepared(python).await;
    let app = spawn_with_demo().await;
    let admin = app.admin().await;
    let pro = app.key_of_tier(&admin, "obb_pro", "pro").await;
    let env = vec![
        ("IQ_TEST_BASE_URL".to_string(), app.address.clone()),
        ("IQ_TEST_KEY".to_string(), pro.key.clone()),
        ("IQ_TEST_REQUIRE_SERVICE".to_string(), "1".to_string()),
    ];
    let started = Instant::now();
    let (passed, output) = actix_web::rt::task::spawn_blocking(move || {
        python_run::pytest(&python, &provider_dir(), &env, Duration::from_secs(300))
    })
    .await
    .expect("run pytest");
    let took = started.elapsed();
    assert!(
        passed,
        "the OpenBB provider's tests failed ({took:.1?}):\n{output}"
    );
    assert!(!output.contains("skipped"), "some were skipped:\n{output}");
    assert!(output.contains(" passed"), "{output}");
    println!("OpenBB provider tests ({took:.1?}):\n{output}");
}
