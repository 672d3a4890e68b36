//! Signing in (D23): a user name and password open a session, and for an account with
//! a second factor its code too. The JSON login sends the code with the password; the
//! website asks for it on a second page, carrying a signed five-minute ticket (never the
//! password). A code is counted toward the login limits before it is checked, like a
//! password, so a waiting code form cannot be used to guess. Nothing here logs a
//! password, a code or a ticket.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use subtle::ConstantTimeEq;

use super::login_limit::{CodeFailures, LoginAttempt, CODES_PER_TICKET, CODES_PER_USER_HOUR};
use super::password_change::stored_hash;
use super::two_factor::{accepted_step, factor_of, generator, is_recovery_code, use_recovery_code};
use super::{device, sessions, users, Accounts, OpenedSession, Origin, UserPassword};
use crate::caller::Account;
use crate::db::Traced;
use crate::{ApiError, ErrorCode};

/// How long the website's second step (the code form) waits after the password.
const TICKET_VALID: chrono::TimeDelta = chrono::TimeDelta::minutes(5);

/// A login that passed its password and waits for its second factor: on the website, a
/// signed ticket carried by the code form (never the password).
#[derive(Debug)]
pub struct PendingLogin {
    pub username: String,
    pub ticket: String,
}

/// What a login came to.
#[derive(Debug)]
pub enum LoginStep {
    Opened(super::OpenedSession),
    /// The password is right and the account has a second factor: the code is next.
    NeedsCode(PendingLogin),
}

impl LoginStep {
    /// The session, for a caller that sent everything at once (the JSON API): a login
    /// still waiting for its code is 401 / 40102 saying what to send.
    pub fn opened(self) -> Result<super::OpenedSession, ApiError> {
        match self {
            LoginStep::Opened(opened) => Ok(opened),
            LoginStep::NeedsCode(_) => Err(code_needed()),
        }
    }
}

/// `POST /api/v1/auth/login`: a user name, a password and, for an account with a second
/// factor, its current code or a recovery code.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    /// 3 to 64 characters of letters, digits, `.`, `_`, `@`, `-`; case-sensitive
    pub username: String,
    #[cfg_attr(feature = "openapi", schema(format = Password))]
    pub password: String,
    /// the authenticator's 6-digit code, or an unused recovery code, for an account
    /// with two-factor sign-in; ignored otherwise
    #[serde(default)]
    pub code: Option<String>,
}

impl std::fmt::Debug for LoginRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginRequest")
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

fn wrong_code() -> ApiError {
    ApiError::new(
        ErrorCode::InvalidCredentials,
        "the two-factor code is wrong, expired or already used",
    )
}

fn code_needed() -> ApiError {
    ApiError::new(
        ErrorCode::InvalidCredentials,
        "this account signs in with a second factor: send its authenticator's current code, \
         or an unused recovery code, as 'code'",
    )
}

impl Accounts {
    /// Opens a session for `request` coming from `origin` (its address counts toward the
    /// login limits and is kept with the session). An account with a second factor needs
    /// its code too: without one the answer is [`LoginStep::NeedsCode`] (the website's
    /// second step; the JSON API refuses it with 401 / 40102).
    pub async fn login(
        &self,
        request: LoginRequest,
        origin: &Origin,
    ) -> Result<LoginStep, ApiError> {
        let now = self.clock.now();
        let LoginRequest {
            username,
            password,
            code,
        } = request;
        let credentials = UserPassword { username, password };
        let (account, password_hash) =
            users::login(&self.pool, &self.hasher, credentials, origin, now).await?;
        let factor = factor_of(&**self.pool.get().await?, &account).await?;
        let second = factor.is_some();
        if let Some((salt, last_step)) = factor {
            let Some(code) = code else {
                return Ok(LoginStep::NeedsCode(PendingLogin {
                    ticket: self.ticket(&account, &password_hash, now),
                    username: account.username,
                }));
            };
            self.second_factor(&account, (&salt, last_step), &code, origin, None, now)
                .await?;
        }
        let client = self.pool.get().await?;
        let opened = sessions::open(&**client, account, now, self.policy, origin, second).await?;
        Ok(LoginStep::Opened(self.with_device(opened, now)))
    }

    /// The website's second step: the ticket of a login whose password passed, and the
    /// code. A ticket is good for five minutes; a wrong code counts toward the limits.
    pub async fn login_with_ticket(
        &self,
        ticket: &str,
        code: &str,
        origin: &Origin,
    ) -> Result<OpenedSession, ApiError> {
        let now = self.clock.now();
        let expired = || {
            ApiError::new(
                ErrorCode::CredentialsExpired,
                "this sign-in waited too long for its code; start again with the password",
            )
        };
        let (account, expires) = self.ticket_holder(ticket, now).await?.ok_or_else(expired)?;
        let client = self.pool.get().await?;
        let (salt, last_step) = factor_of(&**client, &account).await?.ok_or_else(expired)?;
        drop(client);
        let through = Some((ticket, expires));
        self.second_factor(&account, (&salt, last_step), code, origin, through, now)
            .await?;
        let client = self.pool.get().await?;
        let opened = sessions::open(&**client, account, now, self.policy, origin, true).await?;
        Ok(self.with_device(opened, now))
    }

    /// `opened` with a new device token for its browser (D28).
    fn with_device(&self, mut opened: OpenedSession, now: DateTime<Utc>) -> OpenedSession {
        opened.device = Some(device::issue(&self.hasher, &opened.account.username, now));
        opened
    }

    /// Checks `code` (a TOTP code or a recovery code) for `account`, using it up; `ticket`
    /// (with its expiry) when it came through the website's second step. A ticket that
    /// has met [`CODES_PER_TICKET`] wrong codes is dead, and a user who has met
    /// [`CODES_PER_USER_HOUR`] this hour is refused until the next (D28).
    async fn second_factor(
        &self,
        account: &Account,
        (salt, last_step): (&[u8], Option<i64>),
        code: &str,
        origin: &Origin,
        ticket: Option<(&str, DateTime<Utc>)>,
        now: DateTime<Utc>,
    ) -> Result<(), ApiError> {
        let client = self.pool.get().await?;
        let failures = CodeFailures::new(&self.hasher, &account.username, ticket, now);
        match failures.exhausted(&**client).await? {
            Some(true) => {
                return Err(ApiError::new(
                    ErrorCode::CredentialsExpired,
                    format!(
                        "this sign-in had {CODES_PER_TICKET} wrong codes; start again with the \
                         password"
                    ),
                ))
            }
            Some(false) => {
                let next_hour = 3600 - now.timestamp().rem_euclid(3600);
                return Err(ApiError::limited(
                    format!(
                        "{CODES_PER_USER_HOUR} wrong two-factor codes this hour for this account; \
                         try again in the next hour"
                    ),
                    next_hour,
                ));
            }
            None => {}
        }
        // Counted before the code is looked at, as a password is: past the login limits
        // no code is even checked (42901), so a sign-in ticket cannot be used to guess.
        let attempt = LoginAttempt::new(&self.hasher, &account.username, origin.address, now);
        attempt.reserve(&**client).await?;
        let passed = if is_recovery_code(code) {
            use_recovery_code(&**client, account.user_id, code, now).await?
        } else {
            let totp = generator(&self.hasher, salt, &account.username)?;
            match accepted_step(&totp, code, now, last_step) {
                // Taken only if no other login took this step first.
                Some(step) => {
                    client
                        .execute_named(
                            "users.totp_step",
                            "UPDATE users SET totp_last_step = $2 WHERE user_id = $1 \
                             AND (totp_last_step IS NULL OR totp_last_step < $2)",
                            &[&account.user_id, &step],
                        )
                        .await?
                        == 1
                }
                None => false,
            }
        };
        if !passed {
            failures.count(&**client).await?;
            return Err(wrong_code());
        }
        attempt.release(&**client).await
    }

    /// `account`'s signed sign-in ticket, valid [`TICKET_VALID`]: `id.expiry.mac`. The
    /// MAC also covers the password's stored hash, so a password change (or reset) in
    /// the meantime voids the ticket.
    fn ticket(&self, account: &Account, password_hash: &str, now: DateTime<Utc>) -> String {
        let expires = (now + TICKET_VALID).timestamp();
        let body = format!("{}.{expires}", account.user_id);
        format!("{body}.{}", self.ticket_mac(&body, password_hash))
    }

    fn ticket_mac(&self, body: &str, password_hash: &str) -> String {
        self.hasher
            .hash(&format!("login-ticket:{body}:{password_hash}"))
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// The account a ticket signs for, and when the ticket expires, if it is genuine, not
    /// expired, and its password has not changed since.
    async fn ticket_holder(
        &self,
        ticket: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<(Account, DateTime<Utc>)>, ApiError> {
        let Some((body, mac)) = ticket.rsplit_once('.') else {
            return Ok(None);
        };
        let Some((id, expires)) = body.split_once('.') else {
            return Ok(None);
        };
        let (Ok(id), Ok(expires)) = (id.parse::<i64>(), expires.parse::<i64>()) else {
            return Ok(None);
        };
        if now.timestamp() >= expires {
            return Ok(None);
        }
        let client = self.pool.get().await?;
        let Some(hash) = stored_hash(&**client, id).await? else {
            return Ok(None);
        };
        let genuine: bool = self
            .ticket_mac(body, &hash)
            .as_bytes()
            .ct_eq(mac.as_bytes())
            .into();
        if !genuine {
            return Ok(None);
        }
        let view = users::find(&**client, &id.to_string()).await?;
        let expires = DateTime::from_timestamp(expires, 0).unwrap_or(now);
        Ok(view.active.then_some((view.account, expires)))
    }
}
