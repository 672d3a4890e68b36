//! The first start's set-up link (D23): while no super administrator exists, each start
//! issues a one-time link (`/setup?token=...`) that the operator opens to create one.
//! Only the token's SHA-256 digest is stored; a link works for a day, and creating the
//! super administrator (by the link or by `POST /api/v1/setup`) voids every link.
//! Nothing here logs a token.

use chrono::{DateTime, Utc};

use super::token::{self, Token};
use super::users::super_admin_exists;
use crate::db::Traced;
use crate::ApiError;

/// The longest token looked up.
const MAX_TOKEN_LEN: usize = 64;

/// A new link's token while the service is not set up; `None` once it is. Several
/// instances starting at once each issue their own: any of them works, once.
pub async fn issue(client: &impl Traced, now: DateTime<Utc>) -> Result<Option<Token>, ApiError> {
    if super_admin_exists(client).await? {
        return Ok(None);
    }
    let token = Token::generate();
    client
        .execute_named(
            "setup_tokens.insert",
            "INSERT INTO setup_tokens (token_hash, created_at) VALUES ($1, $2)",
            &[&token.digest().as_slice(), &now],
        )
        .await?;
    Ok(Some(token))
}

/// Whether `presented` is a live link's token: issued within the last day (a start
/// prints a new one).
pub async fn holds(client: &impl Traced, presented: &str) -> Result<bool, ApiError> {
    if presented.is_empty() || presented.len() > MAX_TOKEN_LEN {
        return Ok(false);
    }
    Ok(client
        .query_value_named(
            "setup_tokens.find",
            "SELECT EXISTS (SELECT 1 FROM setup_tokens \
                            WHERE token_hash = $1 AND created_at > now() - interval '1 day')",
            &[&token::digest(presented).as_slice()],
        )
        .await?)
}

/// Voids every link: the service is set up.
pub async fn void(client: &impl Traced) -> Result<(), ApiError> {
    client
        .execute_named("setup_tokens.void", "DELETE FROM setup_tokens", &[])
        .await?;
    Ok(())
}

/// What a dead link answers.
pub fn dead() -> ApiError {
    ApiError::invalid(
        "this set-up link does not work: the service is set up already, or the link was \
         never issued; the service prints a new one at each start until it is set up",
    )
}
