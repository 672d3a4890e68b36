//! Key usage as the back office sees it: calls per UTC day of the key and of its owner's
//! account (D11: all the account's keys together, deleted ones included), as the
//! instances have flushed them (so at most one flush interval behind, `QUOTA_FLUSH_MS`).
//!
//! Reads only: it never changes a quota window.

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, NaiveTime, TimeDelta, Utc};
use serde::Serialize;

use crate::db::Traced;
use crate::quota::subject::account_caps;
use crate::quota::Subject;
use crate::{ApiError, ErrorCode};

/// Longest history one request may ask for.
pub const MAX_DAYS: u32 = 366;

/// A key's calls per UTC day and the limits in force.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct KeyUsage {
    pub key_id: String,
    /// the owner's user id (opaque, D7)
    pub owner: String,
    /// the owner's tier
    pub tier: String,
    /// the limit a minute in force now: the smaller of the key's and the tier's (D6)
    pub per_minute: i64,
    /// the limit a day in force now
    pub per_day: i64,
    /// newest first, one entry per UTC day (0 where the key made no calls)
    pub days: Vec<DayUsage>,
    pub account: AccountUsage,
}

/// The owner's account over the same days (D11).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AccountUsage {
    /// the account's cap a minute; null when the tier has unlimited keys
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub per_minute: Option<i64>,
    /// the account's cap a day; null when the tier has unlimited keys
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub per_day: Option<i64>,
    /// all the account's keys, deleted ones included; newest first
    pub days: Vec<DayUsage>,
}

/// Counted calls on one UTC day.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DayUsage {
    /// `YYYYMMDD`, UTC
    #[cfg_attr(feature = "openapi", schema(pattern = "^[0-9]{8}$"))]
    pub date: String,
    pub calls: i64,
}

/// Any key's usage over the `days` UTC days up to `today`; a deleted key's too.
pub async fn of_key(
    client: &impl Traced,
    key_id: &str,
    today: NaiveDate,
    days: u32,
) -> Result<KeyUsage, ApiError> {
    let row = client
        .query_opt_named(
            "usage.key_limits",
            "SELECT k.user_id, u.tier, \
                    least(coalesce(k.per_minute, t.per_minute), t.per_minute) AS key_minute, \
                    least(coalesce(k.per_day, t.per_day), t.per_day) AS key_day, \
                    t.per_minute AS tier_minute, t.per_day AS tier_day, t.max_keys \
             FROM api_keys k JOIN users u USING (user_id) JOIN tiers t ON t.tier = u.tier \
             WHERE k.key_id = $1",
            &[&key_id],
        )
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no key with id '{key_id}'")))?;
    let owner: i64 = row.try_get("user_id")?;
    let number = |name: &str| -> Result<i64, ApiError> { Ok(row.try_get::<_, i32>(name)?.into()) };
    let max_keys = (row.try_get::<_, Option<i32>>("max_keys")?)
        .map(u32::try_from)
        .transpose()
        .map_err(ApiError::internal)?;
    let caps = account_caps(number("tier_minute")?, number("tier_day")?, max_keys);
    let first = today - TimeDelta::days(i64::from(days.max(1)) - 1);
    let key_calls = daily_calls(client, key_id, first, today).await?;
    let account = Subject::account(owner);
    let account_calls = daily_calls(client, account.as_str(), first, today).await?;
    Ok(KeyUsage {
        key_id: key_id.to_string(),
        owner: owner.to_string(),
        tier: row.try_get("tier")?,
        per_minute: number("key_minute")?,
        per_day: number("key_day")?,
        days: newest_first(first, today, &key_calls),
        account: AccountUsage {
            per_minute: caps.map(|c| c.per_minute),
            per_day: caps.map(|c| c.per_day),
            days: newest_first(first, today, &account_calls),
        },
    })
}

/// An account's calls per UTC day over the `days` days up to `today`, newest first.
pub async fn of_account(
    client: &impl Traced,
    user_id: i64,
    today: NaiveDate,
    days: u32,
) -> Result<Vec<DayUsage>, ApiError> {
    let first = today - TimeDelta::days(i64::from(days.clamp(1, MAX_DAYS)) - 1);
    let account = Subject::account(user_id);
    let calls = daily_calls(client, account.as_str(), first, today).await?;
    Ok(newest_first(first, today, &calls))
}

/// A quota subject's calls per UTC day from `first` to `today`, as flushed.
async fn daily_calls(
    client: &impl Traced,
    subject: &str,
    first: NaiveDate,
    today: NaiveDate,
) -> Result<HashMap<NaiveDate, i64>, ApiError> {
    let start = |d: NaiveDate| d.and_time(NaiveTime::MIN).and_utc();
    let rows = client
        .query_named(
            "usage.daily_calls",
            "SELECT window_start, used FROM quota_windows \
             WHERE key_id = $1 AND span = 'day' AND window_start BETWEEN $2 AND $3",
            &[&subject, &start(first), &start(today)],
        )
        .await?;
    let mut calls = HashMap::new();
    for row in rows {
        let at: DateTime<Utc> = row.try_get("window_start")?;
        calls.insert(at.date_naive(), row.try_get::<_, i64>("used")?);
    }
    Ok(calls)
}

/// One entry per day from `today` back to `first` (0 where nothing was called).
fn newest_first(
    first: NaiveDate,
    today: NaiveDate,
    calls: &HashMap<NaiveDate, i64>,
) -> Vec<DayUsage> {
    let mut days: Vec<DayUsage> = first
        .iter_days()
        .take_while(|d| *d <= today)
        .map(|d| DayUsage {
            date: d.format("%Y%m%d").to_string(),
            calls: calls.get(&d).copied().unwrap_or(0),
        })
        .collect();
    days.reverse();
    days
}
