//! Session ids and CSRF tokens: 128 random bits or more, stored only as SHA-256.
//!
//! These are high-entropy random strings, so a plain digest suffices (no salt, no
//! secret): the database never holds a value that would open a session. Comparisons of
//! presented tokens go through digests and constant-time equality. Nothing here logs a
//! token.

use std::fmt;

use rand::distributions::{Alphanumeric, DistString};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// 22 base62 characters: about 131 random bits.
const TOKEN_LEN: usize = 22;

/// A secret token as handed to the client. `Debug` never prints it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl Token {
    pub fn generate() -> Token {
        Token(Alphanumeric.sample_string(&mut rand::rngs::OsRng, TOKEN_LEN))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn digest(&self) -> [u8; 32] {
        digest(&self.0)
    }
}

pub fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Whether the presented token's digest equals the stored one, in constant time.
pub fn matches(presented: &str, stored: &[u8]) -> bool {
    digest(presented).ct_eq(stored).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_match_only_their_digest() {
        let a = Token::generate();
        let b = Token::generate();
        assert_ne!(a, b);
        assert_eq!(a.expose().len(), TOKEN_LEN);
        assert!(matches(a.expose(), &a.digest()));
        assert!(!matches(b.expose(), &a.digest()));
        assert!(!matches("", &a.digest()));
        assert!(!format!("{a:?}").contains(a.expose()));
    }
}
