//! Virtual environments under `target/` for the tests that run a Python tool against
//! the service (`python_client`, `schemathesis`).
//!
//! [`build`] creates `target/NAME` with `python3 -m venv` and runs one `pip install`
//! into it, again only when the install's stamp changes (a stamp file in the venv holds
//! it). A file lock, `target/NAME.lock`, keeps parallel test runs from building the same
//! venv at the same time. A test gets its venv through [`prepared`], off its runtime.

use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use nix::fcntl::{Flock, FlockArg};

/// One venv and what goes in it.
pub struct Venv<'a> {
    /// The directory under `target/`.
    pub name: &'a str,
    /// What is installed, for messages.
    pub what: &'a str,
    /// The file in the venv that holds `stamp`.
    pub stamp_file: &'a str,
    /// Changes whenever `requirements` must be installed again.
    pub stamp: String,
    /// The arguments after `pip install`.
    pub requirements: Vec<OsString>,
    /// Said when the venv cannot be created.
    pub no_venv_hint: &'a str,
    /// Said when pip fails.
    pub pip_hint: &'a str,
}

impl<'a> Venv<'a> {
    /// A venv holding one pinned tool from PyPI (`requirement`, `tool==x.y.z`),
    /// installed again when the pin changes; `no_venv_hint` says which test needs it.
    pub fn pinned(
        name: &'a str,
        stamp_file: &'a str,
        requirement: &'a str,
        no_venv_hint: &'a str,
    ) -> Self {
        Venv {
            name,
            what: requirement,
            stamp_file,
            stamp: format!("{requirement}\n"),
            requirements: vec![requirement.into()],
            no_venv_hint,
            pip_hint: "is PyPI reachable?",
        }
    }
}

/// A hash of `file`, as a venv's stamp: the venv is reinstalled when the file changes.
pub fn file_stamp(file: &Path) -> String {
    use std::hash::{Hash, Hasher};
    let text = fs::read(file).unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    format!("{:016x}\n", hasher.finish())
}

/// `target/NAME` with the Python package in `dir` installed editable with `extras`
/// (`test,lint`), again whenever its `pyproject.toml` changes; its interpreter.
pub fn editable(name: &str, dir: &Path, extras: &str, no_venv_hint: &str) -> PathBuf {
    let mut requirement = OsString::from(dir);
    requirement.push(format!("[{extras}]"));
    let what = format!("{}[{extras}]", dir.display());
    build(&Venv {
        name,
        what: &what,
        stamp_file: ".iq-editable-stamp",
        stamp: file_stamp(&dir.join("pyproject.toml")),
        requirements: vec!["--editable".into(), requirement],
        no_venv_hint,
        pip_hint: "is PyPI reachable? set IQ_PYTHON to use a prepared interpreter instead",
    })
}

pub fn run_quietly(command: &mut Command) -> Result<(), String> {
    let shown = format!("{command:?}");
    match command.stdin(Stdio::null()).output() {
        Ok(output) if output.status.success() => Ok(()),
        Ok(output) => Err(format!(
            "{shown} exited with {}:\n{}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )),
        Err(err) => Err(format!("{shown} could not start: {err}")),
    }
}

/// The target directory (`target/`).
pub fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .to_path_buf()
}

/// `target/NAME` with `requirements` installed; its interpreter.
pub fn build(spec: &Venv) -> PathBuf {
    let target = target_dir();
    let venv = target.join(spec.name);
    let python = venv.join("bin").join("python");
    let stamp_path = venv.join(spec.stamp_file);

    // Other test processes (a second `cargo test`) may be building it right now.
    let lock_path = target.join(format!("{}.lock", spec.name));
    let lock_file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .unwrap_or_else(|e| panic!("open {}: {e}", lock_path.display()));
    let _lock = Flock::lock(lock_file, FlockArg::LockExclusive)
        .map_err(|(_, errno)| errno)
        .unwrap_or_else(|e| panic!("lock {}: {e}", lock_path.display()));

    if python.exists() && fs::read_to_string(&stamp_path).ok().as_deref() == Some(&spec.stamp) {
        return python;
    }
    if !python.exists() {
        run_quietly(Command::new("python3").arg("-m").arg("venv").arg(&venv))
            .unwrap_or_else(|err| panic!("{}\n{err}", spec.no_venv_hint));
    }
    run_quietly(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(&spec.requirements)
            .env("PIP_NO_INPUT", "1"),
    )
    .unwrap_or_else(|err| {
        panic!(
            "pip could not install {} into {} ({}):\n{err}",
            spec.what,
            venv.display(),
            spec.pip_hint
        )
    });
    fs::write(&stamp_path, &spec.stamp).expect("write the venv stamp");
    python
}

/// What `prepare` answers (a venv's interpreter or tool), run on a blocking thread:
/// building the venv blocks on pip, and the test's runtime must not wait on it.
pub async fn prepared(prepare: fn() -> PathBuf) -> PathBuf {
    tokio::task::spawn_blocking(prepare)
        .await
        .expect("prepare the Python environment")
}
