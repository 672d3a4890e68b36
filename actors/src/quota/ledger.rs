//! What the QuotaActor holds in memory: per key and per account on this instance, the
//! leases and the calls waiting for a lease statement; and the tally of what was
//! admitted, refused and spent since the last flush.
//!
//! State only, plus how one verdict is recorded: no statements are run from here, and
//! nothing here may admit a call (that is [`super::decision`]'s, from held budget).

use std::collections::{BTreeMap, VecDeque};
use std::time::Instant;

use chrono::{DateTime, Utc};
use tokio::sync::oneshot;

use crate::metrics::{metrics, WindowLabels};

use super::decision::{Charged, Subjects, Verdict};
use super::lease::{LeaseAsk, LeaseGrant, Leases};
use super::messages::Admission;
use super::store::{Spent, WindowKey};
use super::subject::Subject;
use super::window::{Limits, Window};

/// A call waiting for a lease statement, with what it brought.
pub struct Waiter {
    pub limits: Limits,
    pub account_limits: Limits,
    pub count: bool,
    pub reply: oneshot::Sender<Admission>,
}

/// One key on this instance: its leases and the calls waiting for a lease statement.
pub struct KeyEntry {
    pub subject: Subject,
    /// The owner, whose account every call of the key is charged to as well.
    pub user_id: i64,
    pub leases: Leases,
    pub waiting: VecDeque<Waiter>,
    /// A lease statement for this key (and perhaps its account) is running.
    pub leasing: bool,
    /// A handle asked the actor to lease ahead for this key ([`super::book`]) and the
    /// actor has not taken it up yet: no second ask meanwhile.
    pub ahead_asked: bool,
    pub last_call: Instant,
}

impl KeyEntry {
    pub fn new(
        key_id: &str,
        user_id: i64,
        limits: Limits,
        now: DateTime<Utc>,
        mono: Instant,
    ) -> KeyEntry {
        KeyEntry {
            subject: Subject::key(key_id),
            user_id,
            leases: Leases::new(limits, now),
            waiting: VecDeque::new(),
            leasing: false,
            ahead_asked: false,
            last_call: mono,
        }
    }
}

/// One account on this instance: its leases, shared by all its keys (D11).
pub struct AccountEntry {
    pub subject: Subject,
    pub leases: Leases,
    /// A statement that leases for the account is running (started by one of its keys).
    pub leasing: bool,
    /// Keys whose first waiting call needs the account's budget and waits for that
    /// statement rather than start a second one; served again when it ends.
    pub blocked: Vec<String>,
    pub last_call: Instant,
}

impl AccountEntry {
    pub fn new(user_id: i64, limits: Limits, now: DateTime<Utc>, mono: Instant) -> AccountEntry {
        AccountEntry {
            subject: Subject::account(user_id),
            leases: Leases::new(limits, now),
            leasing: false,
            blocked: Vec::new(),
            last_call: mono,
        }
    }
}

/// Decides one call of `key` against the key's and its account's leases; `renewed`:
/// this instance's leases are still its own to spend.
pub fn decide(
    key: &mut Leases,
    account: &mut Leases,
    waiter: (Limits, Limits, bool),
    (now, mono, renewed): (DateTime<Utc>, Instant, bool),
) -> Verdict {
    let (limits, account_limits, count) = waiter;
    let mut subjects = Subjects {
        key: Charged {
            leases: key,
            limits,
        },
        account: Some(Charged {
            leases: account,
            limits: account_limits,
        }),
    };
    subjects.decide(now, mono, count, renewed)
}

/// Verdicts given since start, and calls spent and budget given back since the last
/// flush. Kept apart from the entries so both can be borrowed at once.
#[derive(Default)]
pub struct Tally {
    pub spent: BTreeMap<WindowKey, Spent>,
    pub admitted: u64,
    pub refused: u64,
}

impl Tally {
    /// Turns a verdict into the answer; an admitted, counted call is spent from the day
    /// windows of every subject (the back office reads `used` of the day rows).
    pub fn settle(
        &mut self,
        subjects: [&Subject; 2],
        count: bool,
        verdict: Verdict,
        now: DateTime<Utc>,
    ) -> Admission {
        match verdict {
            Verdict::Admit(_) if count => {
                self.admitted += 1;
                let start = Window::Day.start(now);
                for subject in subjects {
                    let day = (subject.clone(), Window::Day, start);
                    self.spent.entry(day).or_default().used += 1;
                }
            }
            Verdict::Refuse(window, ..) => {
                self.refused += 1;
                metrics()
                    .quota_refusals
                    .get_or_create(&WindowLabels {
                        window: window.as_str(),
                    })
                    .inc();
            }
            _ => {}
        }
        Admission::of(verdict)
    }

    /// Budget a statement took for a subject this instance no longer tracks goes back
    /// with the next flush instead of staying stranded.
    pub fn give_back(&mut self, subject: &Subject, asks: &[LeaseAsk], grants: &[LeaseGrant]) {
        for (ask, grant) in asks.iter().zip(grants) {
            if grant.taken > 0 {
                let window = (subject.clone(), ask.window, ask.start);
                self.spent.entry(window).or_default().returned += grant.taken;
            }
        }
    }
}

/// What one lease statement is for: a key, and the account when it asks for it too.
pub struct LedgerStatement {
    pub key_id: String,
    pub user_id: i64,
    pub key_asks: Vec<LeaseAsk>,
    pub account_asks: Vec<LeaseAsk>,
}
