//! The command line: help, version and typos answer at once, without a database or a
//! data folder.

use std::process::Command;

fn run(args: &[&str], cwd: &std::path::Path) -> std::process::Output {
    run_with(args, cwd, &[])
}

/// The binary with only the settings in `env` (every declared variable of the
/// test's own environment removed).
fn run_with(args: &[&str], cwd: &std::path::Path, env: &[(&str, &str)]) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_iq-service"));
    for variable in iq_service::settings::reference::variables() {
        command.env_remove(variable);
    }
    command
        .args(args)
        .current_dir(cwd)
        .envs(env.iter().copied())
        .output()
        .expect("the binary runs")
}

#[test]
fn help_lists_every_setting_with_its_variable() {
    let dir = tempfile::tempdir().unwrap();
    for args in [&["--help"][..], &["serve", "--help"]] {
        let help = run(args, dir.path());
        assert_eq!(help.status.code(), Some(0));
        let text = String::from_utf8_lossy(&help.stdout);
        for variable in iq_service::settings::reference::variables() {
            assert!(
                text.contains(&variable),
                "{args:?} does not name {variable}"
            );
        }
    }
}

/// A bad setting stops the start before anything is touched, naming its variable and
/// never a secret's value; a blank variable counts as unset.
#[test]
fn a_bad_setting_stops_the_start_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    for (variable, value, said) in [
        ("MAX_LIMIT", "0", "MAX_LIMIT"),
        ("QUOTA_LEASE_TTL_MS", "soon", "QUOTA_LEASE_TTL_MS"),
        ("DEMO_DATA", "perhaps", "DEMO_DATA"),
        ("TRUSTED_PROXIES", "10.0.0.0/8,proxy.local", "proxy.local"),
        ("KEY_SECRET", "hunter2", "KEY_SECRET"),
    ] {
        let refused = run_with(&["serve"], dir.path(), &[(variable, value)]);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{variable}: {stderr}");
        assert!(stderr.contains(said), "{variable}: {stderr}");
        if variable == "KEY_SECRET" {
            assert!(!stderr.contains(value), "the secret was printed: {stderr}");
        }
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    let blank = run_with(
        &["catalogue"],
        dir.path(),
        &[("MAX_LIMIT", " "), ("DEMO_DATA", "")],
    );
    assert_eq!(
        blank.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&blank.stderr)
    );
}

#[test]
fn help_version_and_typos_touch_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let help = run(&["--help"], dir.path());
    assert_eq!(help.status.code(), Some(0));
    let text = String::from_utf8_lossy(&help.stdout);
    for command in ["serve", "import", "catalogue"] {
        assert!(text.contains(command), "{text}");
    }
    let version = run(&["--version"], dir.path());
    assert_eq!(version.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("iq-service {}", env!("CARGO_PKG_VERSION"))
    );
    for typo in [&["catalog"][..], &["serve", "--port", "1"], &["import"]] {
        let refused = run(typo, dir.path());
        assert_eq!(refused.status.code(), Some(2), "{typo:?}");
        assert!(
            String::from_utf8_lossy(&refused.stderr).contains("Usage"),
            "{typo:?}"
        );
    }
    // No embedded cluster was started: the data folder was never made.
    assert!(!dir.path().join(".iq-data").exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn catalogue_prints_every_dataset() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&["catalogue"], dir.path());
    assert_eq!(out.status.code(), Some(0));
    let catalogue: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        catalogue.as_array().unwrap().len(),
        iq_actors::catalogue::DATASETS.len()
    );
}

/// `iq-service openapi | head`: the reader closes the pipe after a few bytes; the
/// command ends quietly with status 0 (it panicked on the closed pipe).
#[test]
fn documents_end_quietly_on_a_closed_pipe() {
    use std::io::Read;
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    for command in ["openapi", "catalogue"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_iq-service"))
            .arg(command)
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        let mut head = [0u8; 16];
        child
            .stdout
            .take()
            .expect("stdout")
            .read_exact(&mut head)
            .expect("the first bytes");
        // The read end is dropped here, as `head` closes it.
        let output = child.wait_with_output().expect("it ends");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{command}: {stderr}");
        assert!(stderr.is_empty(), "{command}: {stderr}");
    }
}
