//! One instance's share of one key's quota windows, and the decision for one call.
//!
//! Pure bookkeeping: no I/O and no clock reads. The actor passes in the time and the
//! answers of the lease statements, which makes the boundaries (window roll-over,
//! limit changes, a window known to be full) testable without a database or waiting.
//!
//! The one rule that keeps the limit exact across instances: a call is admitted only
//! from budget this instance holds, and budget only ever comes from a lease statement
//! that never lets a window's total grant pass its limit.

use std::time::{Duration, Instant};

use chrono::{DateTime, DurationRound, TimeDelta, Utc};

use crate::caller::Tier;

/// A lease takes at most this fraction of what the window has left: large blocks far
/// from the limit, single calls near it, so instances that stop calling strand little.
const LEASE_FRACTION: i64 = 4;
/// The largest block one lease takes (one statement per this many calls, at most).
pub const MAX_LEASE: i64 = 10_000;
/// How long a window known to be full is refused from memory before the database is
/// asked again (another instance may have given budget back). It bounds the database
/// work a client hammering past its limit can cause: one statement per key per instance
/// per interval.
pub const FULL_RECHECK: Duration = Duration::from_secs(1);

/// A quota window: a UTC calendar minute or a UTC calendar day (D6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Window {
    /// First: statements lock a key's rows day first, then minute (see the migration).
    Day,
    Minute,
}

impl Window {
    pub const ALL: [Window; 2] = [Window::Day, Window::Minute];

    pub fn as_str(self) -> &'static str {
        match self {
            Window::Day => "day",
            Window::Minute => "minute",
        }
    }

    fn length(self) -> TimeDelta {
        match self {
            Window::Day => TimeDelta::days(1),
            Window::Minute => TimeDelta::minutes(1),
        }
    }

    /// The start of the window `now` falls in.
    pub fn start(self, now: DateTime<Utc>) -> DateTime<Utc> {
        // Rounding down a UTC instant to a whole minute or day cannot overflow.
        now.duration_trunc(self.length()).unwrap_or(now)
    }

    /// Whole seconds until the window `now` falls in ends: at least 1, so a client told
    /// to wait never retries at once.
    pub fn seconds_left(self, now: DateTime<Utc>) -> i64 {
        let end = self.start(now) + self.length();
        let millis = (end - now).num_milliseconds();
        ((millis + 999) / 1000).max(1)
    }
}

/// A key's effective limits: the smaller of the key's own and its owner's tier's (D6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub per_minute: i64,
    pub per_day: i64,
}

impl Limits {
    pub fn effective(key_minute: Option<i64>, key_day: Option<i64>, tier: &Tier) -> Limits {
        let narrow = |own: Option<i64>, tier: i64| own.map_or(tier, |own| own.min(tier)).max(0);
        Limits {
            per_minute: narrow(key_minute, tier.per_minute),
            per_day: narrow(key_day, tier.per_day),
        }
    }

    pub fn of(self, window: Window) -> i64 {
        match window {
            Window::Day => self.per_day,
            Window::Minute => self.per_minute,
        }
    }
}

/// One window as a response reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowStatus {
    pub window: Window,
    pub limit: i64,
    pub remaining: i64,
    /// Seconds until the window resets.
    pub reset: i64,
}

/// Both windows as a response reports them (D6 headers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    pub day: WindowStatus,
    pub minute: WindowStatus,
}

impl Status {
    /// The window that binds: the refusing one for a 429, otherwise the one with fewer
    /// calls left (the day on a tie, because waiting out the minute would not help).
    pub fn binding(&self, refused: Option<Window>) -> WindowStatus {
        match refused {
            Some(Window::Day) => self.day,
            Some(Window::Minute) => self.minute,
            None if self.minute.remaining < self.day.remaining => self.minute,
            None => self.day,
        }
    }
}

/// What to do with one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Admitted and charged to this instance's budget.
    Admit(Status),
    /// The window is used up across all instances (the day, when both are).
    Refuse(Window, Status),
    /// This instance must lease before it can answer.
    Lease,
}

/// One window's part of a lease statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ask {
    pub window: Window,
    pub start: DateTime<Utc>,
    pub want: i64,
    pub limit: i64,
    /// Budget taken under an earlier limit, given back before taking.
    pub give_back: i64,
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

/// One instance's leases on one key's day and minute windows.
#[derive(Debug, Clone)]
pub struct KeyQuota {
    day: Lease,
    minute: Lease,
}

impl KeyQuota {
    pub fn new(limits: Limits, now: DateTime<Utc>) -> KeyQuota {
        KeyQuota {
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
    fn align(&mut self, limits: Limits, now: DateTime<Utc>) {
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

    /// Decides one call; `count == false` only reports the status (a key-authenticated
    /// query refused before step 7 is not counted, D6, but still carries the headers).
    pub fn decide(
        &mut self,
        limits: Limits,
        now: DateTime<Utc>,
        mono: Instant,
        count: bool,
    ) -> Verdict {
        self.align(limits, now);
        if count && self.day.is_full(mono) {
            return Verdict::Refuse(Window::Day, self.status(now));
        }
        if Window::ALL
            .into_iter()
            .any(|w| self.lease(w).needs_lease(mono, count))
        {
            return Verdict::Lease;
        }
        if count && self.minute.is_full(mono) {
            return Verdict::Refuse(Window::Minute, self.status(now));
        }
        if count {
            self.day.held -= 1;
            self.minute.held -= 1;
        }
        Verdict::Admit(self.status(now))
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

    /// The lease statement for `waiting` counted calls queued behind `decide`'s
    /// `Verdict::Lease` (0: status reports only). Call after `decide`, which aligned
    /// the windows.
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
        lease.granted_seen = Some(grant.granted);
        lease.full_until = (grant.granted >= lease.limit).then(|| mono + FULL_RECHECK);
    }

    /// Everything held for windows not yet ended, to give back when the key goes idle
    /// or the instance stops; the leases start over empty.
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
    use super::*;
    use chrono::TimeZone;

    fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 20, h, m, s)
            .single()
            .unwrap()
    }

    const FREE: Limits = Limits {
        per_minute: 10,
        per_day: 10,
    };

    /// A single instance against a database holding `granted` per window.
    struct Db {
        granted: [i64; 2],
    }

    impl Db {
        fn serve(&mut self, book: &mut KeyQuota, waiting: i64, mono: Instant) {
            for ask in book.asks(waiting, mono) {
                let slot = &mut self.granted[ask.window as usize];
                *slot = (*slot - ask.give_back).max(0);
                let taken = ask.want.min((ask.limit - *slot).max(0));
                *slot += taken;
                let grant = Grant {
                    taken,
                    granted: *slot,
                };
                book.granted(&ask, grant, mono);
            }
        }
    }

    fn call(book: &mut KeyQuota, db: &mut Db, limits: Limits, now: DateTime<Utc>) -> Verdict {
        let mono = Instant::now();
        loop {
            match book.decide(limits, now, mono, true) {
                Verdict::Lease => db.serve(book, 1, mono),
                verdict => return verdict,
            }
        }
    }

    #[test]
    fn windows_are_utc_calendar_minutes_and_days() {
        let now = at(13, 45, 30);
        assert_eq!(Window::Minute.start(now), at(13, 45, 0));
        assert_eq!(Window::Day.start(now), at(0, 0, 0));
        assert_eq!(Window::Minute.seconds_left(now), 30);
        assert_eq!(Window::Day.seconds_left(now), 10 * 3600 + 14 * 60 + 30);
        assert_eq!(Window::Minute.seconds_left(at(13, 45, 0)), 60);
        let just_before = at(13, 45, 59) + TimeDelta::milliseconds(999);
        assert_eq!(Window::Minute.seconds_left(just_before), 1);
    }

    #[test]
    fn effective_limit_is_the_smaller_of_key_and_tier() {
        let tier = Tier {
            name: "pro".into(),
            per_minute: 100,
            per_day: 1000,
            max_rows: 5000,
            max_keys: None,
            delay_days: 0,
            member_indexes: true,
        };
        assert_eq!(
            Limits::effective(None, None, &tier),
            Limits {
                per_minute: 100,
                per_day: 1000
            }
        );
        assert_eq!(
            Limits::effective(Some(5), Some(5000), &tier),
            Limits {
                per_minute: 5,
                per_day: 1000
            }
        );
    }

    #[test]
    fn exactly_the_limit_is_admitted_then_the_day_refuses() {
        let mut book = KeyQuota::new(FREE, at(9, 0, 0));
        let mut db = Db { granted: [0, 0] };
        for n in 1..=10 {
            let Verdict::Admit(status) = call(&mut book, &mut db, FREE, at(9, 0, n)) else {
                panic!("call {n} refused");
            };
            assert_eq!(status.day.remaining, 10 - n as i64);
        }
        // Minute and day both used up: the day answers (D6).
        let verdict = call(&mut book, &mut db, FREE, at(9, 0, 30));
        assert!(matches!(verdict, Verdict::Refuse(Window::Day, _)));
        assert_eq!(db.granted, [10, 10]);
    }

    #[test]
    fn the_minute_refuses_until_the_next_minute() {
        let limits = Limits {
            per_minute: 3,
            per_day: 100,
        };
        let mut book = KeyQuota::new(limits, at(9, 0, 0));
        let mut db = Db { granted: [0, 0] };
        for s in 0..3 {
            assert!(matches!(
                call(&mut book, &mut db, limits, at(9, 0, s)),
                Verdict::Admit(_)
            ));
        }
        let Verdict::Refuse(Window::Minute, status) =
            call(&mut book, &mut db, limits, at(9, 0, 59))
        else {
            panic!("the fourth call in a minute must be refused");
        };
        assert_eq!(status.binding(Some(Window::Minute)).reset, 1);
        db.granted[Window::Minute as usize] = 0; // the next minute's row starts empty
        assert!(matches!(
            call(&mut book, &mut db, limits, at(9, 1, 0)),
            Verdict::Admit(_)
        ));
    }

    #[test]
    fn a_lower_limit_gives_back_what_was_held_and_applies_at_once() {
        let high = Limits {
            per_minute: 1000,
            per_day: 1000,
        };
        let mut book = KeyQuota::new(high, at(9, 0, 0));
        let mut db = Db { granted: [0, 0] };
        for _ in 0..5 {
            call(&mut book, &mut db, high, at(9, 0, 1));
        }
        assert!(
            db.granted[0] > 5,
            "far from the limit a lease takes a block"
        );
        let low = Limits {
            per_minute: 5,
            per_day: 5,
        };
        let verdict = call(&mut book, &mut db, low, at(9, 0, 2));
        assert!(matches!(verdict, Verdict::Refuse(Window::Day, _)));
        assert_eq!(db.granted, [5, 5], "the unspent block went back");
    }

    #[test]
    fn leases_shrink_to_single_calls_near_the_limit() {
        let limits = Limits {
            per_minute: 10_000,
            per_day: 10_000,
        };
        let mut book = KeyQuota::new(limits, at(9, 0, 0));
        let mono = Instant::now();
        let (mut granted, mut statements, mut last) = (0, 0, i64::MAX);
        while granted < 10_000 {
            let asks = book.asks(1, mono);
            let day = asks.iter().find(|a| a.window == Window::Day).unwrap();
            let taken = day.want.min(10_000 - granted);
            assert!(taken >= 1 && taken <= last, "blocks only shrink");
            assert!(taken <= ((10_000 - granted) / 4).max(1));
            granted += taken;
            statements += 1;
            last = taken;
            book.granted(day, Grant { taken, granted }, mono);
            book.day.held = 0; // spent
        }
        assert_eq!(last, 1, "the last calls are leased one by one");
        assert!(statements < 40, "{statements} statements for one day");
    }

    #[test]
    fn one_window_leasing_does_not_take_budget_for_the_other() {
        // A small day limit leases call by call near its end; the minute, which holds
        // plenty, must not take another block each time (it used to, until the minute
        // row was fully granted and calls were refused with 42901).
        let limits = Limits {
            per_minute: 10_000,
            per_day: 300,
        };
        let mut book = KeyQuota::new(limits, at(9, 0, 0));
        let mut db = Db { granted: [0, 0] };
        for _ in 0..300 {
            assert!(matches!(
                call(&mut book, &mut db, limits, at(9, 0, 1)),
                Verdict::Admit(_)
            ));
        }
        assert_eq!(db.granted, [300, 2500], "the minute leased once");
        let refused = call(&mut book, &mut db, limits, at(9, 0, 2));
        assert!(matches!(refused, Verdict::Refuse(Window::Day, _)));
    }

    #[test]
    fn a_full_window_is_refused_from_memory_until_the_recheck() {
        let mut book = KeyQuota::new(FREE, at(9, 0, 0));
        let mono = Instant::now();
        book.decide(FREE, at(9, 0, 0), mono, true);
        for ask in book.asks(1, mono) {
            book.granted(
                &ask,
                Grant {
                    taken: 0,
                    granted: 10,
                },
                mono,
            );
        }
        let verdict = book.decide(FREE, at(9, 0, 1), mono, true);
        assert!(matches!(verdict, Verdict::Refuse(Window::Day, _)));
        let later = mono + FULL_RECHECK;
        assert_eq!(book.decide(FREE, at(9, 0, 2), later, true), Verdict::Lease);
    }

    #[test]
    fn a_status_report_needs_one_statement_then_none() {
        let mut book = KeyQuota::new(FREE, at(9, 0, 0));
        let mono = Instant::now();
        assert_eq!(book.decide(FREE, at(9, 0, 0), mono, false), Verdict::Lease);
        let asks = book.asks(0, mono);
        assert!(asks.iter().all(|a| a.want == 0));
        for ask in &asks {
            book.granted(
                ask,
                Grant {
                    taken: 0,
                    granted: 4,
                },
                mono,
            );
        }
        let Verdict::Admit(status) = book.decide(FREE, at(9, 0, 1), mono, false) else {
            panic!("a known window answers from memory");
        };
        assert_eq!(status.day.remaining, 6);
        assert!(book.asks(0, mono).is_empty());
    }

    #[test]
    fn release_returns_only_current_windows() {
        let mut book = KeyQuota::new(FREE, at(9, 0, 0));
        let mut db = Db { granted: [0, 0] };
        call(&mut book, &mut db, FREE, at(9, 0, 0));
        let held: Vec<_> = book.release(at(9, 0, 30));
        assert_eq!(held.len(), 2);
        call(&mut book, &mut db, FREE, at(9, 0, 40));
        let next_minute = book.release(at(9, 1, 5));
        assert_eq!(
            next_minute.iter().map(|g| g.window).collect::<Vec<_>>(),
            vec![Window::Day]
        );
    }
}
