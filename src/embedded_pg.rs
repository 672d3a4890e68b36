//! A PostgreSQL cluster run from the machine's PostgreSQL server binaries (`initdb`,
//! `pg_ctl`), kept in a folder of its own: the one way this project starts a cluster.
//!
//! - The zero-configuration start (D10) runs the service's cluster in its local data
//!   folder (`./.iq-data`), so data survives restarts, listening only on a Unix socket
//!   inside that folder ([`Listen::Socket`]: no TCP port to collide with).
//! - The test harness (`iq-test-support`) runs one throwaway cluster under `target/`
//!   for a whole test run when no server answers, on 127.0.0.1 only
//!   ([`Listen::Localhost`]).
//!
//! Creating and starting a cluster happens under a file lock in its folder
//! (`start.lock`), so processes that start at once (the service and an `import`
//! command, parallel test binaries) create and start it once and share it. PostgreSQL
//! refuses to run as root, so as root the cluster runs as the `postgres` system user.
//! This module never downloads anything, and never stops a cluster another process
//! started.

use std::fs::{self, OpenOptions};
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nix::fcntl::{Flock, FlockArg};
use nix::unistd::{Gid, Uid, User};

/// Name of the service's database inside the cluster.
pub const DATABASE: &str = "iq";
/// The superuser every cluster is made with (trusted, no password).
pub const SUPERUSER: &str = "postgres";
/// The port of a socket-only cluster (part of its socket's name).
const SOCKET_PORT: u16 = 5432;

/// Where a cluster listens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listen {
    /// Only on a Unix socket in its folder.
    Socket,
    /// On 127.0.0.1 only, at a free port picked when the cluster starts and recorded in
    /// its folder (`port`), for the processes that find it running.
    Localhost,
}

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
    listen: Listen,
    port: u16,
    run_as: Option<(Uid, Gid)>,
    /// Whether this process started the cluster (and so is the one to stop it): an
    /// `import` command next to a running service must not stop the service's cluster.
    started_here: bool,
}

impl EmbeddedPostgres {
    /// The service's cluster: created under `root` on first use, started unless it
    /// already runs, on its Unix socket only, with the service's database. Blocking: call
    /// off the runtime.
    pub fn start(root: &Path) -> Result<Self, EmbeddedError> {
        Self::start_with(root, Listen::Socket, Some(DATABASE))
    }

    /// Creates the cluster under `root` on first use, starts it unless it already runs
    /// (listening as `listen` says; one found running keeps its port), and creates
    /// `database` unless it exists. All of it under the folder's lock. Blocking.
    pub fn start_with(
        root: &Path,
        listen: Listen,
        database: Option<&str>,
    ) -> Result<Self, EmbeddedError> {
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
            listen,
            port: SOCKET_PORT,
            run_as,
            started_here: false,
        };
        fs::create_dir_all(&pg.socket_dir).map_err(io(&pg.socket_dir))?;
        let _lock = lock(&root.join("start.lock"))?;
        if let Some((uid, gid)) = pg.run_as {
            for dir in [root, &pg.socket_dir] {
                nix::unistd::chown(dir, Some(uid), Some(gid)).map_err(|e| EmbeddedError::Io {
                    path: dir.to_path_buf(),
                    source: e.into(),
                })?;
            }
        }
        if !pg.cluster_dir.join("PG_VERSION").exists() {
            pg.init()?;
        }
        let port_file = root.join("port");
        if pg.is_running() {
            if listen == Listen::Localhost {
                pg.port = recorded_port(&port_file)?;
            }
        } else {
            pg.started_here = true;
            if listen == Listen::Localhost {
                pg.port = free_port().map_err(io(root))?;
                fs::write(&port_file, pg.port.to_string()).map_err(io(&port_file))?;
            }
            pg.start_server()?;
        }
        if let Some(database) = database {
            pg.create_database(database)?;
        }
        Ok(pg)
    }

    /// `initdb`: a new cluster, trusting local connections (its socket is the service's
    /// own folder), in UTF-8 with the C locale.
    fn init(&self) -> Result<(), EmbeddedError> {
        tracing::info!(dir = %self.cluster_dir.display(), "creating the embedded PostgreSQL cluster");
        self.run(
            "initdb",
            &[
                "-D".as_ref(),
                self.cluster_dir.as_os_str(),
                "-U".as_ref(),
                SUPERUSER.as_ref(),
                "--auth=trust".as_ref(),
                "--encoding=UTF8".as_ref(),
                "--locale=C".as_ref(),
            ],
        )
        .map(drop)
    }

    /// `pg_ctl start`, waiting up to a minute: on the socket only, or on localhost at
    /// `self.port` as well.
    fn start_server(&self) -> Result<(), EmbeddedError> {
        let addresses = match self.listen {
            Listen::Socket => "",
            Listen::Localhost => "127.0.0.1",
        };
        let options = format!(
            "-c listen_addresses='{addresses}' -k {} -p {}",
            self.socket_dir.display(),
            self.port
        );
        self.run(
            "pg_ctl",
            &[
                "start".as_ref(),
                "-w".as_ref(),
                "-t".as_ref(),
                "60".as_ref(),
                "-D".as_ref(),
                self.cluster_dir.as_os_str(),
                "-l".as_ref(),
                self.log_file.as_os_str(),
                "-o".as_ref(),
                options.as_ref(),
            ],
        )
        .map(drop)
    }

    /// Connection settings for the service's database.
    pub fn config(&self) -> tokio_postgres::Config {
        let mut config = tokio_postgres::Config::new();
        match self.listen {
            Listen::Socket => config.host_path(&self.socket_dir),
            Listen::Localhost => config.host("127.0.0.1"),
        };
        config.port(self.port).user(SUPERUSER).dbname(DATABASE);
        config
    }

    /// The port it listens on (with [`Listen::Localhost`], on 127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
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

    fn create_database(&self, database: &str) -> Result<(), EmbeddedError> {
        let psql = |sql: &str| {
            let socket = self.socket_dir.display().to_string();
            let port = self.port.to_string();
            self.run(
                "psql",
                &[
                    "-h", &socket, "-p", &port, "-U", SUPERUSER, "-d", "postgres", "-tAqc", sql,
                ]
                .map(AsRef::as_ref),
            )
        };
        let exists = psql(&format!(
            "SELECT 1 FROM pg_database WHERE datname = '{database}'"
        ))?;
        if String::from_utf8_lossy(&exists.stdout).trim() != "1" {
            psql(&format!("CREATE DATABASE \"{database}\""))?;
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

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> EmbeddedError {
    let path = path.to_path_buf();
    move |source| EmbeddedError::Io { path, source }
}

/// An exclusive lock on `path` (created if need be), held until the guard is dropped.
fn lock(path: &Path) -> Result<Flock<fs::File>, EmbeddedError> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(io(path))?;
    Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, errno)| io(path)(errno.into()))
}

/// A port nothing listens on on 127.0.0.1 right now.
fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

/// The port a running cluster was started on, as recorded in `path`.
fn recorded_port(path: &Path) -> Result<u16, EmbeddedError> {
    let text = fs::read_to_string(path).map_err(io(path))?;
    text.trim().parse().map_err(|_| EmbeddedError::Command {
        step: "port".to_owned(),
        detail: format!("{} does not hold a port: {text:?}", path.display()),
    })
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
