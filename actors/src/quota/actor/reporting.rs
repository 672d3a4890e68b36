//! The QuotaActor's side of crash-bounded accounting (migration V15): whether its
//! leases are still its own to spend, calls that wait for a flush to land, and
//! starting over when the database says the leases were reclaimed.
//!
//! Must never extend the leases' life from anything but a statement the database
//! accepted, counted from when that statement was sent, and never keep budget or
//! unreported calls across a reclaim (the reclaim settled both).

use std::time::Instant;

use actix::prelude::*;
use rand::Rng;

use super::super::book::{self, Book};
use super::super::messages::Flushed;
use super::super::store::Instance;
use super::QuotaActor;

impl QuotaActor {
    /// A statement sent at `sent` renewed the leases: the database keeps them for the
    /// TTL from when it ran, which is later; a tenth is kept in hand for clocks that run
    /// at different rates.
    pub(super) fn renew(&self, book: &mut Book, sent: Instant) {
        let until = sent + self.instance.ttl * 9 / 10;
        book.renewed_until = Some(book.renewed_until.map_or(until, |old| old.max(until)));
    }

    /// `key_id`'s first waiting call needs a flush to land first: what was spent goes to
    /// the flusher now, rather than at the next tick.
    pub(super) fn await_report(&mut self, book: &mut Book, key_id: &str) {
        if !self.awaiting_report.iter().any(|k| k == key_id) {
            self.awaiting_report.push(key_id.to_string());
        }
        if !book.report_asked {
            book.report_asked = true;
            self.hand_over(book, false, true);
        }
    }

    /// The database gave this instance's leases back to the windows (it was out of
    /// touch for longer than its TTL): it forgets what it held and what it had not
    /// reported, and carries on under a new id, leasing afresh.
    pub(super) fn start_over(&mut self, book: &mut Book) {
        let old = self.instance.id;
        self.instance = Instance {
            id: rand::thread_rng().gen(),
            ttl: self.instance.ttl,
        };
        tracing::warn!(
            old_instance = old,
            instance = self.instance.id,
            "this instance's quota leases were reclaimed; leasing afresh under a new id"
        );
        for entry in book.keys.values_mut() {
            entry.leases.forget();
        }
        for entry in book.accounts.values_mut() {
            entry.leases.forget();
        }
        book.tally.spent.clear();
        book.renewed_until = None;
        book.report_asked = false;
        let _ = self.flusher.send(super::Job::Rebind(self.instance));
    }

    /// Serves the keys that waited for a flush, which has landed or failed.
    fn serve_awaiting(&mut self, book: &mut Book, ctx: &mut Context<Self>) {
        book.report_asked = false;
        for key_id in std::mem::take(&mut self.awaiting_report) {
            self.serve(book, &key_id, ctx);
        }
    }
}

impl Handler<Flushed> for QuotaActor {
    type Result = ();

    fn handle(&mut self, msg: Flushed, ctx: &mut Context<Self>) {
        let shared = self.book.clone();
        let book = &mut *book::lock(&shared);
        match msg {
            Flushed::Written {
                instance,
                sent,
                used,
            } => {
                if instance != self.instance.id {
                    return; // written for an id this instance has left
                }
                self.renew(book, sent);
                book.db_down_until = None;
                for (subject, start, calls) in used {
                    let leases = match subject.account_id() {
                        Some(user_id) => book.accounts.get_mut(&user_id).map(|e| &mut e.leases),
                        None => book.keys.get_mut(subject.as_str()).map(|e| &mut e.leases),
                    };
                    if let Some(leases) = leases {
                        leases.reported(start, calls);
                    }
                }
                self.serve_awaiting(book, ctx);
            }
            Flushed::Failed => {
                book.db_down_until = Some(Instant::now() + super::DB_RETRY);
                self.serve_awaiting(book, ctx);
            }
            Flushed::Fenced { instance } => {
                if instance == self.instance.id {
                    self.start_over(book);
                }
                self.serve_awaiting(book, ctx);
            }
        }
    }
}
