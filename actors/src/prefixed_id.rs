//! Opaque ids made of a prefix and a number (`evt_42`, `wh_3`, `dlv_7`): one way to
//! print, serialise and parse them. Parsing never panics on any text.

/// Declares `$name(pub i64)`, shown and serialised as `$prefix` and the number, and
/// read back by `$name::parse` (`None` for anything else).
macro_rules! prefixed_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub i64);

        impl $name {
            /// The prefix and a whole number of at most 19 digits; `None` otherwise.
            pub fn parse(text: &str) -> Option<$name> {
                let digits = text.strip_prefix($prefix)?;
                if digits.is_empty()
                    || digits.len() > 19
                    || !digits.bytes().all(|b| b.is_ascii_digit())
                {
                    return None;
                }
                digits.parse().ok().map($name)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
    };
}

pub(crate) use prefixed_id;
