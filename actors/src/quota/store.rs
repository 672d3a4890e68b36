//! The quota's statements: lease, flush, reclaim and prune. Each is one statement (the
//! lease, flush and reclaim are functions of the V15 migration), and each is counted,
//! so the benchmark can report statements per admitted call.
//!
//! Never called on a request's hot path except to lease, which happens once per block,
//! and to report, once per [`super::lease::at_risk`] calls at most; one lease statement
//! covers every subject of a call (key and account) at once. The lease and the flush
//! each renew this instance's proof of life, and fail with [`StoreError::Fenced`] once
//! its leases have been reclaimed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use deadpool_postgres::Pool;

use super::lease::{LeaseAsk, LeaseGrant};
use super::subject::Subject;
use super::window::Window;
use crate::db::Traced;
use crate::ApiError;

/// One counted call for the call log.
#[derive(Debug, Clone)]
pub struct CallRecord {
    pub request_id: Arc<str>,
    pub key_id: Arc<str>,
    /// A catalogue name.
    pub api_name: &'static str,
    pub code: i32,
    pub rows: i32,
    pub latency_us: i64,
    pub called_at: DateTime<Utc>,
}

/// Calls spent and budget given back, for one subject's window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spent {
    pub used: i64,
    pub returned: i64,
}

/// Why a lease or flush statement failed.
#[derive(Debug)]
pub enum StoreError {
    /// This instance was out of touch longer than its TTL and its leases were given
    /// back (SQLSTATE IQF01): it must start over under a new id, holding nothing.
    Fenced,
    Failed(ApiError),
}

impl From<tokio_postgres::Error> for StoreError {
    fn from(err: tokio_postgres::Error) -> Self {
        match err.as_db_error() {
            Some(db) if db.code().code() == "IQF01" => StoreError::Fenced,
            _ => StoreError::Failed(err.into()),
        }
    }
}

impl From<ApiError> for StoreError {
    fn from(err: ApiError) -> Self {
        StoreError::Failed(err)
    }
}

/// What one reclaim gave back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reclaimed {
    /// Instances whose proof of life had expired while they held budget (one that
    /// stopped cleanly had given it all back, and is not counted).
    pub instances: i64,
    /// Day budget they held, returned to the windows.
    pub returned: i64,
    /// Calls they may have spent without reporting, counted as used.
    pub counted: i64,
}

/// A subject's window, as the flush addresses it. Sorted by subject, window, start: the
/// order the flush locks rows in, the same as the lease's (see [`Subject`]).
pub type WindowKey = (Subject, Window, DateTime<Utc>);

/// Who runs a statement: this instance's id in the database (new on every start, and
/// after its leases were reclaimed) and how long each statement proves it alive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instance {
    pub id: i64,
    pub ttl: Duration,
}

impl Instance {
    fn ttl_ms(&self) -> i64 {
        i64::try_from(self.ttl.as_millis()).unwrap_or(i64::MAX)
    }
}

#[derive(Clone)]
pub struct QuotaStore {
    pool: Pool,
    statements: Arc<AtomicU64>,
    leases: Arc<AtomicU64>,
}

impl QuotaStore {
    pub fn new(pool: Pool) -> QuotaStore {
        QuotaStore {
            pool,
            statements: Arc::default(),
            leases: Arc::default(),
        }
    }

    /// Statements run so far, and how many of them were leases.
    pub fn statements(&self) -> (u64, u64) {
        let total = self.statements.load(Ordering::Relaxed);
        (total, self.leases.load(Ordering::Relaxed))
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, ApiError> {
        self.statements.fetch_add(1, Ordering::Relaxed);
        Ok(self.pool.get().await?)
    }

    /// One lease statement for the windows of one or more subjects, which also renews
    /// `instance`'s proof of life; the answers come in the order of `asks`. The
    /// function locks the rows in subject, window order whatever the order here, so
    /// statements cannot deadlock.
    pub async fn lease(
        &self,
        instance: Instance,
        asks: &[(Subject, LeaseAsk)],
    ) -> Result<Vec<LeaseGrant>, StoreError> {
        self.leases.fetch_add(1, Ordering::Relaxed);
        let client = self.client().await?;
        let subjects: Vec<&str> = asks.iter().map(|(s, _)| s.as_str()).collect();
        let windows: Vec<&str> = asks.iter().map(|(_, a)| a.window.as_str()).collect();
        let starts: Vec<DateTime<Utc>> = asks.iter().map(|(_, a)| a.start).collect();
        let wants: Vec<i64> = asks.iter().map(|(_, a)| a.want).collect();
        let limits: Vec<i64> = asks.iter().map(|(_, a)| a.limit).collect();
        let returns: Vec<i64> = asks.iter().map(|(_, a)| a.give_back).collect();
        let at_risk: Vec<i64> = asks.iter().map(|(_, a)| a.at_risk).collect();
        let statement = client
            .prepare_cached(
                "SELECT lease_index, lease_taken, lease_granted \
                 FROM quota_lease_held($1, $2::bigint * interval '1 millisecond', \
                                       $3, $4, $5, $6, $7, $8, $9)",
            )
            .await?;
        let rows = client
            .query_named(
                "quota.lease",
                &statement,
                &[
                    &instance.id,
                    &instance.ttl_ms(),
                    &subjects,
                    &windows,
                    &starts,
                    &wants,
                    &limits,
                    &returns,
                    &at_risk,
                ],
            )
            .await?;
        let mut grants = vec![None; asks.len()];
        for row in &rows {
            // 1-based, as SQL's ordinality; anything else is a fault of the function.
            let index: i64 = row.try_get("lease_index")?;
            let slot = usize::try_from(index - 1)
                .ok()
                .and_then(|i| grants.get_mut(i))
                .ok_or_else(|| ApiError::internal("quota lease answered an unknown window"))?;
            *slot = Some(LeaseGrant {
                taken: row.try_get("lease_taken")?,
                granted: row.try_get("lease_granted")?,
            });
        }
        grants
            .into_iter()
            .map(|grant| {
                grant.ok_or_else(|| ApiError::internal("quota lease skipped a window").into())
            })
            .collect()
    }

    /// One flush statement, which also renews `instance`'s proof of life. `Ok(false)`:
    /// this `(instance, seq)` was applied before (a retry after a lost reply), so
    /// nothing was applied twice.
    pub async fn flush(
        &self,
        instance: Instance,
        seq: i64,
        now: DateTime<Utc>,
        windows: &[(WindowKey, Spent)],
        calls: &[CallRecord],
    ) -> Result<bool, StoreError> {
        let client = self.client().await?;
        let key_ids: Vec<&str> = windows.iter().map(|((s, _, _), _)| s.as_str()).collect();
        let spans: Vec<&str> = windows.iter().map(|((_, w, _), _)| w.as_str()).collect();
        let starts: Vec<DateTime<Utc>> = windows.iter().map(|((_, _, s), _)| *s).collect();
        let used: Vec<i64> = windows.iter().map(|(_, s)| s.used).collect();
        let returned: Vec<i64> = windows.iter().map(|(_, s)| s.returned).collect();
        let request_ids: Vec<&str> = calls.iter().map(|c| &*c.request_id).collect();
        let call_keys: Vec<&str> = calls.iter().map(|c| &*c.key_id).collect();
        let api_names: Vec<&str> = calls.iter().map(|c| c.api_name).collect();
        let codes: Vec<i32> = calls.iter().map(|c| c.code).collect();
        let rows: Vec<i32> = calls.iter().map(|c| c.rows).collect();
        let latencies: Vec<i64> = calls.iter().map(|c| c.latency_us).collect();
        let called_at: Vec<DateTime<Utc>> = calls.iter().map(|c| c.called_at).collect();
        let statement = client
            .prepare_cached(
                "SELECT quota_report($1, $2::bigint * interval '1 millisecond', $3, $4, \
                 $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
            )
            .await?;
        Ok(client
            .query_value_named(
                "quota.flush",
                &statement,
                &[
                    &instance.id,
                    &instance.ttl_ms(),
                    &seq,
                    &now,
                    &key_ids,
                    &spans,
                    &starts,
                    &used,
                    &returned,
                    &request_ids,
                    &call_keys,
                    &api_names,
                    &codes,
                    &rows,
                    &latencies,
                    &called_at,
                ],
            )
            .await?)
    }

    /// Gives back the day budget of instances whose proof of life expired (see the V15
    /// migration for what is counted as used instead).
    pub async fn reclaim(&self) -> Result<Reclaimed, ApiError> {
        let client = self.client().await?;
        let row = client
            .query_one_named(
                "quota.reclaim",
                "SELECT instances, returned, counted FROM quota_reclaim()",
                &[],
            )
            .await?;
        Ok(Reclaimed {
            instances: row.try_get("instances")?,
            returned: row.try_get("returned")?,
            counted: row.try_get("counted")?,
        })
    }

    /// Makes sure the call log has its tables for this month and the next (so the
    /// flushes of the coming weeks never land in the default partition), drops the
    /// call-log months that ended before `before` (retention is whole months: a month
    /// goes once all of it is past retention), and deletes day windows older than
    /// `before`, minute windows, flush marks, holdings and instances gone for more
    /// than a day. Answers the call-log months dropped.
    pub async fn prune(&self, now: DateTime<Utc>, before: DateTime<Utc>) -> Result<u64, ApiError> {
        let client = self.client().await?;
        let yesterday = now - chrono::TimeDelta::days(1);
        let row = client
            .query_one_named(
                "quota.prune",
                "WITH days AS (DELETE FROM quota_windows \
                                WHERE span = 'day' AND window_start < $1), \
                 minutes AS (DELETE FROM quota_windows \
                             WHERE span = 'minute' AND window_start < $2), \
                 marks AS (DELETE FROM quota_flushes WHERE flushed_at < $2), \
                 held AS (DELETE FROM quota_holdings WHERE window_start < $2), \
                 gone AS (DELETE FROM quota_instances WHERE expires_at < $2) \
                 SELECT call_log_partition($3), \
                        call_log_partition($3 + interval '1 month'), \
                        call_log_expire($1)",
                &[&before, &yesterday, &now],
            )
            .await?;
        let dropped: i64 = row.try_get(2)?;
        Ok(dropped.max(0) as u64)
    }
}
