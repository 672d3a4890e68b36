//! One key alone: its limits, a lowered limit, the two windows, memory of a full
//! window, status reports.

use super::*;
use crate::quota::lease::FULL_RECHECK;

#[test]
fn exactly_the_limit_is_admitted_then_the_day_refuses() {
    let mut key = Alone::new(FREE);
    for n in 1..=10 {
        let Verdict::Admit(status) = key.call(at(9, 0, n)) else {
            panic!("call {n} refused");
        };
        assert_eq!(status.day.remaining, 10 - n as i64);
    }
    // Minute and day both used up: the day answers (D6).
    let verdict = key.call(at(9, 0, 30));
    assert!(matches!(verdict, Verdict::Refuse(Window::Day, _)));
    assert_eq!(key.granted(Window::Day), 10);
    assert_eq!(key.granted(Window::Minute), 10);
}

#[test]
fn the_minute_refuses_until_the_next_minute() {
    let mut key = Alone::new(limits(3, 100));
    for s in 0..3 {
        assert!(matches!(key.call(at(9, 0, s)), Verdict::Admit(_)));
    }
    let Verdict::Refuse(Window::Minute, status) = key.call(at(9, 0, 59)) else {
        panic!("the fourth call in a minute must be refused");
    };
    assert_eq!(status.binding(Some(Window::Minute)).reset, 1);
    assert!(matches!(key.call(at(9, 1, 0)), Verdict::Admit(_)));
}

#[test]
fn a_lower_limit_gives_back_what_was_held_and_applies_at_once() {
    let mut key = Alone::new(limits(1000, 1000));
    for _ in 0..5 {
        key.call(at(9, 0, 1));
    }
    assert!(
        key.granted(Window::Day) > 5,
        "far from the limit a lease takes a block"
    );
    key.limits = limits(5, 5);
    let verdict = key.call(at(9, 0, 2));
    assert!(matches!(verdict, Verdict::Refuse(Window::Day, _)));
    assert_eq!(key.granted(Window::Day), 5, "the unspent block went back");
    assert_eq!(key.granted(Window::Minute), 5);
}

#[test]
fn one_window_leasing_does_not_take_budget_for_the_other() {
    // A small day limit leases call by call near its end; the minute, which holds
    // plenty, must not take another block each time (it used to, until the minute
    // row was fully granted and calls were refused with 42901).
    let mut key = Alone::new(limits(10_000, 300));
    for _ in 0..300 {
        assert!(matches!(key.call(at(9, 0, 1)), Verdict::Admit(_)));
    }
    assert_eq!(key.granted(Window::Day), 300);
    assert_eq!(key.granted(Window::Minute), 2500, "the minute leased once");
    let refused = key.call(at(9, 0, 2));
    assert!(matches!(refused, Verdict::Refuse(Window::Day, _)));
}

#[test]
fn a_full_window_is_refused_from_memory_until_the_recheck() {
    let mut key = Leases::new(FREE, at(9, 0, 0));
    let mono = Instant::now();
    let decide = |key: &mut Leases, now, mono| decide_alone(key, FREE, now, mono, true, true);
    assert_eq!(decide(&mut key, at(9, 0, 0), mono), Verdict::Lease);
    for ask in key.asks(1, mono) {
        let full = LeaseGrant {
            taken: 0,
            granted: 10,
        };
        key.granted(&ask, full, mono);
    }
    let verdict = decide(&mut key, at(9, 0, 1), mono);
    assert!(matches!(verdict, Verdict::Refuse(Window::Day, _)));
    let later = mono + FULL_RECHECK;
    assert_eq!(decide(&mut key, at(9, 0, 2), later), Verdict::Lease);
}

#[test]
fn a_status_report_needs_one_statement_then_none() {
    let mut key = Leases::new(FREE, at(9, 0, 0));
    let mono = Instant::now();
    let report = |key: &mut Leases, now| decide_alone(key, FREE, now, mono, false, true);
    assert_eq!(report(&mut key, at(9, 0, 0)), Verdict::Lease);
    let asks = key.asks(0, mono);
    assert!(asks.iter().all(|a| a.want == 0));
    for ask in &asks {
        let seen = LeaseGrant {
            taken: 0,
            granted: 4,
        };
        key.granted(ask, seen, mono);
    }
    let Verdict::Admit(status) = report(&mut key, at(9, 0, 1)) else {
        panic!("a known window answers from memory");
    };
    assert_eq!(status.day.remaining, 6);
    assert!(key.asks(0, mono).is_empty());
}

#[test]
fn leases_not_renewed_or_unreported_calls_wait_for_a_report() {
    let mut alone = Alone::new(FREE);
    assert!(matches!(alone.call(at(9, 0, 0)), Verdict::Admit(_)));
    let key = &mut alone.leases;
    let decide = |key: &mut Leases, count, renewed| {
        decide_alone(key, FREE, at(9, 0, 1), Instant::now(), count, renewed)
    };
    // A free day (10) may have one call unreported: the second waits for a report.
    assert_eq!(decide(key, true, true), Verdict::Report);
    flushed(key, at(9, 0, 1));
    // Leases this instance may no longer be sure of wait too, but a status does not.
    assert_eq!(decide(key, true, false), Verdict::Report);
    assert!(matches!(decide(key, false, false), Verdict::Admit(_)));
    assert!(matches!(decide(key, true, true), Verdict::Admit(_)));
}
