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
pub struct LeaseAsk {
    pub window: Window,
    pub start: DateTime<Utc>,
    pub want: i64,
    pub limit: i64,
    /// Budget taken under an earlier limit, given back before taking.
    pub give_back: i64,
    /// The most calls this instance may have spent of the window and not reported, from
    /// this statement until its next (day windows): the bound under the current limit
    /// ([`at_risk`]), or the calls unreported now when they are more (after the limit
    /// was lowered, until they are reported). A dead instance's holding counts this
    /// many calls as used, so it must never be less than what may be unreported, and
    /// follows a lowered limit down.
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
pub struct LeaseGrant {
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

    /// This lease's part of a statement asking for `want` calls of `window`, giving
    /// back what it took under an older limit.
    fn ask(&self, window: Window, want: i64) -> LeaseAsk {
        LeaseAsk {
            window,
            start: self.start,
            want,
            limit: self.limit,
            give_back: self.give_back,
            at_risk: at_risk(self.limit).max(self.unreported),
        }
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
    pub fn asks_ahead(&self) -> Vec<LeaseAsk> {
        Window::ALL
            .into_iter()
            .filter(|&window| self.lease(window).low())
            .map(|window| {
                let lease = self.lease(window);
                lease.ask(window, lease.want(lease.held + 1))
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
    pub fn asks(&self, waiting: i64, mono: Instant) -> Vec<LeaseAsk> {
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
                ask.then(|| lease.ask(window, want))
            })
            .collect()
    }

    /// Takes in a lease statement's answer to `ask`.
    pub fn granted(&mut self, ask: &LeaseAsk, grant: LeaseGrant, mono: Instant) {
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
mod tests;
