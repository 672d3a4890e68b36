//! Tests of the decision for one call: a simulated database that grants leases as
//! `quota_lease_subjects` does, and calls that lease as often as they must. The key
//! alone is tested in [`key`], a key with its owner's account in [`account`].

use std::collections::HashMap;

use super::super::lease::LeaseGrant;
use super::super::test_clock::{at, limits, FREE};
use super::*;

mod account;
mod key;

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
                let grant = LeaseGrant {
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

/// A flush wrote every call `leases` spent today.
fn flushed(leases: &mut Leases, now: DateTime<Utc>) {
    let unreported = leases.unreported();
    leases.reported(Window::Day.start(now), unreported);
}

/// What `key` alone, under `limits`, decides at `now` without leasing: for a call
/// (`count`) or a status report, its leases sure (`renewed`) or not.
fn decide_alone(
    key: &mut Leases,
    limits: Limits,
    now: DateTime<Utc>,
    mono: Instant,
    count: bool,
    renewed: bool,
) -> Verdict {
    let mut subjects = Subjects {
        key: Charged {
            leases: key,
            limits,
        },
        account: None,
    };
    subjects.decide(now, mono, count, renewed)
}

/// A key alone, the limits it is called under and the database it leases from.
struct Alone {
    leases: Leases,
    limits: Limits,
    db: Db,
}

impl Alone {
    /// A key without calls under `limits`, at 09:00.
    fn new(limits: Limits) -> Self {
        Alone {
            leases: Leases::new(limits, at(9, 0, 0)),
            limits,
            db: Db::default(),
        }
    }

    /// One counted call at `now`, leasing as often as needed.
    fn call(&mut self, now: DateTime<Utc>) -> Verdict {
        let key = &mut self.leases;
        loop {
            match decide_alone(key, self.limits, now, Instant::now(), true, true) {
                Verdict::Lease => self.db.serve(&mut [("key", &mut *key)], 1),
                Verdict::Report => flushed(key, now),
                verdict => return verdict,
            }
        }
    }

    /// What the database granted the key over the windows of that length.
    fn granted(&self, window: Window) -> i64 {
        self.db.granted("key", window)
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
        match subjects.decide(now, Instant::now(), true, true) {
            Verdict::Lease => db.serve(&mut [("acct", &mut *account), (key_name, &mut *key)], 1),
            Verdict::Report => {
                flushed(key, now);
                flushed(account, now);
            }
            verdict => return verdict,
        }
    }
}

/// A key, its owner's account, the limits each is called under and the database they
/// lease from: one instance.
struct KeyAndAccount {
    key: Leases,
    key_limits: Limits,
    account: Leases,
    account_limits: Limits,
    db: Db,
}

impl KeyAndAccount {
    /// A key and an account without calls, at 09:00.
    fn new(key_limits: Limits, account_limits: Limits) -> Self {
        KeyAndAccount {
            key: Leases::new(key_limits, at(9, 0, 0)),
            key_limits,
            account: Leases::new(account_limits, at(9, 0, 0)),
            account_limits,
            db: Db::default(),
        }
    }

    /// One counted call at `now`, charged to both.
    fn call(&mut self, now: DateTime<Utc>) -> Verdict {
        call_both(
            ("key", &mut self.key, self.key_limits),
            (&mut self.account, self.account_limits),
            &mut self.db,
            now,
        )
    }
}
