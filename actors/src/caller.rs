//! Who is calling and what they may see.
//!
//! Authentication turns [`Credentials`] into an [`Identity`]; everything downstream
//! (authorisation, quota, the dataset actor) decides from the identity's [`Grant`] alone,
//! so the visitor, the website session and the API key all take the same path. A
//! `Grant` says what the caller may see, never who the caller is: the dataset cache is
//! keyed by what a grant resolves to, so callers with equal rights share entries.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use crate::catalogue::Scope;

/// What the request presented. `Debug` never prints a secret.
#[derive(Clone, PartialEq, Eq)]
pub enum Credentials {
    /// No key header and no session cookie.
    Anonymous,
    /// The `X-API-Key` header, present (possibly empty or malformed).
    ApiKey(String),
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credentials::Anonymous => f.write_str("Anonymous"),
            Credentials::ApiKey(_) => f.write_str("ApiKey(<redacted>)"),
        }
    }
}

/// The authenticated caller, for logs, traces and the membership endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    Visitor,
}

impl Caller {
    /// `visitor`, `session` or `key`: the caller kind recorded in logs and traces.
    pub fn kind(&self) -> &'static str {
        match self {
            Caller::Visitor => "visitor",
        }
    }
}

/// How detail fields are shown (D4): website identities see `weighted_price` and quotes
/// only for `aggregate` (and `member`) indexes; API keys see every field they are scoped for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Audience {
    Website,
    ApiKey,
}

/// A tier's entitlements (spec part 8, D7), as stored in the `tiers` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tier {
    pub name: String,
    pub per_minute: i64,
    pub per_day: i64,
    pub max_rows: u32,
    /// `None`: unlimited.
    pub max_keys: Option<u32>,
    pub delay_days: u32,
    pub member_indexes: bool,
}

/// What a caller may see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub audience: Audience,
    /// Whether `member` indexes are covered (step 8).
    pub member_indexes: bool,
    /// A key's index range; `None` means every index the tier covers.
    pub index_range: Option<Arc<BTreeSet<String>>>,
    /// A key's scopes; `None` for website identities, which need none (D4).
    pub scopes: Option<Arc<BTreeSet<Scope>>>,
    /// Member delay in open trading days (D5).
    pub delay_days: u32,
    /// The tier's cap on rows per page.
    pub max_rows: u32,
}

/// An authenticated caller with its tier and grant.
#[derive(Debug, Clone)]
pub struct Identity {
    pub caller: Caller,
    pub tier: Arc<Tier>,
    pub grant: Grant,
}

impl Identity {
    /// A caller with no key and no session: a free user's website view (D4).
    pub fn visitor(free: Arc<Tier>) -> Identity {
        let grant = Grant {
            audience: Audience::Website,
            member_indexes: free.member_indexes,
            index_range: None,
            scopes: None,
            delay_days: free.delay_days,
            max_rows: free.max_rows,
        };
        Identity {
            caller: Caller::Visitor,
            tier: free,
            grant,
        }
    }
}
