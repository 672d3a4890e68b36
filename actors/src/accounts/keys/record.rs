//! The key record the AuthActor caches by keyed hash: everything steps 2-6 need to judge
//! a call made with the key, without the database.
//!
//! Read only: it never changes a key, and never sees the key itself (only its hash).

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use ipnet::IpNet;

use crate::accounts::api_key::KeyHash;
use crate::catalogue::Scope;
use crate::db::Traced;
use crate::ApiError;

/// What the AuthActor needs to run steps 2-6 for a key without the database.
#[derive(Debug, Clone)]
pub struct KeyRecord {
    pub key_id: Arc<str>,
    pub name: String,
    pub user_id: i64,
    pub owner_username: String,
    pub owner_role: crate::caller::Role,
    pub scopes: Arc<BTreeSet<Scope>>,
    pub index_codes: Option<Arc<BTreeSet<String>>>,
    pub ip_allowlist: Vec<IpNet>,
    /// A stored entry did not read as a range (the column is `cidr[]`, so only a fault
    /// can cause it): the key then admits no address, never every address.
    pub ip_allowlist_unreadable: bool,
    pub per_minute: Option<i64>,
    pub per_day: Option<i64>,
    pub expires_at: Option<DateTime<Utc>>,
    pub active: bool,
    pub deleted: bool,
    pub owner_active: bool,
    pub owner_api_access: bool,
    pub owner_tier: String,
}

impl KeyRecord {
    /// Step 4: an empty allow-list admits every address; an unreadable one none.
    pub fn admits(&self, ip: Option<IpAddr>) -> bool {
        if self.ip_allowlist_unreadable {
            return false;
        }
        self.ip_allowlist.is_empty()
            || ip.is_some_and(|ip| self.ip_allowlist.iter().any(|net| net.contains(&ip)))
    }
}

pub async fn find(client: &impl Traced, hash: &KeyHash) -> Result<Option<KeyRecord>, ApiError> {
    let row = client
        .query_opt_named(
            "keys.lookup",
            "SELECT k.key_id, k.user_id, k.scopes, k.index_codes, \
                    k.ip_allowlist::text[] AS ip_allowlist, k.per_minute, k.per_day, \
                    k.expires_at, k.active, k.deleted_at IS NOT NULL AS deleted, \
                    u.active AS owner_active, u.api_access AS owner_api_access, \
                    u.tier AS owner_tier, k.name, u.username, u.role \
             FROM api_keys k JOIN users u USING (user_id) WHERE k.key_hash = $1",
            &[&hash.as_slice()],
        )
        .await?;
    let Some(row) = row else { return Ok(None) };
    let scopes: Vec<String> = row.try_get("scopes")?;
    let index_codes: Option<Vec<String>> = row.try_get("index_codes")?;
    let allowlist: Vec<String> = row.try_get("ip_allowlist")?;
    let parsed: Vec<IpNet> = allowlist.iter().filter_map(|n| n.parse().ok()).collect();
    let ip_allowlist_unreadable = parsed.len() != allowlist.len();
    if ip_allowlist_unreadable {
        tracing::error!(
            "an IP allow-list entry of a key does not parse; the key admits no address"
        );
    }
    let role: String = row.try_get("role")?;
    Ok(Some(KeyRecord {
        key_id: row.try_get::<_, &str>("key_id")?.into(),
        name: row.try_get("name")?,
        user_id: row.try_get("user_id")?,
        owner_username: row.try_get("username")?,
        owner_role: crate::caller::Role::parse(&role)
            .ok_or_else(|| ApiError::internal(format_args!("unknown role {role:?}")))?,
        scopes: Arc::new(scopes.iter().filter_map(|s| Scope::parse(s)).collect()),
        index_codes: index_codes.map(|codes| Arc::new(codes.into_iter().collect())),
        ip_allowlist: parsed,
        ip_allowlist_unreadable,
        per_minute: row.try_get::<_, Option<i32>>("per_minute")?.map(i64::from),
        per_day: row.try_get::<_, Option<i32>>("per_day")?.map(i64::from),
        expires_at: row.try_get("expires_at")?,
        active: row.try_get("active")?,
        deleted: row.try_get("deleted")?,
        owner_active: row.try_get("owner_active")?,
        owner_api_access: row.try_get("owner_api_access")?,
        owner_tier: row.try_get("owner_tier")?,
    }))
}
