//! Password hashing with argon2id at the OWASP parameters (19 MiB, 2 passes, 1 lane).
//!
//! Hashing is deliberately slow and takes 19 MiB, so it runs on the blocking pool and
//! at most one hash per core runs at a time ([`hash_bounded`], [`verify_bounded`]): a
//! flood of logins or set-ups queues here instead of taking gigabytes of memory. Callers
//! hold no database connection while they wait. A login for a user that does not exist
//! still verifies against a fixed dummy hash, so response time does not reveal whether
//! the user name exists. Nothing here logs a password.

use std::sync::OnceLock;

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use tokio::sync::Semaphore;

use crate::ApiError;

/// Shortest and longest accepted password, in characters.
pub const MIN_LEN: usize = 12;
pub const MAX_LEN: usize = 256;

fn argon2() -> Argon2<'static> {
    let params = Params::new(19 * 1024, 2, 1, None).expect("valid OWASP argon2 parameters");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// Hashes running at once in this process: one per core, each 19 MiB.
fn hashing_slots() -> &'static Semaphore {
    static SLOTS: OnceLock<Semaphore> = OnceLock::new();
    SLOTS
        .get_or_init(|| Semaphore::new(std::thread::available_parallelism().map_or(2, |n| n.get())))
}

/// Runs one argon2 computation on the blocking pool once a slot is free.
async fn bounded<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ApiError> {
    let _slot = hashing_slots()
        .acquire()
        .await
        .map_err(ApiError::internal)?;
    tokio::task::spawn_blocking(work)
        .await
        .map_err(ApiError::internal)
}

/// [`check_policy`], then [`hash`] within the process's hashing slots.
pub async fn hash_bounded(password: String) -> Result<String, ApiError> {
    check_policy(&password)?;
    bounded(move || hash(&password)).await?
}

/// [`verify`] within the process's hashing slots.
pub async fn verify_bounded(password: String, stored: Option<String>) -> Result<bool, ApiError> {
    bounded(move || verify(&password, stored.as_deref())).await
}

/// Checks the password policy for field `password`.
pub fn check_policy(password: &str) -> Result<(), ApiError> {
    check_policy_of("password", password)
}

/// Checks the password policy; the message names `field`, never the value.
pub fn check_policy_of(field: &str, password: &str) -> Result<(), ApiError> {
    let len = password.chars().count();
    if len < MIN_LEN {
        return Err(ApiError::invalid(format!(
            "field '{field}' must have at least {MIN_LEN} characters"
        )));
    }
    if len > MAX_LEN {
        return Err(ApiError::invalid(format!(
            "field '{field}' must have at most {MAX_LEN} characters"
        )));
    }
    Ok(())
}

/// The PHC string of `password` with a fresh random salt (CPU-heavy: run it blocking).
pub fn hash(password: &str) -> Result<String, ApiError> {
    let salt = SaltString::generate(&mut rand::rngs::OsRng);
    argon2()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| ApiError::internal(format_args!("password hashing: {e}")))
}

/// Whether `password` matches the stored PHC string; `None` verifies against a dummy
/// hash and answers false, taking the same time (CPU-heavy: run it blocking).
pub fn verify(password: &str, stored: Option<&str>) -> bool {
    static DUMMY: OnceLock<String> = OnceLock::new();
    let dummy = DUMMY.get_or_init(|| hash("no user has this password").unwrap_or_default());
    let phc = stored.unwrap_or(dummy);
    let Ok(parsed) = PasswordHash::new(phc) else {
        return false;
    };
    let ok = argon2()
        .verify_password(password.as_bytes(), &parsed)
        .is_ok();
    ok && stored.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_verify_and_are_argon2id() {
        let stored = hash("correct horse battery").unwrap();
        assert!(stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
        assert!(verify("correct horse battery", Some(&stored)));
        assert!(!verify("wrong horse battery", Some(&stored)));
        assert!(!verify("correct horse battery", None));
        assert_ne!(stored, hash("correct horse battery").unwrap());
    }

    #[test]
    fn policy_bounds_are_checked_by_characters() {
        assert!(check_policy("short").is_err());
        assert!(check_policy(&"é".repeat(MIN_LEN)).is_ok());
        assert!(check_policy(&"x".repeat(MAX_LEN + 1)).is_err());
    }
}
