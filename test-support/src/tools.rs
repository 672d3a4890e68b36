//! The tools some tests need beyond PostgreSQL (Chromium with chromedriver, nginx, Python
//! with its venv module), and what such a test does when one is missing.
//!
//! `cargo test` on a machine with only PostgreSQL runs every test that needs nothing
//! else: a test that needs a missing tool returns at once, and the first one to do so in
//! a test process says, in one line on the terminal, which tests it skips and what to
//! install. With `IQ_TEST_ALL=1` (`.ci/run` sets it) a missing tool fails the test
//! instead, so a run that must test everything never passes by skipping. This module
//! only looks for tools; it must never install or start one.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Once, OnceLock};

/// A tool some tests need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// Chromium and chromedriver: the real-browser tests.
    Browser,
    /// nginx: the fleet tests' load balancer.
    Nginx,
    /// `python3` with `venv` and `ensurepip`: the tests that run the Python client,
    /// schemathesis and the manifest renderer from venvs they build (pip then needs PyPI).
    Python,
}

impl Tool {
    const ALL: [Tool; 3] = [Tool::Browser, Tool::Nginx, Tool::Python];

    fn tests(self) -> &'static str {
        match self {
            Tool::Browser => "the real-browser tests",
            Tool::Nginx => "the fleet tests (nginx balances three instances)",
            Tool::Python => "the Python client, schemathesis and Kubernetes manifest tests",
        }
    }

    /// What to install to run them.
    pub const fn install(self) -> &'static str {
        match self {
            Tool::Browser => {
                "apt-get install chromium chromium-driver (as .ci/run does), or set CHROMIUM \
                 and CHROMEDRIVER to a Chromium and its matching chromedriver"
            }
            Tool::Nginx => "apt-get install nginx-light, or set NGINX",
            Tool::Python => "apt-get install python3 python3-venv",
        }
    }

    /// What is missing, if anything.
    fn missing(self) -> Option<String> {
        match self {
            Tool::Browser => [chromium(), chromedriver()]
                .into_iter()
                .find(|path| !runnable(path))
                .map(|path| format!("no {}", path.display())),
            Tool::Nginx => nginx().is_none().then(|| "no nginx".to_string()),
            Tool::Python => {
                let works = Command::new("python3")
                    .args(["-c", "import venv, ensurepip"])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|status| status.success());
                (!works).then(|| "no python3 with venv and ensurepip".to_string())
            }
        }
    }

    fn slot(self) -> usize {
        Tool::ALL.iter().position(|t| *t == self).unwrap_or(0)
    }

    /// [`Tool::missing`], looked for once per test process (the Python check starts a
    /// process).
    fn missing_once(self) -> Option<&'static str> {
        static MISSING: [OnceLock<Option<String>>; Tool::ALL.len()] =
            [const { OnceLock::new() }; Tool::ALL.len()];
        MISSING[self.slot()]
            .get_or_init(|| self.missing())
            .as_deref()
    }

    fn said(self) -> &'static Once {
        static SAID: [Once; Tool::ALL.len()] = [const { Once::new() }; Tool::ALL.len()];
        &SAID[self.slot()]
    }
}

/// Whether a test that needs `tool` can run: `false` (said once per test process) when
/// it is missing; a panic instead under `IQ_TEST_ALL=1`.
pub fn available(tool: Tool) -> bool {
    let Some(missing) = tool.missing_once() else {
        return true;
    };
    let (tests, install) = (tool.tests(), tool.install());
    if std::env::var_os("IQ_TEST_ALL").is_some_and(|v| v == "1") {
        panic!("{tests} cannot run ({missing}) and IQ_TEST_ALL=1 forbids skipping: {install}");
    }
    let line = format!("skipped: {tests} ({missing}; to run them: {install})");
    // Straight to the terminal: the test harness captures `eprintln!` of a passing test.
    tool.said().call_once(|| {
        let _ = writeln!(std::io::stderr(), "{line}");
    });
    false
}

/// Returns from the calling test when `Tool::$tool` is missing (see [`available`]).
#[macro_export]
macro_rules! require {
    ($tool:ident) => {
        if !$crate::tools::available($crate::tools::Tool::$tool) {
            return;
        }
    };
}

/// The Chromium the browser tests run: `CHROMIUM`, else Debian's.
pub fn chromium() -> PathBuf {
    std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/usr/bin/chromium".into())
}

/// Its chromedriver: `CHROMEDRIVER`, else Debian's.
pub fn chromedriver() -> PathBuf {
    std::env::var_os("CHROMEDRIVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/usr/bin/chromedriver".into())
}

/// The nginx binary: `NGINX` if set, else Debian's, else one on `PATH`.
pub fn nginx() -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = match std::env::var_os("NGINX") {
        Some(path) => vec![path.into()],
        None => ["/usr/sbin/nginx", "/usr/local/sbin/nginx"]
            .into_iter()
            .map(PathBuf::from)
            .chain(
                std::env::var_os("PATH")
                    .iter()
                    .flat_map(std::env::split_paths)
                    .map(|dir| dir.join("nginx")),
            )
            .collect(),
    };
    candidates.into_iter().find(|path| runnable(path))
}

/// A path that exists (a bare name is left to the OS's search when it is run).
fn runnable(path: &Path) -> bool {
    !path.is_absolute() || path.is_file()
}
