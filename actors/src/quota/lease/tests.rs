//! The leases' bookkeeping: block sizes, leasing ahead, reports, limit changes.

use super::super::test_clock::{at, limits, FREE};
use super::*;

/// Leases under these limits, made at 09:00 (the test clock's morning).
fn leases_at_nine(per_minute: i64, per_day: i64) -> Leases {
    Leases::new(limits(per_minute, per_day), at(9, 0, 0))
}

/// The free tier's leases made at 09:00, each window leased for one call, and that
/// call spent.
fn one_call_spent(mono: Instant) -> Leases {
    let mut leases = Leases::new(FREE, at(9, 0, 0));
    lease_all(&mut leases, 1, mono);
    leases.spend();
    leases
}

/// Answers every ask as a database holding nothing else would.
fn lease_all(leases: &mut Leases, waiting: i64, mono: Instant) {
    for ask in leases.asks(waiting, mono) {
        let grant = LeaseGrant {
            taken: ask.want.min(ask.limit),
            granted: ask.want.min(ask.limit),
        };
        leases.granted(&ask, grant, mono);
    }
}

#[test]
fn leases_shrink_to_single_calls_near_the_limit() {
    let mut leases = leases_at_nine(10_000, 10_000);
    let mono = Instant::now();
    let (mut granted, mut statements, mut last) = (0, 0, i64::MAX);
    while granted < 10_000 {
        let asks = leases.asks(1, mono);
        let day = asks.iter().find(|a| a.window == Window::Day).unwrap();
        let taken = day.want.min(10_000 - granted);
        assert!(taken >= 1 && taken <= last, "blocks only shrink");
        assert!(taken <= ((10_000 - granted) / 4).max(1));
        granted += taken;
        statements += 1;
        last = taken;
        leases.granted(day, LeaseGrant { taken, granted }, mono);
        leases.day.held = 0; // spent
    }
    assert_eq!(last, 1, "the last calls are leased one by one");
    assert!(statements < 40, "{statements} statements for one day");
}

#[test]
fn the_next_block_is_leased_ahead_when_a_quarter_of_the_last_is_left() {
    let mut leases = leases_at_nine(100_000, 1_000_000);
    let mono = Instant::now();
    assert!(!leases.wants_more(), "nothing held yet: a call leases");
    lease_all(&mut leases, 1, mono);
    assert_eq!(
        (leases.day.held, leases.minute.held),
        (MAX_LEASE, MAX_LEASE)
    );
    let mut spent = 0;
    while !leases.wants_more() {
        leases.spend();
        spent += 1;
    }
    assert_eq!(spent, MAX_LEASE * 3 / 4);
    let asks = leases.asks_ahead();
    assert_eq!(asks.len(), 2, "both windows are down to a quarter");
    for ask in &asks {
        assert_eq!((ask.want, ask.give_back), (MAX_LEASE, 0));
        let granted = MAX_LEASE * 2;
        let grant = LeaseGrant {
            taken: ask.want,
            granted,
        };
        leases.granted(ask, grant, mono);
    }
    assert_eq!(leases.day.held, MAX_LEASE * 5 / 4);
    assert!(!leases.wants_more() && leases.asks_ahead().is_empty());
}

#[test]
fn nothing_is_leased_ahead_near_the_limit_or_of_a_window_granted_in_full() {
    let mono = Instant::now();
    // Blocks of two: a quarter of one is no call at all.
    let tight = limits(8, 8);
    let mut leases = Leases::new(tight, at(9, 0, 0));
    lease_all(&mut leases, 1, mono);
    leases.spend();
    assert_eq!(leases.day.held, 1);
    assert!(!leases.wants_more());
    // Other instances took the rest of the day: there is nothing to lease ahead.
    let mut leases = leases_at_nine(100_000, 1_000);
    for ask in leases.asks(1, mono) {
        let granted = if ask.window == Window::Day { 1_000 } else { 40 };
        leases.granted(&ask, LeaseGrant { taken: 40, granted }, mono);
    }
    for _ in 0..35 {
        leases.spend();
    }
    assert!(leases.minute.low() && !leases.day.low());
    let asks = leases.asks_ahead();
    assert_eq!(
        asks.iter().map(|a| a.window).collect::<Vec<_>>(),
        [Window::Minute]
    );
}

#[test]
fn reports_are_asked_at_a_quarter_of_the_bound_but_at_most_every_fifty_calls() {
    let cases = [
        (1, 1),
        (10, 5),
        (100, 50),
        (200, 50),
        (400, 100),
        (1_000, 250),
    ];
    for (at_risk, asked_at) in cases {
        assert_eq!(report_at(at_risk), asked_at, "bound {at_risk}");
    }
    for at_risk in 1..=MAX_AT_RISK {
        let at = report_at(at_risk);
        assert!(at >= 1 && at <= (at_risk + 1) / 2, "bound {at_risk}: {at}");
        assert!(
            at >= REPORT_EVERY.min((at_risk + 1) / 2),
            "bound {at_risk}: {at}"
        );
    }
}

#[test]
fn a_subject_holding_enough_asks_nothing() {
    let mut leases = Leases::new(FREE, at(9, 0, 0));
    let mono = Instant::now();
    assert_eq!(leases.asks(1, mono).len(), 2, "nothing known yet");
    lease_all(&mut leases, 1, mono);
    assert!(!leases.needs_lease(mono, true));
    assert!(leases.asks(1, mono).is_empty());
    leases.spend();
    leases.spend();
    assert!(leases.needs_lease(mono, true), "a block of 2 is spent");
}

#[test]
fn budget_taken_under_an_old_limit_goes_back() {
    let mut leases = Leases::new(FREE, at(9, 0, 0));
    let mono = Instant::now();
    lease_all(&mut leases, 1, mono);
    let lower = limits(4, 4);
    leases.align(lower, at(9, 0, 1));
    let asks = leases.asks(1, mono);
    assert!(asks.iter().all(|a| a.give_back == 2 && a.limit == 4));
    // An answer to a statement asked under the old limit is given back, not held.
    let mut stale = Leases::new(FREE, at(9, 0, 0));
    let old = stale.asks(1, mono);
    stale.align(lower, at(9, 0, 1));
    stale.granted(
        &old[0],
        LeaseGrant {
            taken: 2,
            granted: 2,
        },
        mono,
    );
    assert_eq!(stale.day.held, 0);
    assert_eq!(stale.day.give_back, 2);
}

#[test]
fn release_returns_only_current_windows() {
    let mono = Instant::now();
    let mut leases = one_call_spent(mono);
    let held = leases.release(at(9, 0, 30));
    assert_eq!(
        held.iter().map(|g| g.amount).collect::<Vec<_>>(),
        vec![1, 1]
    );
    leases.align(FREE, at(9, 0, 40));
    lease_all(&mut leases, 1, mono);
    let next_minute = leases.release(at(9, 1, 5));
    assert_eq!(
        next_minute.iter().map(|g| g.window).collect::<Vec<_>>(),
        vec![Window::Day]
    );
}

#[test]
fn at_risk_is_a_hundredth_of_the_day_within_bounds() {
    assert_eq!(at_risk(10), 1, "at least one call");
    assert_eq!(at_risk(100), 1);
    assert_eq!(at_risk(10_000), 100);
    assert_eq!(at_risk(i64::MAX / 4), MAX_AT_RISK, "uncapped accounts");
}

#[test]
fn a_report_is_due_once_the_unreported_calls_reach_the_bound() {
    let mut leases = leases_at_nine(1_000, 300);
    let mono = Instant::now();
    lease_all(&mut leases, 10, mono);
    leases.spend();
    leases.spend();
    assert!(!leases.needs_report(), "2 unreported of a bound of 3");
    leases.spend();
    assert!(leases.needs_report());
    // A report for another day changes nothing; one for today counts off.
    leases.reported(at(9, 0, 0) - chrono::TimeDelta::days(1), 3);
    assert!(leases.needs_report());
    leases.reported(Window::Day.start(at(9, 0, 0)), 2);
    assert_eq!(leases.unreported(), 1);
    assert!(!leases.needs_report());
    // Asks carry the bound, for the database to count on a reclaim.
    leases.day.held = 0;
    let asks = leases.asks(1, mono);
    let day = asks.iter().find(|a| a.window == Window::Day).unwrap();
    assert_eq!(day.at_risk, 3);
}

/// A day limit lowered from 10,000 to 100: the bound sent with the next statement is
/// the new limit's (1 call) once nothing is unreported, and the calls unreported under
/// the old limit until they are (a crash may count them, never fewer).
#[test]
fn the_bound_asked_follows_a_lowered_limit_down() {
    let high = limits(10_000, 10_000);
    let low = limits(10_000, 100);
    let mono = Instant::now();
    let mut leases = Leases::new(high, at(9, 0, 0));
    lease_all(&mut leases, 1, mono);
    for _ in 0..5 {
        leases.spend();
    }
    let day = |leases: &Leases| {
        let asks = leases.asks(1, mono);
        asks.into_iter()
            .find(|a| a.window == Window::Day)
            .expect("a day ask")
    };
    leases.align(low, at(9, 0, 1));
    assert_eq!(
        day(&leases).at_risk,
        5,
        "five calls unreported under the old limit"
    );
    assert!(
        leases.needs_report(),
        "they are reported before the next call"
    );
    leases.reported(Window::Day.start(at(9, 0, 1)), 5);
    assert_eq!(day(&leases).at_risk, 1, "1% of 100");
}

#[test]
fn forgetting_drops_what_was_held_and_unreported() {
    let mono = Instant::now();
    let mut leases = one_call_spent(mono);
    leases.forget();
    assert_eq!(leases.unreported(), 0);
    assert!(leases.needs_lease(mono, true));
    assert!(
        leases.release(at(9, 0, 1)).is_empty(),
        "nothing left to give back"
    );
}
