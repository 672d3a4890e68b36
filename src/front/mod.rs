//! The FrontActor: runs the check chain of one request in the specification's order and
//! hands each step to the actor that owns it.
//!
//! ```text
//! Authenticate (steps 1-4) -> AuthActor
//! body validation (D1, 40001)
//! authorize    (steps 5-6, pure)
//! Charge       (step 7)     -> QuotaActor, for key identities
//! Record       (call log)   -> QuotaActor, for calls step 7 counted
//! Fetch        (steps 8-9)  -> DatasetActor
//! ```
//!
//! One message a file, each with its answer and its handler: [`RunQuery`] (`query`),
//! [`ShowMembership`] (`membership`), [`Browse`] (`browse`, the website's reads) and
//! [`ShowConfig`] (`config`). Handlers clone what they need from the actor and return
//! a future, so one actor serves many requests at once.
//!
//! It holds no data of its own and never talks to the database.

mod browse;
mod config;
mod membership;
mod query;

use std::sync::Arc;

use actix::prelude::*;

use iq_actors::auth::AuthActor;
use iq_actors::clock::Clock;
use iq_actors::dataset::DatasetActor;
use iq_actors::quota::QuotaActor;

pub use browse::{Browse, Browsed};
pub use config::{LoginPolicy, ShowConfig, SiteConfig};
pub use membership::{
    KeyMembership, KeylessProtection, Membership, Quota, QuotaUse, ShowMembership,
};
pub use query::{QueryOutcome, RunQuery};

pub struct FrontActor {
    auth: Addr<AuthActor>,
    /// `None` only in the benchmark that measures the key path without step 7.
    quota: Option<Addr<QuotaActor>>,
    datasets: Addr<DatasetActor>,
    clock: Arc<dyn Clock>,
    site_name: Arc<str>,
    max_limit: u32,
}

impl FrontActor {
    pub fn new(
        auth: Addr<AuthActor>,
        quota: Option<Addr<QuotaActor>>,
        datasets: Addr<DatasetActor>,
        clock: Arc<dyn Clock>,
        site_name: &str,
        max_limit: u32,
    ) -> Self {
        FrontActor {
            auth,
            quota,
            datasets,
            clock,
            site_name: site_name.into(),
            max_limit,
        }
    }
}

impl Actor for FrontActor {
    type Context = Context<Self>;
}
