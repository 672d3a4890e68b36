//! The FrontActor: runs the check chain of one request in the specification's order and
//! hands each step to the actor that owns it.
//!
//! ```text
//! Authenticate (steps 1-4) -> AuthActor
//! body validation (D1, 40001)
//! authorize    (steps 5-6, pure)
//! Charge       (step 7)     -> QuotaActor, for key identities (not built yet)
//! Fetch        (steps 8-9)  -> DatasetActor
//! ```
//!
//! It holds no data of its own and never talks to the database.

use std::sync::Arc;

use actix::prelude::*;
use std::net::IpAddr;

use iq_actors::accounts::login_limit;
use iq_actors::auth::{authorize, AuthActor, Authenticate, SiteStatus};
use iq_actors::caller::{Account, Caller, Credentials};
use iq_actors::catalogue;
use iq_actors::dataset::{DatasetActor, Describe, Fetch, Page};
use iq_actors::query::Query;
use iq_actors::ApiError;
use serde::Serialize;
use serde_json::Value;
use tracing::Span;

pub struct FrontActor {
    auth: Addr<AuthActor>,
    datasets: Addr<DatasetActor>,
    site_name: Arc<str>,
    max_limit: u32,
}

impl FrontActor {
    pub fn new(
        auth: Addr<AuthActor>,
        datasets: Addr<DatasetActor>,
        site_name: &str,
        max_limit: u32,
    ) -> Self {
        FrontActor {
            auth,
            datasets,
            site_name: site_name.into(),
            max_limit,
        }
    }
}

impl Actor for FrontActor {
    type Context = Context<Self>;
}

/// `POST /api/v1/query` with its parsed (not yet validated) body.
#[derive(Message)]
#[rtype(result = "Result<Arc<Page>, ApiError>")]
pub struct RunQuery {
    pub credentials: Credentials,
    pub client_ip: Option<IpAddr>,
    pub body: Value,
    pub span: Span,
}

impl Handler<RunQuery> for FrontActor {
    type Result = ResponseFuture<Result<Arc<Page>, ApiError>>;

    fn handle(&mut self, msg: RunQuery, _: &mut Context<Self>) -> Self::Result {
        let auth = self.auth.clone();
        let datasets = self.datasets.clone();
        Box::pin(async move {
            let span = msg.span;
            let identity = auth
                .send(Authenticate {
                    credentials: msg.credentials,
                    client_ip: msg.client_ip,
                    span: span.clone(),
                })
                .await??;
            let query = Query::parse(&msg.body)?;
            authorize(&identity, &query)?;
            // Step 7 (QuotaActor `Charge`) belongs here, for key identities only.
            datasets
                .send(Fetch {
                    query,
                    grant: identity.grant,
                    span,
                })
                .await?
        })
    }
}

/// `GET /api/v1/membership` (D9).
#[derive(Message)]
#[rtype(result = "Result<Membership, ApiError>")]
pub struct ShowMembership {
    pub credentials: Credentials,
    pub span: Span,
}

#[derive(Debug, Serialize)]
pub struct Membership {
    pub identity: &'static str,
    pub user: Option<Account>,
    pub tier: String,
    pub delay_days: u32,
    pub data_cutoff: Option<String>,
    pub indexes: Vec<String>,
    pub quota: Quota,
}

#[derive(Debug, Serialize)]
pub struct Quota {
    pub per_minute: i64,
    pub per_day: i64,
    pub max_keys: Option<u32>,
    pub max_rows: u32,
}

impl Handler<ShowMembership> for FrontActor {
    type Result = ResponseFuture<Result<Membership, ApiError>>;

    fn handle(&mut self, msg: ShowMembership, _: &mut Context<Self>) -> Self::Result {
        let auth = self.auth.clone();
        let datasets = self.datasets.clone();
        let max_limit = self.max_limit;
        Box::pin(async move {
            let identity = auth
                .send(Authenticate {
                    credentials: msg.credentials,
                    // Website identities have no allow-list to check.
                    client_ip: None,
                    span: msg.span.clone(),
                })
                .await??;
            let seen = datasets
                .send(Describe {
                    grant: identity.grant.clone(),
                    span: msg.span,
                })
                .await??;
            let tier = &identity.tier;
            let user = match &identity.caller {
                Caller::Session(account) => Some(account.clone()),
                _ => None,
            };
            Ok(Membership {
                identity: identity.caller.kind(),
                user,
                tier: tier.name.clone(),
                delay_days: identity.grant.delay_days,
                data_cutoff: seen.data_cutoff.map(|d| d.format("%Y%m%d").to_string()),
                indexes: seen.indexes,
                quota: Quota {
                    per_minute: tier.per_minute,
                    per_day: tier.per_day,
                    max_keys: tier.max_keys,
                    max_rows: tier.max_rows.min(max_limit),
                },
            })
        })
    }
}

/// `GET /api/v1/config` (D9).
#[derive(Message)]
#[rtype(result = "Result<SiteConfig, ApiError>")]
pub struct ShowConfig {
    pub span: Span,
}

#[derive(Debug, Serialize)]
pub struct SiteConfig {
    pub site_name: String,
    pub initialized: bool,
    pub api_version: &'static str,
    pub datasets: Vec<&'static str>,
    pub max_limit: u32,
    pub login: LoginPolicy,
}

#[derive(Debug, Serialize)]
pub struct LoginPolicy {
    pub max_failures_per_minute: i32,
}

impl Handler<ShowConfig> for FrontActor {
    type Result = ResponseFuture<Result<SiteConfig, ApiError>>;

    fn handle(&mut self, msg: ShowConfig, _: &mut Context<Self>) -> Self::Result {
        let auth = self.auth.clone();
        let site_name = self.site_name.to_string();
        let max_limit = self.max_limit;
        Box::pin(async move {
            let initialized = auth.send(SiteStatus { span: msg.span }).await??;
            Ok(SiteConfig {
                site_name,
                initialized,
                api_version: "v1",
                datasets: catalogue::api_names(),
                max_limit,
                login: LoginPolicy {
                    max_failures_per_minute: login_limit::PER_USER,
                },
            })
        })
    }
}
