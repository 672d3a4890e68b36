//! PostgreSQL made unreachable and given back under load: the service never hangs a
//! request, answers only successes or 50000 while the database is away, recovers by
//! itself, and counts exactly what it served.
//!
//! Eight clients send key-authenticated queries, 10 ms apart each: six with a warm pro
//! key (its record, its page and a lease in memory) for about a second before the cut,
//! through a 2-second cut ([`TestApp::cut_database`]: new connections refused, every
//! backend ended) and after it; two with a fresh pro key from the moment of the cut, so
//! every one of its calls needs the database (key look-up and a first lease). The
//! instance's pool waits at most `DB_ACQUIRE_TIMEOUT_MS` = 1 s for a connection and a
//! statement runs at most `DB_STATEMENT_TIMEOUT_MS` = 2 s (set through
//! [`Spawn::tuned`]); with a 2-second margin, no request may take longer than 5 s.
//!
//! Asserted besides: every answer is a success or 500 / 50000 (never a transport error
//! or a hang), and before the cut only successes; during the cut the fresh key gets
//! 50000 and the warm key is still served from memory (for as long as its lease and
//! its unreported calls allow); the fresh key succeeds again within 5 s of the restore,
//! with no restart, and from then on every request of either key succeeds.
//!
//! Usage afterwards: a call is counted once admitted (D6), so a 50000 that carries the
//! rate-limit headers (admitted, then failed) counts; the day window's `used` and the
//! call log must hold exactly the successes plus those, once the flushes land.

use std::time::{Duration, Instant};

use chrono::NaiveTime;
use iq_service::settings::Settings;

use super::{day_window, logged_calls, settles, until, Answer, Clients, Target};
use crate::helpers::{connect, now, spawn_with, Spawn, FIXTURE};

const CLIENTS: usize = 8;
/// Clients `FRESH_FROM..` use the fresh key, from the cut on; the others the warm key.
const FRESH_FROM: usize = 6;
const PACE: Duration = Duration::from_millis(10);

const ACQUIRE: Duration = Duration::from_secs(1);
const STATEMENT: Duration = Duration::from_secs(2);
const MARGIN: Duration = Duration::from_secs(5);

const BEFORE: Duration = Duration::from_secs(1);
const CUT: Duration = Duration::from_secs(2);
/// How soon after the restore a call needing the database must succeed again.
const RECOVERY: Duration = Duration::from_secs(5);
/// Load kept up after that first success, all of which must succeed.
const AFTER: Duration = Duration::from_secs(1);
/// How long the last flushes may take to land.
const FLUSHED: Duration = Duration::from_secs(5);

const WARM: usize = 0;
const FRESH: usize = 1;

/// Phase 0: warm-key clients only; phase 1 (from the cut): the fresh-key clients too.
fn plan(client: usize, phase: usize) -> Option<usize> {
    match (client < FRESH_FROM, phase) {
        (true, _) => Some(WARM),
        (false, 0) => None,
        (false, _) => Some(FRESH),
    }
}

fn short_timeouts(settings: &mut Settings) {
    settings.database.db_acquire_timeout_ms = ACQUIRE.into();
    settings.database.db_statement_timeout_ms = STATEMENT.into();
}

/// Answers of `target` that `select` picks.
fn of(answers: &[Answer], target: usize, select: impl Fn(&Answer) -> bool) -> Vec<&Answer> {
    answers
        .iter()
        .filter(|a| a.target == target && select(a))
        .collect()
}

#[actix_web::test]
async fn a_database_outage_under_load_fails_fast_recovers_and_counts_exactly() {
    let app = spawn_with(Spawn::sql(FIXTURE).tuned(short_timeouts)).await;
    let keys = [
        app.member_key("walt", "pro").await,
        app.member_key("frida", "pro").await,
    ];
    let targets = keys
        .iter()
        .map(|key| Target {
            base: app.address.clone(),
            key: key.key.clone(),
        })
        .collect();

    let started = Instant::now();
    let clients = Clients::start(
        crate::helpers::http_client(),
        CLIENTS,
        targets,
        plan,
        PACE,
        |_| false,
    );
    let warm = until(Duration::from_secs(10), || {
        clients.count(|a| a.target == WARM && a.ok()) >= FRESH_FROM
    })
    .await;
    assert!(warm, "the warm key got no successes before the cut");
    actix_web::rt::time::sleep(BEFORE.saturating_sub(started.elapsed())).await;

    let cut_begun = Instant::now();
    app.cut_database().await;
    let cut = Instant::now();
    clients.set_phase(1);
    actix_web::rt::time::sleep(CUT).await;
    // The fresh key's first answer may take up to the bound; the cut lasts until then.
    let answered = until(ACQUIRE + STATEMENT + MARGIN, || {
        clients.count(|a| a.target == FRESH) > 0
    })
    .await;
    let restore_begun = Instant::now();
    app.restore_database().await;
    let restored = Instant::now();
    assert!(answered, "no answer for the fresh key during the cut");

    let recovered = until(RECOVERY, || {
        clients.count(|a| a.target == FRESH && a.ok()) > 0
    })
    .await;
    if recovered {
        actix_web::rt::time::sleep(AFTER).await;
    }
    let answers = clients.finish().await;
    let describe = |list: &[&Answer]| -> String {
        let lines: Vec<String> = list.iter().take(10).map(|a| a.describe()).collect();
        format!(
            "{} of {} answers:\n{}",
            list.len(),
            answers.len(),
            lines.join("\n")
        )
    };

    // (b) Never a hang or a lost connection: a success or 500 / 50000, always; before
    // the cut, only successes.
    let odd: Vec<&Answer> = answers
        .iter()
        .filter(|a| !a.ok() && !a.is(500, 50000))
        .collect();
    assert!(
        odd.is_empty(),
        "neither success nor 50000: {}",
        describe(&odd)
    );
    let before: Vec<&Answer> = answers.iter().filter(|a| a.ended < cut_begun).collect();
    let failed_before: Vec<&Answer> = before.iter().copied().filter(|a| !a.ok()).collect();
    assert!(
        failed_before.is_empty(),
        "before the cut: {}",
        describe(&failed_before)
    );
    // (a) Bounded by the pool's timeouts.
    let bound = ACQUIRE + STATEMENT + MARGIN;
    let slow: Vec<&Answer> = answers.iter().filter(|a| a.took() > bound).collect();
    assert!(
        slow.is_empty(),
        "longer than {bound:?}: {}",
        describe(&slow)
    );
    // The cut was real: a call needing the database got 50000 while it lasted; the warm
    // key was served from memory meanwhile.
    let within_cut = |a: &Answer| a.sent >= cut && a.ended <= restore_begun;
    assert!(
        !of(&answers, FRESH, |a| within_cut(a) && a.is(500, 50000)).is_empty(),
        "no 50000 for the fresh key during the cut"
    );
    assert!(
        !of(&answers, WARM, |a| within_cut(a) && a.ok()).is_empty(),
        "the warm key was not served during the cut: {}",
        describe(&of(&answers, WARM, within_cut))
    );

    // (c) Recovered by itself, within RECOVERY of the restore, and for good.
    let first = of(&answers, FRESH, |a| a.ok() && a.sent >= cut)
        .first()
        .map(|a| a.ended);
    let first = first.unwrap_or_else(|| panic!("the fresh key never succeeded again"));
    assert!(
        first.saturating_duration_since(restored) <= RECOVERY,
        "first success {:?} after the restore",
        first - restored
    );
    eprintln!(
        "{} answers, {} of them 50000 ({} during the cut); slowest {:?}; \
         the fresh key served again {:?} after the restore",
        answers.len(),
        answers.iter().filter(|a| a.is(500, 50000)).count(),
        answers.iter().filter(|a| within_cut(a) && !a.ok()).count(),
        answers.iter().map(Answer::took).max().unwrap_or_default(),
        first.saturating_duration_since(restored)
    );
    let later: Vec<&Answer> = answers.iter().filter(|a| a.sent > first).collect();
    let failed_later: Vec<&Answer> = later.iter().copied().filter(|a| !a.ok()).collect();
    assert!(
        failed_later.is_empty(),
        "after the recovery: {}",
        describe(&failed_later)
    );
    assert!(
        later.len() >= CLIENTS,
        "{} answers after the recovery",
        later.len()
    );

    // Usage: every admitted call written once, flushes retried until they land.
    let db = connect(&app.database_url).await;
    let day = now().date_naive().and_time(NaiveTime::MIN).and_utc();
    for (target, key) in keys.iter().enumerate() {
        let ok = of(&answers, target, Answer::ok).len() as i64;
        let admitted_failed = of(&answers, target, |a| a.is(500, 50000) && a.rate_limited).len();
        let counted = ok + admitted_failed as i64;
        // (`used` of the day window, call log (rows, rows with code 0)).
        let want = (counted, (counted, ok));
        let seen = settles(FLUSHED, &want, || async {
            let (_, used) = day_window(&db, &key.id, day).await;
            (used, logged_calls(&db, &key.id).await)
        })
        .await;
        assert_eq!(
            seen, want,
            "key {target}: {ok} successes and {admitted_failed} admitted 50000s: \
             (used, (call log rows, code 0 rows))"
        );
    }
}
