//! The rules a key's settings must follow, wherever they are set (an owner's creation
//! and renaming, an administrator's change): name, index range, IP allow-list, scopes,
//! expiry, limits, and the tier's key count.
//!
//! Each check answers 400 / 40001 (or 409 for the key count) with a reason naming the
//! field; it never writes anything.

use std::collections::BTreeSet;
use std::net::IpAddr;

use chrono::{DateTime, Utc};
use ipnet::IpNet;

use crate::caller::Tier;
use crate::catalogue::Scope;
use crate::db::Traced;
use crate::{ApiError, ErrorCode};

/// Most entries an IP allow-list may hold.
const MAX_ALLOWLIST: usize = 64;

/// The longest key name, in characters (the OpenAPI attributes of `NewKey` and
/// `KeyRename` repeat it; `tests/api/openapi/document.rs` compares them).
pub const MAX_KEY_NAME_CHARS: usize = 100;

/// A key name, trimmed: 1 to 100 characters, none of them a control character (a name
/// is shown in lists and pages; a line break or escape sequence has no place there).
pub(super) fn check_name(name: &str) -> Result<String, ApiError> {
    let name = name.trim();
    if name.is_empty()
        || name.chars().count() > MAX_KEY_NAME_CHARS
        || name.chars().any(char::is_control)
    {
        return Err(ApiError::invalid(format!(
            "field 'name' must be 1 to {MAX_KEY_NAME_CHARS} characters, without control characters"
        )));
    }
    Ok(name.to_string())
}

/// Each index code must exist; duplicates are folded. An empty list is refused: it
/// would make a key that can read nothing.
pub(super) async fn check_index_codes(
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
        .query_column_named(
            "keys.check_index_codes",
            "SELECT index_code FROM indexes WHERE index_code = ANY($1)",
            &[&codes],
        )
        .await?;
    if let Some(unknown) = codes.iter().find(|c| !known.contains(c)) {
        return Err(ApiError::invalid(format!(
            "field 'index_codes': no index named '{unknown}'"
        )));
    }
    Ok(codes)
}

/// Addresses become single-host ranges; ranges are normalised (`10.1.2.3/8` -> `10.0.0.0/8`).
pub(super) fn check_allowlist(entries: Vec<String>) -> Result<Vec<String>, ApiError> {
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

/// Known scopes only, each once, in their order.
pub(super) fn check_scopes(scopes: Vec<String>) -> Result<Vec<String>, ApiError> {
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

/// An expiry must lie in the future.
pub(super) fn check_expiry(at: DateTime<Utc>, now: DateTime<Utc>) -> Result<(), ApiError> {
    if at <= now {
        return Err(ApiError::invalid(
            "field 'expires_at' must be in the future",
        ));
    }
    Ok(())
}

/// A key's own limit: none, or at least 0.
pub(super) fn check_limit(field: &str, value: Option<i32>) -> Result<(), ApiError> {
    if value.is_some_and(|v| v < 0) {
        return Err(ApiError::invalid(format!(
            "field '{field}' must not be negative"
        )));
    }
    Ok(())
}

/// The tier's key count: one more live key must fit in `tier.max_keys` (409 if not).
pub(super) async fn check_key_count(
    client: &impl Traced,
    user_id: i64,
    tier: &Tier,
) -> Result<(), ApiError> {
    let Some(max) = tier.max_keys else {
        return Ok(());
    };
    let held: i64 = client
        .query_value_named(
            "keys.count",
            "SELECT count(*) FROM api_keys WHERE user_id = $1 AND deleted_at IS NULL",
            &[&user_id],
        )
        .await?;
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
