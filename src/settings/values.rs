//! The kinds of value a setting holds, each with how clap reads it: durations in the
//! unit their variable names, secrets that never print, address lists.
//!
//! A parser here must never put a secret's value into its error: clap prints errors,
//! and they end up in start-up logs.

use std::ffi::OsStr;
use std::fmt;
use std::ops::RangeBounds;
use std::str::FromStr;
use std::time::Duration;

use clap::builder::TypedValueParser;
use clap::error::ErrorKind;
use ipnet::IpNet;

/// A duration newtype written in one whole unit: parsed and printed in it (`--help`
/// shows defaults in the unit the variable names), `Debug` with the unit's suffix.
macro_rules! duration_in {
    ($(#[$doc:meta])* $name:ident, $whole:ident, $suffix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Default)]
        pub struct $name(pub Duration);

        impl From<Duration> for $name {
            fn from(duration: Duration) -> $name {
                $name(duration)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0.$whole())
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}{}", self.0.$whole(), $suffix)
            }
        }
    };
}

duration_in!(
    /// A duration written in whole milliseconds (`..._MS` variables).
    Millis, as_millis, "ms"
);
duration_in!(
    /// A duration written in whole seconds (`..._SECS` variables).
    Seconds, as_secs, "s"
);

/// Milliseconds within `range`.
pub fn millis(range: impl RangeBounds<u64> + 'static) -> impl TypedValueParser<Value = Millis> {
    clap::value_parser!(u64)
        .range(range)
        .map(|ms| Millis(Duration::from_millis(ms)))
}

/// Seconds within `range`.
pub fn seconds(range: impl RangeBounds<u64> + 'static) -> impl TypedValueParser<Value = Seconds> {
    clap::value_parser!(u64)
        .range(range)
        .map(|s| Seconds(Duration::from_secs(s)))
}

/// A value that must never be printed: `Debug` shows `<redacted>`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl FromStr for Secret {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<Secret, Self::Err> {
        Ok(Secret(text.to_owned()))
    }
}

/// The server secret keys are hashed with (`KEY_SECRET`). `Debug` never prints it.
#[derive(Clone)]
pub struct KeySecret(Vec<u8>);

impl KeySecret {
    /// Shortest accepted secret, in bytes.
    pub const MIN_LEN: usize = 32;

    pub fn new(bytes: Vec<u8>) -> Result<KeySecret, String> {
        if bytes.len() < Self::MIN_LEN {
            return Err(format!(
                "must be at least {} characters long",
                Self::MIN_LEN
            ));
        }
        Ok(KeySecret(bytes))
    }

    pub fn expose(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for KeySecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeySecret(<redacted>)")
    }
}

/// Reads a [`KeySecret`]; a refusal names the setting and the rule, never the value.
#[derive(Clone, Copy)]
pub struct KeySecretParser;

impl TypedValueParser for KeySecretParser {
    type Value = KeySecret;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<KeySecret, clap::Error> {
        let bytes = value.as_encoded_bytes().to_vec();
        KeySecret::new(bytes).map_err(|problem| {
            let name = arg
                .and_then(|a| a.get_env())
                .map_or("KEY_SECRET".into(), |e| e.to_string_lossy().into_owned());
            clap::Error::raw(ErrorKind::ValueValidation, format!("{name}: {problem}\n"))
                .with_cmd(cmd)
        })
    }
}

/// One entry of `TRUSTED_PROXIES`: a CIDR range, or one address.
pub fn proxy(text: &str) -> Result<IpNet, String> {
    let text = text.trim();
    text.parse::<IpNet>()
        .or_else(|_| text.parse::<std::net::IpAddr>().map(IpNet::from))
        .map_err(|_| format!("{text:?} is not an IP address or CIDR range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxies_are_ranges_or_single_addresses() {
        assert_eq!(proxy("10.0.0.0/8").unwrap().to_string(), "10.0.0.0/8");
        assert_eq!(proxy(" 127.0.0.1 ").unwrap().to_string(), "127.0.0.1/32");
        assert!(proxy("example.org").is_err());
    }

    #[test]
    fn secrets_never_print() {
        let secret = Secret::new("postgres://iq:hunter2@db/iq");
        assert_eq!(format!("{secret:?}"), "<redacted>");
        let key = KeySecret::new(vec![b'k'; 40]).unwrap();
        assert!(!format!("{key:?}").contains('k'));
    }
}
