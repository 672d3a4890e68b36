//! API keys: creation (the full key shown once), listing, deletion by the owner, and
//! the administrator's settings (D3, D7); plus the record the AuthActor caches.
//!
//! Only the keyed hash is stored. A deleted key is kept (soft delete) so that call
//! logs still name it, and so that its later use is a plain 40102.

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use ipnet::IpNet;
use rand::distributions::{Alphanumeric, DistString};
use serde::{Deserialize, Serialize};

use super::api_key::{self, KeyHash, KeyHasher};
use crate::caller::{Account, Tier};
use crate::catalogue::Scope;
use crate::db::Traced;
use crate::paging::{Page, PageRequest, SearchText};
use crate::quota::Window;
use crate::{ApiError, ErrorCode};

/// Most entries an IP allow-list may hold.
const MAX_ALLOWLIST: usize = 64;

/// What the AuthActor needs to run steps 2-6 for a key without the database.
#[derive(Debug, Clone)]
pub struct KeyRecord {
    pub key_id: String,
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
        key_id: row.try_get("key_id")?,
        name: row.try_get("name")?,
        user_id: row.try_get("user_id")?,
        owner_username: row.try_get("username")?,
        owner_role: crate::caller::Role::parse(&role)
            .ok_or_else(|| ApiError::internal(format_args!("unknown role {role:?}")))?,
        scopes: Arc::new(scopes.iter().filter_map(|s| Scope::parse(s)).collect()),
        index_codes: index_codes.map(|codes| Arc::new(codes.into_iter().collect())),
        ip_allowlist: parsed,
        ip_allowlist_unreadable,
        per_minute: row.try_get::<_, Option<i32>>(5)?.map(i64::from),
        per_day: row.try_get::<_, Option<i32>>(6)?.map(i64::from),
        expires_at: row.try_get("expires_at")?,
        active: row.try_get("active")?,
        deleted: row.try_get("deleted")?,
        owner_active: row.try_get("owner_active")?,
        owner_api_access: row.try_get("owner_api_access")?,
        owner_tier: row.try_get("owner_tier")?,
    }))
}

/// Key metadata as owners and administrators see it: never the key itself.
#[derive(Debug, Serialize)]
pub struct KeyView {
    pub id: String,
    pub name: String,
    /// The first characters of the key, to tell keys apart.
    pub key_hint: String,
    /// `active`, `disabled` or `expired`.
    pub state: &'static str,
    pub scopes: Vec<String>,
    /// `null`: every index the owner's tier covers.
    pub index_codes: Option<Vec<String>>,
    pub ip_allowlist: Vec<String>,
    /// The key's own limits; `null`: the tier's.
    pub per_minute: Option<i32>,
    pub per_day: Option<i32>,
    pub expires_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    /// Calls counted today (UTC) as flushed; in the owner's key list only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calls_today: Option<i64>,
}

/// A created key: its metadata and, once, the key. `Debug` leaves the key out.
#[derive(Serialize)]
pub struct CreatedKey {
    #[serde(flatten)]
    pub view: KeyView,
    pub key: String,
}

impl std::fmt::Debug for CreatedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreatedKey")
            .field("view", &self.view)
            .field("key", &"<redacted>")
            .finish()
    }
}

const VIEW_COLUMNS: &str = "key_id, name, key_hint, active, expires_at, scopes, index_codes, \
                            ip_allowlist::text[] AS ip_allowlist, per_minute, per_day, \
                            created_at";

fn view(row: &tokio_postgres::Row, now: DateTime<Utc>) -> Result<KeyView, ApiError> {
    let active: bool = row.try_get("active")?;
    let expires_at: Option<DateTime<Utc>> = row.try_get("expires_at")?;
    let state = if expires_at.is_some_and(|at| at <= now) {
        "expired"
    } else if active {
        "active"
    } else {
        "disabled"
    };
    Ok(KeyView {
        id: row.try_get("key_id")?,
        name: row.try_get("name")?,
        key_hint: row.try_get("key_hint")?,
        state,
        expires_at,
        scopes: row.try_get("scopes")?,
        index_codes: row.try_get("index_codes")?,
        ip_allowlist: row.try_get("ip_allowlist")?,
        per_minute: row.try_get("per_minute")?,
        per_day: row.try_get("per_day")?,
        created_at: row.try_get("created_at")?,
        calls_today: None,
    })
}

/// `POST /api/v1/keys`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewKey {
    pub name: String,
    pub index_codes: Option<Vec<String>>,
    pub ip_allowlist: Option<Vec<String>>,
    #[serde(default, deserialize_with = "crate::wire_date::timestamp::optional")]
    pub expires_at: Option<DateTime<Utc>>,
}

/// `PATCH /api/v1/admin/keys/{id}`: an absent field is left alone, `null` clears it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyPatch {
    pub active: Option<bool>,
    #[serde(default, deserialize_with = "super::present")]
    pub per_minute: Option<Option<i32>>,
    #[serde(default, deserialize_with = "super::present")]
    pub per_day: Option<Option<i32>>,
    pub scopes: Option<Vec<String>>,
    #[serde(default, deserialize_with = "super::present")]
    pub index_codes: Option<Option<Vec<String>>>,
    pub ip_allowlist: Option<Vec<String>>,
    #[serde(default, deserialize_with = "crate::wire_date::timestamp::present")]
    pub expires_at: Option<Option<DateTime<Utc>>>,
}

/// `PATCH /api/v1/keys/{id}`: the owner renames a key.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyRename {
    pub name: String,
}

/// A key name, trimmed: 1 to 100 characters, none of them a control character (a name
/// is shown in lists and pages; a line break or escape sequence has no place there).
fn check_name(name: &str) -> Result<String, ApiError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 || name.chars().any(char::is_control) {
        return Err(ApiError::invalid(
            "field 'name' must be 1 to 100 characters, without control characters",
        ));
    }
    Ok(name.to_string())
}

/// Each index code must exist; duplicates are folded. An empty list is refused: it
/// would make a key that can read nothing.
async fn check_index_codes(
    client: &impl Traced,
    codes: Vec<String>,
) -> Result<Vec<String>, ApiError> {
    if codes.is_empty() {
        return Err(ApiError::invalid(
            "field 'index_codes' must name at least one index, or be null for all",
        ));
    }
    let codes: Vec<String> = codes
        .into_iter()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let known: Vec<String> = client
        .query_named(
            "keys.check_index_codes",
            "SELECT index_code FROM indexes WHERE index_code = ANY($1)",
            &[&codes],
        )
        .await?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, _>>()?;
    if let Some(unknown) = codes.iter().find(|c| !known.contains(c)) {
        return Err(ApiError::invalid(format!(
            "field 'index_codes': no index named '{unknown}'"
        )));
    }
    Ok(codes)
}

/// Addresses become single-host ranges; ranges are normalised (`10.1.2.3/8` -> `10.0.0.0/8`).
fn check_allowlist(entries: Vec<String>) -> Result<Vec<String>, ApiError> {
    if entries.len() > MAX_ALLOWLIST {
        return Err(ApiError::invalid(format!(
            "field 'ip_allowlist' holds at most {MAX_ALLOWLIST} entries"
        )));
    }
    let mut nets = BTreeSet::new();
    for entry in entries {
        let text = entry.trim();
        let net = match text.parse::<IpNet>() {
            Ok(net) => net.trunc(),
            Err(_) => text.parse::<IpAddr>().map(IpNet::from).map_err(|_| {
                ApiError::invalid(format!(
                    "field 'ip_allowlist': '{text}' is not an IP address or CIDR range"
                ))
            })?,
        };
        nets.insert(net);
    }
    Ok(nets.into_iter().map(|n| n.to_string()).collect())
}

fn check_scopes(scopes: Vec<String>) -> Result<Vec<String>, ApiError> {
    let mut parsed = BTreeSet::new();
    for scope in &scopes {
        parsed.insert(Scope::parse(scope).ok_or_else(|| {
            ApiError::invalid(format!(
                "field 'scopes': unknown scope '{scope}' (index:read, quote:read, calendar:read)"
            ))
        })?);
    }
    Ok(parsed.into_iter().map(|s| s.as_str().to_string()).collect())
}

fn check_expiry(at: DateTime<Utc>, now: DateTime<Utc>) -> Result<(), ApiError> {
    if at <= now {
        return Err(ApiError::invalid(
            "field 'expires_at' must be in the future",
        ));
    }
    Ok(())
}

fn check_limit(field: &str, value: Option<i32>) -> Result<(), ApiError> {
    if value.is_some_and(|v| v < 0) {
        return Err(ApiError::invalid(format!(
            "field '{field}' must not be negative"
        )));
    }
    Ok(())
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
    let tier = super::tiers::load(tx, &row.try_get::<_, String>(0)?).await?;
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

async fn check_key_count(client: &impl Traced, user_id: i64, tier: &Tier) -> Result<(), ApiError> {
    let Some(max) = tier.max_keys else {
        return Ok(());
    };
    let held: i64 = client
        .query_one_named(
            "keys.count",
            "SELECT count(*) FROM api_keys WHERE user_id = $1 AND deleted_at IS NULL",
            &[&user_id],
        )
        .await?
        .try_get(0)?;
    if held >= i64::from(max) {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!(
                "the {} tier allows {max} key(s); delete one before creating another",
                tier.name
            ),
        ));
    }
    Ok(())
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
                "SELECT {VIEW_COLUMNS}, \
                        (SELECT used FROM quota_windows q WHERE q.key_id = api_keys.key_id \
                         AND q.span = 'day' AND q.window_start = $2) AS calls_today \
                 FROM api_keys WHERE user_id = $1 AND deleted_at IS NULL \
                 ORDER BY created_at, key_id"
            ),
            &[&user_id, &Window::Day.start(now)],
        )
        .await?
        .iter()
        .map(|row| {
            let mut view = view(row, now)?;
            view.calls_today = Some(row.try_get::<_, Option<i64>>("calls_today")?.unwrap_or(0));
            Ok(view)
        })
        .collect()
}

fn no_key(id: &str) -> ApiError {
    ApiError::new(ErrorCode::NotFound, format!("no key with id '{id}'"))
}

/// Whose a key is, as the administrators' key list shows it.
#[derive(Debug, Serialize)]
pub struct KeyOwner {
    /// The owner's user id (opaque, D7).
    pub id: String,
    pub username: String,
}

/// A key in the administrators' list: its metadata (with `calls_today`) and its owner.
#[derive(Debug, Serialize)]
pub struct OwnedKeyView {
    #[serde(flatten)]
    pub key: KeyView,
    pub owner: KeyOwner,
}

/// Every live key, or those of one owner (`user_id`, an opaque id: one that is no id
/// matches nothing) and those whose name contains `q` (any letter case), newest first.
pub async fn list_all(
    client: &impl Traced,
    page: PageRequest,
    user_id: Option<&str>,
    q: &SearchText,
    now: DateTime<Utc>,
) -> Result<Page<OwnedKeyView>, ApiError> {
    let owner: Option<i64> = match user_id {
        None => None,
        Some(id) => match id.parse() {
            Ok(id) => Some(id),
            Err(_) => return Ok(page.page(Vec::new(), 0)),
        },
    };
    let pattern = q.like_pattern();
    let filter = "deleted_at IS NULL AND ($1::bigint IS NULL OR user_id = $1) \
                  AND ($2::text IS NULL OR name ILIKE $2 ESCAPE '\\')";
    let total: i64 = client
        .query_one_named(
            "keys.count_all",
            &format!("SELECT count(*) FROM api_keys WHERE {filter}"),
            &[&owner, &pattern],
        )
        .await?
        .try_get(0)?;
    let rows = client
        .query_named(
            "keys.page",
            &format!(
                "SELECT {VIEW_COLUMNS}, user_id, \
                        (SELECT u.username FROM users u WHERE u.user_id = api_keys.user_id) \
                          AS owner_username, \
                        (SELECT q.used FROM quota_windows q WHERE q.key_id = api_keys.key_id \
                         AND q.span = 'day' AND q.window_start = $3) AS calls_today \
                 FROM api_keys WHERE {filter} \
                 ORDER BY created_at DESC, key_id LIMIT $4 OFFSET $5"
            ),
            &[
                &owner,
                &pattern,
                &Window::Day.start(now),
                &page.limit(),
                &page.offset(),
            ],
        )
        .await?;
    let items = rows
        .iter()
        .map(|row| {
            let mut key = view(row, now)?;
            key.calls_today = Some(row.try_get::<_, Option<i64>>("calls_today")?.unwrap_or(0));
            Ok(OwnedKeyView {
                key,
                owner: KeyOwner {
                    id: row.try_get::<_, i64>("user_id")?.to_string(),
                    username: row.try_get("owner_username")?,
                },
            })
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    Ok(page.page(items, total))
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
/// the old key stops matching anything. Run it through [`super::Accounts::write`] with
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

/// An administrator's change to any (not deleted) key.
pub async fn patch(
    client: &impl Traced,
    key_id: &str,
    patch: KeyPatch,
    now: DateTime<Utc>,
) -> Result<KeyView, ApiError> {
    if let Some(Some(at)) = patch.expires_at {
        check_expiry(at, now)?;
    }
    check_limit("per_minute", patch.per_minute.flatten())?;
    check_limit("per_day", patch.per_day.flatten())?;
    let scopes = patch.scopes.map(check_scopes).transpose()?;
    let allowlist = patch.ip_allowlist.map(check_allowlist).transpose()?;
    let index_codes = match patch.index_codes {
        Some(Some(codes)) => Some(Some(check_index_codes(client, codes).await?)),
        other => other,
    };
    // `$n IS NULL` keeps a column; the `set_*` flags say whether a nullable one is set.
    let row = client
        .query_opt_named(
            "keys.update",
            &format!(
                "UPDATE api_keys SET \
                   active = COALESCE($2, active), \
                   per_minute = CASE WHEN $3 THEN $4 ELSE per_minute END, \
                   per_day = CASE WHEN $5 THEN $6 ELSE per_day END, \
                   scopes = COALESCE($7, scopes), \
                   index_codes = CASE WHEN $8 THEN $9 ELSE index_codes END, \
                   ip_allowlist = COALESCE($10::text[]::cidr[], ip_allowlist), \
                   expires_at = CASE WHEN $11 THEN $12 ELSE expires_at END \
                 WHERE key_id = $1 AND deleted_at IS NULL RETURNING {VIEW_COLUMNS}"
            ),
            &[
                &key_id,
                &patch.active,
                &patch.per_minute.is_some(),
                &patch.per_minute.flatten(),
                &patch.per_day.is_some(),
                &patch.per_day.flatten(),
                &scopes,
                &index_codes.is_some(),
                &index_codes.flatten(),
                &allowlist,
                &patch.expires_at.is_some(),
                &patch.expires_at.flatten(),
            ],
        )
        .await?
        .ok_or_else(|| no_key(key_id))?;
    view(&row, now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowlists_are_normalised_and_checked() {
        let nets = check_allowlist(vec![
            "203.0.113.7".into(),
            "10.1.2.3/8".into(),
            " 2001:db8::1 ".into(),
            "10.0.0.0/8".into(),
        ])
        .unwrap();
        assert_eq!(nets, ["10.0.0.0/8", "203.0.113.7/32", "2001:db8::1/128"]);
        let err = check_allowlist(vec!["10.0.0.300".into()]).unwrap_err();
        assert!(err.message.contains("10.0.0.300"));
    }

    #[test]
    fn an_allowlist_admits_only_its_ranges() {
        let record = KeyRecord {
            key_id: "k".into(),
            name: "k".into(),
            user_id: 1,
            owner_username: "u".into(),
            owner_role: crate::caller::Role::User,
            scopes: Arc::default(),
            index_codes: None,
            ip_allowlist: vec!["203.0.113.0/24".parse().unwrap()],
            ip_allowlist_unreadable: false,
            per_minute: None,
            per_day: None,
            expires_at: None,
            active: true,
            deleted: false,
            owner_active: true,
            owner_api_access: true,
            owner_tier: "pro".into(),
        };
        assert!(record.admits(Some("203.0.113.9".parse().unwrap())));
        assert!(!record.admits(Some("198.51.100.1".parse().unwrap())));
        assert!(!record.admits(None));
        let open = KeyRecord {
            ip_allowlist: vec![],
            ..record.clone()
        };
        assert!(open.admits(None));
        // An unreadable list admits nobody, even when nothing of it could be read.
        let unreadable = KeyRecord {
            ip_allowlist: vec![],
            ip_allowlist_unreadable: true,
            ..record
        };
        assert!(!unreadable.admits(Some("203.0.113.7".parse().unwrap())));
        assert!(!unreadable.admits(None));
    }

    #[test]
    fn names_are_trimmed_and_checked() {
        assert_eq!(check_name("  laptop ").unwrap(), "laptop");
        assert_eq!(check_name(&"é".repeat(100)).unwrap().chars().count(), 100);
        for bad in ["", "   ", "a\nb", "tab\there", "bell\u{7}", "\u{9b}csi"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_name(&"x".repeat(101)).is_err());
    }

    #[test]
    fn patch_tells_null_from_absent() {
        let patch: KeyPatch =
            serde_json::from_str(r#"{"per_minute": null, "expires_at": "2027-01-01T00:00:00Z"}"#)
                .unwrap();
        assert_eq!(patch.per_minute, Some(None));
        assert_eq!(patch.per_day, None);
        assert!(matches!(patch.expires_at, Some(Some(_))));
        assert!(serde_json::from_str::<KeyPatch>(r#"{"colour": 1}"#).is_err());
    }
}
