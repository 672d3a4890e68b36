//! Runs a Python tool (pytest, schemathesis) against the local service: its output in
//! a log, a deadline past which it is killed, so that a hung run fails the test with
//! what it printed instead of hanging the suite.

use std::io::{Read, Seek};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `command`, `what` in messages, until it exits or `deadline` passes (then it is
/// killed, and `killed` is added to the output); the exit status's success and
/// everything it printed.
pub fn run_until(
    command: &mut Command,
    what: &str,
    deadline: Instant,
    killed: impl FnOnce() -> String,
) -> (bool, String) {
    let mut log = tempfile::tempfile().expect("a temporary file for the tool's output");
    let mut child = command
        .env("PYTHONDONTWRITEBYTECODE", "1")
        // The service is local: a proxy set for CI (HTTP_PROXY...) must never carry it.
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("no_proxy", "127.0.0.1,localhost")
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("clone the log file"))
        .stderr(log.try_clone().expect("clone the log file"))
        .spawn()
        .unwrap_or_else(|e| panic!("start {what}: {e}"));
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the tool") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut output = String::new();
    log.rewind().expect("rewind the log");
    log.read_to_string(&mut output)
        .unwrap_or_else(|e| panic!("read {what}'s output: {e}"));
    match status {
        Some(status) => (status.success(), output),
        None => (false, format!("{output}\n{}", killed())),
    }
}

/// Runs `script` (`python -c`) with `args` and `env` beside the machine's, on a thread
/// of its own since the service answers on the test's; what it printed, once it has
/// succeeded within two minutes (`what` names it in messages).
pub async fn script(
    python: std::path::PathBuf,
    what: &'static str,
    script: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> String {
    let mut command = Command::new(python);
    command.arg("-c").arg(script).args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    let (ok, output) = actix_web::rt::task::spawn_blocking(move || {
        run_until(
            &mut command,
            what,
            Instant::now() + Duration::from_secs(120),
            || format!("the {what} script did not finish within two minutes"),
        )
    })
    .await
    .expect("the script's thread");
    assert!(ok, "the {what} script failed:\n{output}");
    output
}

/// The last line of `output` that is a JSON object: what a script printed as its answer.
pub fn last_json(output: &str) -> serde_json::Value {
    let line = output
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no JSON line in:\n{output}"));
    serde_json::from_str(line).expect("the script's JSON")
}

/// Runs `python -m pytest -q tests` in `dir` with `env` (and without the machine's
/// `IQ_API_KEY` and `IQ_BASE_URL`), killed after `deadline`; the exit status's success
/// and everything it printed.
pub fn pytest(
    python: &std::path::Path,
    dir: &std::path::Path,
    env: &[(String, String)],
    deadline: Duration,
) -> (bool, String) {
    let mut command = Command::new(python);
    command
        .args(["-m", "pytest", "-q", "tests"])
        .current_dir(dir)
        .env_remove("IQ_API_KEY")
        .env_remove("IQ_BASE_URL")
        .envs(env.iter().map(|(k, v)| (k, v)));
    run_until(
        &mut command,
        &format!("{} -m pytest", python.display()),
        Instant::now() + deadline,
        || format!("pytest was killed after {deadline:?}"),
    )
}
