//! Cutting the service off its database and giving it back
//! ([`TestApp::cut_database`], [`TestApp::restore_database`]), for tests of what it
//! answers while PostgreSQL is unreachable. It must never touch any database but the
//! test's own.

use std::time::{Duration, Instant};

use crate::database::connect;
use crate::{server_url, TestApp};

/// How long ending the connections to a cut database may take before the test fails.
const CUT_WITHIN: Duration = Duration::from_secs(15);

impl TestApp {
    /// Makes the test database unreachable for the service: ends every connection to
    /// it and refuses new ones, until [`TestApp::restore_database`]. (The test's own
    /// `db` connection goes too.)
    pub async fn cut_database(&self) {
        self.database_access(false).await;
    }

    pub async fn restore_database(&self) {
        self.database_access(true).await;
    }

    async fn database_access(&self, allow: bool) {
        let database = self.database_url.rsplit('/').next().unwrap().to_string();
        let server = connect(&server_url()).await;
        let allowed = format!("ALTER DATABASE \"{database}\" WITH ALLOW_CONNECTIONS {allow}");
        server
            .batch_execute(&allowed)
            .await
            .expect("change database access");
        if allow {
            return;
        }
        // A connection whose start-up passed the ALLOW_CONNECTIONS check just before the
        // ALTER committed may show in pg_stat_activity only after a first round of
        // terminations, and the service's pool would keep it forever: end client
        // backends until none is left, a round every 10 ms, for at most CUT_WITHIN.
        // (Autovacuum workers ignore ALLOW_CONNECTIONS, and the service cannot use
        // them, so they are not waited for.)
        let deadline = Instant::now() + CUT_WITHIN;
        loop {
            let left: Vec<String> = server
                .query(
                    "SELECT pid::text || ' ' || coalesce(application_name, '') || ' ' \
                            || coalesce(state, '') || ' ' || pg_terminate_backend(pid)::text \
                     FROM pg_stat_activity \
                     WHERE datname = $1 AND backend_type = 'client backend'",
                    &[&database],
                )
                .await
                .expect("end the database's backends")
                .iter()
                .map(|row| row.get(0))
                .collect();
            if left.is_empty() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "backends of {database} still there after {CUT_WITHIN:?}: {left:?}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}
