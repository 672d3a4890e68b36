//! Website sessions: opened at login, ended at logout, idle timeout and absolute end.
//!
//! The cookie carries a random id; the database holds only its SHA-256 digest, plus
//! the digest of the session's CSRF token. A login always issues a new id (no session
//! fixation). Activity is written back at most once a minute, not on every request.

use std::net::IpAddr;

use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;

use super::token::{self, Token};
use crate::caller::{Account, Role};
use crate::db::Traced;
use crate::{ApiError, ErrorCode};

/// How long a session lives (configurable; `SESSION_IDLE_MINUTES`, `SESSION_MAX_HOURS`).
#[derive(Debug, Clone, Copy)]
pub struct SessionPolicy {
    pub idle: TimeDelta,
    pub absolute: TimeDelta,
    /// Whether administrators need a second factor before the back office lets them in
    /// (`STAFF_TWO_FACTOR`).
    pub staff_two_factor: bool,
}

impl Default for SessionPolicy {
    fn default() -> Self {
        SessionPolicy {
            idle: TimeDelta::minutes(60),
            absolute: TimeDelta::hours(12),
            staff_two_factor: false,
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
    /// A new device token for the browser (D28), when the session came from signing in.
    pub device: Option<String>,
}

/// A session that is valid now.
#[derive(Debug, Clone)]
pub struct ActiveSession {
    pub account: Account,
    pub tier: String,
    /// Its public number: what lists it and ends it (never its secret id).
    pub number: i64,
    /// Whether this session was opened with a second factor (or proved one when it was
    /// set up in it): what `STAFF_TWO_FACTOR` asks of administrators.
    pub two_factor: bool,
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

/// Where a login came from, kept with its session so its owner can tell sessions apart.
#[derive(Debug, Clone, Default)]
pub struct Origin {
    pub address: Option<IpAddr>,
    /// The browser's `User-Agent`, as sent.
    pub user_agent: Option<String>,
    /// The browser's device cookie, as sent (D28: [`super::device`]).
    pub device: Option<String>,
}

/// Sessions a user may hold at once (D28).
pub const MAX_SESSIONS: i64 = 10;

/// The longest `User-Agent` kept with a session, in characters.
const USER_AGENT_CHARS: usize = 200;

pub async fn open(
    client: &impl Traced,
    account: Account,
    now: DateTime<Utc>,
    policy: SessionPolicy,
    origin: &Origin,
    second_factor: bool,
) -> Result<OpenedSession, ApiError> {
    let id = Token::generate();
    let csrf = Token::generate();
    let expires_at = now + policy.absolute;
    let address = origin.address.map(|a| a.to_string());
    let user_agent: Option<String> = origin.user_agent.as_deref().map(|ua| {
        ua.chars()
            .filter(|c| !c.is_control())
            .take(USER_AGENT_CHARS)
            .collect()
    });
    client
        .execute_named(
            "sessions.insert",
            "INSERT INTO sessions (session_hash, user_id, csrf_hash, created_at, last_seen_at, \
                                   expires_at, address, user_agent, second_factor) \
             VALUES ($1, $2, $3, $4, $4, $5, $6, $7, $8)",
            &[
                &id.digest().as_slice(),
                &account.user_id,
                &csrf.digest().as_slice(),
                &now,
                &expires_at,
                &address,
                &user_agent,
                &second_factor,
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
    // At most MAX_SESSIONS a user (D28): a new one ends the oldest, so sessions cannot
    // be piled up, and each keeps its owner's other protections meaningful.
    client
        .execute_named(
            "sessions.keep_newest",
            "DELETE FROM sessions WHERE user_id = $1 AND session_no NOT IN (\
               SELECT session_no FROM sessions WHERE user_id = $1 \
               ORDER BY created_at DESC, session_no DESC LIMIT $2)",
            &[&account.user_id, &MAX_SESSIONS],
        )
        .await?;
    Ok(OpenedSession {
        id,
        csrf,
        expires_at,
        account,
        device: None,
    })
}

/// The longest session id looked up: longer than any issued, so a longer one is unknown
/// without a digest or a statement.
const MAX_PRESENTED_CHARS: usize = 64;

pub async fn resolve(
    client: &impl Traced,
    presented: &str,
    now: DateTime<Utc>,
    policy: SessionPolicy,
) -> Result<SessionLookup, ApiError> {
    if presented.is_empty() || presented.len() > MAX_PRESENTED_CHARS {
        return Ok(SessionLookup::Unknown);
    }
    let digest = token::digest(presented);
    let Some(row) = client
        .query_opt_named(
            "sessions.lookup",
            "SELECT s.user_id, s.session_no, s.csrf_hash, s.last_seen_at, s.expires_at, \
                    u.username, u.role, u.tier, u.active, \
                    s.second_factor AS two_factor \
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
        number: row.try_get("session_no")?,
        two_factor: row.try_get("two_factor")?,
        csrf_digest: row.try_get("csrf_hash")?,
    }))
}

/// The user whose session `presented` is, if it is one.
pub async fn owner(client: &impl Traced, presented: &str) -> Result<Option<i64>, ApiError> {
    Ok(client
        .query_opt_value_named(
            "sessions.owner",
            "SELECT user_id FROM sessions WHERE session_hash = $1",
            &[&token::digest(presented).as_slice()],
        )
        .await?)
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

/// One of a user's sessions as its owner sees it: when and where it was opened, when
/// last used, and whether it is the one asking.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionView {
    /// the session's number, to end it with
    pub id: String,
    pub created_at: DateTime<Utc>,
    pub last_seen_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// the client's address at login
    pub address: Option<String>,
    /// the browser's `User-Agent` at login (at most 200 characters)
    pub user_agent: Option<String>,
    /// whether this is the session making the request
    pub current: bool,
}

/// `user_id`'s live sessions, newest first; `current` is the asking session's number.
pub async fn list(
    client: &impl Traced,
    user_id: i64,
    current: i64,
    now: DateTime<Utc>,
    policy: SessionPolicy,
) -> Result<Vec<SessionView>, ApiError> {
    let rows = client
        .query_named(
            "sessions.list",
            "SELECT session_no, created_at, last_seen_at, expires_at, address, user_agent \
             FROM sessions WHERE user_id = $1 AND expires_at > $2 AND last_seen_at > $3 \
             ORDER BY created_at DESC, session_no DESC",
            &[&user_id, &now, &(now - policy.idle)],
        )
        .await?;
    rows.iter()
        .map(|row| {
            let number: i64 = row.try_get("session_no")?;
            Ok(SessionView {
                id: number.to_string(),
                created_at: row.try_get("created_at")?,
                last_seen_at: row.try_get("last_seen_at")?,
                expires_at: row.try_get("expires_at")?,
                address: row.try_get("address")?,
                user_agent: row.try_get("user_agent")?,
                current: number == current,
            })
        })
        .collect()
}

/// Ends `user_id`'s session number `number` (a number not theirs is 404).
pub async fn end(client: &impl Traced, user_id: i64, number: &str) -> Result<(), ApiError> {
    let missing = || ApiError::new(ErrorCode::NotFound, "no such session");
    let number: i64 = number.parse().map_err(|_| missing())?;
    let ended = client
        .execute_named(
            "sessions.end",
            "DELETE FROM sessions WHERE user_id = $1 AND session_no = $2",
            &[&user_id, &number],
        )
        .await?;
    if ended == 0 {
        return Err(missing());
    }
    Ok(())
}

/// Ends every session of `user_id` but number `keep` (none kept when `None`); answers
/// how many ended.
pub async fn end_all_but(
    client: &impl Traced,
    user_id: i64,
    keep: Option<i64>,
) -> Result<u64, ApiError> {
    Ok(client
        .execute_named(
            "sessions.end_all_but",
            "DELETE FROM sessions WHERE user_id = $1 AND session_no IS DISTINCT FROM $2",
            &[&user_id, &keep],
        )
        .await?)
}
