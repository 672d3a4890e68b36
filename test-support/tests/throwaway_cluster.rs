//! The test server's last resort: with nothing answering at the probed address,
//! discovery starts a throwaway cluster in the given folder, which accepts connections,
//! and a second discovery (another test binary) finds it running at the same port.
//!
//! Skipped, with the reason printed, on a machine without PostgreSQL server binaries.

use std::net::TcpListener;

use iq_service::embedded_pg::{EmbeddedError, EmbeddedPostgres};
use iq_test_support::server::discover;
use tokio_postgres::NoTls;

/// Stops the cluster this test started, even when an assertion fails.
struct StopOnDrop(EmbeddedPostgres);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop();
    }
}

#[test]
fn a_throwaway_cluster_comes_up_where_no_server_answers() {
    let silent = {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a port");
        listener.local_addr().expect("its address")
    };
    let dir = tempfile::tempdir().expect("a temporary folder");
    let server = match discover(silent, dir.path()) {
        Ok(server) => server,
        Err(error @ (EmbeddedError::BinariesNotFound | EmbeddedError::NoUnprivilegedUser)) => {
            eprintln!("skipped: no throwaway cluster can be started here: {error}");
            return;
        }
        Err(error) => panic!("{error}"),
    };
    let cluster = StopOnDrop(server.cluster.expect("a throwaway cluster, not a server"));
    assert_eq!(
        server.url,
        format!(
            "postgres://postgres@127.0.0.1:{}/postgres",
            cluster.0.port()
        )
    );

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let answer: i32 = runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(&server.url, NoTls)
            .await
            .expect("the throwaway cluster accepts a connection");
        tokio::spawn(connection);
        client
            .query_one("SELECT 1", &[])
            .await
            .expect("a query")
            .get(0)
    });
    assert_eq!(answer, 1);

    let again = discover(silent, dir.path()).expect("found running");
    assert_eq!(
        again.url, server.url,
        "the same cluster, at the recorded port"
    );
}
