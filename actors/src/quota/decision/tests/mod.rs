//! Tests of the decision for one call: a simulated database that grants leases as
//! `quota_lease_subjects` does, and calls that lease as often as they must. The key
//! alone is tested in [`key`], a key with its owner's account in [`account`].

use std::collections::HashMap;

use super::super::lease::Grant;
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

/// One counted call with `key` (named `name`) alone, leasing as often as needed.
fn call(key: &mut Leases, db: &mut Db, limits: Limits, now: DateTime<Utc>) -> Verdict {
    loop {
        match decide_alone(key, limits, now, Instant::now(), true, true) {
            Verdict::Lease => db.serve(&mut [("key", &mut *key)], 1),
            Verdict::Report => flushed(key, now),
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
