//! Changing a password (D23): by its owner, who proves the current one, or through a
//! one-time reset link a super administrator issued. Either way the new password meets
//! the rules of a new account, the user's other sessions end (a stolen session or an
//! old password stops working at once), and the change leaves its audit record.
//!
//! A reset token is 131 random bits shown once; only its SHA-256 digest is stored, it
//! lasts [`RESET_VALID`], and using it (or issuing a newer one) voids it. Nothing here
//! logs or records a password or a token.

use std::net::IpAddr;

use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

use super::login_limit::LoginAttempt;
use super::token::{self, Token};
use super::{password, sessions, users, Accounts};
use crate::audit::{Action, Author, Entry, Kind, Target};
use crate::caller::Account;
use crate::changes::Change;
use crate::db::Traced;
use crate::{ApiError, ErrorCode};

/// How long a reset link works.
pub const RESET_VALID: TimeDelta = TimeDelta::hours(24);

/// `POST /api/v1/auth/password`.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PasswordChange {
    pub current_password: String,
    /// 12 to 256 characters
    pub new_password: String,
}

impl std::fmt::Debug for PasswordChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PasswordChange(<redacted>)")
    }
}

/// What a change or a reset did.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PasswordChanged {
    pub changed: bool,
    /// the user's sessions it ended (all but the asking one for a change, all for a
    /// reset)
    #[cfg_attr(feature = "openapi", schema(format = Int64))]
    pub sessions_ended: u64,
}

/// A reset link, shown once.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ResetLink {
    pub user_id: String,
    pub username: String,
    /// `/reset?token=...`: the page where the user sets a new password; shown this once
    pub link: String,
    pub expires_at: DateTime<Utc>,
}

impl std::fmt::Debug for ResetLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResetLink")
            .field("user_id", &self.user_id)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// The longest token a reset page accepts before looking it up.
const MAX_TOKEN_LEN: usize = 64;

impl Accounts {
    /// The signed-in user `by` changes their own password: the current one must be
    /// right (a wrong one counts toward the login limits, like a failed login, and is
    /// 400 / 40001 naming `current_password`); every other session of theirs ends.
    pub async fn change_password(
        &self,
        by: &Author,
        session_number: i64,
        change: PasswordChange,
        ip: Option<IpAddr>,
    ) -> Result<PasswordChanged, ApiError> {
        let owner = by.owner()?;
        password::check_policy_of("new_password", &change.new_password)?;
        self.prove_password(owner, change.current_password, ip)
            .await?;
        let hash = password::hash_bounded(change.new_password).await?;
        self.write(Change::Auth, async |tx| {
            replace(tx, by, Action::PasswordChanged, &hash, Some(session_number)).await
        })
        .await
    }

    /// Checks that `password` is `owner`'s current password, as a login would: counted
    /// toward the login limits before it is checked (42901 past them) and given back when
    /// right; a wrong one is 400 / 40001 naming `current_password`. What every change
    /// of one's own credentials asks first.
    pub(super) async fn prove_password(
        &self,
        owner: &Account,
        password: String,
        ip: Option<IpAddr>,
    ) -> Result<(), ApiError> {
        if password.chars().count() > password::MAX_LEN {
            return Err(wrong_current());
        }
        let attempt = LoginAttempt::new(&self.hasher, &owner.username, ip, self.clock.now());
        let stored = {
            let client = self.pool.get().await?;
            attempt.reserve(&**client).await?;
            stored_hash(&**client, owner.user_id).await?
        };
        if !password::verify_bounded(password, stored).await? {
            return Err(wrong_current());
        }
        let client = self.pool.get().await?;
        attempt.release(&**client).await
    }

    /// `POST /api/v1/admin/users/{id}/password-reset`: a one-time link for user `id`,
    /// valid [`RESET_VALID`] and only while their password stays as it is (D28); any
    /// earlier link of theirs stops working.
    pub async fn issue_reset(&self, by: &Author, user_id: &str) -> Result<ResetLink, ApiError> {
        let now = self.clock.now();
        let token = Token::generate();
        let expires_at = now + RESET_VALID;
        self.write(Change::Auth, async |tx| {
            let user = users::find(tx, user_id).await?;
            let id = user.account.user_id;
            tx.execute_named(
                "password_resets.void",
                "DELETE FROM password_resets WHERE user_id = $1",
                &[&id],
            )
            .await?;
            // Bound to the password as it is now (D28): once it changes, the link is dead.
            tx.execute_named(
                "password_resets.insert",
                "INSERT INTO password_resets (token_hash, user_id, created_at, expires_at, \
                                              bound_to) \
                 SELECT $1, $2, $3, $4, sha256(convert_to(u.password_hash, 'UTF8')) \
                 FROM users u WHERE u.user_id = $2",
                &[&token.digest().as_slice(), &id, &now, &expires_at],
            )
            .await?;
            let entry = Entry::new(Action::PasswordResetIssued, Target::new(Kind::User, id))
                .after(&serde_json::json!({ "expires_at": expires_at }));
            by.record(tx, entry).await?;
            Ok(ResetLink {
                user_id: id.to_string(),
                username: user.account.username.clone(),
                link: format!("/reset?token={}", token.expose()),
                expires_at,
            })
        })
        .await
    }

    /// Whose reset link `presented` is, if it still works (the reset page's greeting).
    pub async fn reset_holder(&self, presented: &str) -> Result<Option<String>, ApiError> {
        let client = self.pool.get().await?;
        Ok(live_reset(&**client, presented, self.clock.now(), false)
            .await?
            .map(|(_, account)| account.username))
    }

    /// Sets a new password through the reset link `presented`: once, within its day;
    /// every session of the user ends. A link used, expired, replaced or never issued
    /// is 400 / 40001.
    pub async fn reset_password(
        &self,
        request_id: std::sync::Arc<str>,
        presented: &str,
        new_password: String,
    ) -> Result<PasswordChanged, ApiError> {
        let now = self.clock.now();
        // A dead link is refused before the slow hash: the page is open to anyone.
        if live_reset(&**self.pool.get().await?, presented, now, false)
            .await?
            .is_none()
        {
            return Err(dead_link());
        }
        let hash = password::hash_bounded(new_password).await?;
        self.write(Change::Auth, async |tx| {
            let (digest, account) = live_reset(tx, presented, now, true)
                .await?
                .ok_or_else(dead_link)?;
            tx.execute_named(
                "password_resets.use",
                "UPDATE password_resets SET used_at = $2 WHERE token_hash = $1",
                &[&digest.as_slice(), &now],
            )
            .await?;
            // The user, proven by the link, is the one who set it.
            let by = Author::signed_in(account, request_id);
            replace(tx, &by, Action::PasswordReset, &hash, None).await
        })
        .await
    }
}

/// The digest and account of a reset token that still works; `lock` takes the row for
/// the transaction that uses it, so two uses cannot both pass.
async fn live_reset(
    client: &impl Traced,
    presented: &str,
    now: DateTime<Utc>,
    lock: bool,
) -> Result<Option<([u8; 32], Account)>, ApiError> {
    if presented.is_empty() || presented.len() > MAX_TOKEN_LEN {
        return Ok(None);
    }
    let digest = token::digest(presented);
    let statement = format!(
        "SELECT u.user_id, u.username, u.role FROM password_resets r JOIN users u USING (user_id) \
         WHERE r.token_hash = $1 AND r.used_at IS NULL AND r.expires_at > $2 \
           AND r.bound_to = sha256(convert_to(u.password_hash, 'UTF8')){}",
        if lock { " FOR UPDATE OF r" } else { "" }
    );
    let Some(row) = client
        .query_opt_named(
            "password_resets.find",
            &statement,
            &[&digest.as_slice(), &now],
        )
        .await?
    else {
        return Ok(None);
    };
    let role: String = row.try_get("role")?;
    Ok(Some((
        digest,
        Account {
            user_id: row.try_get("user_id")?,
            username: row.try_get("username")?,
            role: crate::caller::Role::parse(&role)
                .ok_or_else(|| ApiError::internal(format_args!("unknown role {role:?}")))?,
        },
    )))
}

pub(super) async fn stored_hash(
    client: &impl Traced,
    user_id: i64,
) -> Result<Option<String>, ApiError> {
    Ok(client
        .query_opt_value_named(
            "users.password_hash",
            "SELECT password_hash FROM users WHERE user_id = $1",
            &[&user_id],
        )
        .await?)
}

/// Gives `by`, a user setting their own password, the password `hash`, ends every
/// session of theirs but `keep`, and records `action`: what a change and a reset both
/// do once the new password is allowed.
async fn replace(
    tx: &impl Traced,
    by: &Author,
    action: Action,
    hash: &str,
    keep: Option<i64>,
) -> Result<PasswordChanged, ApiError> {
    let user_id = by.owner()?.user_id;
    set_hash(tx, user_id, hash).await?;
    let ended = sessions::end_all_but(tx, user_id, keep).await?;
    let entry = Entry::new(action, Target::new(Kind::User, user_id))
        .after(&serde_json::json!({ "sessions_ended": ended }));
    by.record(tx, entry).await?;
    Ok(PasswordChanged {
        changed: true,
        sessions_ended: ended,
    })
}

async fn set_hash(client: &impl Traced, user_id: i64, hash: &str) -> Result<(), ApiError> {
    client
        .execute_named(
            "users.set_password",
            "UPDATE users SET password_hash = $2 WHERE user_id = $1",
            &[&user_id, &hash],
        )
        .await?;
    Ok(())
}

fn wrong_current() -> ApiError {
    ApiError::invalid("field 'current_password' is not this account's password")
}

fn dead_link() -> ApiError {
    ApiError::new(
        ErrorCode::InvalidRequest,
        "this reset link does not work: it was used, it expired, a newer one replaced it, \
         or it was never issued; ask an administrator for a new one",
    )
}
