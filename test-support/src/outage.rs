//! Cutting the service off its database and giving it back
//! ([`TestApp::cut_database`], [`TestApp::restore_database`]), for tests of what it
//! answers while PostgreSQL is unreachable. It must never touch any database but the
//! test's own.

use std::time::Duration;

use tokio_postgres::NoTls;

use crate::{server_url, TestApp};

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
        let (server, connection) = tokio_postgres::connect(&server_url(), NoTls)
            .await
            .expect("connect to the test server");
        actix_web::rt::spawn(connection);
        let mut sql = format!("ALTER DATABASE \"{database}\" WITH ALLOW_CONNECTIONS {allow};");
        if !allow {
            sql += &format!(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{database}';"
            );
        }
        server
            .batch_execute(&sql)
            .await
            .expect("change database access");
        // pg_terminate_backend only signals: wait until the backends are really gone,
        // or a query could still slip through one of them.
        if allow {
            return;
        }
        loop {
            let left: i64 = server
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = $1",
                    &[&database],
                )
                .await
                .expect("count backends")
                .get(0);
            if left == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}
