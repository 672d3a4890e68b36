//! The decision for one call over the subjects it is charged to: its key and its
//! owner's account (D6, D11; the account cap is described in [`super::subject`]).
//!
//! The same order for every subject, so the answer does not depend on which one binds:
//!
//! 1. a day known to be used up, the key's or the account's: 42902 (also when a minute
//!    is used up too: waiting a minute would not help);
//! 2. a subject without budget in hand: lease first (the answer may show a full day);
//! 3. a minute known to be used up, the key's or the account's: 42901;
//! 4. otherwise admitted, and only now does every subject spend one call of each window.
//!
//! Nothing is spent before step 4, so a refused call costs no subject anything (D6): the
//! budget one subject holds when the other refuses stays in this instance's hand for the
//! next call, and goes back to the database when the subject is idle or the instance
//! stops, like any held budget. Pure: no I/O, no clock reads. It must never admit a
//! call unless every subject holds budget in both windows.

use std::time::Instant;

use chrono::{DateTime, Utc};

use super::lease::Leases;
use super::status::Status;
use super::window::{Limits, Window};

/// What to do with one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Admitted and charged to this instance's budget, for every subject.
    Admit(Status),
    /// The window is used up across all instances (the day, when both are).
    Refuse(Window, Status),
    /// This instance must lease before it can answer.
    Lease,
}

/// One subject of a call: this instance's leases on it and the limits the call brings.
pub struct Charged<'a> {
    pub leases: &'a mut Leases,
    pub limits: Limits,
}

/// The subjects of one call: the key, and (for every key the service issues) its
/// owner's account. Without an account it is the key alone, as before D11.
pub struct Subjects<'a> {
    pub key: Charged<'a>,
    pub account: Option<Charged<'a>>,
}

impl<'a> Subjects<'a> {
    fn each(&self) -> impl Iterator<Item = &Charged<'a>> + '_ {
        std::iter::once(&self.key).chain(self.account.as_ref())
    }

    fn each_mut(&mut self) -> impl Iterator<Item = &mut Charged<'a>> + '_ {
        std::iter::once(&mut self.key).chain(self.account.as_mut())
    }

    /// Per window, the tighter of the key's and the account's (D11).
    fn status(&self, now: DateTime<Utc>) -> Status {
        let key = self.key.leases.status(now);
        match &self.account {
            Some(account) => key.tighter(account.leases.status(now)),
            None => key,
        }
    }

    fn any_full(&self, window: Window, mono: Instant) -> bool {
        self.each().any(|s| s.leases.is_full(window, mono))
    }

    /// Decides one call; `count == false` only reports the status (a key-authenticated
    /// query refused before step 7 is not counted, D6, but still carries the headers).
    pub fn decide(&mut self, now: DateTime<Utc>, mono: Instant, count: bool) -> Verdict {
        for subject in self.each_mut() {
            subject.leases.align(subject.limits, now);
        }
        if count && self.any_full(Window::Day, mono) {
            return Verdict::Refuse(Window::Day, self.status(now));
        }
        if self.each().any(|s| s.leases.needs_lease(mono, count)) {
            return Verdict::Lease;
        }
        if count && self.any_full(Window::Minute, mono) {
            return Verdict::Refuse(Window::Minute, self.status(now));
        }
        if count {
            for subject in self.each_mut() {
                subject.leases.spend();
            }
        }
        Verdict::Admit(self.status(now))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_clock::{at, FREE};
    use std::collections::HashMap;

    use super::super::lease::{Grant, FULL_RECHECK};
    use super::super::subject::UNCAPPED;
    use super::*;

    fn limits(per_minute: i64, per_day: i64) -> Limits {
        Limits {
            per_minute,
            per_day,
        }
    }

    /// The database's `granted` per (subject, window, start), for one instance or several.
    #[derive(Default)]
    struct Db {
        granted: HashMap<(&'static str, Window, DateTime<Utc>), i64>,
        statements: usize,
    }

    impl Db {
        /// One lease statement for every subject's asks, as `quota_lease_subjects` does.
        fn serve(&mut self, subjects: &mut [(&'static str, &mut Leases)], waiting: i64) {
            let mono = Instant::now();
            self.statements += 1;
            for (name, leases) in subjects.iter_mut() {
                for ask in leases.asks(waiting, mono) {
                    let slot = self
                        .granted
                        .entry((*name, ask.window, ask.start))
                        .or_default();
                    *slot = (*slot - ask.give_back).max(0);
                    let taken = ask.want.min((ask.limit - *slot).max(0));
                    *slot += taken;
                    let grant = Grant {
                        taken,
                        granted: *slot,
                    };
                    leases.granted(&ask, grant, mono);
                }
            }
        }

        /// Over all the windows of that length the test went through.
        fn granted(&self, name: &'static str, window: Window) -> i64 {
            (self.granted.iter())
                .filter(|((n, w, _), _)| *n == name && *w == window)
                .map(|(_, granted)| granted)
                .sum()
        }
    }

    /// One counted call with `key` (named `name`) alone, leasing as often as needed.
    fn call(key: &mut Leases, db: &mut Db, limits: Limits, now: DateTime<Utc>) -> Verdict {
        loop {
            let mut subjects = Subjects {
                key: Charged {
                    leases: key,
                    limits,
                },
                account: None,
            };
            match subjects.decide(now, Instant::now(), true) {
                Verdict::Lease => db.serve(&mut [("key", &mut *key)], 1),
                verdict => return verdict,
            }
        }
    }

    /// One counted call charged to `key` and `account`, leasing as often as needed.
    fn call_both(
        (key_name, key, key_limits): (&'static str, &mut Leases, Limits),
        (account, account_limits): (&mut Leases, Limits),
        db: &mut Db,
        now: DateTime<Utc>,
    ) -> Verdict {
        loop {
            let mut subjects = Subjects {
                key: Charged {
                    leases: key,
                    limits: key_limits,
                },
                account: Some(Charged {
                    leases: account,
                    limits: account_limits,
                }),
            };
            match subjects.decide(now, Instant::now(), true) {
                Verdict::Lease => {
                    db.serve(&mut [("acct", &mut *account), (key_name, &mut *key)], 1)
                }
                verdict => return verdict,
            }
        }
    }

    #[test]
    fn exactly_the_limit_is_admitted_then_the_day_refuses() {
        let mut key = Leases::new(FREE, at(9, 0, 0));
        let mut db = Db::default();
        for n in 1..=10 {
            let Verdict::Admit(status) = call(&mut key, &mut db, FREE, at(9, 0, n)) else {
                panic!("call {n} refused");
            };
            assert_eq!(status.day.remaining, 10 - n as i64);
        }
        // Minute and day both used up: the day answers (D6).
        let verdict = call(&mut key, &mut db, FREE, at(9, 0, 30));
        assert!(matches!(verdict, Verdict::Refuse(Window::Day, _)));
        assert_eq!(db.granted("key", Window::Day), 10);
        assert_eq!(db.granted("key", Window::Minute), 10);
    }

    #[test]
    fn the_minute_refuses_until_the_next_minute() {
        let limits = limits(3, 100);
        let mut key = Leases::new(limits, at(9, 0, 0));
        let mut db = Db::default();
        for s in 0..3 {
            assert!(matches!(
                call(&mut key, &mut db, limits, at(9, 0, s)),
                Verdict::Admit(_)
            ));
        }
        let Verdict::Refuse(Window::Minute, status) = call(&mut key, &mut db, limits, at(9, 0, 59))
        else {
            panic!("the fourth call in a minute must be refused");
        };
        assert_eq!(status.binding(Some(Window::Minute)).reset, 1);
        assert!(matches!(
            call(&mut key, &mut db, limits, at(9, 1, 0)),
            Verdict::Admit(_)
        ));
    }

    #[test]
    fn a_lower_limit_gives_back_what_was_held_and_applies_at_once() {
        let high = limits(1000, 1000);
        let mut key = Leases::new(high, at(9, 0, 0));
        let mut db = Db::default();
        for _ in 0..5 {
            call(&mut key, &mut db, high, at(9, 0, 1));
        }
        assert!(
            db.granted("key", Window::Day) > 5,
            "far from the limit a lease takes a block"
        );
        let low = limits(5, 5);
        let verdict = call(&mut key, &mut db, low, at(9, 0, 2));
        assert!(matches!(verdict, Verdict::Refuse(Window::Day, _)));
        assert_eq!(
            db.granted("key", Window::Day),
            5,
            "the unspent block went back"
        );
        assert_eq!(db.granted("key", Window::Minute), 5);
    }

    #[test]
    fn one_window_leasing_does_not_take_budget_for_the_other() {
        // A small day limit leases call by call near its end; the minute, which holds
        // plenty, must not take another block each time (it used to, until the minute
        // row was fully granted and calls were refused with 42901).
        let limits = limits(10_000, 300);
        let mut key = Leases::new(limits, at(9, 0, 0));
        let mut db = Db::default();
        for _ in 0..300 {
            assert!(matches!(
                call(&mut key, &mut db, limits, at(9, 0, 1)),
                Verdict::Admit(_)
            ));
        }
        assert_eq!(db.granted("key", Window::Day), 300);
        assert_eq!(
            db.granted("key", Window::Minute),
            2500,
            "the minute leased once"
        );
        let refused = call(&mut key, &mut db, limits, at(9, 0, 2));
        assert!(matches!(refused, Verdict::Refuse(Window::Day, _)));
    }

    #[test]
    fn a_full_window_is_refused_from_memory_until_the_recheck() {
        let mut key = Leases::new(FREE, at(9, 0, 0));
        let mono = Instant::now();
        let decide = |key: &mut Leases, now, mono| {
            let mut subjects = Subjects {
                key: Charged {
                    leases: key,
                    limits: FREE,
                },
                account: None,
            };
            subjects.decide(now, mono, true)
        };
        assert_eq!(decide(&mut key, at(9, 0, 0), mono), Verdict::Lease);
        for ask in key.asks(1, mono) {
            let full = Grant {
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
        let report = |key: &mut Leases, now| {
            let mut subjects = Subjects {
                key: Charged {
                    leases: key,
                    limits: FREE,
                },
                account: None,
            };
            subjects.decide(now, mono, false)
        };
        assert_eq!(report(&mut key, at(9, 0, 0)), Verdict::Lease);
        let asks = key.asks(0, mono);
        assert!(asks.iter().all(|a| a.want == 0));
        for ask in &asks {
            let seen = Grant {
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
    fn the_account_cap_binds_before_any_key_and_the_status_shows_it() {
        // Three keys of 10 a day each; the account may make 12 a day in all.
        let key_limits = limits(100, 10);
        let account_limits = limits(1000, 12);
        let now = at(9, 0, 0);
        let mut account = Leases::new(account_limits, now);
        let mut keys = [
            Leases::new(key_limits, now),
            Leases::new(key_limits, now),
            Leases::new(key_limits, now),
        ];
        let names = ["k1", "k2", "k3"];
        let mut db = Db::default();
        let (mut admitted, mut per_key) = (0, [0; 3]);
        for n in 0..30 {
            let i = n % 3;
            let verdict = call_both(
                (names[i], &mut keys[i], key_limits),
                (&mut account, account_limits),
                &mut db,
                now,
            );
            match verdict {
                Verdict::Admit(status) => {
                    admitted += 1;
                    per_key[i] += 1;
                    // The day reported is the one with fewer calls left: the key's at
                    // first, the account's once it has fewer left than the key.
                    let (key_left, account_left) = (10 - per_key[i], 12 - admitted);
                    let expected = if account_left < key_left {
                        (12, account_left)
                    } else {
                        (10, key_left)
                    };
                    assert_eq!((status.day.limit, status.day.remaining), expected);
                    assert_eq!(status.binding(None).remaining, expected.1, "call {n}");
                }
                Verdict::Refuse(window, status) => {
                    assert_eq!(window, Window::Day);
                    assert_eq!((status.day.limit, status.day.remaining), (12, 0));
                }
                Verdict::Lease => unreachable!(),
            }
        }
        assert_eq!(admitted, 12);
        assert_eq!(db.granted("acct", Window::Day), 12);
        assert!(names.iter().all(|k| db.granted(k, Window::Day) <= 10));
    }

    #[test]
    fn a_refusal_by_the_account_spends_nothing_of_the_key() {
        let key_limits = limits(100, 100);
        let now = at(9, 0, 0);
        let mut key = Leases::new(key_limits, now);
        let mut account = Leases::new(limits(1000, 1), now);
        let mut db = Db::default();
        let first = call_both(
            ("key", &mut key, key_limits),
            (&mut account, limits(1000, 1)),
            &mut db,
            now,
        );
        assert!(matches!(first, Verdict::Admit(_)));
        let held = key.status(now);
        let refused = call_both(
            ("key", &mut key, key_limits),
            (&mut account, limits(1000, 1)),
            &mut db,
            now,
        );
        assert!(matches!(refused, Verdict::Refuse(Window::Day, _)));
        assert_eq!(key.status(now), held, "the key's budget is untouched");
        // The budget the key holds serves the next call once the account allows it,
        // without another statement for the key.
        let before = db.statements;
        let raised = limits(1000, 5);
        let admitted = call_both(
            ("key", &mut key, key_limits),
            (&mut account, raised),
            &mut db,
            now,
        );
        assert!(matches!(admitted, Verdict::Admit(_)));
        assert_eq!(db.statements, before + 1, "one statement, for the account");
        assert_eq!(
            db.granted("key", Window::Day),
            25,
            "the key's first block only"
        );
    }

    #[test]
    fn a_used_up_day_answers_even_when_the_other_subjects_minute_is_used_up() {
        let now = at(9, 0, 0);
        let key_limits = limits(2, 100);
        let account_limits = limits(100, 2);
        let mut key = Leases::new(key_limits, now);
        let mut account = Leases::new(account_limits, now);
        let mut db = Db::default();
        for _ in 0..2 {
            let verdict = call_both(
                ("key", &mut key, key_limits),
                (&mut account, account_limits),
                &mut db,
                now,
            );
            assert!(matches!(verdict, Verdict::Admit(_)));
        }
        // The key's minute and the account's day are both used up: 42902.
        let verdict = call_both(
            ("key", &mut key, key_limits),
            (&mut account, account_limits),
            &mut db,
            now,
        );
        assert!(
            matches!(verdict, Verdict::Refuse(Window::Day, _)),
            "{verdict:?}"
        );
    }

    #[test]
    fn a_new_key_of_the_same_account_gets_nothing_more() {
        // The measured case: a free member's only key spends the day, is deleted, and a
        // new key is created. The account's windows are not the key's: still used up.
        let now = at(9, 0, 0);
        let mut account = Leases::new(FREE, now);
        let mut old = Leases::new(FREE, now);
        let mut db = Db::default();
        for _ in 0..10 {
            let verdict = call_both(("old", &mut old, FREE), (&mut account, FREE), &mut db, now);
            assert!(matches!(verdict, Verdict::Admit(_)));
        }
        let mut new = Leases::new(FREE, now);
        let verdict = call_both(("new", &mut new, FREE), (&mut account, FREE), &mut db, now);
        let Verdict::Refuse(Window::Day, status) = verdict else {
            panic!("the account's day is used up: {verdict:?}");
        };
        assert_eq!((status.day.limit, status.day.remaining), (10, 0));
        // Another instance (fresh account leases) is refused by the database too.
        let mut elsewhere = Leases::new(FREE, now);
        let mut newer = Leases::new(FREE, now);
        let verdict = call_both(
            ("newer", &mut newer, FREE),
            (&mut elsewhere, FREE),
            &mut db,
            now,
        );
        assert!(matches!(verdict, Verdict::Refuse(Window::Day, _)));
        // The next UTC day starts empty.
        let tomorrow = now + chrono::TimeDelta::days(1);
        let mut db_tomorrow = Db::default();
        let verdict = call_both(
            ("new", &mut new, FREE),
            (&mut account, FREE),
            &mut db_tomorrow,
            tomorrow,
        );
        assert!(matches!(verdict, Verdict::Admit(_)));
    }

    #[test]
    fn an_uncapped_account_never_binds() {
        let now = at(9, 0, 0);
        let key_limits = limits(5, 5);
        let uncapped = limits(UNCAPPED, UNCAPPED);
        let mut key = Leases::new(key_limits, now);
        let mut account = Leases::new(uncapped, now);
        let mut db = Db::default();
        for n in 1..=5 {
            let verdict = call_both(
                ("key", &mut key, key_limits),
                (&mut account, uncapped),
                &mut db,
                now,
            );
            let Verdict::Admit(status) = verdict else {
                panic!("call {n}: {verdict:?}");
            };
            assert_eq!(status, key.status(now), "the key's windows are reported");
        }
        let verdict = call_both(
            ("key", &mut key, key_limits),
            (&mut account, uncapped),
            &mut db,
            now,
        );
        assert!(matches!(verdict, Verdict::Refuse(Window::Day, _)));
        // Still counted: a cap that appears later charges these calls.
        assert!(db.granted("acct", Window::Day) >= 5);
    }

    #[test]
    fn both_subjects_are_exact_across_instances() {
        // Two instances, each with its own key of one account (cap 7 a minute), calls
        // interleaved: exactly the cap is admitted, whatever the blocks each leased.
        let now = at(9, 0, 0);
        let key_limits = limits(10, 100);
        let cap = limits(7, 100);
        let mut db = Db::default();
        let mut instances = [
            (Leases::new(key_limits, now), Leases::new(cap, now), "k1"),
            (Leases::new(key_limits, now), Leases::new(cap, now), "k2"),
        ];
        let mut admitted = 0;
        for n in 0..20 {
            let (key, account, name) = &mut instances[n % 2];
            let verdict = call_both((*name, key, key_limits), (account, cap), &mut db, now);
            if let Verdict::Admit(_) = verdict {
                admitted += 1;
            } else {
                assert!(
                    matches!(verdict, Verdict::Refuse(Window::Minute, _)),
                    "{verdict:?}"
                );
            }
        }
        assert_eq!(admitted, 7);
        assert_eq!(db.granted("acct", Window::Minute), 7);
    }
}
