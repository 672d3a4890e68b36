//! `iq-service import FILE...`: the real binary run as a command on a fresh database,
//! which it migrates itself. Progress goes to stderr, one result line per file to
//! stdout; any failure makes the exit status non-zero and lists the rejected rows as
//! `  row N, column: reason`.

use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::child::KEY_SECRET;
use crate::helpers::{
    connect, count_rows, create_database, select_pairs, select_value, DropDatabase,
};

/// Weekdays 2026-11-02 .. 2026-11-13.
const CALENDAR: &str = "INSERT INTO trade_calendar (trade_date) \
    SELECT d::date FROM generate_series('2026-11-02'::date, '2026-11-13'::date, '1 day') AS d \
    WHERE extract(isodow FROM d) < 6;";

const GOOD: &str = "trade_date,index_code,specification,weight,price\n\
    20261102,Server_Index,8x H100,0.5,100\n\
    20261102,Server_Index,8x H200,0.5,200\n\
    20261103,Server_Index,8x H100,0.5,110\n\
    20261103,Server_Index,8x H200,0.5,200\n\
    20261103,GPU_Index,H100 SXM5,1,29700.123456\n";

/// Row 2 is fine; row 3's weight is above 1; row 4's price is negative.
const BAD: &str = "trade_date,index_code,specification,weight,price\n\
    20261102,Server_Index,8x H100,1,100\n\
    20261102,GPU_Index,H100 SXM5,1.5,29700\n\
    20261102,SSD_Index,7.68TB,1,-480\n";

/// How long one run of the command may take before the test gives up on it.
const DEADLINE: Duration = Duration::from_secs(60);

pub(crate) struct Run {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit: {}\nstdout:\n{}\nstderr:\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

fn drain(mut pipe: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// `iq-service <args>` with a clean environment (`PATH` and `env` only), killed if it
/// outlives [`DEADLINE`].
fn run_blocking(args: Vec<String>, env: Vec<(String, String)>) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_iq-service"))
        .args(&args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the iq-service binary");
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    let deadline = Instant::now() + DEADLINE;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "iq-service {args:?} did not finish in {DEADLINE:?}; stderr:\n{}",
                stderr.join().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

pub(crate) async fn run(args: &[&str], env: &[(&str, &str)]) -> Run {
    let args = args.iter().map(|a| a.to_string()).collect();
    let env = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    actix_web::rt::task::spawn_blocking(move || run_blocking(args, env))
        .await
        .expect("the command runner")
}

/// A fresh database, migrated and given the calendar, a client on it, and what drops
/// it when the test ends.
pub(crate) async fn database() -> (String, tokio_postgres::Client, DropDatabase) {
    let url = create_database().await;
    iq_test_support::database::migrate(&url).await;
    let db = connect(&url).await;
    db.batch_execute(CALENDAR).await.expect("calendar");
    let dropped = DropDatabase::new(url.clone());
    (url, db, dropped)
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// Every `imports` row: (source, file_name, rows, result, errors), oldest first.
async fn imports(db: &tokio_postgres::Client) -> Vec<(String, String, i32, String, i32)> {
    db.query(
        "SELECT source, file_name, rows, result, errors FROM imports ORDER BY import_id",
        &[],
    )
    .await
    .unwrap()
    .iter()
    .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
    .collect()
}

#[actix_web::test]
async fn a_valid_file_is_imported_and_recorded() {
    let (url, db, _database) = database().await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "quotes.csv", GOOD);

    // No KEY_SECRET: the command hashes no key and must not need one.
    let out = run(
        &["import", "--note", "first load of November", &file],
        &[("DATABASE_URL", &url)],
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "one result line: {out:?}");
    assert!(lines[0].starts_with("quotes.csv: "), "{out:?}");
    assert!(lines[0].contains("5 quotes"), "{out:?}");
    for stage in [
        "quotes.csv: reading",
        "5 rows read",
        "5 quotes valid",
        "5 quotes stored",
    ] {
        assert!(
            out.stderr.contains(stage),
            "stage {stage:?} missing: {out:?}"
        );
    }

    assert_eq!(count_rows(&db, "index_quotes").await, 5);
    let price: String = select_value(
        &db,
        "SELECT price::text FROM index_quotes WHERE index_code = 'GPU_Index'",
    )
    .await;
    assert_eq!(price, "29700.123456");
    // Server_Index on both days, GPU_Index and the composite's nothing (not all six).
    let daily: Vec<(String, String)> = select_pairs(
        &db,
        "SELECT index_code::text, to_char(trade_date, 'YYYYMMDD') FROM index_daily \
         ORDER BY 1, 2",
    )
    .await;
    assert_eq!(
        daily,
        [
            ("GPU_Index".to_string(), "20261103".to_string()),
            ("Server_Index".into(), "20261102".into()),
            ("Server_Index".into(), "20261103".into()),
        ]
    );
    assert_eq!(
        imports(&db).await,
        [(
            "command".to_string(),
            "quotes.csv".to_string(),
            5,
            "accepted".to_string(),
            0
        )]
    );
    let user: Option<i64> = select_value(&db, "SELECT user_id FROM imports").await;
    assert_eq!(user, None, "the command imports as nobody");
    // Its note is kept with its publication (D26).
    let reason: Option<String> = select_value(
        &db,
        "SELECT reason FROM vintages ORDER BY vintage DESC LIMIT 1",
    )
    .await;
    assert_eq!(reason.as_deref(), Some("first load of November"));
}

#[actix_web::test]
async fn an_invalid_file_lists_its_bad_rows_and_stores_nothing() {
    let (url, db, _database) = database().await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "bad.csv", BAD);

    let out = run(
        &["import", &file],
        &[("DATABASE_URL", &url), ("KEY_SECRET", KEY_SECRET)],
    )
    .await;
    assert!(!out.status.success(), "{out:?}");
    assert!(out.stderr.contains("bad.csv: 40002"), "{out:?}");
    let listed: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("  row "))
        .collect();
    assert!(
        listed.iter().any(|l| l.starts_with("  row 3, weight: ")),
        "{out:?}"
    );
    assert!(
        listed.iter().any(|l| l.starts_with("  row 4, price: ")),
        "{out:?}"
    );
    assert!(
        !listed.iter().any(|l| l.starts_with("  row 2,")),
        "row 2 is fine: {out:?}"
    );
    assert!(
        listed
            .iter()
            .all(|l| l.split_once(": ").is_some_and(|(_, r)| !r.is_empty())),
        "every row has a reason: {out:?}"
    );
    assert!(
        !out.stdout.contains("imported"),
        "no result line for a rejected file: {out:?}"
    );

    assert_eq!(count_rows(&db, "index_quotes").await, 0);
    assert_eq!(count_rows(&db, "index_daily").await, 0);
    let recorded = imports(&db).await;
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    let (source, name, rows, result, errors) = &recorded[0];
    assert_eq!(
        (source.as_str(), name.as_str(), *rows, result.as_str()),
        ("command", "bad.csv", 3, "rejected")
    );
    assert_eq!(*errors as usize, listed.len(), "{out:?}");
}

#[actix_web::test]
async fn a_missing_file_fails_with_a_clear_message() {
    let (url, db, _database) = database().await;
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nowhere.csv");
    let missing = missing.to_str().unwrap();

    let env = [("DATABASE_URL", url.as_str()), ("KEY_SECRET", KEY_SECRET)];
    let out = run(&["import", missing], &env).await;
    assert!(!out.status.success(), "{out:?}");
    assert!(
        out.stderr
            .lines()
            .any(|l| l.contains(missing) && l.contains("No such file")),
        "{out:?}"
    );
    assert_eq!(count_rows(&db, "index_quotes").await, 0);

    // Files are imported one by one: a good file next to a missing one still goes in,
    // and the missing one still makes the run fail.
    let good = write(dir.path(), "quotes.csv", GOOD);
    let out = run(&["import", missing, &good], &env).await;
    assert!(!out.status.success(), "{out:?}");
    assert!(out.stdout.starts_with("quotes.csv: "), "{out:?}");
    assert!(out.stderr.contains(missing), "{out:?}");
    assert_eq!(count_rows(&db, "index_quotes").await, 5);
}

#[actix_web::test]
async fn no_file_is_a_usage_error() {
    let url = create_database().await;
    let _database = DropDatabase::new(url.clone());
    let out = run(
        &["import"],
        &[("DATABASE_URL", &url), ("KEY_SECRET", KEY_SECRET)],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stderr.contains("Usage: iq-service import"), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
}
