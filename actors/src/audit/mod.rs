//! The audit trail (D23): who changed what in the back office, when, what it was before
//! and after, and the `request_id` of the request that did it.
//!
//! A change records itself: the service method that makes it calls [`Author::record`]
//! with the transaction it writes in, so the record commits with the change or not at
//! all. Records are read back by [`trail`]; nothing here (nor anywhere in the service)
//! updates or deletes one, and the table's triggers refuse it (sql/V23).
//!
//! Never record a secret: a key's value, a password, a reset or set-up token, a webhook
//! secret. Actions that change one say only that it changed (the views recorded as
//! before and after hold none of them).

pub mod trail;

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::caller::Account;
use crate::db::Traced;
use crate::ApiError;

pub use trail::{AuditFilter, AuditRecord};

/// Who makes a change: the signed-in account, if any, and the request, if any.
#[derive(Debug, Clone)]
pub struct Author {
    /// `None` when no one is signed in: the first start's set-up, a password reset link,
    /// the command line.
    pub account: Option<Account>,
    /// `None` outside a request (the command line, the demo data's load).
    pub request_id: Option<Arc<str>>,
}

impl Author {
    pub fn signed_in(account: Account, request_id: Arc<str>) -> Author {
        Author {
            account: Some(account),
            request_id: Some(request_id),
        }
    }

    /// A request made without a session (set-up, a reset link).
    pub fn anonymous(request_id: Arc<str>) -> Author {
        Author {
            account: None,
            request_id: Some(request_id),
        }
    }

    /// No session and no request: the command line, the demo data's load.
    pub fn system() -> Author {
        Author {
            account: None,
            request_id: None,
        }
    }

    /// The signed-in account a member's own change acts for; a fault of the service
    /// when there is none (the edge only builds such authors from a session).
    pub fn owner(&self) -> Result<&Account, ApiError> {
        self.account
            .as_ref()
            .ok_or_else(|| ApiError::internal("a member's change without a signed-in author"))
    }

    /// Writes `entry`'s record in `tx`, the transaction making the change.
    pub async fn record(&self, tx: &impl Traced, entry: Entry) -> Result<(), ApiError> {
        let (actor_id, actor) = match &self.account {
            Some(account) => (Some(account.user_id), account.username.as_str()),
            None => (None, ""),
        };
        tx.execute_named(
            "audit.record",
            "INSERT INTO audit_log \
             (actor_id, actor, action, target_kind, target_id, before, after, request_id) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            &[
                &actor_id,
                &actor,
                &entry.action.as_str(),
                &entry.target.kind.as_str(),
                &entry.target.id,
                &entry.before,
                &entry.after,
                &self.request_id.as_deref(),
            ],
        )
        .await?;
        Ok(())
    }
}

/// What a record says was done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    UserCreated,
    UserChanged,
    PasswordChanged,
    PasswordResetIssued,
    PasswordReset,
    TwoFactorEnabled,
    TwoFactorDisabled,
    KeyCreated,
    KeyChanged,
    KeyRenamed,
    KeyRotated,
    KeyDeleted,
    TierChanged,
    IndexChanged,
    IndexMoved,
    CalendarChanged,
    ImportAccepted,
    WebhookCreated,
    WebhookDeleted,
    WebhookSecretRotated,
    WebhookRecovered,
}

impl Action {
    /// Every action, in the order the back office lists them.
    pub const ALL: [Action; 21] = [
        Action::UserCreated,
        Action::UserChanged,
        Action::PasswordChanged,
        Action::PasswordResetIssued,
        Action::PasswordReset,
        Action::TwoFactorEnabled,
        Action::TwoFactorDisabled,
        Action::KeyCreated,
        Action::KeyChanged,
        Action::KeyRenamed,
        Action::KeyRotated,
        Action::KeyDeleted,
        Action::TierChanged,
        Action::IndexChanged,
        Action::IndexMoved,
        Action::CalendarChanged,
        Action::ImportAccepted,
        Action::WebhookCreated,
        Action::WebhookDeleted,
        Action::WebhookSecretRotated,
        Action::WebhookRecovered,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Action::UserCreated => "user.created",
            Action::UserChanged => "user.changed",
            Action::PasswordChanged => "user.password_changed",
            Action::PasswordResetIssued => "user.password_reset_issued",
            Action::PasswordReset => "user.password_reset",
            Action::TwoFactorEnabled => "user.two_factor_enabled",
            Action::TwoFactorDisabled => "user.two_factor_disabled",
            Action::KeyCreated => "key.created",
            Action::KeyChanged => "key.changed",
            Action::KeyRenamed => "key.renamed",
            Action::KeyRotated => "key.rotated",
            Action::KeyDeleted => "key.deleted",
            Action::TierChanged => "tier.changed",
            Action::IndexChanged => "index.changed",
            Action::IndexMoved => "index.moved",
            Action::CalendarChanged => "calendar.changed",
            Action::ImportAccepted => "import.accepted",
            Action::WebhookCreated => "webhook.created",
            Action::WebhookDeleted => "webhook.deleted",
            Action::WebhookSecretRotated => "webhook.secret_rotated",
            Action::WebhookRecovered => "webhook.recovered",
        }
    }

    pub fn parse(text: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.as_str() == text)
    }
}

/// What kind of thing a record is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    User,
    Key,
    Tier,
    Index,
    Calendar,
    Import,
    Webhook,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::User,
        Kind::Key,
        Kind::Tier,
        Kind::Index,
        Kind::Calendar,
        Kind::Import,
        Kind::Webhook,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::User => "user",
            Kind::Key => "key",
            Kind::Tier => "tier",
            Kind::Index => "index",
            Kind::Calendar => "calendar",
            Kind::Import => "import",
            Kind::Webhook => "webhook",
        }
    }

    pub fn parse(text: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

/// The thing changed: its kind and id (a user's or key's id, a tier's name, an index
/// code, an import's id; the calendar is `calendar:trading`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub kind: Kind,
    pub id: String,
}

impl Target {
    pub fn new(kind: Kind, id: impl ToString) -> Target {
        Target {
            kind,
            id: id.to_string(),
        }
    }
}

/// One change to record: what was done to what, with the target's state before and
/// after as the back office shows it (never holding a secret).
#[derive(Debug)]
pub struct Entry {
    action: Action,
    target: Target,
    before: Option<Value>,
    after: Option<Value>,
}

impl Entry {
    pub fn new(action: Action, target: Target) -> Entry {
        Entry {
            action,
            target,
            before: None,
            after: None,
        }
    }

    pub fn before(mut self, state: &impl Serialize) -> Entry {
        self.before = Some(snapshot(state));
        self
    }

    pub fn after(mut self, state: &impl Serialize) -> Entry {
        self.after = Some(snapshot(state));
        self
    }
}

/// `state` as JSON without what changes by itself (today's call counts), so a record
/// shows what the change did and nothing else.
fn snapshot(state: &impl Serialize) -> Value {
    let mut value = serde_json::to_value(state).unwrap_or(Value::Null);
    if let Value::Object(fields) = &mut value {
        fields.remove("calls_today");
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_and_kinds_read_back_what_they_write() {
        for action in Action::ALL {
            assert_eq!(Action::parse(action.as_str()), Some(action));
            let kind = action.as_str().split('.').next().unwrap();
            assert!(Kind::parse(kind).is_some(), "{kind}");
        }
        for kind in Kind::ALL {
            assert_eq!(Kind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(Action::parse("user.deleted"), None);
    }

    #[test]
    fn a_snapshot_leaves_out_todays_calls() {
        let state = serde_json::json!({"name": "k", "calls_today": 7});
        assert_eq!(snapshot(&state), serde_json::json!({"name": "k"}));
    }
}
