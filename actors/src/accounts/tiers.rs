//! Tier and entitlement settings (spec part 8, D7): read for every identity (the
//! AuthActor caches them through [`load`] and [`list`]), changed only by a super
//! administrator through the [`Tiers`] service.
//!
//! It owns the `tiers` table's statements and nothing else: it never reads or changes a
//! user or a key (a tier's reach only counts them), and never caches: a change goes
//! through [`ChangeBus::write`] with `Change::Auth`, so every instance's AuthActor drops
//! its copies.

use deadpool_postgres::Pool;
use serde::Deserialize;

use crate::audit::{Action, Author, Entry, Kind, Target};
use crate::caller::Tier;
use crate::changes::{Change, ChangeBus};
use crate::db::Traced;
use crate::{ApiError, ErrorCode};

/// The tiers as the back office reads and changes them, held in the service's state.
#[derive(Clone)]
pub struct Tiers {
    pool: Pool,
    bus: ChangeBus,
}

impl Tiers {
    pub fn new(pool: Pool, bus: ChangeBus) -> Self {
        Tiers { pool, bus }
    }

    /// Both tiers, free first.
    pub async fn list(&self) -> Result<Vec<Tier>, ApiError> {
        let client = self.pool.get().await?;
        list(&**client).await
    }

    /// Active users on tier `name` and their live keys: who a change of it reaches.
    pub async fn reach(&self, name: &str) -> Result<(i64, i64), ApiError> {
        let client = self.pool.get().await?;
        reach(&**client, name).await
    }

    /// `PUT /api/v1/admin/tiers/{tier}`: every setting of tier `name` replaced, and
    /// announced before this returns.
    pub async fn replace(
        &self,
        by: &Author,
        name: &str,
        settings: TierSettings,
    ) -> Result<Tier, ApiError> {
        self.bus
            .write(&self.pool, Change::Auth, async |tx| {
                // An unknown tier is refused by `replace` (after the settings' checks).
                let before = find(tx, name).await?;
                let after = replace(tx, name, &settings).await?;
                let mut entry = Entry::new(Action::TierChanged, Target::new(Kind::Tier, name));
                if let Some(before) = &before {
                    entry = entry.before(before);
                }
                by.record(tx, entry.after(&after)).await?;
                Ok(after)
            })
            .await
    }
}

const COLUMNS: &str =
    "tier, per_minute, per_day, max_rows, max_keys, delay_days, member_indexes, max_webhooks";

/// Both tiers, free first.
pub async fn list(client: &impl Traced) -> Result<Vec<Tier>, ApiError> {
    let rows = client
        .query_named(
            "tiers.list",
            &format!("SELECT {COLUMNS} FROM tiers ORDER BY tier"),
            &[],
        )
        .await?;
    rows.iter().map(from_row).collect()
}

pub async fn load(client: &impl Traced, name: &str) -> Result<Tier, ApiError> {
    find(client, name)
        .await?
        .ok_or_else(|| ApiError::internal(format_args!("tier {name:?} is missing")))
}

/// Tier `name`, if there is one.
pub async fn find(client: &impl Traced, name: &str) -> Result<Option<Tier>, ApiError> {
    let row = client
        .query_opt_named(
            "tiers.load",
            &format!("SELECT {COLUMNS} FROM tiers WHERE tier = $1"),
            &[&name],
        )
        .await?;
    row.as_ref().map(from_row).transpose()
}

fn from_row(row: &tokio_postgres::Row) -> Result<Tier, ApiError> {
    let count = |name: &str| -> Result<u32, ApiError> {
        let v: i32 = row.try_get(name)?;
        u32::try_from(v).map_err(ApiError::internal)
    };
    Ok(Tier {
        name: row.try_get("tier")?,
        per_minute: i64::from(row.try_get::<_, i32>("per_minute")?),
        per_day: i64::from(row.try_get::<_, i32>("per_day")?),
        max_rows: count("max_rows")?,
        max_keys: row
            .try_get::<_, Option<i32>>("max_keys")?
            .map(u32::try_from)
            .transpose()
            .map_err(ApiError::internal)?,
        delay_days: count("delay_days")?,
        member_indexes: row.try_get("member_indexes")?,
        max_webhooks: count("max_webhooks")?,
    })
}

/// `PUT /api/v1/admin/tiers/{tier}`: every setting, as D7 lists them, `max_keys` included
/// (null: unlimited).
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TierSettings {
    pub per_minute: i32,
    pub per_day: i32,
    pub max_rows: i32,
    /// Required; `null` means unlimited.
    #[serde(deserialize_with = "super::present")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i32>, required = true))]
    pub max_keys: Option<Option<i32>>,
    pub delay_days: i32,
    pub member_indexes: bool,
    /// Webhook endpoints an account may hold (D22); absent: unchanged.
    #[serde(default)]
    pub max_webhooks: Option<i32>,
}

impl TierSettings {
    fn check(&self) -> Result<(), ApiError> {
        let non_negative = [
            ("per_minute", self.per_minute),
            ("per_day", self.per_day),
            ("delay_days", self.delay_days),
            ("max_keys", self.max_keys.flatten().unwrap_or(0)),
            ("max_webhooks", self.max_webhooks.unwrap_or(0)),
        ];
        for (field, value) in non_negative {
            if value < 0 {
                return Err(ApiError::invalid(format!(
                    "field '{field}' must not be negative"
                )));
            }
        }
        if !(1..=5000).contains(&self.max_rows) {
            return Err(ApiError::invalid(
                "field 'max_rows' must be within 1..=5000",
            ));
        }
        if self.max_webhooks.is_some_and(|n| n > 100) {
            return Err(ApiError::invalid(
                "field 'max_webhooks' must be at most 100",
            ));
        }
        if self.delay_days > 365 {
            return Err(ApiError::invalid(
                "field 'delay_days' must be at most 365 trading days",
            ));
        }
        Ok(())
    }
}

/// Who a change of tier `name` reaches: its active users, and their live keys.
pub async fn reach(client: &impl Traced, name: &str) -> Result<(i64, i64), ApiError> {
    let row = client
        .query_one_named(
            "tiers.reach",
            "SELECT count(*) AS users, \
                    (SELECT count(*) FROM api_keys k JOIN users v USING (user_id) \
                     WHERE v.tier = $1 AND v.active AND k.deleted_at IS NULL) AS keys \
             FROM users u WHERE u.tier = $1 AND u.active",
            &[&name],
        )
        .await?;
    Ok((row.try_get("users")?, row.try_get("keys")?))
}

/// Replaces a tier's settings; the caller commits and announces the change.
pub async fn replace(
    client: &impl Traced,
    name: &str,
    settings: &TierSettings,
) -> Result<Tier, ApiError> {
    settings.check()?;
    let updated = client
        .execute_named(
            "tiers.update",
            "UPDATE tiers SET per_minute = $2, per_day = $3, max_rows = $4, max_keys = $5, \
             delay_days = $6, member_indexes = $7, \
             max_webhooks = coalesce($8, max_webhooks), updated_at = now() WHERE tier = $1",
            &[
                &name,
                &settings.per_minute,
                &settings.per_day,
                &settings.max_rows,
                &settings.max_keys.flatten(),
                &settings.delay_days,
                &settings.member_indexes,
                &settings.max_webhooks,
            ],
        )
        .await?;
    if updated == 0 {
        return Err(ApiError::new(
            ErrorCode::NotFound,
            format!("no tier named '{name}' (tiers are 'free' and 'pro')"),
        ));
    }
    load(client, name).await
}
