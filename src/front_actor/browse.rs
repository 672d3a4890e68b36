//! [`Browse`]: what a website page reads (D19), in one message: the caller's
//! membership, every tier, and the answers to the page's queries.
//!
//! Each query is checked and fetched exactly as `POST /api/v1/query` would for the same
//! website identity, so a page must never show what the API would not; a key is
//! refused here, and nothing is charged.

use std::sync::Arc;

use actix::prelude::*;

use iq_actors::auth::{authorize, Authenticate, ShowTiers};
use iq_actors::caller::{Credentials, Tier};
use iq_actors::dataset::{Fetch, Page};
use iq_actors::query::Query;
use iq_actors::ApiError;
use tracing::{Instrument, Span};

use super::membership::{membership, Membership};
use super::{FrontActor, Links};
use crate::http::request_span::record_caller;

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
    /// Queries as `POST /api/v1/query` parses them.
    pub queries: Vec<Query>,
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
        let links = self.links.clone();
        let max_limit = self.max_limit;
        let span = tracing::info_span!(
            parent: &msg.span,
            "front.browse",
            auth.cache.hit = tracing::field::Empty,
        );
        Box::pin(
            async move {
                let Links { auth, datasets, .. } = &*links;
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
                let answers = msg.queries.into_iter().map(|query| {
                    let query = authorize(&identity, &query).map(|()| query);
                    let grant = identity.grant.clone();
                    let span = span.clone();
                    async move {
                        let query = query?;
                        // A page shows several datasets: each fetch has a span of its
                        // own for the dataset's fields.
                        let span = tracing::info_span!(
                            parent: &span,
                            "dataset.fetch",
                            api_name = query.dataset.api_name,
                            dataset.rows = tracing::field::Empty,
                            dataset.cache.hit = tracing::field::Empty,
                        );
                        let fetch = datasets.send(Fetch {
                            query,
                            grant,
                            columnar: None,
                            span,
                        });
                        fetch.await.map_err(ApiError::from).and_then(|page| page)
                    }
                });
                let (membership, tiers, answers) = futures_util::join!(
                    membership(datasets, &identity, max_limit, span.clone()),
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
