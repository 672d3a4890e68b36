//! Test databases: each test gets its own, cloned from a template migrated once per
//! schema, and dropped when the last instance on it goes, on the server
//! [`crate::server`] finds (or starts); [`connect`] for a client on one (or on the
//! server), [`run_sql`] to set one up past what the API
//! allows (and [`rename_fixture_specification`] for one change many tests make), and
//! [`count_rows`], [`select_value`], [`select_column`] and [`select_pairs`] to see what
//! a test left in it. Nothing here knows HTTP.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio_postgres::NoTls;

pub use crate::server::server_url;

/// Drops its test database when the last [`crate::TestApp`] on it goes (at the end of the
/// test), so runs do not leave databases behind.
pub struct DropDatabase(pub(crate) String);

impl DropDatabase {
    /// Drops the database at `database_url` when this goes (for databases the test
    /// serves from child processes rather than a [`crate::TestApp`]).
    pub fn new(database_url: String) -> DropDatabase {
        DropDatabase(database_url)
    }
}

impl Drop for DropDatabase {
    fn drop(&mut self) {
        let name = self.0.rsplit('/').next().unwrap_or_default().to_string();
        // On a thread of its own: this runs inside the test's runtime, which cannot
        // wait for a future of its own here.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async {
                let (admin, connection) =
                    tokio_postgres::connect(&server_url(), NoTls).await.ok()?;
                tokio::spawn(connection);
                let drop = format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)");
                admin.execute(&drop, &[]).await.ok()
            })
        });
        let _ = dropped.join();
    }
}

/// A new, uniquely named database with this build's schema, cloned from a template
/// migrated once per schema (so a test pays for a file copy, not for running every
/// migration). Databases of earlier runs older than two hours are dropped on the way,
/// for runs that ended before their tests could drop their own.
pub async fn create_database() -> String {
    let admin = connect(&server_url()).await;
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    sweep(&admin, secs).await;
    let template = template(&admin).await;
    let name = format!("iq_test_{secs}_{}", uuid::Uuid::new_v4().simple());
    let create = format!("CREATE DATABASE \"{name}\" TEMPLATE \"{template}\"");
    // The template may still be held for a moment by the connection that migrated it.
    let mut attempts = 0;
    while let Err(err) = admin.execute(&create, &[]).await {
        attempts += 1;
        assert!(attempts < 500, "create test database: {err}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    database_url(&name)
}

/// Drops test databases of runs older than two hours.
async fn sweep(admin: &tokio_postgres::Client, now_secs: u64) {
    let stale = admin
        .query(
            "SELECT datname FROM pg_database WHERE datname LIKE 'iq\\_test\\_%'",
            &[],
        )
        .await
        .unwrap();
    for row in stale {
        let name: String = row.get(0);
        let born: Option<u64> = name.split('_').nth(2).and_then(|s| s.parse().ok());
        if born.is_some_and(|b| b + 7200 < now_secs) {
            let _ = admin
                .execute(
                    &format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"),
                    &[],
                )
                .await;
        }
    }
}

/// The migrated template of this build's schema, made once (the first test to need it
/// migrates a scratch database and renames it into place, so a template that exists is
/// always complete, and other runs with the same schema reuse it).
async fn template(admin: &tokio_postgres::Client) -> &'static str {
    static TEMPLATE: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();
    TEMPLATE
        .get_or_init(|| async {
            let name = format!("iq_template_{}", iq_service::migrations::fingerprint());
            let exists = admin
                .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name])
                .await
                .expect("look for the template")
                .is_some();
            if exists {
                return name;
            }
            let scratch = format!("iq_scratch_{}", uuid::Uuid::new_v4().simple());
            admin
                .execute(&format!("CREATE DATABASE \"{scratch}\""), &[])
                .await
                .expect("create the template");
            migrate(&database_url(&scratch)).await;
            // Another test binary may have made it meanwhile: then keep theirs.
            let rename = format!("ALTER DATABASE \"{scratch}\" RENAME TO \"{name}\"");
            let mut attempts = 0;
            while let Err(err) = admin.execute(&rename, &[]).await {
                if err.code() == Some(&tokio_postgres::error::SqlState::DUPLICATE_DATABASE) {
                    let drop = format!("DROP DATABASE \"{scratch}\" WITH (FORCE)");
                    let _ = admin.execute(&drop, &[]).await;
                    break;
                }
                attempts += 1;
                assert!(attempts < 500, "rename the template: {err}");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            name
        })
        .await
}

/// The URL of database `name` on the test server.
pub fn database_url(name: &str) -> String {
    let mut config: tokio_postgres::Config = server_url().parse().unwrap();
    config.dbname(name);
    // Rebuild a URL from the parts the harness uses.
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        _ => "127.0.0.1".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap_or("postgres").to_string();
    let password = config
        .get_password()
        .map(|p| format!(":{}", String::from_utf8_lossy(p)))
        .unwrap_or_default();
    format!("postgres://{user}{password}@{host}:{port}/{name}")
}

/// A client on the database at `database_url` (or on the server, at [`server_url`]),
/// its connection driven on the test's runtime; failing to connect fails the test.
pub async fn connect(database_url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(database_url, NoTls)
        .await
        .expect("connect to the test PostgreSQL (set TEST_DATABASE_URL)");
    actix_web::rt::spawn(connection);
    client
}

/// Runs `statements` (fixed SQL, never input) in the database `db` is connected to;
/// any error fails the test.
pub async fn run_sql(db: &tokio_postgres::Client, statements: &str) {
    db.batch_execute(statements).await.unwrap();
}

/// Renames the [`crate::FIXTURE`]'s specification `b 8x H100 SXM 80GB` (Server_Index on
/// 2026-11-10) to `name`: the data a test needs text in (quotes, commas, markup) that
/// every answer must carry intact. A fixture without that one quote fails the test.
pub async fn rename_fixture_specification(db: &tokio_postgres::Client, name: &str) {
    let sql = "UPDATE index_quotes SET specification = $1 \
               WHERE trade_date = '2026-11-10' AND specification = 'b 8x H100 SXM 80GB'";
    let renamed = db.execute(sql, &[&name]).await.unwrap();
    assert_eq!(renamed, 1, "the fixture's quote to rename");
}

/// The rows of `table` (a fixed name, never input) in the database `db` is connected to.
pub async fn count_rows(db: &tokio_postgres::Client, table: &str) -> i64 {
    select_value(db, &format!("SELECT count(*) FROM {table}")).await
}

/// The one value that `sql` (a fixed query of one row and column, never input) answers
/// in the database `db` is connected to; any error fails the test.
pub async fn select_value<T>(db: &tokio_postgres::Client, sql: &str) -> T
where
    T: for<'a> tokio_postgres::types::FromSql<'a>,
{
    db.query_one(sql, &[]).await.unwrap().get(0)
}

/// The first column of every row that `sql` (a fixed query, never input) answers, in
/// its order; any error fails the test.
pub async fn select_column<T>(db: &tokio_postgres::Client, sql: &str) -> Vec<T>
where
    T: for<'a> tokio_postgres::types::FromSql<'a>,
{
    let rows = db.query(sql, &[]).await.unwrap();
    rows.iter().map(|row| row.get(0)).collect()
}

/// The first two columns of every row that `sql` (a fixed query, never input) answers,
/// in its order; any error fails the test.
pub async fn select_pairs<A, B>(db: &tokio_postgres::Client, sql: &str) -> Vec<(A, B)>
where
    A: for<'a> tokio_postgres::types::FromSql<'a>,
    B: for<'a> tokio_postgres::types::FromSql<'a>,
{
    let rows = db.query(sql, &[]).await.unwrap();
    rows.iter().map(|row| (row.get(0), row.get(1))).collect()
}

/// Migrates the database at `url` as the service would on start, without demo data,
/// the restatements it owes dated by the system clock in Shanghai's time zone.
pub async fn migrate(url: &str) {
    iq_service::migrations::prepare(
        &url.parse().expect("a database URL"),
        std::sync::Arc::new(iq_actors::clock::SystemClock),
        chrono_tz::Asia::Shanghai,
        None,
    )
    .await
    .expect("migrate");
}
