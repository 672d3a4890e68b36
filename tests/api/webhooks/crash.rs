//! Nothing is lost in a crash: an instance frozen before it could deliver, then killed,
//! after an import committed (here by the `iq-service import` command, a process of its
//! own), leaves its events in the outbox; an instance started afterwards delivers each
//! of them, once. The binaries keep the system clock.

use std::time::Duration;

use super::receiver::Receiver;
use crate::child::{Service, KEY_SECRET};
use crate::helpers::TestApp;
use crate::import_command::{database, run};

const ENV: &[(&str, &str)] = &[("WEBHOOK_ALLOW_PRIVATE", "1"), ("RUST_LOG", "info")];

#[actix_web::test]
async fn an_instance_killed_after_the_commit_loses_no_event() {
    let (url, _db, _database) = database().await;
    let mut first = Service::start(&url, ENV).await;
    let app = TestApp::attach(&first.base, &url).await;
    let member = app.member("kai", "pro").await;
    let receiver = Receiver::start();
    app.new_webhook(
        &member,
        &receiver.url,
        &["index.published", "index.revised"],
    )
    .await;

    // Frozen where it stands: it hears the import's NOTIFY only after it is dead.
    first.signal("STOP");
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("quotes.csv");
    let mut text = String::from("trade_date,index_code,specification,weight,price\n");
    for (i, code) in crate::helpers::quotes::BASES.iter().enumerate() {
        for date in ["20261109", "20261110"] {
            text.push_str(&format!("{date},{code},unit,1,{}\n", 1000 * (i + 1)));
        }
    }
    std::fs::write(&file, text).unwrap();
    let imported = run(
        &["import", file.to_str().unwrap()],
        &[("DATABASE_URL", &url), ("KEY_SECRET", KEY_SECRET)],
    )
    .await;
    assert!(
        imported.status.success(),
        "{}\n{}",
        imported.stdout,
        imported.stderr
    );
    first.kill();
    assert!(
        receiver.received().is_empty(),
        "the frozen instance sent nothing"
    );

    // The restart: every event (the six bases and the composite), each once.
    let second = Service::start(&url, ENV).await;
    let received = receiver.wait_for(7, Duration::from_secs(15)).await;
    receiver
        .assert_no_more_than(7, Duration::from_secs(3), "an event was delivered twice")
        .await;
    let mut ids: Vec<&str> = received.iter().map(|r| r.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 7, "{received:?}");
    drop(second);
}
