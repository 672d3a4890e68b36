//! One instance's share of one quota subject's windows (a key's, or an account's: see
//! [`super::subject`]): what it holds, what it asks for, what it gives back.
//!
//! Pure bookkeeping: no I/O and no clock reads. The actor passes in the time and the
//! answers of the lease statements, which makes the boundaries (window roll-over,
//! limit changes, a window known to be full) testable without a database or waiting.
//! Whether a call is admitted is decided over all its subjects in [`super::decision`].
//!
//! The one rule that keeps the limit exact across instances: a call is admitted only
//! from budget this instance holds, and budget only ever comes from a lease statement
//! that never lets a window's total grant pass its limit. Nothing here may add budget
//! any other way.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::status::{Status, WindowStatus};
use super::window::{Limits, Window};

/// A lease takes at most this fraction of what the window has left: large blocks far
/// from the limit, single calls near it, so instances that stop calling strand little.
const LEASE_FRACTION: i64 = 4;
/// The largest block one lease takes (one statement per this many calls, at most).
pub const MAX_LEASE: i64 = 10_000;
/// The next block is leased ahead, while calls are still admitted from memory, once
/// what is held falls to this fraction of the last block taken: a busy key's calls
/// then never wait for a lease statement (a database round trip, in the tail
/// latency), except at the start of a window. Near the limit blocks are single calls
/// and nothing is leased ahead.
const LEASE_AHEAD_FRACTION: i64 = 4;
/// A crash may count calls that were never made, never miss one that was: an instance
/// reports (flushes) before its unreported calls of a day window reach this share of
/// the day's limit (at least one call, at most [`MAX_AT_RISK`]), and a dead instance's
/// leases come back less that much, which is counted as used (migration V15).
const AT_RISK_SHARE: i64 = 100;
/// The most calls one subject's day may have unreported on one instance.
pub const MAX_AT_RISK: i64 = 1_000;
/// How long a window known to be full is refused from memory before the database is
/// asked again (another instance may have given budget back). It bounds the database
/// work a client hammering past its limit can cause: one statement per subject per
/// instance per interval.
pub const FULL_RECHECK: Duration = Duration::from_secs(1);

/// One window's part of a lease statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ask {
    pub window: Window,
    pub start: DateTime<Utc>,
    pub want: i64,
    pub limit: i64,
    /// Budget taken under an earlier limit, given back before taking.
    pub give_back: i64,
    /// The most calls this instance may spend of the window without reporting them
    /// (day windows; see [`at_risk`]).
    pub at_risk: i64,
}

/// The most calls of a day window under `limit` an instance may have spent and not yet
/// reported: 1% of the limit, at least 1 and at most [`MAX_AT_RISK`].
pub fn at_risk(limit: i64) -> i64 {
    (limit / AT_RISK_SHARE).clamp(1, MAX_AT_RISK)
}

/// Reports are asked for at least this many calls apart (or at half the bound, when
/// that is fewer): at most 20 report statements per 1000 calls.
const REPORT_EVERY: i64 = 50;

/// How many unreported calls of a day window with bound `at_risk` ask for a report:
/// a quarter of the bound, so that the report has the other three quarters' calls to
/// land in before a call must wait for it (a busy key's calls otherwise waited for
/// reports that a saturated database answered late), but no fewer than
/// [`REPORT_EVERY`] unless that is more than half the bound.
pub fn report_at(at_risk: i64) -> i64 {
    let quarter = (at_risk + 3) / 4;
    let half = (at_risk + 1) / 2;
    quarter.max(half.min(REPORT_EVERY))
}

/// A lease statement's answer for one window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    pub taken: i64,
    /// The window's total granted across instances after this statement.
    pub granted: i64,
}

/// Budget handed back to the database: unspent, for a window that has not ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GiveBack {
    pub window: Window,
    pub start: DateTime<Utc>,
    pub amount: i64,
}

#[derive(Debug, Clone)]
struct Lease {
    start: DateTime<Utc>,
    /// The limit `held` was leased under.
    limit: i64,
    /// Leased, not yet spent.
    held: i64,
    /// The window's total granted as of this instance's last statement; `None`: not
    /// asked in this window (or under this limit) yet.
    granted_seen: Option<i64>,
    /// Full across instances: refuse from memory until then.
    full_until: Option<Instant>,
    /// Taken under an older limit; goes back with the next statement.
    give_back: i64,
    /// Spent and not yet known to be written by a flush (counted for day windows).
    unreported: i64,
    /// The block the last lease statement took (0: none yet in this window).
    last_taken: i64,
}

impl Lease {
    fn new(start: DateTime<Utc>, limit: i64) -> Lease {
        Lease {
            start,
            limit,
            held: 0,
            granted_seen: None,
            full_until: None,
            give_back: 0,
            unreported: 0,
            last_taken: 0,
        }
    }

    fn is_full(&self, mono: Instant) -> bool {
        self.held == 0 && self.full_until.is_some_and(|until| mono < until)
    }

    /// Whether a call (or, for `count == false`, a status report) needs a statement.
    fn needs_lease(&self, mono: Instant, count: bool) -> bool {
        if count {
            self.held == 0 && !self.is_full(mono)
        } else {
            self.granted_seen.is_none()
        }
    }

    /// Whether the next block is to be leased ahead: what is held is down to a
    /// [`LEASE_AHEAD_FRACTION`] of the last block, and the window has more to lease as
    /// far as this instance knows.
    fn low(&self) -> bool {
        self.held > 0
            && self.held <= self.last_taken / LEASE_AHEAD_FRACTION
            && self
                .granted_seen
                .is_some_and(|granted| granted < self.limit)
            && self.give_back == 0
    }

    /// Calls left in the window as this instance sees it: exact with one instance; with
    /// several, blind to what the others have spent of their leases since.
    fn remaining(&self) -> i64 {
        let unleased = self.limit - self.granted_seen.unwrap_or(0);
        (unleased.max(0) + self.held).clamp(0, self.limit)
    }

    /// What to ask for when `waiting` counted calls queue: nothing while the budget
    /// held covers them (the other window may be the one leasing), else a block.
    fn want(&self, waiting: i64) -> i64 {
        if self.held >= waiting {
            return 0;
        }
        let left = (self.limit - self.granted_seen.unwrap_or(0)).max(0);
        let block = (left / LEASE_FRACTION).clamp(1, MAX_LEASE);
        (waiting - self.held).max(block)
    }
}

/// One instance's leases on one subject's day and minute windows.
#[derive(Debug, Clone)]
pub struct Leases {
    day: Lease,
    minute: Lease,
}

impl Leases {
    pub fn new(limits: Limits, now: DateTime<Utc>) -> Leases {
        Leases {
            day: Lease::new(Window::Day.start(now), limits.per_day),
            minute: Lease::new(Window::Minute.start(now), limits.per_minute),
        }
    }

    fn lease(&self, window: Window) -> &Lease {
        match window {
            Window::Day => &self.day,
            Window::Minute => &self.minute,
        }
    }

    fn lease_mut(&mut self, window: Window) -> &mut Lease {
        match window {
            Window::Day => &mut self.day,
            Window::Minute => &mut self.minute,
        }
    }

    /// Moves each lease to the window `now` falls in (a past window's budget is void)
    /// and to the current limit: budget taken under another limit is given back and the
    /// window asked again, so a tier change applies from the next call.
    pub fn align(&mut self, limits: Limits, now: DateTime<Utc>) {
        for window in Window::ALL {
            let start = window.start(now);
            let limit = limits.of(window);
            let lease = self.lease_mut(window);
            if lease.start != start {
                *lease = Lease::new(start, limit);
            } else if lease.limit != limit {
                lease.give_back += lease.held;
                lease.held = 0;
                lease.granted_seen = None;
                lease.full_until = None;
                lease.limit = limit;
            }
        }
    }

    /// Whether `window` is known to be used up across instances (and nothing is held).
    pub fn is_full(&self, window: Window, mono: Instant) -> bool {
        self.lease(window).is_full(mono)
    }

    /// Whether a call (or, for `count == false`, a status report) needs a statement.
    pub fn needs_lease(&self, mono: Instant, count: bool) -> bool {
        Window::ALL
            .into_iter()
            .any(|w| self.lease(w).needs_lease(mono, count))
    }

    /// Spends one call of each window. Only when every subject of the call holds budget
    /// in both windows (see [`super::decision`]), so a refused call spends nothing.
    pub fn spend(&mut self) {
        debug_assert!(self.day.held > 0 && self.minute.held > 0);
        self.day.held -= 1;
        self.minute.held -= 1;
        self.day.unreported += 1;
    }

    /// Whether a window's next block is to be leased ahead (see [`LEASE_AHEAD_FRACTION`]).
    pub fn wants_more(&self) -> bool {
        Window::ALL.into_iter().any(|w| self.lease(w).low())
    }

    /// The lease statement's part for leasing ahead: a block for each window that
    /// [`Leases::wants_more`]; empty when none does.
    pub fn asks_ahead(&self) -> Vec<Ask> {
        Window::ALL
            .into_iter()
            .filter(|&window| self.lease(window).low())
            .map(|window| {
                let lease = self.lease(window);
                Ask {
                    window,
                    start: lease.start,
                    want: lease.want(lease.held + 1),
                    limit: lease.limit,
                    give_back: 0,
                    at_risk: at_risk(lease.limit),
                }
            })
            .collect()
    }

    /// Whether the day's calls spent and not yet reported have reached the bound, so
    /// the next call waits for a flush (see [`at_risk`]).
    pub fn needs_report(&self) -> bool {
        self.day.unreported >= at_risk(self.day.limit)
    }

    /// Whether it is time to report, before a call has to wait for it: see
    /// [`report_at`].
    pub fn wants_report(&self) -> bool {
        self.day.unreported >= report_at(at_risk(self.day.limit))
    }

    /// Calls spent and not yet reported.
    pub fn unreported(&self) -> i64 {
        self.day.unreported
    }

    /// A flush wrote `used` calls of the day window starting at `start`.
    pub fn reported(&mut self, start: DateTime<Utc>, used: i64) {
        if self.day.start == start {
            self.day.unreported = (self.day.unreported - used).max(0);
        }
    }

    /// This instance's leases were reclaimed (it was out of touch past its TTL): what
    /// it held and what it had not reported belong to the database now. The leases
    /// start over empty in the same windows.
    pub fn forget(&mut self) {
        for window in Window::ALL {
            let lease = self.lease_mut(window);
            *lease = Lease::new(lease.start, lease.limit);
        }
    }

    pub fn status(&self, now: DateTime<Utc>) -> Status {
        let report = |window: Window| {
            let lease = self.lease(window);
            WindowStatus {
                window,
                limit: lease.limit,
                remaining: lease.remaining(),
                reset: window.seconds_left(now),
            }
        };
        Status {
            day: report(Window::Day),
            minute: report(Window::Minute),
        }
    }

    /// This subject's part of the lease statement for `waiting` counted calls queued
    /// behind a `Verdict::Lease` (0: status reports only); empty when it needs nothing.
    /// Call after the decision, which aligned the windows.
    pub fn asks(&self, waiting: i64, mono: Instant) -> Vec<Ask> {
        Window::ALL
            .into_iter()
            .filter_map(|window| {
                let lease = self.lease(window);
                let want = if lease.is_full(mono) {
                    0
                } else {
                    lease.want(waiting)
                };
                let ask = lease.granted_seen.is_none() || want > 0 || lease.give_back > 0;
                ask.then_some(Ask {
                    window,
                    start: lease.start,
                    want,
                    limit: lease.limit,
                    give_back: lease.give_back,
                    at_risk: at_risk(lease.limit),
                })
            })
            .collect()
    }

    /// Takes in a lease statement's answer to `ask`.
    pub fn granted(&mut self, ask: &Ask, grant: Grant, mono: Instant) {
        let lease = self.lease_mut(ask.window);
        if lease.start != ask.start {
            // The window ended while the statement ran: its budget is void.
            return;
        }
        lease.give_back -= ask.give_back.min(lease.give_back);
        if lease.limit != ask.limit {
            // The limit changed while the statement ran: what it took goes back.
            lease.give_back += grant.taken;
            return;
        }
        lease.held += grant.taken;
        if grant.taken > 0 {
            lease.last_taken = grant.taken;
        }
        lease.granted_seen = Some(grant.granted);
        lease.full_until = (grant.granted >= lease.limit).then(|| mono + FULL_RECHECK);
    }

    /// Everything held for windows not yet ended, to give back when the subject goes
    /// idle or the instance stops; the leases start over empty.
    pub fn release(&mut self, now: DateTime<Utc>) -> Vec<GiveBack> {
        Window::ALL
            .into_iter()
            .filter_map(|window| {
                let lease = self.lease_mut(window);
                let amount = lease.held + lease.give_back;
                let current = lease.start == window.start(now);
                *lease = Lease::new(lease.start, lease.limit);
                (current && amount > 0).then_some(GiveBack {
                    window,
                    start: lease.start,
                    amount,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_clock::{at, FREE};
    use super::*;

    /// Answers every ask as a database holding nothing else would.
    fn lease_all(leases: &mut Leases, waiting: i64, mono: Instant) {
        for ask in leases.asks(waiting, mono) {
            let grant = Grant {
                taken: ask.want.min(ask.limit),
                granted: ask.want.min(ask.limit),
            };
            leases.granted(&ask, grant, mono);
        }
    }

    #[test]
    fn leases_shrink_to_single_calls_near_the_limit() {
        let limits = Limits {
            per_minute: 10_000,
            per_day: 10_000,
        };
        let mut leases = Leases::new(limits, at(9, 0, 0));
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
            leases.granted(day, Grant { taken, granted }, mono);
            leases.day.held = 0; // spent
        }
        assert_eq!(last, 1, "the last calls are leased one by one");
        assert!(statements < 40, "{statements} statements for one day");
    }

    #[test]
    fn the_next_block_is_leased_ahead_when_a_quarter_of_the_last_is_left() {
        let limits = Limits {
            per_minute: 100_000,
            per_day: 1_000_000,
        };
        let mut leases = Leases::new(limits, at(9, 0, 0));
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
            let grant = Grant {
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
        let tight = Limits {
            per_minute: 8,
            per_day: 8,
        };
        let mut leases = Leases::new(tight, at(9, 0, 0));
        lease_all(&mut leases, 1, mono);
        leases.spend();
        assert_eq!(leases.day.held, 1);
        assert!(!leases.wants_more());
        // Other instances took the rest of the day: there is nothing to lease ahead.
        let limits = Limits {
            per_minute: 100_000,
            per_day: 1_000,
        };
        let mut leases = Leases::new(limits, at(9, 0, 0));
        for ask in leases.asks(1, mono) {
            let granted = if ask.window == Window::Day { 1_000 } else { 40 };
            leases.granted(&ask, Grant { taken: 40, granted }, mono);
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
        let lower = Limits {
            per_minute: 4,
            per_day: 4,
        };
        leases.align(lower, at(9, 0, 1));
        let asks = leases.asks(1, mono);
        assert!(asks.iter().all(|a| a.give_back == 2 && a.limit == 4));
        // An answer to a statement asked under the old limit is given back, not held.
        let mut stale = Leases::new(FREE, at(9, 0, 0));
        let old = stale.asks(1, mono);
        stale.align(lower, at(9, 0, 1));
        stale.granted(
            &old[0],
            Grant {
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
        let mut leases = Leases::new(FREE, at(9, 0, 0));
        let mono = Instant::now();
        lease_all(&mut leases, 1, mono);
        leases.spend();
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
        let limits = Limits {
            per_minute: 1_000,
            per_day: 300,
        };
        let mut leases = Leases::new(limits, at(9, 0, 0));
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

    #[test]
    fn forgetting_drops_what_was_held_and_unreported() {
        let mut leases = Leases::new(FREE, at(9, 0, 0));
        let mono = Instant::now();
        lease_all(&mut leases, 1, mono);
        leases.spend();
        leases.forget();
        assert_eq!(leases.unreported(), 0);
        assert!(leases.needs_lease(mono, true));
        assert!(
            leases.release(at(9, 0, 1)).is_empty(),
            "nothing left to give back"
        );
    }
}
