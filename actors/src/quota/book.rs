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
    /// An early report: wanted by a charge settled here, asked of the actor, or
    /// neither (reset when a flush lands or fails).
    pub early_report: EarlyReport,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum EarlyReport {
    #[default]
    Idle,
    Wanted,
    Asked,
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

    /// Step 7 from memory: `Some` answer when the charge's key has nobody queued and
    /// the verdict needs no statement (budget in hand for key and account, a refusal,
    /// or the database known to be down); `None` when the actor must serve it. Either
    /// way the key and its account are now known and marked as called.
    pub fn settle_at_once(
        &mut self,
        msg: &Charge,
        now: DateTime<Utc>,
        mono: Instant,
    ) -> Option<Admission> {
        let db_down = self.db_down(mono);
        let renewed = self.renewed(mono);
        let entry = match self.keys.get_mut(&msg.key_id) {
            Some(entry) => entry,
            None => {
                let entry = KeyEntry::new(&msg.key_id, msg.user_id, msg.limits, now, mono);
                self.keys.entry(msg.key_id.clone()).or_insert(entry)
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
        // Halfway to the bound of unreported calls, a report is asked for now: a call
        // that reaches the bound would wait for one, and so would every call queued
        // behind it (a stall of a database round trip, in the tail latency).
        let halfway = entry.leases.wants_report() || account.leases.wants_report();
        if msg.count && halfway && self.early_report == EarlyReport::Idle {
            self.early_report = EarlyReport::Wanted;
        }
        let subjects = [&entry.subject, &account.subject];
        Some(self.tally.settle(subjects, msg.count, verdict, now))
    }

    /// Whether a report should be asked of the actor now (once until a flush lands).
    pub fn take_report_wish(&mut self) -> bool {
        let wanted = self.early_report == EarlyReport::Wanted;
        if wanted {
            self.early_report = EarlyReport::Asked;
        }
        wanted
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

    use super::super::lease::Grant;
    use super::super::ledger::Waiter;
    use super::super::test_clock::{at, FREE};
    use super::*;

    fn charge(count: bool) -> Charge {
        Charge {
            key_id: "key_a".into(),
            limits: FREE,
            user_id: 7,
            account_limits: FREE,
            count,
            span: Span::none(),
        }
    }

    /// A book that knows the charge's key and account, each holding every window's
    /// budget the way a lease statement would grant it, and renewed for a minute.
    fn stocked(now: DateTime<Utc>, mono: Instant) -> Book {
        let mut book = Book::default();
        assert!(book.settle_at_once(&charge(true), now, mono).is_none());
        let key = &mut book.keys.get_mut("key_a").unwrap().leases;
        let account = &mut book.accounts.get_mut(&7).unwrap().leases;
        for leases in [key, account] {
            for ask in leases.asks(1, mono) {
                let grant = Grant {
                    taken: ask.want,
                    granted: ask.want,
                };
                leases.granted(&ask, grant, mono);
            }
        }
        book.renewed_until = Some(mono + Duration::from_secs(60));
        book
    }

    #[test]
    fn budget_in_hand_is_spent_here_and_tallied_for_key_and_account() {
        let (now, mono) = (at(10, 0, 0), Instant::now());
        let mut book = stocked(now, mono);
        let admission = book.settle_at_once(&charge(true), now, mono);
        assert!(admission.is_some_and(|a| a.result.is_ok()));
        assert_eq!(book.tally.admitted, 1);
        let used: Vec<i64> = book.tally.spent.values().map(|s| s.used).collect();
        assert_eq!(used, [1, 1], "the key's day and the account's day");
    }

    #[test]
    fn halfway_to_the_unreported_bound_a_report_is_wished_once_until_a_flush() {
        let (now, mono) = (at(10, 0, 0), Instant::now());
        let mut book = stocked(now, mono);
        assert!(!book.take_report_wish());
        // FREE's day of 10 may leave 1 call unreported: the first one is halfway.
        assert!(book.settle_at_once(&charge(true), now, mono).is_some());
        assert!(book.take_report_wish());
        assert!(!book.take_report_wish(), "asked once");
        assert_eq!(book.early_report, EarlyReport::Asked);
        // An uncounted call (a status) never wishes one.
        let mut book = stocked(now, mono);
        assert!(book.settle_at_once(&charge(false), now, mono).is_some());
        assert!(!book.take_report_wish());
    }

    #[test]
    fn without_budget_or_behind_a_queue_the_actor_decides() {
        let (now, mono) = (at(10, 0, 0), Instant::now());
        let mut book = Book::default();
        assert!(book.settle_at_once(&charge(true), now, mono).is_none());
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
        assert!(book.settle_at_once(&charge(true), now, mono).is_none());
        assert_eq!(book.tally.admitted, 0);

        // Leases no longer surely this instance's: a report must land first.
        let mut book = stocked(now, mono);
        book.renewed_until = Some(mono - Duration::from_secs(1));
        assert!(book.settle_at_once(&charge(true), now, mono).is_none());
    }

    #[test]
    fn with_the_database_down_a_call_needing_a_lease_is_refused_at_once() {
        let (now, mono) = (at(10, 0, 0), Instant::now());
        let mut book = Book {
            db_down_until: Some(mono + Duration::from_secs(1)),
            ..Book::default()
        };
        let admission = book.settle_at_once(&charge(true), now, mono).unwrap();
        assert_eq!(admission.result.unwrap_err().code.as_u32(), 50000);
    }

    #[test]
    fn call_records_stop_at_the_buffer_bound() {
        let mut book = Book::default();
        book.calls.reserve(MAX_BUFFERED_CALLS);
        let record = || CallRecord {
            request_id: "req_1".into(),
            key_id: "key_a".into(),
            api_name: "index_daily".into(),
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
