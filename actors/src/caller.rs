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
    /// The session cookie, and no key header.
    Session(String),
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credentials::Anonymous => f.write_str("Anonymous"),
            Credentials::ApiKey(_) => f.write_str("ApiKey(<redacted>)"),
            Credentials::Session(_) => f.write_str("Session(<redacted>)"),
        }
    }
}

/// A back-office role, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(
    feature = "openapi",
    derive(utoipa::ToSchema),
    schema(rename_all = "snake_case")
)]
pub enum Role {
    User,
    Admin,
    SuperAdmin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Admin => "admin",
            Role::SuperAdmin => "super_admin",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        [Role::User, Role::Admin, Role::SuperAdmin]
            .into_iter()
            .find(|r| r.as_str() == text)
    }
}

impl serde::Serialize for Role {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A signed-in account.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Account {
    /// opaque
    #[serde(rename = "id", serialize_with = "as_string")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub user_id: i64,
    pub username: String,
    pub role: Role,
}

fn as_string<S: serde::Serializer>(id: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(id)
}

/// The authenticated caller, for logs, traces and the membership endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    Visitor,
    Session(Account),
    /// An API key, with the limits step 7 charges it against (D6), and what the
    /// membership of a key shows of it (D14).
    Key {
        key_id: Arc<str>,
        name: String,
        owner: Account,
        expires_at: Option<chrono::DateTime<chrono::Utc>>,
        limits: Limits,
    },
}

impl Caller {
    /// `visitor`, `session` or `key`: the caller kind recorded in logs and traces.
    pub fn kind(&self) -> &'static str {
        match self {
            Caller::Visitor => "visitor",
            Caller::Session(_) => "session",
            Caller::Key { .. } => "key",
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
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Tier {
    /// `free` or `pro`
    #[serde(rename = "tier")]
    pub name: String,
    /// a key's calls a UTC minute
    pub per_minute: i64,
    /// a key's calls a UTC day
    pub per_day: i64,
    /// the most rows a page may hold
    pub max_rows: u32,
    /// keys an account may hold; null: unlimited
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub max_keys: Option<u32>,
    /// open trading days of delay
    pub delay_days: u32,
    /// webhook endpoints an account may hold
    pub max_webhooks: u32,
    /// whether `member` indexes are included
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

impl Grant {
    /// The tier's coverage, delay and row cap, narrowed by a key's scopes and range.
    fn of_tier(
        tier: &Tier,
        audience: Audience,
        scopes: Option<Arc<BTreeSet<Scope>>>,
        index_range: Option<Arc<BTreeSet<String>>>,
    ) -> Grant {
        Grant {
            audience,
            member_indexes: tier.member_indexes,
            index_range,
            scopes,
            delay_days: tier.delay_days,
            max_rows: tier.max_rows,
        }
    }
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
        Identity::website(Caller::Visitor, free)
    }

    /// A website identity (session or visitor): the tier's indexes and delay, never
    /// `private`, detail only for `aggregate` indexes, no scopes needed (D4).
    pub fn website(caller: Caller, tier: Arc<Tier>) -> Identity {
        let grant = Grant::of_tier(&tier, Audience::Website, None, None);
        Identity {
            caller,
            tier,
            grant,
        }
    }

    /// An API key's identity: its scopes and index range, its owner's tier (D4).
    pub fn key(
        caller: Caller,
        tier: Arc<Tier>,
        scopes: Arc<BTreeSet<Scope>>,
        index_range: Option<Arc<BTreeSet<String>>>,
    ) -> Identity {
        let grant = Grant::of_tier(&tier, Audience::ApiKey, Some(scopes), index_range);
        Identity {
            caller,
            tier,
            grant,
        }
    }
}

/// Limits per window of one quota subject: a key's effective limits (the smaller of the
/// key's own and its owner's tier's, D6) or an account's caps (D11). Part of the
/// caller's vocabulary, which the quota reads (`quota::Window` reads it per window).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub per_minute: i64,
    pub per_day: i64,
}

impl Limits {
    pub fn effective(key_minute: Option<i64>, key_day: Option<i64>, tier: &Tier) -> Limits {
        let narrow = |own: Option<i64>, tier: i64| own.map_or(tier, |own| own.min(tier)).max(0);
        Limits {
            per_minute: narrow(key_minute, tier.per_minute),
            per_day: narrow(key_day, tier.per_day),
        }
    }
}
