//! The FrontActor: runs the check chain of one request in the specification's order and
//! hands each step to the actor that owns it.
//!
//! ```text
//! Authenticate (steps 1-4) -> AuthActor
//! body validation (D1, 40001)
//! authorize    (steps 5-6, pure)
//! charge       (step 7)     -> QuotaShards, for key identities: the shard's book in
//!                              memory, its QuotaActor only when the book must wait
//! Fetch        (steps 8-9)  -> DatasetActor
//! record       (call log)   -> QuotaShards: into the shard's book, flushed by its
//!                              QuotaActor, for calls step 7 counted
//! ```
//!
//! One message a file, each with its answer and its handler: [`RunQuery`] (`query`),
//! [`ShowMembership`] (`membership`), [`Browse`] (`browse`, the website's reads),
//! [`ShowConfig`] (`config`) and [`Identify`] (`identify`, steps 1-4 alone). Handlers
//! clone what they need from the actor and return a future, so one actor serves many
//! requests at once.
//!
//! It holds no data of its own and never talks to the database.
//!
//! There is one FrontActor per worker thread ([`Fronts`]), each with its own AuthActor
//! and DatasetActor on the same thread, all sharing one set of caches: a request's
//! check chain never waits for another thread except to charge the quota, whose owner
//! is the shard of the caller's account ([`QuotaShards`]). Each worker's DatasetActor
//! reads through a pool of the worker's own where the connection budget allows, so
//! even a statement's rows stay on the thread.

mod browse;
mod config;
mod identify;
mod membership;
mod query;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use actix::prelude::*;
use deadpool_postgres::Pool;

use iq_actors::auth::AuthActor;
use iq_actors::clock::Clock;
use iq_actors::dataset::DatasetActor;
use iq_actors::quota::QuotaShards;

pub use browse::{Browse, Browsed};
pub use config::{LoginPolicy, ShowConfig, SiteConfig};
pub use identify::Identify;
pub use membership::{
    KeyMembership, KeylessProtection, Membership, Quota, QuotaUse, ShowMembership,
};
pub use query::{Ask, QueryOutcome, RunQuery};

pub struct FrontActor {
    links: Rc<Links>,
    site_name: Arc<str>,
    max_limit: u32,
}

/// What a handler's future uses, shared with it by a count that is not atomic (the
/// actor and its futures stay on one thread): every clone of an actix address
/// allocates, and a query would clone two of them.
struct Links {
    auth: Addr<AuthActor>,
    /// `None` only in the benchmark that measures the key path without step 7.
    quota: Option<QuotaShards>,
    datasets: Addr<DatasetActor>,
    clock: Arc<dyn Clock>,
}

impl FrontActor {
    pub fn new(
        auth: Addr<AuthActor>,
        quota: Option<QuotaShards>,
        datasets: Addr<DatasetActor>,
        clock: Arc<dyn Clock>,
        site_name: &str,
        max_limit: u32,
    ) -> Self {
        FrontActor {
            links: Rc::new(Links {
                auth,
                quota,
                datasets,
                clock,
            }),
            site_name: site_name.into(),
            max_limit,
        }
    }
}

impl Actor for FrontActor {
    type Context = Context<Self>;
}

/// What every worker's FrontActor is made of: the AuthActor and DatasetActor to clone
/// (they share their caches through an `Arc`), the read pools the DatasetActors take
/// in turn, the quota shards and the settings.
struct Parts {
    auth: AuthActor,
    quota: Option<QuotaShards>,
    datasets: DatasetActor,
    /// One per worker (none when the pool budget is too small to split, see
    /// `PoolSettings::split`); the `next_read_pool`th goes to the next thread to ask.
    read_pools: Vec<Pool>,
    next_read_pool: AtomicUsize,
    clock: Arc<dyn Clock>,
    site_name: String,
    max_limit: u32,
}

/// The FrontActors of one service, one per thread that asks: started on that thread's
/// arbiter (a worker's) on its first request, with an AuthActor and a DatasetActor of
/// its own beside it. No thread funnels the requests of another.
#[derive(Clone)]
pub struct Fronts {
    /// Tells this service's actors from another's in the same process (tests run many).
    id: usize,
    parts: Arc<Parts>,
}

thread_local! {
    /// The FrontActors started on this thread, by [`Fronts::id`].
    static STARTED: RefCell<Vec<(usize, Addr<FrontActor>)>> = const { RefCell::new(Vec::new()) };
}

impl Fronts {
    pub fn new(
        auth: AuthActor,
        quota: Option<QuotaShards>,
        datasets: DatasetActor,
        read_pools: Vec<Pool>,
        clock: Arc<dyn Clock>,
        site_name: &str,
        max_limit: u32,
    ) -> Fronts {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        Fronts {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            parts: Arc::new(Parts {
                auth,
                quota,
                datasets,
                read_pools,
                next_read_pool: AtomicUsize::new(0),
                clock,
                site_name: site_name.to_string(),
                max_limit,
            }),
        }
    }

    /// The workers' read pools (for `/metrics`).
    pub fn read_pools(&self) -> &[Pool] {
        &self.parts.read_pools
    }

    /// Sends `message` to this thread's FrontActor. Call it from a thread running an
    /// actix arbiter (every request handler does). The address is used where it is
    /// kept: each clone of an actix address allocates.
    pub fn send<M>(&self, message: M) -> actix::dev::Request<FrontActor, M>
    where
        M: Message + Send + 'static,
        M::Result: Send,
        FrontActor: Handler<M>,
    {
        STARTED.with(|started| {
            if let Some((_, front)) = started.borrow().iter().find(|(id, _)| *id == self.id) {
                return front.send(message);
            }
            self.start_here().send(message)
        })
    }

    /// Starts this thread's FrontActor (on its first request).
    fn start_here(&self) -> Addr<FrontActor> {
        STARTED.with(|started| {
            let mut started = started.borrow_mut();
            let parts = &self.parts;
            // Each worker asks once, so each gets a read pool of its own (a thread
            // beyond the workers' count would share one: slower, never wrong).
            let datasets = match parts.read_pools.len() {
                0 => parts.datasets.clone(),
                n => {
                    let turn = parts.next_read_pool.fetch_add(1, Ordering::Relaxed);
                    parts
                        .datasets
                        .reading_from(parts.read_pools[turn % n].clone())
                }
            };
            let front = FrontActor::new(
                parts.auth.clone().start(),
                parts.quota.clone(),
                datasets.start(),
                parts.clock.clone(),
                &parts.site_name,
                parts.max_limit,
            )
            .start();
            started.push((self.id, front.clone()));
            front
        })
    }
}
