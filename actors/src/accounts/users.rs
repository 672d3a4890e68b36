//! Accounts: the first super administrator, logins, and user administration (D7).
//!
//! A failed login answers the same generic 40102 whether or not the user exists, after
//! the same argon2 work. Passwords are hashed on the blocking pool and never logged.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::api_key::KeyHasher;
use super::keys::KeyView;
use super::login_limit::LoginAttempt;
use super::password;
use super::usage::DayUsage;
use crate::caller::{Account, Role};
use crate::db::Traced;
use crate::paging::{Page, PageRequest, SearchText};
use crate::quota::Window;
use crate::{ApiError, ErrorCode};

/// A user name and a password, as a sign-in or the set-up hands them to the accounts
/// (the bodies that carry them are `LoginRequest` and `SetupRequest`).
pub struct UserPassword {
    /// A new name is checked against [`USERNAME_LEN`] and its characters; a sign-in's
    /// only against the longest.
    pub username: String,
    /// At most [`password::MAX_LEN`] characters; a new one at least
    /// [`password::MIN_LEN`].
    pub password: String,
}

/// `POST /api/v1/setup`: the first super administrator's credentials and, where
/// `SETUP_TOKEN_REQUIRED` is set (D28), the set-up token the service printed at start.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SetupRequest {
    /// 3 to 64 characters of letters, digits, `.`, `_`, `@`, `-`; case-sensitive
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 3, max_length = 64, pattern = "^[A-Za-z0-9._@-]{3,64}$")
    )]
    pub username: String,
    /// 12 to 256 characters
    #[cfg_attr(feature = "openapi", schema(min_length = 12, max_length = 256, format = Password))]
    pub password: String,
    /// the token of the set-up link printed at start (`/setup?token=...`); required when
    /// the service runs with `SETUP_TOKEN_REQUIRED`
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_length = 64))]
    pub token: Option<String>,
}

impl SetupRequest {
    /// The credentials, and the token when one came.
    pub fn split(self) -> (UserPassword, Option<String>) {
        let SetupRequest {
            username,
            password,
            token,
        } = self;
        (UserPassword { username, password }, token)
    }
}

/// `POST /api/v1/admin/users`.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewUser {
    /// 3 to 64 characters of letters, digits, `.`, `_`, `@`, `-`; case-sensitive
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 3, max_length = 64, pattern = "^[A-Za-z0-9._@-]{3,64}$")
    )]
    pub username: String,
    /// 12 to 256 characters
    #[cfg_attr(feature = "openapi", schema(min_length = 12, max_length = 256, format = Password))]
    pub password: String,
    /// default `user`
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Role>))]
    pub role: Option<String>,
    /// `free` (the default) or `pro`
    pub tier: Option<String>,
}

/// `PATCH /api/v1/admin/users/{id}`: absent fields are left alone.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct UserPatch {
    /// `free` or `pro`
    pub tier: Option<String>,
    /// `user`, `admin` or `super_admin`. The last active super administrator keeps the
    /// role (and stays active): the back office would have no one left to run it.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Role>))]
    pub role: Option<String>,
    pub active: Option<bool>,
    pub api_access: Option<bool>,
}

/// A user as the back office shows it.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UserView {
    #[serde(flatten)]
    pub account: Account,
    /// `free` or `pro`
    pub tier: String,
    pub active: bool,
    /// whether the user's keys may be used
    pub api_access: bool,
    pub created_at: DateTime<Utc>,
}

/// A user as the back office's user list shows them.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UserSummary {
    #[serde(flatten)]
    pub user: UserView,
    /// Keys not deleted, expired and disabled ones included.
    pub key_count: i64,
    /// Calls of all the account's keys today (UTC), deleted keys included, as flushed.
    pub calls_today: i64,
}

/// One user with their live keys (each with `calls_today`) and the account's calls per
/// UTC day, newest first.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UserDetail {
    #[serde(flatten)]
    pub user: UserView,
    /// keys not deleted, each with `calls_today`
    pub keys: Vec<KeyView>,
    /// the account's calls per UTC day over the last 30 days, newest first
    pub usage: Vec<DayUsage>,
}

/// A user name's length: 3 to 64 bytes (ASCII only). The OpenAPI attributes of
/// `SetupRequest` and `NewUser` repeat it as literals, which utoipa requires;
/// `tests/api/openapi/document.rs` compares them.
pub const USERNAME_LEN: std::ops::RangeInclusive<usize> = 3..=64;

const USER_COLUMNS: &str = "user_id, username, role, tier, active, api_access, created_at";

fn check_username(username: &str) -> Result<(), ApiError> {
    let ok = USERNAME_LEN.contains(&username.len())
        && username
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._@-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(ApiError::invalid(format!(
            "field 'username' must be {} to {} characters of letters, digits, '.', '_', '@' or '-'",
            USERNAME_LEN.start(),
            USERNAME_LEN.end()
        )))
    }
}

fn check_tier(tier: &str) -> Result<(), ApiError> {
    match tier {
        "free" | "pro" => Ok(()),
        _ => Err(ApiError::invalid("field 'tier' must be 'free' or 'pro'")),
    }
}

fn duplicate_or(error: tokio_postgres::Error, username: &str) -> ApiError {
    if error.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION) {
        ApiError::new(
            ErrorCode::Conflict,
            format!("the user name '{username}' is taken"),
        )
    } else {
        error.into()
    }
}

/// A set-up request checked and its password hashed, before any transaction: the
/// slow hash never holds a connection or a lock.
pub struct PreparedSetup {
    username: String,
    hash: String,
}

impl PreparedSetup {
    pub async fn prepare(credentials: UserPassword) -> Result<PreparedSetup, ApiError> {
        check_username(&credentials.username)?;
        let hash = password::hash_bounded(credentials.password).await?;
        Ok(PreparedSetup {
            username: credentials.username,
            hash,
        })
    }
}

/// Whether the first super administrator exists, that is whether the service is set up.
pub(crate) async fn super_admin_exists(client: &impl Traced) -> Result<bool, ApiError> {
    Ok(client
        .query_value_named(
            "users.super_admin_exists",
            "SELECT EXISTS (SELECT 1 FROM users WHERE role = 'super_admin')",
            &[],
        )
        .await?)
}

/// Creates the first super administrator, once (then 40901). Run it in a transaction.
pub async fn setup(tx: &impl Traced, request: PreparedSetup) -> Result<UserView, ApiError> {
    let PreparedSetup { username, hash } = request;
    // Two concurrent set-ups must not both see "no super administrator yet".
    tx.execute_named(
        "users.lock",
        "LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE",
        &[],
    )
    .await?;
    if super_admin_exists(tx).await? {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            "the service is already initialised",
        ));
    }
    let row = tx
        .query_one_named(
            "users.insert_super_admin",
            &format!(
                "INSERT INTO users (username, password_hash, role, tier) \
                 VALUES ($1, $2, 'super_admin', 'pro') RETURNING {USER_COLUMNS}"
            ),
            &[&username, &hash],
        )
        .await
        .map_err(|e| duplicate_or(e, &username))?;
    view(&row)
}

/// Checks a user name and password; the limit of D6 applies before any password work,
/// and no connection is held while the password is verified. Answers the account and
/// the password's hash as stored, which a sign-in ticket's MAC covers.
pub async fn login(
    pool: &deadpool_postgres::Pool,
    hasher: &KeyHasher,
    credentials: UserPassword,
    origin: &super::Origin,
    now: DateTime<Utc>,
) -> Result<(Account, String), ApiError> {
    let UserPassword { username, password } = credentials;
    // A sign-in says nothing of the rule for new names: any name up to the longest.
    if username.is_empty() || username.len() > *USERNAME_LEN.end() {
        return Err(ApiError::invalid(format!(
            "field 'username' must be 1 to {} characters",
            USERNAME_LEN.end()
        )));
    }
    if password.chars().count() > password::MAX_LEN {
        return Err(ApiError::invalid(format!(
            "field 'password' must have at most {} characters",
            password::MAX_LEN
        )));
    }
    let mut attempt = LoginAttempt::new(hasher, &username, origin.address, now);
    if super::device::trusted(hasher, &username, origin.device.as_deref(), now) {
        attempt = attempt.from_known_device();
    }
    let row = {
        let client = pool.get().await?;
        attempt.reserve(&**client).await?;
        client
            .query_opt_named(
                "users.find_login",
                "SELECT user_id, password_hash, role, active FROM users WHERE username = $1",
                &[&username],
            )
            .await?
    };
    let stored: Option<String> = row
        .as_ref()
        .map(|r| r.try_get("password_hash"))
        .transpose()?;
    let verified = password::verify_bounded(password, stored.clone()).await?;
    let (Some(row), Some(password_hash)) = (row.filter(|_| verified), stored) else {
        return Err(ApiError::new(
            ErrorCode::InvalidCredentials,
            "invalid user name or password",
        ));
    };
    attempt.release(&**pool.get().await?).await?;
    if !row.try_get::<_, bool>("active")? {
        return Err(ApiError::forbidden("this account is disabled"));
    }
    let role: String = row.try_get("role")?;
    let account = Account {
        user_id: row.try_get("user_id")?,
        username,
        role: parse_role(&role)?,
    };
    Ok((account, password_hash))
}

fn parse_role(text: &str) -> Result<Role, ApiError> {
    Role::parse(text).ok_or_else(|| ApiError::internal(format_args!("unknown role {text:?}")))
}

pub async fn create(client: &impl Traced, new: NewUser) -> Result<UserView, ApiError> {
    check_username(&new.username)?;
    let role = match new.role.as_deref() {
        None => Role::User,
        Some(text) => Role::parse(text).ok_or_else(|| {
            ApiError::invalid("field 'role' must be 'user', 'admin' or 'super_admin'")
        })?,
    };
    let tier = new.tier.unwrap_or_else(|| "free".into());
    check_tier(&tier)?;
    let hash = password::hash_bounded(new.password).await?;
    let row = client
        .query_one_named(
            "users.insert",
            &format!(
                "INSERT INTO users (username, password_hash, role, tier) VALUES ($1, $2, $3, $4) \
                 RETURNING {USER_COLUMNS}"
            ),
            &[&new.username, &hash, &role.as_str(), &tier],
        )
        .await
        .map_err(|e| duplicate_or(e, &new.username))?;
    view(&row)
}

pub async fn patch(client: &impl Traced, id: &str, patch: UserPatch) -> Result<UserView, ApiError> {
    if let Some(tier) = &patch.tier {
        check_tier(tier)?;
    }
    let role = match patch.role.as_deref() {
        None => None,
        Some(text) => Some(Role::parse(text).ok_or_else(|| {
            ApiError::invalid("field 'role' must be 'user', 'admin' or 'super_admin'")
        })?),
    };
    let not_found = || no_user(id);
    let user_id: i64 = id.parse().map_err(|_| not_found())?;
    let steps_down = role.is_some_and(|r| r != Role::SuperAdmin) || patch.active == Some(false);
    if steps_down {
        // Locks every super administrator's row, so two such changes made at once
        // cannot each leave the other as the last one.
        let others: i64 = client
            .query_value_named(
                "users.other_super_admins",
                "SELECT count(*) FROM (SELECT user_id FROM users \
                 WHERE role = 'super_admin' AND active FOR UPDATE) s WHERE s.user_id <> $1",
                &[&user_id],
            )
            .await?;
        let is_super: bool = client
            .query_opt_value_named(
                "users.is_super_admin",
                "SELECT role = 'super_admin' AND active AS is_super FROM users WHERE user_id = $1",
                &[&user_id],
            )
            .await?
            .unwrap_or(false);
        if is_super && others == 0 {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                "this is the last active super administrator: make another one first",
            ));
        }
    }
    let row = client
        .query_opt_named(
            "users.update",
            &format!(
                "UPDATE users SET tier = COALESCE($2, tier), active = COALESCE($3, active), \
                 api_access = COALESCE($4, api_access), role = COALESCE($5, role) \
                 WHERE user_id = $1 RETURNING {USER_COLUMNS}"
            ),
            &[
                &user_id,
                &patch.tier,
                &patch.active,
                &patch.api_access,
                &role.map(Role::as_str),
            ],
        )
        .await?
        .ok_or_else(not_found)?;
    view(&row)
}

fn no_user(id: &str) -> ApiError {
    ApiError::new(ErrorCode::NotFound, format!("no user with id '{id}'"))
}

/// Users whose name contains `q` (any letter case), by user name in code-point order
/// (upper case before lower case), with their key count and today's calls.
pub async fn list(
    client: &impl Traced,
    page: PageRequest,
    q: &SearchText,
    now: DateTime<Utc>,
) -> Result<Page<UserSummary>, ApiError> {
    let pattern = q.like_pattern();
    let total: i64 = client
        .query_value_named(
            "users.count",
            "SELECT count(*) FROM users \
             WHERE $1::text IS NULL OR username ILIKE $1 ESCAPE '\\'",
            &[&pattern],
        )
        .await?;
    let rows = client
        .query_named(
            "users.page",
            &format!(
                "SELECT {USER_COLUMNS}, \
                        (SELECT count(*) FROM api_keys k \
                         WHERE k.user_id = users.user_id AND k.deleted_at IS NULL) AS key_count, \
                        (SELECT q.used FROM quota_windows q \
                         WHERE q.key_id = 'acct:' || users.user_id AND q.span = 'day' \
                           AND q.window_start = $2) AS calls_today \
                 FROM users WHERE $1::text IS NULL OR username ILIKE $1 ESCAPE '\\' \
                 ORDER BY username COLLATE \"C\", user_id LIMIT $3 OFFSET $4"
            ),
            &[
                &pattern,
                &Window::Day.start(now),
                &page.limit(),
                &page.offset(),
            ],
        )
        .await?;
    page.page_of(&rows, total, |row| {
        Ok(UserSummary {
            user: view(row)?,
            key_count: row.try_get("key_count")?,
            calls_today: row.try_get::<_, Option<i64>>("calls_today")?.unwrap_or(0),
        })
    })
}

/// One user by id; an id that is not one is 404 like an unknown one.
pub async fn find(client: &impl Traced, id: &str) -> Result<UserView, ApiError> {
    let user_id: i64 = id.parse().map_err(|_| no_user(id))?;
    let row = client
        .query_opt_named(
            "users.find",
            &format!("SELECT {USER_COLUMNS} FROM users WHERE user_id = $1"),
            &[&user_id],
        )
        .await?
        .ok_or_else(|| no_user(id))?;
    view(&row)
}

fn view(row: &tokio_postgres::Row) -> Result<UserView, ApiError> {
    let role: String = row.try_get("role")?;
    Ok(UserView {
        account: Account {
            user_id: row.try_get("user_id")?,
            username: row.try_get("username")?,
            role: parse_role(&role)?,
        },
        tier: row.try_get("tier")?,
        active: row.try_get("active")?,
        api_access: row.try_get("api_access")?,
        created_at: row.try_get("created_at")?,
    })
}
