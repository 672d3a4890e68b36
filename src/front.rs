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
//! It holds no data of its own and never talks to the database.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use actix::prelude::*;

use iq_actors::accounts::login_limit;
use iq_actors::auth::{authorize, AuthActor, Authenticate, ShowTiers, SiteStatus};
use iq_actors::caller::{Account, Caller, Credentials, Identity, Tier};
use iq_actors::catalogue;
use iq_actors::clock::Clock;
use iq_actors::dataset::{DatasetActor, Describe, Fetch, Page};
use iq_actors::query::Query;
use iq_actors::quota::{
    account_limits, Admission, CallRecord, Charge, QuotaActor, Record, Status, Window,
};
use iq_actors::ApiError;
use serde::Serialize;
use serde_json::Value;
use tracing::{Instrument, Span};

use crate::http::request_context::record_caller;

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

/// `POST /api/v1/query` with its parsed (not yet validated) body.
#[derive(Message)]
#[rtype(result = "QueryOutcome")]
pub struct RunQuery {
    pub request_id: String,
    pub credentials: Credentials,
    pub client_ip: Option<IpAddr>,
    pub body: Value,
    pub span: Span,
}

/// A query's answer and, for a key-authenticated query, its quota status for the
/// headers (with the window that refused it, on a 429).
pub struct QueryOutcome {
    pub result: Result<Arc<Page>, ApiError>,
    pub quota: Option<(Status, Option<Window>)>,
}

impl From<ApiError> for QueryOutcome {
    fn from(error: ApiError) -> Self {
        QueryOutcome {
            result: Err(error),
            quota: None,
        }
    }
}

impl Handler<RunQuery> for FrontActor {
    type Result = ResponseFuture<QueryOutcome>;

    fn handle(&mut self, msg: RunQuery, _: &mut Context<Self>) -> Self::Result {
        let auth = self.auth.clone();
        let quota = self.quota.clone();
        let datasets = self.datasets.clone();
        let clock = self.clock.clone();
        let root = msg.span;
        let span = tracing::info_span!(parent: &root, "front.run_query");
        Box::pin(
            async move {
                let started = Instant::now();
                let span = Span::current();
                let fetch = |query: Query, grant| async {
                    let page = datasets.send(Fetch {
                        query,
                        grant,
                        span: span.clone(),
                    });
                    page.await.map_err(ApiError::from).and_then(|page| page)
                };
                let authenticate = auth.send(Authenticate {
                    credentials: msg.credentials,
                    client_ip: msg.client_ip,
                    span: span.clone(),
                });
                let identity = match authenticate.await.map_err(ApiError::from) {
                    Ok(Ok(identity)) => identity,
                    Ok(Err(error)) | Err(error) => return error.into(),
                };
                record_caller(&root, &identity.caller);
                let checked = Query::parse(&msg.body).and_then(|query| {
                    authorize(&identity, &query)?;
                    Ok(query)
                });
                let (quota, key_id, user_id, limits) = match (&identity.caller, quota) {
                    (
                        Caller::Key {
                            key_id,
                            owner,
                            limits,
                            ..
                        },
                        Some(quota),
                    ) => (quota, key_id.clone(), owner.user_id, *limits),
                    // Website identities are never charged (spec part 8 rule 4).
                    _ => {
                        let result = match checked {
                            Ok(query) => fetch(query, identity.grant).await,
                            Err(error) => Err(error),
                        };
                        return QueryOutcome {
                            result,
                            quota: None,
                        };
                    }
                };
                // A query refused before step 7 is not counted but still reports (D6).
                let admission = quota
                    .send(Charge {
                        key_id: key_id.clone(),
                        limits,
                        // D11: the owner's account is charged too, at its tier's caps.
                        user_id,
                        account_limits: account_limits(&identity.tier),
                        count: checked.is_ok(),
                        span: span.clone(),
                    })
                    .await
                    .unwrap_or_else(Admission::failed);
                let headers = admission.status.map(|status| (status, admission.refused));
                let query = match (checked, admission.result) {
                    (Ok(query), Ok(())) => query,
                    (Err(error), _) | (Ok(_), Err(error)) => {
                        return QueryOutcome {
                            result: Err(error),
                            quota: headers,
                        }
                    }
                };
                let api_name = query.dataset.api_name.to_string();
                let result = fetch(query, identity.grant).await;
                quota.do_send(Record(CallRecord {
                    request_id: msg.request_id,
                    key_id,
                    api_name,
                    code: result.as_ref().map_or_else(|e| e.code.as_u32(), |_| 0) as i32,
                    rows: result.as_ref().map_or(0, |page| page.returned) as i32,
                    latency_us: started.elapsed().as_micros() as i64,
                    called_at: clock.now(),
                }));
                QueryOutcome {
                    result,
                    quota: headers,
                }
            }
            .instrument(span),
        )
    }
}

/// `GET /api/v1/membership` (D9; with a key, D14).
#[derive(Message)]
#[rtype(result = "Result<Membership, ApiError>")]
pub struct ShowMembership {
    pub credentials: Credentials,
    /// For a key's address allow-list: a refused key gets a query's answer.
    pub client_ip: Option<IpAddr>,
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
    /// The key asked about (key identities only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<KeyMembership>,
    pub quota: Quota,
    /// The per-minute protection of callers without a key (website identities only);
    /// set by the HTTP handler, which owns it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protection: Option<KeylessProtection>,
}

#[derive(Debug, Serialize)]
pub struct KeyMembership {
    pub id: String,
    pub name: String,
    pub scopes: Vec<&'static str>,
    /// `null`: every index the tier covers.
    pub index_codes: Option<Vec<String>>,
    pub expires_at: Option<chrono::DateTime<chrono::Utc>>,
}

#[derive(Debug, Serialize)]
pub struct KeylessProtection {
    pub per_minute: u32,
}

/// For a key, its effective limits (the key's own, its tier's and its account's caps,
/// the tighter of each) and today's use; for a website identity, the tier's key quota.
#[derive(Debug, Serialize)]
pub struct Quota {
    pub per_minute: i64,
    pub per_day: i64,
    pub max_keys: Option<u32>,
    pub max_rows: u32,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub used: Option<QuotaUse>,
}

#[derive(Debug, Serialize)]
pub struct QuotaUse {
    pub used_minute: i64,
    pub used_day: i64,
    pub remaining_minute: i64,
    pub remaining_day: i64,
}

impl Handler<ShowMembership> for FrontActor {
    type Result = ResponseFuture<Result<Membership, ApiError>>;

    fn handle(&mut self, msg: ShowMembership, _: &mut Context<Self>) -> Self::Result {
        let auth = self.auth.clone();
        let datasets = self.datasets.clone();
        let quota = self.quota.clone();
        let max_limit = self.max_limit;
        Box::pin(async move {
            // Steps 1-4 as a query takes them: a refused key gets the same answer.
            let identity = auth
                .send(Authenticate {
                    credentials: msg.credentials,
                    client_ip: msg.client_ip,
                    span: msg.span.clone(),
                })
                .await??;
            record_caller(&msg.span, &identity.caller);
            let mut membership =
                membership(&datasets, &identity, max_limit, msg.span.clone()).await?;
            if let (
                Caller::Key {
                    key_id,
                    owner,
                    limits,
                    ..
                },
                Some(quota),
            ) = (&identity.caller, quota)
            {
                // Asked without counting: the answer is the quota's view now.
                let admission = quota
                    .send(Charge {
                        key_id: key_id.clone(),
                        limits: *limits,
                        user_id: owner.user_id,
                        account_limits: account_limits(&identity.tier),
                        count: false,
                        span: msg.span,
                    })
                    .await
                    .unwrap_or_else(Admission::failed);
                if let Some(status) = admission.status {
                    membership.quota.per_minute = status.minute.limit;
                    membership.quota.per_day = status.day.limit;
                    membership.quota.used = Some(QuotaUse {
                        used_minute: status.minute.limit - status.minute.remaining,
                        used_day: status.day.limit - status.day.remaining,
                        remaining_minute: status.minute.remaining,
                        remaining_day: status.day.remaining,
                    });
                }
            }
            Ok(membership)
        })
    }
}

/// What `identity` is entitled to, as `GET /api/v1/membership` shows it.
async fn membership(
    datasets: &Addr<DatasetActor>,
    identity: &Identity,
    max_limit: u32,
    span: Span,
) -> Result<Membership, ApiError> {
    let seen = datasets
        .send(Describe {
            grant: identity.grant.clone(),
            span,
        })
        .await??;
    let tier = &identity.tier;
    let (user, key) = match &identity.caller {
        Caller::Session(account) => (Some(account.clone()), None),
        Caller::Key {
            key_id,
            name,
            owner,
            expires_at,
            ..
        } => {
            let key = KeyMembership {
                id: key_id.clone(),
                name: name.clone(),
                scopes: identity
                    .grant
                    .scopes
                    .iter()
                    .flat_map(|s| s.iter().map(|scope| scope.as_str()))
                    .collect(),
                index_codes: identity
                    .grant
                    .index_range
                    .as_ref()
                    .map(|r| r.iter().cloned().collect()),
                expires_at: *expires_at,
            };
            (Some(owner.clone()), Some(key))
        }
        Caller::Visitor => (None, None),
    };
    Ok(Membership {
        identity: identity.caller.kind(),
        user,
        tier: tier.name.clone(),
        delay_days: identity.grant.delay_days,
        data_cutoff: seen.data_cutoff.map(|d| d.format("%Y%m%d").to_string()),
        indexes: seen.indexes,
        key,
        quota: Quota {
            per_minute: tier.per_minute,
            per_day: tier.per_day,
            max_keys: tier.max_keys,
            max_rows: tier.max_rows.min(max_limit),
            used: None,
        },
        protection: None,
    })
}

/// What a website page reads (D19): the caller's membership, every tier (for the
/// plans), and the answers to the page's queries, each checked and fetched exactly as
/// `POST /api/v1/query` would for the same website identity, so a page never shows
/// what the API would not. One authentication serves them all; website identities are
/// never charged (spec part 8 rule 4).
#[derive(Message)]
#[rtype(result = "Result<Browsed, ApiError>")]
pub struct Browse {
    /// A session cookie or nothing; a key is refused (pages are not an API).
    pub credentials: Credentials,
    /// Query bodies as `POST /api/v1/query` takes them.
    pub queries: Vec<Value>,
    pub span: Span,
}

pub struct Browsed {
    pub membership: Membership,
    pub tiers: Arc<Vec<Tier>>,
    /// One answer per query, in order.
    pub answers: Vec<Result<Arc<Page>, ApiError>>,
}

impl Handler<Browse> for FrontActor {
    type Result = ResponseFuture<Result<Browsed, ApiError>>;

    fn handle(&mut self, msg: Browse, _: &mut Context<Self>) -> Self::Result {
        let auth = self.auth.clone();
        let datasets = self.datasets.clone();
        let max_limit = self.max_limit;
        let span = tracing::info_span!(parent: &msg.span, "front.browse");
        Box::pin(
            async move {
                if matches!(msg.credentials, Credentials::ApiKey(_)) {
                    return Err(ApiError::internal(
                        "pages are read with website credentials",
                    ));
                }
                let span = Span::current();
                let identity = auth
                    .send(Authenticate {
                        credentials: msg.credentials,
                        client_ip: None,
                        span: span.clone(),
                    })
                    .await??;
                record_caller(&msg.span, &identity.caller);
                let tiers = auth.send(ShowTiers { span: span.clone() });
                let answers = msg.queries.iter().map(|body| {
                    let query = Query::parse(body).and_then(|query| {
                        authorize(&identity, &query)?;
                        Ok(query)
                    });
                    let datasets = datasets.clone();
                    let grant = identity.grant.clone();
                    let span = span.clone();
                    async move {
                        let fetch = datasets.send(Fetch {
                            query: query?,
                            grant,
                            span,
                        });
                        fetch.await.map_err(ApiError::from).and_then(|page| page)
                    }
                });
                let (membership, tiers, answers) = futures_util::join!(
                    membership(&datasets, &identity, max_limit, span.clone()),
                    tiers,
                    futures_util::future::join_all(answers),
                );
                Ok(Browsed {
                    membership: membership?,
                    tiers: tiers??,
                    answers,
                })
            }
            .instrument(span),
        )
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
