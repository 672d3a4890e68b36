//! Standard Webhooks signatures (D22): each endpoint's secret (`whsec_` and the base64
//! of 32 bytes) and the `webhook-signature` of a message (`v1,` and the base64 of
//! HMAC-SHA256 over `id.timestamp.body` keyed with the secret's bytes), so receivers
//! verify with any Standard Webhooks library.
//!
//! An endpoint's secret is never stored: it is derived from a random salt kept with the
//! endpoint and the service's `KEY_SECRET`, so the database alone cannot sign. Nothing
//! here logs a secret; [`SigningSecret`]'s `Debug` prints none.

use std::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

/// Bytes of an endpoint's salt (the migration checks the length too).
pub const SALT_BYTES: usize = 24;

/// What derives endpoints' secrets: an HMAC keyed with the service's key secret.
#[derive(Clone)]
pub struct SecretKeeper {
    mac: Hmac<Sha256>,
}

/// An endpoint's signing secret.
#[derive(Clone, PartialEq, Eq)]
pub struct SigningSecret([u8; 32]);

impl fmt::Debug for SigningSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SigningSecret(<redacted>)")
    }
}

impl SecretKeeper {
    pub fn new(key_secret: &[u8]) -> Self {
        SecretKeeper {
            mac: Hmac::new_from_slice(key_secret).expect("HMAC accepts a key of any length"),
        }
    }

    /// A new endpoint's salt.
    pub fn new_salt() -> Vec<u8> {
        let mut salt = vec![0; SALT_BYTES];
        rand::rngs::OsRng.fill_bytes(&mut salt);
        salt
    }

    /// The secret of the endpoint with `salt`.
    pub fn secret(&self, salt: &[u8]) -> SigningSecret {
        let mut mac = self.mac.clone();
        mac.update(b"iq webhook secret v1\0");
        mac.update(salt);
        SigningSecret(mac.finalize().into_bytes().into())
    }
}

impl SigningSecret {
    /// `whsec_` and the base64 of its bytes: what the member is shown once.
    pub fn to_text(&self) -> String {
        format!("whsec_{}", STANDARD.encode(self.0))
    }

    /// The `webhook-signature` header of `body` sent as message `id` at `timestamp`.
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        signature(&self.0, id, timestamp, body)
    }
}

fn signature(key: &[u8], id: &str, timestamp: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC accepts a key of any length");
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the Standard Webhooks specification.
    #[test]
    fn signs_the_specification_example() {
        let key = STANDARD.decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let signed = signature(
            &key,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            br#"{"test": 2432232314}"#,
        );
        assert_eq!(signed, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn secrets_depend_on_salt_and_key_and_read_back() {
        let keeper = SecretKeeper::new(b"one key secret of thirty-two bytes!!");
        let (a, b) = (SecretKeeper::new_salt(), SecretKeeper::new_salt());
        assert_ne!(keeper.secret(&a), keeper.secret(&b));
        assert_ne!(
            keeper.secret(&a),
            SecretKeeper::new(b"another key secret, also long enough").secret(&a)
        );
        let secret = keeper.secret(&a);
        assert!(secret.to_text().starts_with("whsec_"));
        assert_eq!(format!("{secret:?}"), "SigningSecret(<redacted>)");
    }
}
