//! The Python client as a user installs it: `python -m build --wheel` (the pinned
//! `build`) makes `iq_client-<version>-py3-none-any.whl` of `clients/python`, its version
//! the one `_version.py` holds and the newest entry of its changelog; the install line of
//! the client's README, which `/examples` shows word for word, installs that wheel with
//! pyarrow into a fresh virtual environment, and the installed client runs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::helpers::spawn_app;
use crate::python_run::run_until;
use crate::python_venv::{self, run_quietly, Venv};

/// The build frontend, pinned.
const BUILD: &str = "build==1.6.1";

fn client_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/python")
}

fn builder() -> PathBuf {
    python_venv::build(&Venv::pinned(
        "build-venv",
        ".iq-build-stamp",
        BUILD,
        "the wheel test needs python3 with the venv module (Debian: apt-get install python3-venv)",
    ))
}

/// `__version__` of `_version.py`.
fn version() -> String {
    let source = std::fs::read_to_string(client_dir().join("src/iq_client/_version.py")).unwrap();
    let line = source
        .lines()
        .find_map(|l| l.strip_prefix("__version__ = \""))
        .expect("a __version__ line");
    line.trim_end_matches('"').to_string()
}

/// The README's line that installs the built wheel.
fn readme_install_line() -> String {
    let readme = std::fs::read_to_string(client_dir().join("README.md")).unwrap();
    readme
        .lines()
        .find(|l| l.starts_with("pip install 'clients/python/dist/"))
        .expect("the README's install line for the wheel")
        .to_string()
}

/// Runs `command` to its end (at most five minutes: pip may download); its output.
fn run(command: &mut Command, what: &str) -> String {
    let (ok, output) = run_until(
        command,
        what,
        Instant::now() + Duration::from_secs(300),
        || format!("{what} did not finish within five minutes"),
    );
    assert!(ok, "{what} failed:\n{output}");
    output
}

#[actix_web::test]
async fn the_wheel_builds_and_the_documented_install_line_installs_it() {
    iq_test_support::require!(Python);
    let version = version();
    let out = tempfile::tempdir().unwrap();
    let dist = out.path().join("dist");

    // The changelog's newest entry is this version.
    let changelog = std::fs::read_to_string(client_dir().join("CHANGELOG.md")).unwrap();
    let newest = changelog
        .lines()
        .find_map(|l| l.strip_prefix("## "))
        .expect("a release in the changelog");
    assert_eq!(newest, version, "CHANGELOG.md's newest entry");

    // The install line the README gives is the one /examples shows.
    let line = readme_install_line();
    let wheel = format!("iq_client-{version}-py3-none-any.whl");
    assert!(line.contains(&format!("dist/{wheel}[arrow]")), "{line}");
    let app = spawn_app().await;
    let examples = app.page("/examples").await;
    assert!(
        examples
            .code_block("install-python")
            .lines()
            .any(|l| l == line),
        "/examples does not show {line}"
    );

    let (dist_for_build, dist_for_line, root) =
        (dist.clone(), dist.clone(), out.path().to_path_buf());
    actix_web::rt::task::spawn_blocking(move || {
        // The wheel, as `python -m build --wheel clients/python` makes it.
        let python = builder();
        run(
            Command::new(&python)
                .args(["-m", "build", "--wheel", "--outdir"])
                .arg(&dist_for_build)
                .arg(client_dir()),
            "python -m build",
        );
        let built = dist_for_build.join(&wheel);
        assert!(built.exists(), "no {}", built.display());

        // The README's line, against that wheel, in a fresh venv.
        let venv = root.join("venv");
        run_quietly(Command::new("python3").arg("-m").arg("venv").arg(&venv)).unwrap();
        let bin = venv.join("bin");
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let command = line.replace("clients/python/dist/", &format!("{}/", dist_for_line.display()));
        run(
            Command::new("sh")
                .arg("-c")
                .arg(format!("{command} --quiet --disable-pip-version-check"))
                .env("PATH", &path)
                .env("PIP_NO_INPUT", "1"),
            "the install line",
        );
        let output = run(
            Command::new(bin.join("python")).args([
                "-c",
                "import iq_client, pyarrow; print(iq_client.__version__, iq_client.arrow.available())",
            ]),
            "the installed client",
        );
        assert_eq!(output.trim(), format!("{version} True"));
        let output = run(
            Command::new(bin.join("python")).args(["-m", "iq_client", "--version"]),
            "python -m iq_client --version",
        );
        assert!(output.contains(&version), "{output}");
    })
    .await
    .expect("the wheel's thread");
}
