//! What one QuotaActor knows (its keys, accounts, tally and call records), behind a
//! lock that its shard's handles share, and the two things a handle may do with it
//! on the caller's own thread: settle a charge that needs no statement, and keep a call
//! record for the next flush.
//!
//! Why a lock beside the actor: asking the shard's thread and waiting for its reply
//! cost two cross-thread wake-ups per call, about half of a cached key query's
//! throughput, for a decision that takes a microsecond. The actor still owns all that
//! waits: queued calls, lease statements, reports, flushes, starting over. It takes the
//! same lock for each of its steps and never holds it across an await.
//!
//! Must never decide a call that needs a statement (a lease or a report) or that would
//! jump a queue: those go to the actor, which serves them in order.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use chrono::{DateTime, Utc};

use super::decision::Verdict;
use super::flusher::MAX_BUFFERED_CALLS;
use super::ledger::{decide, AccountEntry, KeyEntry, Tally};
use super::messages::{Admission, Charge};
use super::store::CallRecord;

#[derive(Default)]
pub struct Book {
    pub keys: HashMap<String, KeyEntry>,
    pub accounts: HashMap<i64, AccountEntry>,
    pub tally: Tally,
    /// Call records not yet handed to the flusher.
    pub calls: Vec<CallRecord>,
    /// Until when the leases held are this instance's to spend.
    pub renewed_until: Option<Instant>,
    /// Lease statements are not tried until then (one just failed).
    pub db_down_until: Option<Instant>,
    /// A flush was asked for and has not landed yet (by a call that waits for it, or
    /// by a charge part of the way to the bound): no second one is asked meanwhile.
    pub report_asked: bool,
}

/// What [`Book::settle_at_once`] decided.
pub struct Settled {
    /// The answer, or `None` when the actor must serve the charge.
    pub admission: Option<Admission>,
    /// A report is to be asked for now: the charge brought its key or account to
    /// [`super::lease::report_at`] unreported calls, and none was on its way.
    pub report: bool,
    /// The next block is to be leased now ([`super::messages::LeaseAhead`]): the charge
    /// brought its key or account down to a quarter of the last block, and no
    /// statement for the key was running or asked for.
    pub lease_ahead: bool,
}

/// The book, whatever a thread that panicked while holding it left: every step keeps
/// it consistent before anything that could panic.
pub fn lock(book: &Mutex<Book>) -> MutexGuard<'_, Book> {
    book.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Book {
    pub fn db_down(&self, mono: Instant) -> bool {
        self.db_down_until.is_some_and(|until| mono < until)
    }

    /// Whether the leases held are still this instance's to spend.
    pub fn renewed(&self, mono: Instant) -> bool {
        self.renewed_until.is_some_and(|until| mono < until)
    }

    /// Step 7 from memory: an answer when the charge's key has nobody queued and the
    /// verdict needs no statement (budget in hand for key and account, a refusal, or
    /// the database known to be down); none when the actor must serve it. Either way
    /// the key and its account are now known and marked as called.
    pub fn settle_at_once(&mut self, msg: &Charge, now: DateTime<Utc>, mono: Instant) -> Settled {
        let admission = self.settle(msg, now, mono);
        let (report, lease_ahead) = match admission.is_some() && msg.count {
            true => self.ask_ahead_of_need(&msg.key_id),
            false => (false, false),
        };
        Settled {
            admission,
            report,
            lease_ahead,
        }
    }

    /// After a counted call is admitted, whether a report and whether the next block of
    /// `key_id` or its account are to be asked for now, marking them asked; one look-up
    /// of the key and its account for both. Asked early, so no call waits: a call that
    /// reaches the bound of unreported calls, or the end of its budget, would wait for
    /// a database round trip, and every call queued behind it too (the tail latency).
    fn ask_ahead_of_need(&mut self, key_id: &str) -> (bool, bool) {
        let Some(key) = self.keys.get_mut(key_id) else {
            return (false, false);
        };
        let account = self.accounts.get(&key.user_id);
        let due = key.leases.wants_report() || account.is_some_and(|a| a.leases.wants_report());
        let report = due && !self.report_asked;
        self.report_asked |= report;
        let low =
            key.leases.wants_more() || account.is_some_and(|a| !a.leasing && a.leases.wants_more());
        let lease_ahead = low && !key.leasing && !key.ahead_asked;
        key.ahead_asked |= lease_ahead;
        (report, lease_ahead)
    }

    fn settle(&mut self, msg: &Charge, now: DateTime<Utc>, mono: Instant) -> Option<Admission> {
        let db_down = self.db_down(mono);
        let renewed = self.renewed(mono);
        let entry = match self.keys.get_mut(&*msg.key_id) {
            Some(entry) => entry,
            None => {
                let entry = KeyEntry::new(&msg.key_id, msg.user_id, msg.limits, now, mono);
                self.keys.entry(msg.key_id.to_string()).or_insert(entry)
            }
        };
        entry.last_call = mono;
        let user_id = entry.user_id;
        let account = self
            .accounts
            .entry(user_id)
            .or_insert_with(|| AccountEntry::new(user_id, msg.account_limits, now, mono));
        account.last_call = mono;
        if !entry.waiting.is_empty() {
            return None;
        }
        let charge = (msg.limits, msg.account_limits, msg.count);
        let verdict = decide(
            &mut entry.leases,
            &mut account.leases,
            charge,
            (now, mono, renewed),
        );
        if matches!(verdict, Verdict::Lease | Verdict::Report) && !db_down {
            return None;
        }
        let subjects = [&entry.subject, &account.subject];
        Some(self.tally.settle(subjects, msg.count, verdict, now))
    }

    /// Keeps a counted call's record for the next flush; past the buffer's bound (the
    /// database away for long) records are dropped rather than memory exhausted.
    pub fn record(&mut self, call: CallRecord) {
        if self.calls.len() < MAX_BUFFERED_CALLS {
            self.calls.push(call);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::sync::oneshot;
    use tracing::Span;

    use super::super::lease::LeaseGrant;
    use super::super::ledger::Waiter;
    use super::super::test_clock::{at, limits, FREE};
    use super::super::window::{Limits, Window};
    use super::*;

    fn charge(count: bool) -> Charge {
        charge_with(FREE, count)
    }

    fn charge_with(limits: Limits, count: bool) -> Charge {
        Charge {
            key_id: "key_a".into(),
            limits,
            user_id: 7,
            account_limits: limits,
            count,
            span: Span::none(),
        }
    }

    /// A book that knows the charge's key and account, each holding every window's
    /// budget the way a lease statement would grant it, and renewed for a minute.
    fn stocked(now: DateTime<Utc>, mono: Instant) -> Book {
        stocked_with(FREE, now, mono)
    }

    fn stocked_with(limits: Limits, now: DateTime<Utc>, mono: Instant) -> Book {
        let mut book = Book::default();
        assert!(book
            .settle_at_once(&charge_with(limits, true), now, mono)
            .admission
            .is_none());
        restock(&mut book, mono);
        book.renewed_until = Some(mono + Duration::from_secs(60));
        book
    }

    /// The key and its account take what their next lease statement would grant.
    fn restock(book: &mut Book, mono: Instant) {
        let key = &mut book.keys.get_mut("key_a").unwrap().leases;
        let account = &mut book.accounts.get_mut(&7).unwrap().leases;
        for leases in [key, account] {
            for ask in leases.asks(1, mono) {
                let grant = LeaseGrant {
                    taken: ask.want,
                    granted: ask.want,
                };
                leases.granted(&ask, grant, mono);
            }
        }
    }

    #[test]
    fn budget_in_hand_is_spent_here_and_tallied_for_key_and_account() {
        let (now, mono) = (at(10, 0, 0), Instant::now());
        let mut book = stocked(now, mono);
        let admission = book.settle_at_once(&charge(true), now, mono).admission;
        assert!(admission.is_some_and(|a| a.result.is_ok()));
        assert_eq!(book.tally.admitted, 1);
        let used: Vec<i64> = book.tally.spent.values().map(|s| s.used).collect();
        assert_eq!(used, [1, 1], "the key's day and the account's day");
    }

    #[test]
    fn halfway_to_the_unreported_bound_a_report_is_asked_once_until_a_flush() {
        let (now, mono) = (at(10, 0, 0), Instant::now());
        // A day of 1000 may leave 10 calls unreported: the fifth is halfway.
        let limits = limits(1000, 1000);
        let mut book = stocked_with(limits, now, mono);
        let mut asked = Vec::new();
        for _ in 0..8 {
            restock(&mut book, mono);
            let settled = book.settle_at_once(&charge_with(limits, true), now, mono);
            assert!(settled.admission.is_some_and(|a| a.result.is_ok()));
            asked.push(settled.report);
        }
        let expected = [false, false, false, false, true, false, false, false];
        assert_eq!(asked, expected, "asked once, halfway, until a flush lands");
        assert!(book.report_asked);
        // An uncounted call (a status) never asks for one.
        let mut book = stocked_with(limits, now, mono);
        for _ in 0..8 {
            restock(&mut book, mono);
            let status = book.settle_at_once(&charge_with(limits, false), now, mono);
            assert!(status.admission.is_some() && !status.report);
        }
    }

    #[test]
    fn at_a_quarter_of_the_last_block_the_next_is_asked_for_once() {
        let (now, mono) = (at(10, 0, 0), Instant::now());
        let limits = limits(100_000, 1_000_000);
        let mut book = stocked_with(limits, now, mono);
        assert!(!book.keys["key_a"].leases.wants_more());
        let mut asked_at = Vec::new();
        for call in 1..=9_000 {
            let settled = book.settle_at_once(&charge_with(limits, true), now, mono);
            assert!(
                settled.admission.is_some_and(|a| a.result.is_ok()),
                "{call}"
            );
            if settled.lease_ahead {
                asked_at.push(call);
            }
            // Reports land at once here: only the lease is looked at.
            book.report_asked = false;
            for entry in book.keys.values_mut() {
                entry.leases.reported(Window::Day.start(now), i64::MAX);
            }
            for entry in book.accounts.values_mut() {
                entry.leases.reported(Window::Day.start(now), i64::MAX);
            }
        }
        assert_eq!(asked_at, [7_500], "once, at a quarter of 10,000 left");
        assert!(book.keys["key_a"].ahead_asked);
        // Taken up by the actor: a running statement is not asked for again either.
        let key = book.keys.get_mut("key_a").unwrap();
        (key.ahead_asked, key.leasing) = (false, true);
        let settled = book.settle_at_once(&charge_with(limits, true), now, mono);
        assert!(!settled.lease_ahead);
        // An uncounted call (a status) never asks.
        book.keys.get_mut("key_a").unwrap().leasing = false;
        let settled = book.settle_at_once(&charge_with(limits, false), now, mono);
        assert!(settled.admission.is_some() && !settled.lease_ahead);
    }

    #[test]
    fn without_budget_or_behind_a_queue_the_actor_decides() {
        let (now, mono) = (at(10, 0, 0), Instant::now());
        let mut book = Book::default();
        assert!(book
            .settle_at_once(&charge(true), now, mono)
            .admission
            .is_none());
        assert!(book.keys.contains_key("key_a") && book.accounts.contains_key(&7));

        // Budget in hand, but a call queued first: the queue's order holds.
        let mut book = stocked(now, mono);
        let (reply, _answer) = oneshot::channel();
        book.keys
            .get_mut("key_a")
            .unwrap()
            .waiting
            .push_back(Waiter {
                limits: FREE,
                account_limits: FREE,
                count: true,
                reply,
            });
        assert!(book
            .settle_at_once(&charge(true), now, mono)
            .admission
            .is_none());
        assert_eq!(book.tally.admitted, 0);

        // Leases no longer surely this instance's: a report must land first.
        let mut book = stocked(now, mono);
        book.renewed_until = Some(mono - Duration::from_secs(1));
        assert!(book
            .settle_at_once(&charge(true), now, mono)
            .admission
            .is_none());
    }

    #[test]
    fn with_the_database_down_a_call_needing_a_lease_is_refused_at_once() {
        let (now, mono) = (at(10, 0, 0), Instant::now());
        let mut book = Book {
            db_down_until: Some(mono + Duration::from_secs(1)),
            ..Book::default()
        };
        let admission = book
            .settle_at_once(&charge(true), now, mono)
            .admission
            .unwrap();
        assert_eq!(admission.result.unwrap_err().code.as_u32(), 50000);
    }

    #[test]
    fn call_records_stop_at_the_buffer_bound() {
        let mut book = Book::default();
        book.calls.reserve(MAX_BUFFERED_CALLS);
        let record = || CallRecord {
            request_id: "req_1".into(),
            key_id: "key_a".into(),
            api_name: "index_daily",
            code: 0,
            rows: 1,
            latency_us: 10,
            called_at: at(10, 0, 0),
        };
        for _ in 0..MAX_BUFFERED_CALLS + 3 {
            book.record(record());
        }
        assert_eq!(book.calls.len(), MAX_BUFFERED_CALLS);
    }
}
