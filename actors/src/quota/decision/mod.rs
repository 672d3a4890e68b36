//! The decision for one call over the subjects it is charged to: its key and its
//! owner's account (D6, D11; the account cap is described in [`super::subject`]).
//!
//! The same order for every subject, so the answer does not depend on which one binds:
//!
//! 1. a day known to be used up, the key's or the account's: 42902 (also when a minute
//!    is used up too: waiting a minute would not help);
//! 2. a subject without budget in hand: lease first (the answer may show a full day);
//! 3. a minute known to be used up, the key's or the account's: 42901;
//! 4. a subject with as many calls unreported as a crash may cost it, or leases this
//!    instance may no longer spend (its proof of life is not renewed): report first
//!    (a flush, which also renews);
//! 5. otherwise admitted, and only now does every subject spend one call of each window.
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
    /// This instance must report what it spent (and so renew its leases) first.
    Report,
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
    /// `renewed`: this instance's leases are still its own to spend (see
    /// [`super::actor`]).
    pub fn decide(
        &mut self,
        now: DateTime<Utc>,
        mono: Instant,
        count: bool,
        renewed: bool,
    ) -> Verdict {
        for subject in self.each_mut() {
            subject.leases.align(subject.limits, now);
        }
        if count && self.any_full(Window::Day, mono) {
            return Verdict::Refuse(Window::Day, self.status(now));
        }
        // A report due comes before a lease: the lease statement records the bound of
        // what this instance may have unreported, which after a lowered limit is the
        // calls unreported under the old one until they are reported.
        if count && (!renewed || self.each().any(|s| s.leases.needs_report())) {
            return Verdict::Report;
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
mod tests;
