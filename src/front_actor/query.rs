//! [`RunQuery`]: `POST /api/v1/query`, the check chain in the specification's order:
//! authenticate, validate the body, authorize, charge a key's quota (step 7), fetch,
//! and log a counted call. Website identities are never charged.
//!
//! It must never fetch before the charge admits a key's call, nor count a call step 7
//! did not count.

use std::net::IpAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use actix::prelude::*;

use iq_actors::auth::{authorize, Authenticate};
use iq_actors::caller::{Caller, Credentials, Grant, Identity};
use iq_actors::dataset::{Columnar, DatasetActor, Fetch, Page};
use iq_actors::query::Query;
use iq_actors::quota::{account_limits, CallRecord, Charge, Status, Window};
use iq_actors::ApiError;
use serde_json::Value;
use tracing::{Instrument, Span};

use super::{FrontActor, Links};
use crate::http::request_span::record_caller;

/// `POST /api/v1/query` (or Tushare's `POST /tushare`) with its parsed (not yet
/// validated) body.
#[derive(Message)]
#[rtype(result = "QueryOutcome")]
pub struct RunQuery {
    pub request_id: Arc<str>,
    pub credentials: Credentials,
    pub client_ip: Option<IpAddr>,
    pub body: Ask,
    pub span: Span,
}

/// A query body as it came: ours (D1), with the columns its answer is to carry if it
/// asked for Arrow or Parquet (D29), or Tushare's (D24) with the api_name of its path,
/// if any. Either is validated at step 4 of the same chain.
pub enum Ask {
    Native(Value, Option<Columnar>),
    Tushare(Value, Option<String>),
}

impl Ask {
    fn parse(&self) -> Result<Query, ApiError> {
        match self {
            Ask::Native(body, _) => Query::parse(body),
            Ask::Tushare(body, path_name) => iq_actors::tushare::parse(body, path_name.as_deref()),
        }
    }

    fn columnar(&self) -> Option<Columnar> {
        match self {
            Ask::Native(_, columnar) => *columnar,
            Ask::Tushare(..) => None,
        }
    }
}

/// A query's answer and, for a key-authenticated query, its quota status for the
/// headers (with the window that refused it, on a 429).
pub struct QueryOutcome {
    pub result: Result<Arc<Page>, ApiError>,
    pub quota: Option<(Status, Option<Window>)>,
}

impl From<ApiError> for QueryOutcome {
    fn from(error: ApiError) -> Self {
        Err(error).into()
    }
}

/// The answer of a query no quota counted (a website identity's, or a refusal before
/// step 7).
impl From<Result<Arc<Page>, ApiError>> for QueryOutcome {
    fn from(result: Result<Arc<Page>, ApiError>) -> Self {
        QueryOutcome {
            result,
            quota: None,
        }
    }
}

impl Handler<RunQuery> for FrontActor {
    type Result = ResponseFuture<QueryOutcome>;

    fn handle(&mut self, msg: RunQuery, _: &mut Context<Self>) -> Self::Result {
        let span = tracing::info_span!(
            parent: &msg.span,
            "front.run_query",
            auth.cache.hit = tracing::field::Empty,
            quota.in_memory = tracing::field::Empty,
            dataset.rows = tracing::field::Empty,
            dataset.cache.hit = tracing::field::Empty,
        );
        Box::pin(run(self.links.clone(), msg).instrument(span))
    }
}

/// The check chain for one query, inside its `front.run_query` span.
async fn run(links: Rc<Links>, msg: RunQuery) -> QueryOutcome {
    let started = Instant::now();
    let span = Span::current();
    let fetch = |query, grant| fetch(&links.datasets, query, grant, msg.body.columnar(), &span);
    let authenticate = links.auth.send(Authenticate {
        credentials: msg.credentials,
        client_ip: msg.client_ip,
        span: span.clone(),
    });
    let identity = match authenticate.await.map_err(ApiError::from) {
        Ok(Ok(identity)) => identity,
        Ok(Err(error)) | Err(error) => return error.into(),
    };
    record_caller(&msg.span, &identity.caller);
    let checked = msg.body.parse().and_then(|query| {
        authorize(&identity, &query)?;
        Ok(query)
    });
    let (Some(quota), Some(charge)) = (&links.quota, key_charge(&identity, checked.is_ok(), &span))
    else {
        // Website identities are never charged (spec part 8 rule 4).
        return match checked {
            Ok(query) => fetch(query, identity.grant).await.into(),
            Err(error) => error.into(),
        };
    };
    // A query refused before step 7 is not counted but still reports (D6). The shard
    // that owns the key's account decides for both.
    let (key_id, user_id) = (charge.key_id.clone(), charge.user_id);
    let admission = quota.charge(charge).await;
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
    let api_name = query.dataset.api_name;
    let result = fetch(query, identity.grant).await;
    quota.record(
        user_id,
        CallRecord {
            request_id: msg.request_id,
            key_id,
            api_name,
            code: result.as_ref().map_or_else(|e| e.code.as_u32(), |_| 0) as i32,
            rows: result.as_ref().map_or(0, |page| page.place.returned) as i32,
            latency_us: started.elapsed().as_micros() as i64,
            called_at: links.clock.now(),
        },
    );
    QueryOutcome {
        result,
        quota: headers,
    }
}

/// Step 7's charge of a call by `identity` when it is a key's (`count`: whether the call
/// counts, D6): the key at its limits and (D11) its owner's account at the tier's caps.
/// `None` for a website identity, never charged (spec part 8 rule 4).
pub(super) fn key_charge(identity: &Identity, count: bool, span: &Span) -> Option<Charge> {
    let Caller::Key {
        key_id,
        owner,
        limits,
        ..
    } = &identity.caller
    else {
        return None;
    };
    Some(Charge {
        key_id: key_id.clone(),
        limits: *limits,
        user_id: owner.user_id,
        account_limits: account_limits(&identity.tier),
        count,
        span: span.clone(),
    })
}

/// The page `query` asks for, as `grant` may see it, from the dataset actor.
async fn fetch(
    datasets: &Addr<DatasetActor>,
    query: Query,
    grant: Grant,
    columnar: Option<Columnar>,
    span: &Span,
) -> Result<Arc<Page>, ApiError> {
    let page = datasets.send(Fetch {
        query,
        grant,
        columnar,
        span: span.clone(),
    });
    page.await.map_err(ApiError::from).and_then(|page| page)
}
