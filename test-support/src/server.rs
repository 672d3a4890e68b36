//! The PostgreSQL server the tests create their databases on, found once per test
//! process:
//!
//! 1. `TEST_DATABASE_URL`, when set;
//! 2. else the server answering on 127.0.0.1:5432 (`postgres`, trusted);
//! 3. else one throwaway cluster for the whole test run, in `target/test-pg`, started
//!    from the machine's PostgreSQL server binaries by the service's own cluster code
//!    ([`iq_service::embedded_pg`], [`Listen::Localhost`]).
//!
//! The throwaway cluster is shared: its folder's file lock makes the first test process
//! create and start it while the others wait, and the ones after find it running (at
//! the port recorded in `target/test-pg/port`). It listens on 127.0.0.1 only and is left
//! running for the next test binary and the next run. To stop it:
//! `pg_ctl stop -D target/test-pg/pg` (as root: `runuser -u postgres -- pg_ctl stop -D
//! target/test-pg/pg`); deleting `target/test-pg` (or `cargo clean`) after that throws
//! it away.
//!
//! Without PostgreSQL server binaries the first test fails at once, with one line
//! saying what to install. Nothing here knows HTTP.

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use iq_service::embedded_pg::{EmbeddedError, EmbeddedPostgres, Listen, SUPERUSER};

/// The server every test uses when `TEST_DATABASE_URL` is unset and it answers.
pub const DEFAULT_SERVER: &str = "127.0.0.1:5432";

/// The URL of the test server's `postgres` database (see the module's documentation):
/// found on the first call, the same for the rest of the process. Panics with one line
/// when there is no server and none can be started.
pub fn server_url() -> String {
    static URL: OnceLock<Result<String, String>> = OnceLock::new();
    URL.get_or_init(|| {
        if let Ok(url) = std::env::var("TEST_DATABASE_URL") {
            return Ok(url);
        }
        let probe = DEFAULT_SERVER.parse().expect("an address");
        let dir = target_dir().join("test-pg");
        discover(probe, &dir)
            .map(|server| server.url)
            .map_err(|error| explain(error, probe, &dir))
    })
    .clone()
    .unwrap_or_else(|line| panic!("{line}"))
}

/// A server the tests can use.
pub struct Server {
    /// The URL of its `postgres` database.
    pub url: String,
    /// The throwaway cluster, when no server answered at the probed address. It is not
    /// stopped when dropped: [`EmbeddedPostgres::stop`] stops it if this process
    /// started it.
    pub cluster: Option<EmbeddedPostgres>,
}

/// The server answering at `probe`, or else the throwaway cluster in `dir` (created and
/// started unless it already runs). Blocking.
pub fn discover(probe: SocketAddr, dir: &Path) -> Result<Server, EmbeddedError> {
    if TcpStream::connect_timeout(&probe, Duration::from_secs(1)).is_ok() {
        return Ok(Server {
            url: format!("postgres://{SUPERUSER}@{probe}/postgres"),
            cluster: None,
        });
    }
    let cluster = EmbeddedPostgres::start_with(dir, Listen::Localhost, None)?;
    Ok(Server {
        url: format!(
            "postgres://{SUPERUSER}@127.0.0.1:{}/postgres",
            cluster.port()
        ),
        cluster: Some(cluster),
    })
}

/// One line: why there is no test server, and what to do.
fn explain(error: EmbeddedError, probe: SocketAddr, dir: &Path) -> String {
    match error {
        EmbeddedError::BinariesNotFound => format!(
            "no PostgreSQL answers on {probe} and TEST_DATABASE_URL is unset, and the \
             PostgreSQL server binaries (initdb, pg_ctl) to start a throwaway one are not \
             installed: apt-get install postgresql (or set TEST_DATABASE_URL)"
        ),
        other => format!(
            "no PostgreSQL answers on {probe} and TEST_DATABASE_URL is unset, and the \
             throwaway one in {} could not be started: {other}",
            dir.display()
        ),
    }
}

/// Cargo's target directory, which holds the test binaries: the ancestor of this
/// executable that holds Cargo's `CACHEDIR.TAG`, else the workspace's `target/`.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    exe.ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"))
}
