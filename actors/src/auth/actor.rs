//! The AuthActor: credentials in, identity out (check-chain steps 1-4).
//!
//! Today it knows the visitor: no key and no session gives the free tier's website
//! view. A present `X-API-Key` header is always a key identity and never falls back to
//! the website identity (spec part 5, rule 2): until key management exists no key can
//! match, so every key is refused with 40102. Tier settings are cached (moka) so the
//! hot path does not read them from the database.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use deadpool_postgres::Pool;
use moka::future::Cache;
use tracing::{Instrument, Span};

use crate::caller::{Credentials, Identity, Tier};
use crate::{ApiError, ErrorCode};

/// How long tier settings are trusted before being read again.
const TIER_TTL: Duration = Duration::from_secs(30);

pub struct AuthActor {
    pool: Pool,
    tiers: Cache<String, Arc<Tier>>,
}

impl AuthActor {
    pub fn new(pool: Pool) -> Self {
        AuthActor {
            pool,
            tiers: Cache::builder()
                .max_capacity(16)
                .time_to_live(TIER_TTL)
                .build(),
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
    pub span: Span,
}

impl Handler<Authenticate> for AuthActor {
    type Result = ResponseFuture<Result<Identity, ApiError>>;

    fn handle(&mut self, msg: Authenticate, _: &mut Context<Self>) -> Self::Result {
        let span = tracing::info_span!(parent: &msg.span, "auth.authenticate");
        let pool = self.pool.clone();
        let tiers = self.tiers.clone();
        Box::pin(
            async move {
                match msg.credentials {
                    Credentials::Anonymous => {
                        let free = load_tier(&pool, &tiers, "free").await?;
                        Ok(Identity::visitor(free))
                    }
                    Credentials::ApiKey(_) => Err(ApiError::new(
                        ErrorCode::InvalidCredentials,
                        "invalid API key",
                    )),
                }
            }
            .instrument(span),
        )
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
        let pool = self.pool.clone();
        Box::pin(
            async move {
                let client = pool.get().await?;
                let row = client
                    .query_one(
                        "SELECT EXISTS (SELECT 1 FROM users WHERE role = 'super_admin')",
                        &[],
                    )
                    .await?;
                Ok(row.try_get(0)?)
            }
            .instrument(span),
        )
    }
}

async fn load_tier(
    pool: &Pool,
    tiers: &Cache<String, Arc<Tier>>,
    name: &str,
) -> Result<Arc<Tier>, ApiError> {
    tiers
        .try_get_with(name.to_string(), async {
            let client = pool.get().await?;
            let row = client
                .query_opt(
                    "SELECT tier, per_minute, per_day, max_rows, max_keys, delay_days, member_indexes \
                     FROM tiers WHERE tier = $1",
                    &[&name],
                )
                .await?
                .ok_or_else(|| ApiError::internal(format_args!("tier {name:?} is missing")))?;
            let count = |i: usize| -> Result<u32, ApiError> {
                let v: i32 = row.try_get(i)?;
                u32::try_from(v).map_err(ApiError::internal)
            };
            Ok::<_, ApiError>(Arc::new(Tier {
                name: row.try_get(0)?,
                per_minute: i64::from(row.try_get::<_, i32>(1)?),
                per_day: i64::from(row.try_get::<_, i32>(2)?),
                max_rows: count(3)?,
                max_keys: row
                    .try_get::<_, Option<i32>>(4)?
                    .map(u32::try_from)
                    .transpose()
                    .map_err(ApiError::internal)?,
                delay_days: count(5)?,
                member_indexes: row.try_get(6)?,
            }))
        })
        .await
        .map_err(|e| (*e).clone())
}
