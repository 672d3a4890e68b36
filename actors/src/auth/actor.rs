//! The AuthActor: credentials in, identity out (check-chain steps 1-4, D3).
//!
//! A present `X-API-Key` header is always a key identity and never falls back to the
//! website identity (spec part 5, rule 2). A key is checked for shape and checksum
//! first (no database), then looked up by its keyed hash in a cache, so a known key
//! costs no database round trip. Expiry, the IP allow-list and the owner's state are
//! judged on every request from the cached record; the cache itself is dropped on every
//! change to keys, users or tiers (see [`crate::changes`]). A session cookie that is
//! not valid gives the visitor: the query path never fails for a stale cookie.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use deadpool_postgres::Pool;
use tracing::{Instrument, Span};

use crate::accounts::api_key::{self, KeyHash, KeyHasher};
use crate::accounts::sessions::{self, SessionLookup, SessionPolicy};
use crate::accounts::{keys_find, super_admin_exists, tiers, KeyRecord};
use crate::answer::EagerReply;
use crate::caller::{Account, Caller, Credentials, Identity, Tier};
use crate::changes::{Change, Invalidate};
use crate::clock::Clock;
use crate::coherent_cache::CoherentCache;
use crate::quota::Limits;
use crate::{ApiError, ErrorCode};

/// How long cached records are trusted when no change notification arrives.
const SAFETY_TTL: Duration = Duration::from_secs(600);
/// Keys kept in memory; unknown keys are cached too (as absent).
const KEY_CAPACITY: u64 = 100_000;

#[derive(Clone)]
pub struct AuthActor {
    service: Arc<AuthService>,
}

struct AuthService {
    pool: Pool,
    clock: Arc<dyn Clock>,
    hasher: KeyHasher,
    policy: SessionPolicy,
    tiers: CoherentCache<String, Arc<Tier>>,
    /// Every tier, for the website's plans; dropped with `tiers`.
    all_tiers: CoherentCache<(), Arc<Vec<Tier>>>,
    keys: CoherentCache<KeyHash, Option<Arc<KnownKey>>>,
    initialized: CoherentCache<(), bool>,
}

/// A key's record and its owner's tier, kept in memory together: every auth change
/// drops both caches at once (see [`Invalidate`]), so a key found in memory needs no
/// second lookup for its tier (each lookup is a hash, a probe and a read recorded for
/// moka's eviction policy).
struct KnownKey {
    record: KeyRecord,
    tier: Arc<Tier>,
}

impl AuthActor {
    pub fn new(
        pool: Pool,
        clock: Arc<dyn Clock>,
        hasher: KeyHasher,
        policy: SessionPolicy,
    ) -> Self {
        AuthActor {
            service: Arc::new(AuthService {
                pool,
                clock,
                hasher,
                policy,
                tiers: CoherentCache::new("tiers", 16, SAFETY_TTL),
                all_tiers: CoherentCache::new("all_tiers", 1, SAFETY_TTL),
                keys: CoherentCache::new("keys", KEY_CAPACITY, SAFETY_TTL),
                initialized: CoherentCache::new("site_status", 1, SAFETY_TTL),
            }),
        }
    }
}

impl Actor for AuthActor {
    type Context = Context<Self>;
}

/// Steps 1-4 of the check chain.
#[derive(Message)]
#[rtype(result = "Result<Identity, ApiError>")]
pub struct Authenticate {
    pub credentials: Credentials,
    /// The client's address (the peer, or `X-Forwarded-For` behind a trusted proxy).
    pub client_ip: Option<IpAddr>,
    pub span: Span,
}

impl Handler<Authenticate> for AuthActor {
    /// Sent at once for a key, session or visitor found in memory (see [`EagerReply`]).
    type Result = EagerReply<Result<Identity, ApiError>>;

    /// Runs in the sender's span, with no span of its own: for a key in memory, steps
    /// 1-4 take less than a span costs. A lookup that misses opens its `cache.lookup`
    /// span (with its statements) under the sender's, and the sender's span, when it
    /// declares `auth.cache.hit`, says whether the key's record came from memory.
    fn handle(&mut self, msg: Authenticate, _: &mut Context<Self>) -> Self::Result {
        let service = self.service.clone();
        EagerReply::new(
            async move {
                match msg.credentials {
                    Credentials::Anonymous => service.visitor().await,
                    Credentials::ApiKey(text) => service.key(&text, msg.client_ip).await,
                    Credentials::Session(id) => service.session(&id).await,
                }
            }
            .instrument(msg.span),
        )
    }
}

impl Handler<Invalidate> for AuthActor {
    type Result = ();

    fn handle(&mut self, msg: Invalidate, _: &mut Context<Self>) {
        if msg.0.touches(Change::Auth) {
            // Together, always: a key in memory holds its owner's tier (`KnownKey`).
            self.service.keys.invalidate_all();
            self.service.tiers.invalidate_all();
            self.service.all_tiers.invalidate_all();
            self.service.initialized.invalidate_all();
        }
    }
}

fn invalid_key() -> ApiError {
    ApiError::new(ErrorCode::InvalidCredentials, "invalid API key")
}

impl AuthService {
    async fn tier(&self, name: &str) -> Result<Arc<Tier>, ApiError> {
        self.tiers
            .get(name, || async {
                let client = self.pool.get().await?;
                Ok(Arc::new(tiers::load(&**client, name).await?))
            })
            .await
    }

    async fn all_tiers(&self) -> Result<Arc<Vec<Tier>>, ApiError> {
        self.all_tiers
            .get(&(), || async {
                let client = self.pool.get().await?;
                Ok(Arc::new(tiers::list(&**client).await?))
            })
            .await
    }

    /// Whether the first super administrator exists; set-up announces an auth change,
    /// so the answer is cached like the rest.
    async fn initialized(&self) -> Result<bool, ApiError> {
        self.initialized
            .get(&(), || async {
                let client = self.pool.get().await?;
                super_admin_exists(&**client).await
            })
            .await
    }

    async fn visitor(&self) -> Result<Identity, ApiError> {
        Ok(Identity::visitor(self.tier("free").await?))
    }

    async fn session(&self, id: &str) -> Result<Identity, ApiError> {
        let lookup = {
            let client = self.pool.get().await?;
            sessions::resolve(&**client, id, self.clock.now(), self.policy).await?
        };
        match lookup {
            SessionLookup::Active(session) => {
                let tier = self.tier(&session.tier).await?;
                Ok(Identity::website(Caller::Session(session.account), tier))
            }
            _ => self.visitor().await,
        }
    }

    /// Steps 1-4 for a key, in the specification's order with D3's codes.
    async fn key(&self, text: &str, ip: Option<IpAddr>) -> Result<Identity, ApiError> {
        if !api_key::has_key_shape(text) {
            return Err(invalid_key());
        }
        let hash = self.hasher.hash(text);
        let lookup = self
            .keys
            .get_or_load(&hash, || async {
                // The checksum is checked only for a key that is not in memory: one
                // that is was checked when it was loaded. A mistyped key is still
                // refused without a database look-up.
                if !api_key::checksum_matches(text) {
                    return Ok(None);
                }
                let record = {
                    let client = self.pool.get().await?;
                    keys_find(&**client, &hash).await?
                };
                // The connection is back in the pool before the tier is looked up,
                // which may need one of its own.
                let Some(record) = record else {
                    return Ok(None);
                };
                let tier = self.tier(&record.owner_tier).await?;
                Ok(Some(Arc::new(KnownKey { record, tier })))
            })
            .await?;
        // On the sender's span: whether the key's record came from memory.
        Span::current().record("auth.cache.hit", !lookup.loaded);
        let known = lookup.value.ok_or_else(invalid_key)?;
        let record = &known.record;
        if record.deleted {
            return Err(invalid_key());
        }
        if record.expires_at.is_some_and(|at| at <= self.clock.now()) {
            return Err(ApiError::new(
                ErrorCode::CredentialsExpired,
                "this API key has expired",
            ));
        }
        if !record.active {
            return Err(ApiError::forbidden("this API key is disabled"));
        }
        if !record.owner_active || !record.owner_api_access {
            return Err(ApiError::forbidden(
                "the account that owns this key is disabled or has no API access",
            ));
        }
        if !record.admits(ip) {
            return Err(ApiError::forbidden(
                "this key does not accept requests from your address",
            ));
        }
        let tier = known.tier.clone();
        let limits = Limits::effective(record.per_minute, record.per_day, &tier);
        Ok(Identity::key(
            Caller::Key {
                key_id: record.key_id.clone(),
                name: record.name.clone(),
                owner: Account {
                    user_id: record.user_id,
                    username: record.owner_username.clone(),
                    role: record.owner_role,
                },
                expires_at: record.expires_at,
                limits,
            },
            tier,
            record.scopes.clone(),
            record.index_codes.clone(),
        ))
    }
}

/// Whether the first super administrator exists (`/api/v1/config`'s `initialized`).
#[derive(Message)]
#[rtype(result = "Result<bool, ApiError>")]
pub struct SiteStatus {
    pub span: Span,
}

impl Handler<SiteStatus> for AuthActor {
    type Result = ResponseFuture<Result<bool, ApiError>>;

    fn handle(&mut self, msg: SiteStatus, _: &mut Context<Self>) -> Self::Result {
        let span = tracing::info_span!(parent: &msg.span, "auth.site_status");
        let service = self.service.clone();
        Box::pin(async move { service.initialized().await }.instrument(span))
    }
}

/// Every tier's settings as the super administrator set them (the website's plans),
/// from the cache that follows tier changes.
#[derive(Message)]
#[rtype(result = "Result<Arc<Vec<Tier>>, ApiError>")]
pub struct ShowTiers {
    pub span: Span,
}

impl Handler<ShowTiers> for AuthActor {
    type Result = ResponseFuture<Result<Arc<Vec<Tier>>, ApiError>>;

    fn handle(&mut self, msg: ShowTiers, _: &mut Context<Self>) -> Self::Result {
        let span = tracing::info_span!(parent: &msg.span, "auth.show_tiers");
        let service = self.service.clone();
        Box::pin(async move { service.all_tiers().await }.instrument(span))
    }
}
