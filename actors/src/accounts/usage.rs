//! Key usage as the back office sees it: calls per UTC day, as the instances have
//! flushed them (so at most one flush interval behind, `QUOTA_FLUSH_MS`).

use chrono::{NaiveDate, NaiveTime, TimeDelta};
use serde::Serialize;

use crate::db::Traced;
use crate::{ApiError, ErrorCode};

/// Longest history one request may ask for.
pub const MAX_DAYS: u32 = 366;

#[derive(Debug, Serialize)]
pub struct KeyUsage {
    pub key_id: String,
    /// The owner's user id (opaque, D7).
    pub owner: String,
    pub tier: String,
    /// The limits step 7 applies now: the smaller of the key's and the tier's (D6).
    pub per_minute: i64,
    pub per_day: i64,
    /// Newest first, one entry per UTC day (0 where the key made no calls).
    pub days: Vec<DayUsage>,
}

#[derive(Debug, Serialize)]
pub struct DayUsage {
    /// `YYYYMMDD`, UTC.
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
                    least(coalesce(k.per_minute, t.per_minute), t.per_minute), \
                    least(coalesce(k.per_day, t.per_day), t.per_day) \
             FROM api_keys k JOIN users u USING (user_id) JOIN tiers t ON t.tier = u.tier \
             WHERE k.key_id = $1",
            &[&key_id],
        )
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no key with id '{key_id}'")))?;
    let owner: i64 = row.try_get(0)?;
    let per_minute: i32 = row.try_get(2)?;
    let per_day: i32 = row.try_get(3)?;
    let first = today - TimeDelta::days(i64::from(days.max(1)) - 1);
    let start = |d: NaiveDate| d.and_time(NaiveTime::MIN).and_utc();
    let used = client
        .query_named(
            "usage.daily_calls",
            "SELECT window_start, used FROM quota_windows \
             WHERE key_id = $1 AND span = 'day' AND window_start BETWEEN $2 AND $3",
            &[&key_id, &start(first), &start(today)],
        )
        .await?;
    let mut calls = std::collections::HashMap::new();
    for row in used {
        let at: chrono::DateTime<chrono::Utc> = row.try_get(0)?;
        calls.insert(at.date_naive(), row.try_get::<_, i64>(1)?);
    }
    let days = first
        .iter_days()
        .take_while(|d| *d <= today)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .map(|d| DayUsage {
            date: d.format("%Y%m%d").to_string(),
            calls: calls.get(&d).copied().unwrap_or(0),
        })
        .collect();
    Ok(KeyUsage {
        key_id: key_id.to_string(),
        owner: owner.to_string(),
        tier: row.try_get(1)?,
        per_minute: per_minute.into(),
        per_day: per_day.into(),
        days,
    })
}
