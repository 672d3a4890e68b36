//! [`ShowMembership`]: `GET /api/v1/membership` (D9; with a key, D14), what a caller is
//! entitled to and, for a key, its quota as it stands. [`membership`] is also what a
//! website page reads (see `browse`).
//!
//! It must never count a call: the quota is asked with `count: false`.

use std::net::IpAddr;

use actix::prelude::*;

use iq_actors::auth::Authenticate;
use iq_actors::caller::{Account, Caller, Credentials, Identity};
use iq_actors::dataset::{DatasetActor, Describe};
use iq_actors::ApiError;
use serde::Serialize;
use tracing::{Instrument, Span};
use utoipa::ToSchema;

use super::query::key_charge;
use super::{FrontActor, Links};
use crate::http::request_span::record_caller;

/// `GET /api/v1/membership` (D9; with a key, D14).
#[derive(Message)]
#[rtype(result = "Result<Membership, ApiError>")]
pub struct ShowMembership {
    pub credentials: Credentials,
    /// For a key's address allow-list: a refused key gets a query's answer.
    pub client_ip: Option<IpAddr>,
    pub span: Span,
}

/// Who is asking and what they may see.
#[derive(Debug, Serialize, ToSchema)]
pub struct Membership {
    /// `visitor`, `session` or `key`
    #[schema(inline, value_type = IdentityKind)]
    pub identity: &'static str,
    /// the signed-in user, or with a key the key's owner; null for a visitor
    #[schema(required = true)]
    pub user: Option<Account>,
    /// the tier: `free` or `pro`
    pub tier: String,
    /// the tier's delay in open trading days
    pub delay_days: u32,
    /// the latest date whose rows this caller sees (`YYYYMMDD`); null when the calendar
    /// has no open day old enough
    #[schema(required = true, pattern = "^[0-9]{8}$")]
    pub data_cutoff: Option<String>,
    /// the index codes this caller sees, in display order
    pub indexes: Vec<String>,
    /// the key asked about; only with a key
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<KeyMembership>,
    pub quota: Quota,
    /// the per-minute protection of callers without a key; only without a key
    // Set by the HTTP handler, which owns it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protection: Option<KeylessProtection>,
}

// The identities `Caller::kind` names, for the schema.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)] // a schema only: the answer writes `Caller::kind`'s text
enum IdentityKind {
    Visitor,
    Session,
    Key,
}

/// The key a membership was asked with.
#[derive(Debug, Serialize, ToSchema)]
pub struct KeyMembership {
    pub id: String,
    pub name: String,
    /// what the key may read
    pub scopes: Vec<&'static str>,
    /// null: every index the tier covers
    #[schema(required = true)]
    pub index_codes: Option<Vec<String>>,
    #[schema(required = true)]
    pub expires_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// The protection of callers without a key.
#[derive(Debug, Serialize, ToSchema)]
pub struct KeylessProtection {
    /// queries and pages a minute (`WEBSITE_PER_MINUTE`; 0: no limit)
    pub per_minute: u32,
}

/// For a key, its effective limits (the tightest of the key's own, its tier's and its
/// account's) and today's use; for a website identity, the tier's key quota.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = MembershipQuota)]
pub struct Quota {
    pub per_minute: i64,
    pub per_day: i64,
    /// keys an account of the tier may hold; null: unlimited
    #[schema(required = true)]
    pub max_keys: Option<u32>,
    /// the most rows a page may hold (the tier's, capped by the server's)
    pub max_rows: u32,
    // Absent for a website identity, so the schema lists its fields as optional.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = QuotaUse)]
    pub used: Option<QuotaUse>,
}

/// Today's use of a key, in its membership's quota: all four with a key, none without.
#[derive(Debug, Serialize, ToSchema)]
pub struct QuotaUse {
    /// with a key: calls counted this UTC minute
    #[schema(required = false)]
    pub used_minute: i64,
    /// with a key: calls counted this UTC day
    #[schema(required = false)]
    pub used_day: i64,
    /// with a key: calls left this minute
    #[schema(required = false)]
    pub remaining_minute: i64,
    /// with a key: calls left today
    #[schema(required = false)]
    pub remaining_day: i64,
}

impl Handler<ShowMembership> for FrontActor {
    type Result = ResponseFuture<Result<Membership, ApiError>>;

    fn handle(&mut self, msg: ShowMembership, _: &mut Context<Self>) -> Self::Result {
        let links = self.links.clone();
        let max_limit = self.max_limit;
        // Its own span, like a query's `front.run_query`, so the key's lookup has a
        // field to say whether it came from memory.
        let span = tracing::info_span!(
            parent: &msg.span,
            "front.show_membership",
            auth.cache.hit = tracing::field::Empty,
        );
        let steps = span.clone();
        Box::pin(
            async move {
                let Links { auth, datasets, .. } = &*links;
                // Steps 1-4 as a query takes them: a refused key gets the same answer.
                let identity = auth
                    .send(Authenticate {
                        credentials: msg.credentials,
                        client_ip: msg.client_ip,
                        span: steps.clone(),
                    })
                    .await??;
                record_caller(&msg.span, &identity.caller);
                let mut membership =
                    membership(datasets, &identity, max_limit, steps.clone()).await?;
                // Asked without counting: the answer is the quota's view now.
                if let (Some(charge), Some(quota)) =
                    (key_charge(&identity, false, &steps), links.quota.as_ref())
                {
                    let admission = quota.charge(charge).await;
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
            }
            .instrument(span),
        )
    }
}

/// What `identity` is entitled to, as `GET /api/v1/membership` shows it.
pub(super) async fn membership(
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
                id: key_id.to_string(),
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
