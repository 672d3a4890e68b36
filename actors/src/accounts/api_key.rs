//! The API key format (D3) and the keyed hash that is all the database ever holds.
//!
//! A key is `iq_` + 34 random base62 characters + a 6-character base62 checksum of
//! those 34. A mistyped key fails the checksum and is refused without a database
//! look-up. The server stores `HMAC-SHA-256(KEY_SECRET, key)`: a copy of the database
//! alone cannot be turned back into working keys. Nothing here may log a key.

use std::fmt;

use hmac::{Hmac, Mac};
use rand::distributions::{Alphanumeric, DistString};
use sha2::{Digest, Sha256};

const PREFIX: &str = "iq_";
const BODY_LEN: usize = 34;
const CHECKSUM_LEN: usize = 6;
/// Length of a whole key: `iq_` + 40 base62 characters.
pub const KEY_LEN: usize = PREFIX.len() + BODY_LEN + CHECKSUM_LEN;
/// How many leading characters of a key are kept to tell keys apart in listings.
const HINT_LEN: usize = PREFIX.len() + 6;

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A freshly generated key: the full text (shown once) and its display hint.
pub struct GeneratedKey {
    pub text: String,
    pub hint: String,
}

impl fmt::Debug for GeneratedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GeneratedKey({}…)", self.hint)
    }
}

/// Generates a key from the operating system's CSPRNG (about 202 random bits).
pub fn generate() -> GeneratedKey {
    let body = Alphanumeric.sample_string(&mut rand::rngs::OsRng, BODY_LEN);
    let text = format!("{PREFIX}{body}{}", checksum(&body));
    GeneratedKey {
        hint: text[..HINT_LEN].to_string(),
        text,
    }
}

/// Whether `text` has the shape of a key and a matching checksum (step 1, no database).
pub fn is_well_formed(text: &str) -> bool {
    has_key_shape(text) && checksum_matches(text)
}

/// Whether `text` is `iq_` and 40 base62 characters: the part of step 1 that costs
/// nothing. The checksum is a hash of its own ([`checksum_matches`]).
pub fn has_key_shape(text: &str) -> bool {
    text.strip_prefix(PREFIX).is_some_and(|rest| {
        rest.len() == BODY_LEN + CHECKSUM_LEN && rest.bytes().all(|b| b.is_ascii_alphanumeric())
    })
}

/// Whether a text of [`has_key_shape`] ends in the checksum of its body.
pub fn checksum_matches(text: &str) -> bool {
    let Some((body, sum)) = text
        .strip_prefix(PREFIX)
        .filter(|rest| rest.len() == BODY_LEN + CHECKSUM_LEN && rest.is_ascii())
        .map(|rest| rest.split_at(BODY_LEN))
    else {
        return false;
    };
    // Not secret: the checksum only catches typing mistakes.
    checksum(body) == sum
}

fn checksum(body: &str) -> String {
    let digest = Sha256::digest(body.as_bytes());
    let mut n = u64::from(u32::from_be_bytes([
        digest[0], digest[1], digest[2], digest[3],
    ]));
    let mut out = [b'0'; CHECKSUM_LEN];
    for slot in out.iter_mut().rev() {
        *slot = BASE62[(n % 62) as usize];
        n /= 62;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// HMAC-SHA-256 with the server secret. `Debug` never prints the secret.
#[derive(Clone)]
pub struct KeyHasher {
    mac: Hmac<Sha256>,
}

impl fmt::Debug for KeyHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeyHasher(<secret>)")
    }
}

/// The stored form of a key.
pub type KeyHash = [u8; 32];

impl KeyHasher {
    pub fn new(secret: &[u8]) -> Self {
        KeyHasher {
            mac: Hmac::new_from_slice(secret).expect("HMAC accepts a key of any length"),
        }
    }

    pub fn hash(&self, key: &str) -> KeyHash {
        let mut mac = self.mac.clone();
        mac.update(key.as_bytes());
        mac.finalize().into_bytes().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_are_well_formed_and_distinct() {
        let a = generate();
        let b = generate();
        assert_eq!(a.text.len(), KEY_LEN);
        assert_eq!(KEY_LEN, 43);
        assert!(is_well_formed(&a.text));
        assert_ne!(a.text, b.text);
        assert!(a.text.starts_with(&a.hint));
        assert!(!format!("{a:?}").contains(&a.text));
    }

    #[test]
    fn a_typo_fails_the_checksum() {
        let key = generate().text;
        let mut typo = key.clone().into_bytes();
        let i = 10;
        typo[i] = if typo[i] == b'a' { b'b' } else { b'a' };
        let typo = String::from_utf8(typo).unwrap();
        assert!(!is_well_formed(&typo));
        assert!(has_key_shape(&typo) && !checksum_matches(&typo));
        assert!(!is_well_formed(""));
        assert!(!is_well_formed(&key[..KEY_LEN - 1]));
        assert!(!is_well_formed(&key.replacen("iq_", "xx_", 1)));
        assert!(!is_well_formed(&format!("{key}0")));
    }

    #[test]
    fn the_hash_depends_on_the_secret() {
        let key = generate().text;
        let one = KeyHasher::new(b"secret one");
        let two = KeyHasher::new(b"secret two");
        assert_eq!(one.hash(&key), one.hash(&key));
        assert_ne!(one.hash(&key), two.hash(&key));
    }
}
