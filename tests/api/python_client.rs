//! The Python client (`clients/python`): its packaged catalogue is the service's own,
//! and its whole test suite, unit and integration tests, passes against this service.
//!
//! The interpreter is `IQ_PYTHON` when set (it must have `clients/python[test]`
//! installed), else a virtual environment in `target/python-venv`, created with
//! `python3 -m venv` and `pip install -e 'clients/python[test]'`, reinstalled only when
//! `pyproject.toml` changes (a stamp file holds its hash). A file lock keeps parallel
//! test runs from building it at the same time.
//!
//! The integration tests get the service and their keys through `IQ_TEST_*`
//! variables (see `clients/python/tests/test_integration.py`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::helpers::{now, spawn_with_demo, Key, TestApp};
use crate::python_run::{self, run_until};
use crate::python_venv;

/// How long the whole pytest run may take before it is killed.
const PYTEST_DEADLINE: Duration = Duration::from_secs(300);
/// The indexes of the range-limited key.
const RESTRICTED_INDEXES: [&str; 2] = ["GPU_Index", "Server_Index"];
/// Calls a minute of the key for the 42901 test, and a day of the key for 42902.
const MINUTE_LIMIT: u32 = 2;
const DAY_LIMIT: u32 = 2;

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn client_dir() -> PathBuf {
    repository().join("clients").join("python")
}

fn packaged_catalogue_path() -> PathBuf {
    client_dir()
        .join("src")
        .join("iq_client")
        .join("catalogue.json")
}

// --- the catalogue -------------------------------------------------------------------

/// Every place where `packaged` and `service` differ, as `path: what` lines.
fn differences(path: &str, packaged: &Value, service: &Value, out: &mut Vec<String>) {
    match (packaged, service) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, value) in a {
                let at = format!("{path}.{key}");
                match b.get(key) {
                    Some(other) => differences(&at, value, other, out),
                    None => out.push(format!("{at}: only in the packaged file")),
                }
            }
            for key in b.keys().filter(|k| !a.contains_key(*k)) {
                out.push(format!("{path}.{key}: only in the service's catalogue"));
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for i in 0..a.len().max(b.len()) {
                let named = a.get(i).or(b.get(i)).and_then(|v| {
                    v.get("api_name")
                        .or(v.get("name"))
                        .and_then(Value::as_str)
                        .map(|n| format!(" {n}"))
                });
                let at = format!("{path}[{i}{}]", named.unwrap_or_default());
                match (a.get(i), b.get(i)) {
                    (Some(x), Some(y)) => differences(&at, x, y, out),
                    (Some(_), None) => out.push(format!("{at}: only in the packaged file")),
                    (None, Some(_)) => out.push(format!("{at}: only in the service's catalogue")),
                    (None, None) => unreachable!(),
                }
            }
        }
        (a, b) if a != b => out.push(format!("{path}: packaged {a}, service {b}")),
        _ => {}
    }
}

#[test]
fn the_packaged_catalogue_is_the_services_catalogue() {
    let output = Command::new(env!("CARGO_BIN_EXE_iq-service"))
        .arg("catalogue")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .output()
        .expect("run `iq-service catalogue`");
    assert!(
        output.status.success(),
        "`iq-service catalogue` failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let service: Value =
        serde_json::from_slice(&output.stdout).expect("`iq-service catalogue` prints JSON");
    let path = packaged_catalogue_path();
    let text = fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("read the Python client's {}: {e}", path.display()));
    let packaged: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    let mut found = Vec::new();
    differences("$", &packaged, &service, &mut found);
    assert!(
        found.is_empty(),
        "the Python client's catalogue ({}) differs from `iq-service catalogue` in {} place(s):\n  {}\n\
         Regenerate it: python3 clients/python/scripts/update_catalogue.py",
        path.display(),
        found.len(),
        found.join("\n  ")
    );
}

#[test]
fn catalogue_differences_are_named_by_path() {
    let packaged = json!([{"api_name": "index_daily", "params": [{"name": "index_code"}], "x": 1}]);
    let service = json!([{"api_name": "index_daily", "params": [], "y": 1}, {"api_name": "new"}]);
    let mut found = Vec::new();
    differences("$", &packaged, &service, &mut found);
    assert_eq!(
        found,
        [
            "$[0 index_daily].params[0 index_code]: only in the packaged file",
            "$[0 index_daily].x: only in the packaged file",
            "$[0 index_daily].y: only in the service's catalogue",
            "$[1 new]: only in the service's catalogue",
        ]
    );
}

// --- the Python environment ----------------------------------------------------------

/// `target/python-venv` with the client installed (editable, with its test and lint
/// extras).
fn build_venv() -> PathBuf {
    python_venv::editable(
        "python-venv",
        &client_dir(),
        "test,lint",
        "the Python client's tests need python3 with the venv module \
         (Debian: apt-get install python3-venv), or IQ_PYTHON set to an \
         interpreter that has `pip install -e 'clients/python[test]'` done.",
    )
}

/// The interpreter to run the client's tests with: `IQ_PYTHON`, or the venv.
pub(crate) fn python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| match std::env::var_os("IQ_PYTHON") {
            Some(python) if !python.is_empty() => PathBuf::from(python),
            _ => build_venv(),
        })
        .clone()
}

// --- the linters ---------------------------------------------------------------------

/// Runs `python -m MODULE ARGS` in `clients/python`; the exit status's success and
/// everything it printed.
fn in_client(python: &Path, module: &str, args: &[&str]) -> (bool, String) {
    in_dir(python, &client_dir(), module, args)
}

/// Runs `python -m MODULE ARGS` in `dir`; the exit status's success and everything it
/// printed.
pub(crate) fn in_dir(python: &Path, dir: &Path, module: &str, args: &[&str]) -> (bool, String) {
    let mut command = Command::new(python);
    command.arg("-m").arg(module).args(args).current_dir(dir);
    run_until(
        &mut command,
        &format!("{} -m {module}", python.display()),
        Instant::now() + PYTEST_DEADLINE,
        || format!("{module} was killed after {PYTEST_DEADLINE:?}"),
    )
}

/// The client's code as CI holds it: ruff's rules and format, and mypy's strict mode (set in
/// `pyproject.toml`, the tools pinned in its `lint` extra).
#[test]
fn the_python_client_passes_ruff_and_mypy_strict() {
    iq_test_support::require!(Python);
    let python = python();
    let (clean, said) = in_client(&python, "ruff", &["check", "."]);
    assert!(clean, "ruff check:\n{said}");
    let (formatted, said) = in_client(&python, "ruff", &["format", "--check", "."]);
    assert!(formatted, "ruff format --check:\n{said}");
    let (typed, said) = in_client(&python, "mypy", &[]);
    assert!(typed, "mypy --strict:\n{said}");
}

// --- the run against the service -----------------------------------------------------

/// Runs `python -m pytest` in `clients/python` with `env`; the exit status's success
/// and everything it printed.
fn pytest(python: &Path, env: &[(String, String)]) -> (bool, String) {
    python_run::pytest(python, &client_dir(), env, PYTEST_DEADLINE)
}

/// The keys the Python integration tests use, as `IQ_TEST_*` variables.
async fn keys_for_the_python_tests(app: &TestApp) -> Vec<(String, String)> {
    let admin = app.admin().await;
    let pro = app.user(&admin, "py_pro", "pro").await;
    let key = |body: Value| {
        let pro = pro.clone();
        async move { app.new_key(&pro, body).await }
    };
    let all = key(json!({"name": "all"})).await;
    let restricted = key(json!({"name": "range", "index_codes": RESTRICTED_INDEXES})).await;
    let no_scope = key(json!({"name": "calendar only"})).await;
    app.patch_key(&admin, &no_scope, json!({"scopes": ["calendar:read"]}))
        .await;
    let minute = key(json!({"name": "minute"})).await;
    app.patch_key(
        &admin,
        &minute,
        json!({"per_minute": MINUTE_LIMIT, "per_day": 1000}),
    )
    .await;
    let day = key(json!({"name": "day"})).await;
    app.patch_key(
        &admin,
        &day,
        json!({"per_minute": 1000, "per_day": DAY_LIMIT}),
    )
    .await;
    let free = app.key_of_tier(&admin, "py_free", "free").await;

    let today = now()
        .with_timezone(&chrono_tz::Asia::Shanghai)
        .format("%Y%m%d")
        .to_string();
    let pair = |name: &str, value: &str| (name.to_string(), value.to_string());
    let key_var = |name: &str, key: &Key| pair(name, &key.key);
    vec![
        pair("IQ_TEST_BASE_URL", &app.address),
        pair("IQ_TEST_TODAY", &today),
        key_var("IQ_TEST_KEY_ALL", &all),
        key_var("IQ_TEST_KEY_FREE", &free),
        key_var("IQ_TEST_KEY_RESTRICTED", &restricted),
        pair("IQ_TEST_RESTRICTED_INDEXES", &RESTRICTED_INDEXES.join(",")),
        key_var("IQ_TEST_KEY_NO_SCOPE", &no_scope),
        key_var("IQ_TEST_KEY_MINUTE", &minute),
        pair("IQ_TEST_MINUTE_LIMIT", &MINUTE_LIMIT.to_string()),
        key_var("IQ_TEST_KEY_DAY", &day),
        pair("IQ_TEST_DAY_LIMIT", &DAY_LIMIT.to_string()),
        pair("IQ_TEST_REQUIRE_SERVICE", "1"),
        // The administrator's session, for the test that imports and syncs at once.
        pair("IQ_TEST_ADMIN_COOKIE", &admin.cookie),
        pair("IQ_TEST_ADMIN_CSRF", &admin.csrf),
    ]
}

#[actix_web::test]
async fn the_python_client_passes_its_tests_against_the_service() {
    iq_test_support::require!(Python);
    let python = python_venv::prepared(python).await;
    let app = spawn_with_demo().await;
    let env = keys_for_the_python_tests(&app).await;

    // pytest runs on a blocking thread while this runtime goes on serving.
    let started = Instant::now();
    let (passed, output) = tokio::task::spawn_blocking(move || pytest(&python, &env))
        .await
        .expect("run pytest");
    let took = started.elapsed();
    assert!(
        passed,
        "the Python client's tests failed ({took:.1?}):\n{output}"
    );
    // Every integration test must have run: a skip here means the harness and the
    // tests disagree on the IQ_TEST_* variables.
    assert!(
        !output.contains("skipped"),
        "some Python tests were skipped:\n{output}"
    );
    println!("Python client tests ({took:.1?}):\n{output}");
}
