//! Website sessions: opened at login, ended at logout, idle timeout and absolute end.
//!
//! The cookie carries a random id; the database holds only its SHA-256 digest, plus
//! the digest of the session's CSRF token. A login always issues a new id (no session
//! fixation). Activity is written back at most once a minute, not on every request.

use chrono::{DateTime, TimeDelta, Utc};

use super::token::{self, Token};
use crate::caller::{Account, Role};
use crate::db::Traced;
use crate::{ApiError, ErrorCode};

/// How long a session lives (configurable; `SESSION_IDLE_MINUTES`, `SESSION_MAX_HOURS`).
#[derive(Debug, Clone, Copy)]
pub struct SessionPolicy {
    pub idle: TimeDelta,
    pub absolute: TimeDelta,
}

impl Default for SessionPolicy {
    fn default() -> Self {
        SessionPolicy {
            idle: TimeDelta::minutes(60),
            absolute: TimeDelta::hours(12),
        }
    }
}

/// Activity younger than this is not written back.
const TOUCH_EVERY: TimeDelta = TimeDelta::minutes(1);

/// A session just opened: the two secrets go to the client once, never to a log.
#[derive(Debug)]
pub struct OpenedSession {
    pub id: Token,
    pub csrf: Token,
    pub expires_at: DateTime<Utc>,
    pub account: Account,
}

/// A session that is valid now.
#[derive(Debug, Clone)]
pub struct ActiveSession {
    pub account: Account,
    pub tier: String,
    csrf_digest: Vec<u8>,
}

impl ActiveSession {
    /// Whether `presented` is this session's CSRF token (constant time).
    pub fn csrf_matches(&self, presented: Option<&str>) -> bool {
        presented.is_some_and(|t| token::matches(t, &self.csrf_digest))
    }
}

/// What a presented session id turned out to be.
#[derive(Debug)]
pub enum SessionLookup {
    Active(ActiveSession),
    /// Past its idle timeout or absolute end (40103).
    Expired,
    /// Its account was disabled (40301).
    Disabled,
    /// Never issued, logged out, or malformed (40102).
    Unknown,
}

impl SessionLookup {
    /// The back office's reading: anything but an active session is refused.
    pub fn require(self) -> Result<ActiveSession, ApiError> {
        match self {
            SessionLookup::Active(session) => Ok(session),
            SessionLookup::Expired => Err(ApiError::new(
                ErrorCode::CredentialsExpired,
                "the session has expired; log in again",
            )),
            SessionLookup::Disabled => Err(ApiError::forbidden("this account is disabled")),
            SessionLookup::Unknown => Err(ApiError::new(
                ErrorCode::InvalidCredentials,
                "the session is not valid; log in again",
            )),
        }
    }
}

pub async fn open(
    client: &impl Traced,
    account: Account,
    now: DateTime<Utc>,
    policy: SessionPolicy,
) -> Result<OpenedSession, ApiError> {
    let id = Token::generate();
    let csrf = Token::generate();
    let expires_at = now + policy.absolute;
    client
        .execute_named(
            "sessions.insert",
            "INSERT INTO sessions (session_hash, user_id, csrf_hash, created_at, last_seen_at, expires_at) \
             VALUES ($1, $2, $3, $4, $4, $5)",
            &[
                &id.digest().as_slice(),
                &account.user_id,
                &csrf.digest().as_slice(),
                &now,
                &expires_at,
            ],
        )
        .await?;
    // Expired sessions are of no use to anyone; clearing them here needs no timer.
    client
        .execute_named(
            "sessions.delete_expired",
            "DELETE FROM sessions WHERE expires_at < $1",
            &[&now],
        )
        .await?;
    Ok(OpenedSession {
        id,
        csrf,
        expires_at,
        account,
    })
}

pub async fn resolve(
    client: &impl Traced,
    presented: &str,
    now: DateTime<Utc>,
    policy: SessionPolicy,
) -> Result<SessionLookup, ApiError> {
    if presented.is_empty() || presented.len() > 64 {
        return Ok(SessionLookup::Unknown);
    }
    let digest = token::digest(presented);
    let Some(row) = client
        .query_opt_named(
            "sessions.lookup",
            "SELECT s.user_id, s.csrf_hash, s.last_seen_at, s.expires_at, u.username, u.role, \
                    u.tier, u.active \
             FROM sessions s JOIN users u USING (user_id) WHERE s.session_hash = $1",
            &[&digest.as_slice()],
        )
        .await?
    else {
        return Ok(SessionLookup::Unknown);
    };
    let last_seen: DateTime<Utc> = row.try_get("last_seen_at")?;
    let expires_at: DateTime<Utc> = row.try_get("expires_at")?;
    if now >= expires_at || now - last_seen >= policy.idle {
        close(client, presented).await?;
        return Ok(SessionLookup::Expired);
    }
    if !row.try_get::<_, bool>("active")? {
        return Ok(SessionLookup::Disabled);
    }
    if now - last_seen >= TOUCH_EVERY {
        client
            .execute_named(
                "sessions.touch",
                "UPDATE sessions SET last_seen_at = $2 WHERE session_hash = $1",
                &[&digest.as_slice(), &now],
            )
            .await?;
    }
    let role: String = row.try_get("role")?;
    Ok(SessionLookup::Active(ActiveSession {
        account: Account {
            user_id: row.try_get("user_id")?,
            username: row.try_get("username")?,
            role: Role::parse(&role)
                .ok_or_else(|| ApiError::internal(format_args!("unknown role {role:?}")))?,
        },
        tier: row.try_get("tier")?,
        csrf_digest: row.try_get("csrf_hash")?,
    }))
}

/// Ends a session (logout); ending one that does not exist is not an error.
pub async fn close(client: &impl Traced, presented: &str) -> Result<(), ApiError> {
    client
        .execute_named(
            "sessions.delete",
            "DELETE FROM sessions WHERE session_hash = $1",
            &[&token::digest(presented).as_slice()],
        )
        .await?;
    Ok(())
}
