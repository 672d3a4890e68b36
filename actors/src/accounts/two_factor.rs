//! Two-factor sign-in (D23): TOTP (RFC 6238: HMAC-SHA-1, 6 digits, 30-second steps,
//! one step of clock skew either way) through the maintained `totp-rs`, and ten one-time
//! recovery codes. Optional for everyone; `STAFF_TWO_FACTOR` makes it required for
//! administrators, whom the back office refuses until they have set it up.
//!
//! The secret is never stored: it is HMAC(KEY_SECRET, "totp:" + salt), and the database
//! keeps the salt. A code is accepted once (the step of the last one is kept, and only
//! a later step passes); a recovery code once. A wrong code counts toward the login
//! limits like a wrong password (signing in with it is `sign_in.rs`). Nothing here logs
//! a secret or a code.

use chrono::{DateTime, Utc};
use rand::distributions::{Alphanumeric, DistString};
use rand::RngCore;
use serde::Serialize;
use subtle::ConstantTimeEq;
use totp_rs::{Algorithm, TOTP};

use super::api_key::KeyHasher;
use super::{sessions, token, Accounts};
use crate::audit::{Action, Author, Entry, Kind, Target};
use crate::caller::{Account, Role};
use crate::changes::Change;
use crate::db::Traced;
use crate::{ApiError, ErrorCode};

/// Seconds a code lasts.
pub const STEP: u64 = 30;
/// Digits of a code.
pub const DIGITS: usize = 6;
/// Recovery codes issued at once.
pub const RECOVERY_CODES: usize = 10;
/// Characters of a recovery code (about 95 random bits).
const RECOVERY_LEN: usize = 16;
/// The name authenticator apps show beside the account.
const ISSUER: &str = "AI Hardware Price Index";

/// What an authenticator app needs to add the account: the secret in base32 (typed by
/// hand) and the `otpauth://` URI (opened or scanned).
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Enrolment {
    pub secret: String,
    pub otpauth_uri: String,
}

impl std::fmt::Debug for Enrolment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Enrolment(<redacted>)")
    }
}

/// The account's second factor as its page shows it.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TwoFactorStatus {
    pub enabled: bool,
    pub enabled_at: Option<DateTime<Utc>>,
    /// recovery codes not used yet
    #[cfg_attr(feature = "openapi", schema(format = Int64))]
    pub recovery_codes_left: i64,
}

/// The TOTP generator of a secret derived from `salt`.
pub(super) fn generator(hasher: &KeyHasher, salt: &[u8], username: &str) -> Result<TOTP, ApiError> {
    let salt_hex: String = salt.iter().map(|b| format!("{b:02x}")).collect();
    let secret = hasher.hash(&format!("totp:{salt_hex}"))[..20].to_vec();
    TOTP::new(
        Algorithm::SHA1,
        DIGITS,
        1,
        STEP,
        secret,
        Some(ISSUER.to_owned()),
        username.to_owned(),
    )
    .map_err(ApiError::internal)
}

/// A new random salt for a secret.
pub(super) fn new_salt() -> Vec<u8> {
    let mut salt = vec![0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut salt);
    salt
}

pub(super) fn enrolment(totp: &TOTP) -> Enrolment {
    Enrolment {
        secret: totp.get_secret_base32(),
        otpauth_uri: totp.get_url(),
    }
}

/// The time step `code` belongs to, when it is the code of a step after `last_step`
/// within one step of `now` (compared in constant time); `None` otherwise.
pub(super) fn accepted_step(
    totp: &TOTP,
    code: &str,
    now: DateTime<Utc>,
    last_step: Option<i64>,
) -> Option<i64> {
    let code = code.trim();
    if code.len() != DIGITS || !code.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let current = u64::try_from(now.timestamp()).ok()? / STEP;
    let mut found = None;
    for step in [current.saturating_sub(1), current, current + 1] {
        let expected = totp.generate(step * STEP);
        let later = last_step.is_none_or(|last| i64::try_from(step).is_ok_and(|s| s > last));
        if bool::from(expected.as_bytes().ct_eq(code.as_bytes())) && later {
            found = i64::try_from(step).ok();
        }
    }
    found
}

/// Whether `code` looks like a recovery code rather than a TOTP code.
pub(super) fn is_recovery_code(code: &str) -> bool {
    let code: String = code.chars().filter(|c| *c != '-' && *c != ' ').collect();
    code.len() == RECOVERY_LEN && code.chars().all(|c| c.is_ascii_alphanumeric())
}

/// Ten new recovery codes for `user_id`, replacing any earlier ones; the codes, shown
/// once (`xxxx-xxxx-xxxx-xxxx`).
pub(super) async fn issue_recovery_codes(
    client: &impl Traced,
    user_id: i64,
) -> Result<Vec<String>, ApiError> {
    client
        .execute_named(
            "recovery_codes.clear",
            "DELETE FROM recovery_codes WHERE user_id = $1",
            &[&user_id],
        )
        .await?;
    let mut shown = Vec::with_capacity(RECOVERY_CODES);
    for _ in 0..RECOVERY_CODES {
        let raw = Alphanumeric.sample_string(&mut rand::rngs::OsRng, RECOVERY_LEN);
        client
            .execute_named(
                "recovery_codes.insert",
                "INSERT INTO recovery_codes (user_id, code_hash) VALUES ($1, $2)",
                &[&user_id, &token::digest(&raw).as_slice()],
            )
            .await?;
        let grouped: Vec<String> = raw
            .as_bytes()
            .chunks(4)
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect();
        shown.push(grouped.join("-"));
    }
    Ok(shown)
}

/// Uses up the recovery code `code` of `user_id`; whether it was one not used yet.
pub(super) async fn use_recovery_code(
    client: &impl Traced,
    user_id: i64,
    code: &str,
    now: DateTime<Utc>,
) -> Result<bool, ApiError> {
    let raw: String = code.chars().filter(|c| *c != '-' && *c != ' ').collect();
    let used = client
        .execute_named(
            "recovery_codes.use",
            "UPDATE recovery_codes SET used_at = $3 \
             WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL",
            &[&user_id, &token::digest(&raw).as_slice(), &now],
        )
        .await?;
    Ok(used == 1)
}

/// The second factor of `account`: its salt and last accepted step, when enabled.
pub(super) async fn factor_of(
    client: &impl Traced,
    account: &Account,
) -> Result<Option<(Vec<u8>, Option<i64>)>, ApiError> {
    let row = client
        .query_one_named(
            "users.totp",
            "SELECT totp_salt, totp_last_step FROM users WHERE user_id = $1",
            &[&account.user_id],
        )
        .await?;
    let salt: Option<Vec<u8>> = row.try_get("totp_salt")?;
    Ok(salt.map(|s| (s, row.try_get("totp_last_step").unwrap_or(None))))
}

/// The salt of `user_id`'s set-up waiting for its first code, if any; `lock` takes the
/// row for the transaction that confirms it, so two confirmations cannot both pass.
async fn pending_salt(
    client: &impl Traced,
    user_id: i64,
    lock: bool,
) -> Result<Option<Vec<u8>>, ApiError> {
    let (name, statement) = if lock {
        (
            "users.totp_pending_lock",
            "SELECT totp_pending_salt FROM users WHERE user_id = $1 FOR UPDATE",
        )
    } else {
        (
            "users.totp_pending",
            "SELECT totp_pending_salt FROM users WHERE user_id = $1",
        )
    };
    Ok(client
        .query_value_named(name, statement, &[&user_id])
        .await?)
}

/// The code an authenticator app holding `secret` (base32, as the set-up page shows it)
/// shows at `at`: what the tests type.
#[cfg(feature = "test-support")]
pub fn code_for(secret: &str, at: DateTime<Utc>) -> String {
    let bytes = totp_rs::Secret::Encoded(secret.to_owned())
        .to_bytes()
        .expect("a base32 secret");
    let totp = TOTP::new_unchecked(Algorithm::SHA1, DIGITS, 1, STEP, bytes, None, String::new());
    totp.generate(u64::try_from(at.timestamp()).unwrap_or_default())
}

/// What turning the second factor on takes: the password (a stolen session alone must
/// not do it), the authenticator's first code, and where the request came from (the
/// password check counts toward the login limits).
pub struct TwoFactorProof {
    pub password: String,
    pub code: String,
    pub ip: Option<std::net::IpAddr>,
}

impl Accounts {
    /// Whether the account has a second factor, and how many recovery codes are left.
    pub async fn two_factor_status(&self, owner: &Account) -> Result<TwoFactorStatus, ApiError> {
        let client = self.pool.get().await?;
        let row = client
            .query_one_named(
                "users.totp_status",
                "SELECT totp_enabled_at, \
                        (SELECT count(*) FROM recovery_codes r \
                         WHERE r.user_id = u.user_id AND r.used_at IS NULL) AS left \
                 FROM users u WHERE user_id = $1",
                &[&owner.user_id],
            )
            .await?;
        let enabled_at: Option<DateTime<Utc>> = row.try_get("totp_enabled_at")?;
        Ok(TwoFactorStatus {
            enabled: enabled_at.is_some(),
            enabled_at,
            recovery_codes_left: row.try_get("left")?,
        })
    }

    /// Starts (or restarts) setting up a second factor: a new secret waiting for its
    /// first code. An enabled factor stays in force until the new one is confirmed.
    pub async fn start_two_factor(&self, owner: &Account) -> Result<Enrolment, ApiError> {
        let salt = new_salt();
        let client = self.pool.get().await?;
        client
            .execute_named(
                "users.totp_start",
                "UPDATE users SET totp_pending_salt = $2 WHERE user_id = $1",
                &[&owner.user_id, &salt],
            )
            .await?;
        Ok(enrolment(&generator(&self.hasher, &salt, &owner.username)?))
    }

    /// The set-up waiting for its first code, if any (to show it again).
    pub async fn pending_two_factor(&self, owner: &Account) -> Result<Option<Enrolment>, ApiError> {
        let client = self.pool.get().await?;
        let salt = pending_salt(&**client, owner.user_id, false).await?;
        salt.map(|salt| Ok(enrolment(&generator(&self.hasher, &salt, &owner.username)?)))
            .transpose()
    }

    /// Confirms the waiting set-up with its first code: the factor is in force from now
    /// on; answers ten new recovery codes, shown once. A wrong code is 400 / 40001.
    pub async fn confirm_two_factor(
        &self,
        by: &Author,
        session_number: i64,
        proof: TwoFactorProof,
    ) -> Result<Vec<String>, ApiError> {
        let owner = by.owner()?.clone();
        // A stolen session must not be able to tie the account to its thief's phone.
        self.prove_password(&owner, proof.password, proof.ip)
            .await?;
        let code = proof.code.as_str();
        let now = self.clock.now();
        self.write(Change::Auth, async |tx| {
            let salt = pending_salt(tx, owner.user_id, true)
                .await?
                .ok_or_else(|| ApiError::invalid("start setting up two-factor sign-in first"))?;
            let totp = generator(&self.hasher, &salt, &owner.username)?;
            let step = accepted_step(&totp, code, now, None).ok_or_else(|| {
                ApiError::invalid("field 'code' is not the authenticator's current code")
            })?;
            tx.execute_named(
                "users.totp_enable",
                "UPDATE users SET totp_salt = totp_pending_salt, totp_pending_salt = NULL, \
                 totp_enabled_at = $2, totp_last_step = $3 WHERE user_id = $1",
                &[&owner.user_id, &now, &step],
            )
            .await?;
            let codes = issue_recovery_codes(tx, owner.user_id).await?;
            // This session proved the factor; every other one has not, and ends.
            tx.execute_named(
                "sessions.second_factor",
                "UPDATE sessions SET second_factor = true WHERE user_id = $1 AND session_no = $2",
                &[&owner.user_id, &session_number],
            )
            .await?;
            sessions::end_all_but(tx, owner.user_id, Some(session_number)).await?;
            let entry = Entry::new(
                Action::TwoFactorEnabled,
                Target::new(Kind::User, owner.user_id),
            );
            by.record(tx, entry).await?;
            Ok(codes)
        })
        .await
    }

    /// Turns the second factor off, proven by the current password (400 / 40001 naming
    /// `current_password` otherwise); refused (409 / 40901) for staff while
    /// `STAFF_TWO_FACTOR` requires it.
    pub async fn disable_two_factor(
        &self,
        by: &Author,
        password: String,
        ip: Option<std::net::IpAddr>,
    ) -> Result<(), ApiError> {
        let owner = by.owner()?.clone();
        if self.policy.staff_two_factor && owner.role >= Role::Admin {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                "administrators must keep two-factor sign-in (STAFF_TWO_FACTOR)",
            ));
        }
        self.prove_password(&owner, password, ip).await?;
        self.write(Change::Auth, async |tx| {
            tx.execute_named(
                "users.totp_disable",
                "UPDATE users SET totp_salt = NULL, totp_pending_salt = NULL, \
                 totp_enabled_at = NULL, totp_last_step = NULL WHERE user_id = $1",
                &[&owner.user_id],
            )
            .await?;
            tx.execute_named(
                "recovery_codes.clear",
                "DELETE FROM recovery_codes WHERE user_id = $1",
                &[&owner.user_id],
            )
            .await?;
            let entry = Entry::new(
                Action::TwoFactorDisabled,
                Target::new(Kind::User, owner.user_id),
            );
            by.record(tx, entry).await
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    /// RFC 6238, appendix B: the SHA-1 seed and eight-digit codes at the listed times.
    #[test]
    fn the_rfc_6238_test_vectors_hold() {
        let seed = b"12345678901234567890".to_vec();
        let totp = TOTP::new_unchecked(Algorithm::SHA1, 8, 1, 30, seed, None, String::new());
        for (time, code) in [
            (59, "94287082"),
            (1_111_111_109, "07081804"),
            (1_111_111_111, "14050471"),
            (1_234_567_890, "89005924"),
            (2_000_000_000, "69279037"),
            (20_000_000_000, "65353130"),
        ] {
            assert_eq!(totp.generate(time), code, "at {time}");
        }
    }

    #[test]
    fn a_code_passes_within_a_step_and_only_after_the_last_one_used() {
        let hasher = KeyHasher::new(b"a secret of at least thirty-two bytes!!");
        let totp = generator(&hasher, &[7; 16], "pat").unwrap();
        let now = Utc.with_ymd_and_hms(2026, 11, 28, 12, 0, 10).unwrap();
        let step = now.timestamp() / 30;
        let code = totp.generate(u64::try_from(now.timestamp()).unwrap());
        assert_eq!(accepted_step(&totp, &code, now, None), Some(step));
        // Thirty seconds later it still passes (clock skew), two minutes later not.
        let later = now + chrono::TimeDelta::seconds(30);
        assert_eq!(accepted_step(&totp, &code, later, None), Some(step));
        let much_later = now + chrono::TimeDelta::minutes(2);
        assert_eq!(accepted_step(&totp, &code, much_later, None), None);
        // Once used, never again.
        assert_eq!(accepted_step(&totp, &code, now, Some(step)), None);
        assert_eq!(accepted_step(&totp, "12345", now, None), None);
        assert_eq!(accepted_step(&totp, "abcdef", now, None), None);
        // The URI names the issuer and the account; the secret is 160 bits.
        let enrolment = enrolment(&totp);
        assert!(enrolment.otpauth_uri.starts_with("otpauth://totp/"));
        assert!(enrolment.otpauth_uri.contains("pat"));
        assert_eq!(enrolment.secret.len(), 32);
    }

    #[test]
    fn recovery_codes_are_told_from_totp_codes() {
        assert!(is_recovery_code("abcd-EFGH-1234-wxyz"));
        assert!(!is_recovery_code("123456"));
        assert!(!is_recovery_code("abcd-EFGH-1234"));
    }
}
