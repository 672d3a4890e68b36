//! The embedded PostgreSQL of the zero-configuration start (D10): a cluster the service
//! creates and runs itself from the machine's PostgreSQL server binaries, kept in a
//! local data folder so data survives restarts.
//!
//! It listens only on a Unix socket inside its own folder (no TCP port to collide with).
//! PostgreSQL refuses to run as root, so as root the cluster runs as the `postgres`
//! system user. This module never downloads anything.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nix::unistd::{Gid, Uid, User};

/// Name of the service's database inside the cluster.
pub const DATABASE: &str = "iq";
const SUPERUSER: &str = "postgres";
const PORT: u16 = 5432;

#[derive(Debug, thiserror::Error)]
pub enum EmbeddedError {
    #[error(
        "PostgreSQL server binaries (initdb, pg_ctl) were not found on PATH or in \
         /usr/lib/postgresql/*/bin. Install them (Debian/Ubuntu: `apt-get install postgresql`; \
         macOS: `brew install postgresql@16`) or set DATABASE_URL to an existing server."
    )]
    BinariesNotFound,
    #[error(
        "running as root, and PostgreSQL refuses to run as root: create a `postgres` system \
         user (installing the postgresql package does) or run as an ordinary user"
    )]
    NoUnprivilegedUser,
    #[error("{step} failed: {detail}")]
    Command { step: String, detail: String },
    #[error("data folder {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

#[derive(Debug)]
pub struct EmbeddedPostgres {
    bin_dir: PathBuf,
    cluster_dir: PathBuf,
    socket_dir: PathBuf,
    log_file: PathBuf,
    run_as: Option<(Uid, Gid)>,
    /// Whether this process started the cluster (and so is the one to stop it): an
    /// `import` command next to a running service must not stop the service's cluster.
    started_here: bool,
}

impl EmbeddedPostgres {
    /// Creates the cluster under `root` on first use, starts it unless it already runs,
    /// and makes sure the service's database exists. Blocking: call off the runtime.
    pub fn start(root: &Path) -> Result<Self, EmbeddedError> {
        let bin_dir = find_binaries().ok_or(EmbeddedError::BinariesNotFound)?;
        let run_as = if Uid::effective().is_root() {
            let user = User::from_name(SUPERUSER)
                .ok()
                .flatten()
                .ok_or(EmbeddedError::NoUnprivilegedUser)?;
            Some((user.uid, user.gid))
        } else {
            None
        };
        let mut pg = EmbeddedPostgres {
            cluster_dir: root.join("pg"),
            socket_dir: root.join("run"),
            log_file: root.join("postgres.log"),
            bin_dir,
            run_as,
            started_here: false,
        };
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| EmbeddedError::Io { path, source }
        };
        fs::create_dir_all(&pg.socket_dir).map_err(io(&pg.socket_dir))?;
        if let Some((uid, gid)) = pg.run_as {
            for dir in [root, &pg.socket_dir] {
                nix::unistd::chown(dir, Some(uid), Some(gid)).map_err(|e| EmbeddedError::Io {
                    path: dir.to_path_buf(),
                    source: e.into(),
                })?;
            }
        }
        if !pg.cluster_dir.join("PG_VERSION").exists() {
            tracing::info!(dir = %pg.cluster_dir.display(), "creating the embedded PostgreSQL cluster");
            pg.run(
                "initdb",
                &[
                    "-D".as_ref(),
                    pg.cluster_dir.as_os_str(),
                    "-U".as_ref(),
                    SUPERUSER.as_ref(),
                    "--auth=trust".as_ref(),
                    "--encoding=UTF8".as_ref(),
                    "--locale=C".as_ref(),
                ],
            )?;
        }
        if !pg.is_running() {
            pg.started_here = true;
            let options = format!(
                "-c listen_addresses='' -k {} -p {PORT}",
                pg.socket_dir.display()
            );
            pg.run(
                "pg_ctl",
                &[
                    "start".as_ref(),
                    "-w".as_ref(),
                    "-t".as_ref(),
                    "60".as_ref(),
                    "-D".as_ref(),
                    pg.cluster_dir.as_os_str(),
                    "-l".as_ref(),
                    pg.log_file.as_os_str(),
                    "-o".as_ref(),
                    options.as_ref(),
                ],
            )?;
        }
        pg.create_database()?;
        Ok(pg)
    }

    /// Connection settings for the service's database.
    pub fn config(&self) -> tokio_postgres::Config {
        let mut config = tokio_postgres::Config::new();
        config
            .host_path(&self.socket_dir)
            .port(PORT)
            .user(SUPERUSER)
            .dbname(DATABASE);
        config
    }

    /// Stops the cluster if this process started it (fast shutdown: open sessions are
    /// ended, data is safe).
    pub fn stop(&self) {
        if !self.started_here {
            return;
        }
        let result = self.run(
            "pg_ctl",
            &[
                "stop".as_ref(),
                "-w".as_ref(),
                "-m".as_ref(),
                "fast".as_ref(),
                "-D".as_ref(),
                self.cluster_dir.as_os_str(),
            ],
        );
        if let Err(err) = result {
            tracing::warn!(error = %err, "stopping the embedded PostgreSQL");
        }
    }

    fn is_running(&self) -> bool {
        self.command("pg_ctl")
            .args([
                "status".as_ref(),
                "-D".as_ref(),
                self.cluster_dir.as_os_str(),
            ])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    }

    fn create_database(&self) -> Result<(), EmbeddedError> {
        let psql = |sql: &str| {
            let socket = self.socket_dir.display().to_string();
            let port = PORT.to_string();
            self.run(
                "psql",
                &[
                    "-h", &socket, "-p", &port, "-U", SUPERUSER, "-d", "postgres", "-tAqc", sql,
                ]
                .map(AsRef::as_ref),
            )
        };
        let exists = psql(&format!(
            "SELECT 1 FROM pg_database WHERE datname = '{DATABASE}'"
        ))?;
        if String::from_utf8_lossy(&exists.stdout).trim() != "1" {
            psql(&format!("CREATE DATABASE {DATABASE}"))?;
        }
        Ok(())
    }

    fn command(&self, program: &str) -> Command {
        let path = self.bin_dir.join(program);
        let program = if path.exists() {
            path
        } else {
            PathBuf::from(program)
        };
        let mut command = Command::new(program);
        if let Some((uid, gid)) = self.run_as {
            use std::os::unix::process::CommandExt;
            command.uid(uid.as_raw()).gid(gid.as_raw()).current_dir("/");
        }
        command
    }

    fn run(&self, program: &str, args: &[&std::ffi::OsStr]) -> Result<Output, EmbeddedError> {
        let output =
            self.command(program)
                .args(args)
                .output()
                .map_err(|e| EmbeddedError::Command {
                    step: program.to_string(),
                    detail: e.to_string(),
                })?;
        if output.status.success() {
            Ok(output)
        } else {
            Err(EmbeddedError::Command {
                step: program.to_string(),
                detail: format!(
                    "{}{} (log: {})",
                    String::from_utf8_lossy(&output.stderr).trim(),
                    String::from_utf8_lossy(&output.stdout).trim(),
                    self.log_file.display()
                ),
            })
        }
    }
}

/// A folder holding both `initdb` and `pg_ctl`: PATH first, then Debian's layout, newest
/// version first.
fn find_binaries() -> Option<PathBuf> {
    let has_both = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    if let Some(dir) = on_path.into_iter().find(|d| has_both(d)) {
        return Some(dir);
    }
    let mut versions: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_str()?.parse().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .filter(|(_, dir)| has_both(dir))
        .collect();
    versions.sort();
    versions.pop().map(|(_, dir)| dir)
}
