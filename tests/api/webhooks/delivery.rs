//! What arrives at a receiver: every event of an import and of a correction, signed so
//! that the `standardwebhooks` package verifies it; never the member index for a free
//! account; a receiver answering 500 gets the retry with the same `webhook-id`; two
//! instances deliver each event once.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use chrono::Duration as Span;
use serde_json::Value;

use super::receiver::{Received, Receiver};
use crate::helpers::quotes::{every_base_on, import, import_noted, spawn_for_imports, BASES};
use crate::helpers::{Session, TestApp};
use crate::python_run::run_until;
use crate::python_venv::{self, Venv};

pub(super) const BOTH: [&str; 2] = ["index.published", "index.revised"];

/// An instance for imports with a pro member `name` whose webhook for [`BOTH`] goes to a
/// receiver of its own: the instance, the member, the receiver and the webhook's id.
async fn hooked_member(name: &str) -> (TestApp, Session, Receiver, String) {
    let (app, _admin, _key) = spawn_for_imports().await;
    let member = app.member(name, "pro").await;
    let receiver = Receiver::start();
    let hook = app.new_webhook(&member, &receiver.url, &BOTH).await;
    let id = hook["id"].as_str().unwrap().to_string();
    (app, member, receiver, id)
}

/// Messages by (type, index).
fn by_index(received: &[Received]) -> BTreeMap<(String, String), Value> {
    received
        .iter()
        .map(Received::json)
        .map(|m| {
            let key = (
                m["type"].as_str().unwrap().to_string(),
                m["data"]["index_code"].as_str().unwrap_or("").to_string(),
            );
            (key, m)
        })
        .collect()
}

/// Verifies each message with the `standardwebhooks` package, as a receiver would.
pub(super) fn verify_with_standardwebhooks(secret: &str, received: &[Received]) {
    iq_test_support::require!(Python);
    let python = python_venv::build(&Venv::pinned(
        "standardwebhooks-venv",
        ".iq-standardwebhooks-stamp",
        "standardwebhooks==1.1.0",
        "the webhook signature test needs python3 with the venv module \
         (Debian: apt-get install python3-venv)",
    ));
    let messages: Vec<Value> = received
        .iter()
        .map(|r| {
            serde_json::json!({
                "id": r.id, "timestamp": r.timestamp, "signature": r.signature,
                "body": String::from_utf8(r.body.to_vec()).unwrap(),
            })
        })
        .collect();
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("messages.json");
    std::fs::write(&file, serde_json::to_vec(&messages).unwrap()).unwrap();
    let script = "import json, sys\n\
                  from standardwebhooks.webhooks import Webhook\n\
                  hook = Webhook(sys.argv[1])\n\
                  for m in json.load(open(sys.argv[2])):\n\
                  \x20   headers = {'webhook-id': m['id'], 'webhook-timestamp': m['timestamp'],\n\
                  \x20              'webhook-signature': m['signature']}\n\
                  \x20   hook.verify(m['body'], headers)\n\
                  \x20   bad = dict(headers, **{'webhook-id': m['id'] + 'x'})\n\
                  \x20   try:\n\
                  \x20       hook.verify(m['body'], bad)\n\
                  \x20       sys.exit('a changed id verified')\n\
                  \x20   except Exception:\n\
                  \x20       pass\n\
                  print('verified', len(json.load(open(sys.argv[2]))))\n";
    let (ok, output) = run_until(
        Command::new(python)
            .arg("-c")
            .arg(script)
            .arg(secret)
            .arg(&file),
        "standardwebhooks",
        Instant::now() + Duration::from_secs(60),
        || "standardwebhooks did not finish within a minute".into(),
    );
    assert!(ok, "standardwebhooks refused a message:\n{output}");
    assert!(
        output.contains(&format!("verified {}", received.len())),
        "{output}"
    );
}

#[actix_web::test]
async fn imports_and_corrections_arrive_signed_as_standard_webhooks() {
    let (app, admin, _key) = spawn_for_imports().await;
    let pro = app.member("wendy", "pro").await;
    let free = app.member("fred", "free").await;
    let pro_receiver = Receiver::start();
    let free_receiver = Receiver::start();
    let hook = app.new_webhook(&pro, &pro_receiver.url, &BOTH).await;
    let secret = hook["secret"].as_str().unwrap().to_string();
    app.new_webhook(&free, &free_receiver.url, &BOTH).await;

    import(
        &app,
        &admin,
        "quotes.csv",
        &every_base_on(&["20261109", "20261110", "20261111"]),
    )
    .await;
    // The six bases and the composite, each published.
    let received = pro_receiver.wait_for(7, Duration::from_secs(10)).await;
    let published = by_index(&received);
    for code in BASES.iter().chain(&["Hardware_Index"]) {
        let message = &published[&("index.published".to_string(), code.to_string())];
        assert_eq!(
            message["data"]["trade_dates"],
            serde_json::json!(["20261109", "20261110", "20261111"])
        );
    }
    // Published events carry no reason.
    assert!(received
        .iter()
        .all(|r| r.json()["data"].get("reason").is_none()));
    // A correction of 10 Nov, with its reason (D26).
    let fix = [("20261110", "GPU_Index", "unit", "1", "2222")];
    let why = "GPU quote of 10 Nov: distributor sent the price without VAT";
    import_noted(&app, &admin, "fix.csv", &fix, Some(why)).await;
    let received = pro_receiver.wait_for(9, Duration::from_secs(10)).await;
    let revised = by_index(&received[7..]);
    let gpu = &revised[&("index.revised".to_string(), "GPU_Index".to_string())];
    assert!(gpu["data"]["trade_dates"]
        .as_array()
        .unwrap()
        .contains(&"20261110".into()));
    assert_eq!(gpu["data"]["reason"], why);
    let hardware = &revised[&("index.revised".to_string(), "Hardware_Index".to_string())];
    assert_eq!(hardware["data"]["reason"], why);
    // Ids are the feed's, each once.
    let mut ids: Vec<&str> = received.iter().map(|r| r.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), received.len(), "{received:?}");
    assert!(ids.iter().all(|id| id.starts_with("evt_")), "{ids:?}");
    verify_with_standardwebhooks(&secret, &received);

    // The free account: only days in its window, never the member index. The free
    // cutoff on 20 Nov is 11 Nov, so all three days were visible.
    let received = free_receiver.wait_for(6, Duration::from_secs(10)).await;
    let heard = by_index(&received);
    assert!(
        heard.keys().all(|(_, code)| code != "Hardware_Index"),
        "{heard:?}"
    );
}

#[actix_web::test]
async fn a_receiver_answering_500_gets_the_retry_with_the_same_id() {
    let (app, member, receiver, id) = hooked_member("rhea").await;
    let admin = app.admin().await;
    receiver.answer_with(500);
    import(&app, &admin, "quotes.csv", &every_base_on(&["20261109"])).await;
    let first = receiver.wait_for(7, Duration::from_secs(10)).await;
    let ids = |messages: &[Received]| {
        let mut ids: Vec<String> = messages.iter().map(|m| m.id.clone()).collect();
        ids.sort();
        ids
    };

    // The first retry is due 5 s (with jitter) after the failure is recorded: the
    // service's clock moves on only once it is, or the retry would be due 5 s after
    // the moved clock, which no longer moves.
    recorded_attempts(&app, &member, &id, 7).await;
    app.clock.advance(Span::seconds(6));
    let both = receiver.wait_for(14, Duration::from_secs(10)).await;
    assert_eq!(
        ids(&both[7..]),
        ids(&first),
        "the same webhook-ids on the retries"
    );
    receiver.answer_with(204);
    recorded_attempts(&app, &member, &id, 14).await;
    app.clock.advance(Span::minutes(6));
    let all = receiver.wait_for(21, Duration::from_secs(10)).await;
    assert_eq!(ids(&all[14..]), ids(&first));
    recorded_attempts(&app, &member, &id, 21).await;

    let log = app.webhook_deliveries(&member, &id).await;
    assert_eq!(log.code(), 0, "{}", log.body);
    let attempts = log.data().as_array().unwrap();
    let count = |status: i64| attempts.iter().filter(|a| a["status"] == status).count();
    assert_eq!((count(204), count(500)), (7, 14), "{}", log.body);
    assert!(
        attempts.iter().all(|a| a["state"] == "delivered"),
        "{}",
        log.body
    );
    assert!(attempts
        .iter()
        .all(|a| a["latency_ms"].as_i64().unwrap() >= 0));

    // A replay sends it once more, with the same id.
    let delivery = attempts[0]["delivery_id"].as_str().unwrap();
    let message = attempts[0]["message_id"].as_str().unwrap();
    let replayed = app.replay_delivery(&member, &id, delivery).await;
    assert_eq!(replayed.code(), 0, "{}", replayed.body);
    let again = receiver.wait_for(22, Duration::from_secs(10)).await;
    assert_eq!(again[21].id, message);
}

/// Waits until the endpoint's delivery log holds `count` attempts.
async fn recorded_attempts(app: &TestApp, member: &Session, id: &str, count: usize) {
    let recorded = crate::helpers::eventually(Duration::from_secs(10), || async {
        let log = app.webhook_deliveries(member, id).await;
        log.data().as_array().is_some_and(|a| a.len() >= count)
    })
    .await;
    assert!(recorded, "{count} attempts expected in the delivery log");
}

#[actix_web::test]
async fn two_instances_deliver_each_event_once() {
    let (app, admin, _key) = spawn_for_imports().await;
    let _other = app.another_instance().await;
    let member = app.member("otto", "pro").await;
    let receiver = Receiver::start();
    app.new_webhook(&member, &receiver.url, &BOTH).await;
    import(
        &app,
        &admin,
        "quotes.csv",
        &every_base_on(&["20261109", "20261110"]),
    )
    .await;
    receiver.wait_for(7, Duration::from_secs(10)).await;
    // Both instances' deliverers look every second: a second delivery would come
    // within this wait.
    receiver
        .assert_no_more_than(7, Duration::from_secs(3), "an event was delivered twice")
        .await;
}

/// A transport for a deliverer that must send nothing.
struct Unused;

impl iq_actors::webhooks::Transport for Unused {
    fn post(
        &self,
        _: String,
        _: Vec<(&'static str, String)>,
        _: Vec<u8>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = iq_actors::webhooks::Answered> + Send>>
    {
        panic!("the prune sends nothing")
    }
}

#[actix_web::test]
async fn finished_deliveries_leave_the_log_after_a_month() {
    let (app, member, receiver, id) = hooked_member("pia").await;
    app.test_webhook(&member, &id).await;
    receiver.wait_for(1, Duration::from_secs(10)).await;
    let delivered = crate::helpers::eventually(Duration::from_secs(10), || async {
        let log = app.webhook_deliveries(&member, &id).await;
        log.data()[0]["state"] == "delivered"
    })
    .await;
    assert!(delivered);
    // One more, still waiting (its receiver is not asked: it is due next year).
    app.db
        .execute(
            "INSERT INTO webhook_deliveries (webhook_id, event_id, next_attempt_at, created_at) \
             SELECT webhook_id, NULL, now() + interval '1 year', now() - interval '60 days' \
             FROM webhooks",
            &[],
        )
        .await
        .unwrap();

    let clock = std::sync::Arc::new(iq_actors::clock::ManualClock::new(
        iq_actors::clock::Clock::now(&*app.clock) + Span::days(31),
    ));
    let config: tokio_postgres::Config = app.database_url.parse().unwrap();
    let deliverer = iq_actors::webhooks::Deliverer {
        pool: iq_actors::db::build_pool(config, &iq_actors::db::PoolSettings::default()).unwrap(),
        clock,
        secrets: iq_actors::webhooks::SecretKeeper::new(b"unused"),
        transport: std::sync::Arc::new(Unused),
    };
    assert_eq!(deliverer.prune().await.unwrap(), 1);
    let left = crate::helpers::count_rows(&app.db, "webhook_deliveries").await;
    assert_eq!(left, 1, "the waiting delivery stays");
    assert_eq!(
        crate::helpers::count_rows(&app.db, "webhook_attempts").await,
        0
    );
}

#[actix_web::test]
async fn an_endpoint_failing_for_five_days_is_disabled_and_says_why() {
    let (app, member, receiver, id) = hooked_member("dora").await;
    receiver.answer_with(500);
    // Every attempt has failed since six days before the service's today.
    app.db
        .execute(
            "UPDATE webhooks SET failing_since = $1",
            &[&(iq_actors::clock::Clock::now(&*app.clock) - Span::days(6))],
        )
        .await
        .unwrap();
    app.test_webhook(&member, &id).await;
    receiver.wait_for(1, Duration::from_secs(10)).await;
    let disabled = crate::helpers::eventually(Duration::from_secs(10), || async {
        let list = app.webhooks(&member).await;
        list.data()[0]["disabled_at"].is_string()
    })
    .await;
    let list = app.webhooks(&member).await;
    assert!(disabled, "{}", list.body);
    let reason = list.data()[0]["disabled_reason"].as_str().unwrap();
    assert!(
        reason.contains("five days") && reason.contains("HTTP 500"),
        "{reason}"
    );
    // Nothing more is sent to it, not even its retry.
    app.clock.advance(Span::seconds(6));
    receiver
        .assert_no_more_than(
            1,
            Duration::from_secs(3),
            "a disabled endpoint was sent a retry",
        )
        .await;
}

#[actix_web::test]
async fn the_examples_shell_check_verifies_a_delivery_and_refuses_a_changed_body() {
    let (app, member, receiver, _id) = hooked_member("sven").await;
    let hook = app
        .new_webhook(&member, &format!("{}?second", receiver.url), &BOTH)
        .await;
    let secret = hook["secret"].as_str().unwrap().to_string();
    let id = hook["id"].as_str().unwrap().to_string();
    assert_eq!(app.test_webhook(&member, &id).await.code(), 0);
    let received = receiver.wait_for(1, Duration::from_secs(10)).await;
    let message = received.iter().find(|m| m.query == "second").unwrap();
    let script = app
        .page("/examples")
        .await
        .code_block("example-webhook-shell");
    let work = tempfile::tempdir().unwrap();
    let run = |body: &[u8]| {
        let file = work.path().join("body.json");
        std::fs::write(&file, body).unwrap();
        Command::new("sh")
            .arg("-c")
            .arg(&script)
            .env("ID", &message.id)
            .env("TIMESTAMP", &message.timestamp)
            .env("SIGNATURE", &message.signature)
            .env("IQ_WEBHOOK_SECRET", &secret)
            .env("BODY", &file)
            .output()
            .expect("sh")
    };
    let genuine = run(&message.body);
    let said = String::from_utf8_lossy(&genuine.stdout);
    assert!(
        genuine.status.success() && said.trim() == "verified",
        "{said}{}",
        String::from_utf8_lossy(&genuine.stderr)
    );
    let mut changed = message.body.to_vec();
    changed.push(b' ');
    let forged = run(&changed);
    assert!(!forged.status.success());
    assert_eq!(String::from_utf8_lossy(&forged.stdout).trim(), "forged");
}
