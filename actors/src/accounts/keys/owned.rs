//! An owner's own keys (D7): creation (with every public scope; the full key shown once),
//! the list with today's calls, a new secret, a new name, deletion.
//!
//! Every statement names the owner: someone else's key, or a deleted one, is 404
//! ([`no_key`]), never 403, so ids cannot be probed. A key's secret is generated here and
//! only its keyed hash is stored.

use chrono::{DateTime, Utc};
use rand::distributions::{Alphanumeric, DistString};
use serde::Deserialize;

use super::rules::{check_allowlist, check_expiry, check_index_codes, check_key_count, check_name};
use super::view::{calls_today, no_key, view, view_with_calls, CreatedKey, KeyView, VIEW_COLUMNS};
use crate::accounts::api_key::{self, KeyHasher};
use crate::caller::Account;
use crate::catalogue::Scope;
use crate::db::Traced;
use crate::quota::Window;
use crate::ApiError;

/// `POST /api/v1/keys`.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewKey {
    /// 1 to 100 characters without control characters, once spaces around it are dropped
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 100))]
    pub name: String,
    /// existing index codes the key may read; null or absent: every index of the tier;
    /// an empty list is refused
    #[cfg_attr(feature = "openapi", schema(min_items = 1))]
    pub index_codes: Option<Vec<String>>,
    /// addresses or CIDR ranges the key may be used from (at most 64; professional members
    /// only); empty, null or absent: anywhere
    #[cfg_attr(feature = "openapi", schema(max_items = 64))]
    pub ip_allowlist: Option<Vec<String>>,
    /// when the key stops working: RFC 3339 with an offset, in the future
    #[serde(default, deserialize_with = "crate::wire_date::timestamp::optional")]
    pub expires_at: Option<DateTime<Utc>>,
}

/// `PATCH /api/v1/keys/{id}`: only the name.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct KeyRename {
    /// 1 to 100 characters without control characters, once spaces around it are dropped
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 100))]
    pub name: String,
}

/// Creates a key with every public scope. Run it in a transaction: the owner's row is
/// locked so two concurrent creations cannot both pass the tier's key count.
pub async fn create(
    tx: &impl Traced,
    hasher: &KeyHasher,
    owner: &Account,
    new: NewKey,
    now: DateTime<Utc>,
) -> Result<CreatedKey, ApiError> {
    let name = check_name(&new.name)?;
    if let Some(at) = new.expires_at {
        check_expiry(at, now)?;
    }
    let allowlist = check_allowlist(new.ip_allowlist.unwrap_or_default())?;
    let index_codes = match new.index_codes {
        Some(codes) => Some(check_index_codes(tx, codes).await?),
        None => None,
    };
    let row = tx
        .query_one_named(
            "keys.lock_owner",
            "SELECT tier, api_access FROM users WHERE user_id = $1 FOR UPDATE",
            &[&owner.user_id],
        )
        .await?;
    let tier = crate::accounts::tiers::load(tx, &row.try_get::<_, String>(0)?).await?;
    if !row.try_get::<_, bool>(1)? {
        return Err(ApiError::forbidden(
            "API access is switched off for this account",
        ));
    }
    if !allowlist.is_empty() && !tier.member_indexes {
        return Err(ApiError::forbidden(
            "IP allow-lists are for professional members' keys",
        ));
    }
    check_key_count(tx, owner.user_id, &tier).await?;
    let key = api_key::generate();
    let scopes: Vec<&str> = Scope::ALL.iter().map(|s| s.as_str()).collect();
    let key_id = format!(
        "key_{}",
        Alphanumeric.sample_string(&mut rand::rngs::OsRng, 16)
    );
    let row = tx
        .query_one_named(
            "keys.insert",
            &format!(
                "INSERT INTO api_keys (key_id, user_id, name, key_hash, key_hint, scopes, \
                 index_codes, ip_allowlist, expires_at, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text[]::cidr[], $9, $10) \
                 RETURNING {VIEW_COLUMNS}"
            ),
            &[
                &key_id,
                &owner.user_id,
                &name,
                &hasher.hash(&key.text).as_slice(),
                &key.hint,
                &scopes,
                &index_codes,
                &allowlist,
                &new.expires_at,
                &now,
            ],
        )
        .await?;
    Ok(CreatedKey {
        view: view(&row, now)?,
        key: key.text,
    })
}

/// The owner's keys, oldest first, deleted ones left out.
pub async fn list(
    client: &impl Traced,
    user_id: i64,
    now: DateTime<Utc>,
) -> Result<Vec<KeyView>, ApiError> {
    client
        .query_named(
            "keys.list",
            &format!(
                "SELECT {VIEW_COLUMNS}, {} \
                 FROM api_keys WHERE user_id = $1 AND deleted_at IS NULL \
                 ORDER BY created_at, key_id",
                calls_today("$2")
            ),
            &[&user_id, &Window::Day.start(now)],
        )
        .await?
        .iter()
        .map(|row| view_with_calls(row, now))
        .collect()
}

/// Whether `key_id` is one of the owner's live keys: 404 if not, whoever's it is.
pub async fn check_owned(client: &impl Traced, user_id: i64, key_id: &str) -> Result<(), ApiError> {
    client
        .query_opt_named(
            "keys.check_owned",
            "SELECT 1 FROM api_keys WHERE key_id = $1 AND user_id = $2 AND deleted_at IS NULL",
            &[&key_id, &user_id],
        )
        .await?
        .map(drop)
        .ok_or_else(|| no_key(key_id))
}

/// Gives one of the owner's keys a new secret: the same record (id, name, scopes,
/// index range, allow-list, expiry, limits, state, usage) under a new keyed hash, so
/// the old key stops matching anything. Run it through [`crate::accounts::Accounts::write`] with
/// `Change::Auth`: the key caches of every instance are keyed by hash.
pub async fn rotate(
    client: &impl Traced,
    hasher: &KeyHasher,
    user_id: i64,
    key_id: &str,
    now: DateTime<Utc>,
) -> Result<CreatedKey, ApiError> {
    let key = api_key::generate();
    let row = client
        .query_opt_named(
            "keys.rotate",
            &format!(
                "UPDATE api_keys SET key_hash = $3, key_hint = $4 \
                 WHERE key_id = $1 AND user_id = $2 AND deleted_at IS NULL \
                 RETURNING {VIEW_COLUMNS}"
            ),
            &[
                &key_id,
                &user_id,
                &hasher.hash(&key.text).as_slice(),
                &key.hint,
            ],
        )
        .await?
        .ok_or_else(|| no_key(key_id))?;
    Ok(CreatedKey {
        view: view(&row, now)?,
        key: key.text,
    })
}

/// Renames one of the owner's keys (the name rules of creation).
pub async fn rename(
    client: &impl Traced,
    user_id: i64,
    key_id: &str,
    rename: KeyRename,
    now: DateTime<Utc>,
) -> Result<KeyView, ApiError> {
    let name = check_name(&rename.name)?;
    let row = client
        .query_opt_named(
            "keys.rename",
            &format!(
                "UPDATE api_keys SET name = $3 \
                 WHERE key_id = $1 AND user_id = $2 AND deleted_at IS NULL \
                 RETURNING {VIEW_COLUMNS}"
            ),
            &[&key_id, &user_id, &name],
        )
        .await?
        .ok_or_else(|| no_key(key_id))?;
    view(&row, now)
}

/// Deletes one of the owner's keys; someone else's key is "not found", not "forbidden",
/// so ids cannot be probed.
pub async fn delete(
    client: &impl Traced,
    user_id: i64,
    key_id: &str,
    now: DateTime<Utc>,
) -> Result<(), ApiError> {
    let deleted = client
        .execute_named(
            "keys.delete",
            "UPDATE api_keys SET deleted_at = $3 \
             WHERE key_id = $1 AND user_id = $2 AND deleted_at IS NULL",
            &[&key_id, &user_id, &now],
        )
        .await?;
    if deleted == 0 {
        return Err(no_key(key_id));
    }
    Ok(())
}
