//! The back office's data (D7) and the records the AuthActor reads, as three services
//! held in the service's state, each owning its own statements:
//!
//! - [`Accounts`]: users, sessions, API keys and usage (`users`, `sessions`, [`keys`],
//!   `usage`; the administrators' views in `back_office`);
//! - [`Tiers`] ([`tiers`]): tier settings and who a change of one reaches;
//! - [`IndexSettings`] ([`index_settings`]): the indexes' names, visibility and order.
//!
//! Every write runs through [`ChangeBus::write`]: a transaction that also sends `NOTIFY`
//! (see [`crate::changes`]), then tells this instance's actors at once, so a deleted key
//! is refused on its very next use here and within moments on every other instance.
//! None of them sees HTTP, and none logs a password, key, session id or CSRF token.

pub mod api_key;
mod back_office;
pub mod device;
pub mod index_settings;
mod keys;
pub mod login_limit;
pub mod password;
pub mod password_change;
pub(crate) mod sessions;
mod setup_link;
mod sign_in;
pub mod tiers;
pub mod token;
pub mod two_factor;
pub mod usage;
mod users;

use std::sync::Arc;

use deadpool_postgres::Pool;
use tokio_postgres::Transaction;

pub use back_office::USER_DETAIL_DAYS;
pub use index_settings::{IndexPatch, IndexSettings, IndexView};
#[cfg(feature = "openapi")]
pub use keys::KeyState;
pub use keys::{
    find as keys_find, CreatedKey, KeyOwner, KeyPatch, KeyRecord, KeyRename, KeyView, NewKey,
    OwnedKeyView, MAX_KEY_NAME_CHARS,
};
pub use password_change::{PasswordChange, PasswordChanged, ResetLink};
pub use sessions::{
    ActiveSession, OpenedSession, Origin, SessionLookup, SessionPolicy, SessionView,
};
pub use sign_in::{LoginRequest, LoginStep, PendingLogin};
pub use tiers::{TierSettings, Tiers};
pub use two_factor::{Enrolment, TwoFactorProof, TwoFactorStatus};
pub(crate) use users::super_admin_exists;
pub use users::{
    NewUser, SetupRequest, UserDetail, UserPassword, UserPatch, UserSummary, UserView, USERNAME_LEN,
};

use self::api_key::KeyHasher;
use crate::audit::{Action, Author, Entry, Kind, Target};
use crate::caller::Account;
use crate::changes::{Change, ChangeBus};
use crate::clock::Clock;
use crate::ApiError;

/// The record of a new user.
fn created_user(user: &UserView) -> Entry {
    Entry::new(
        Action::UserCreated,
        Target::new(Kind::User, user.account.user_id),
    )
    .after(user)
}

/// Tells a field sent as `null` (`Some(None)`) from one left out (`None`); with
/// `#[serde(default)]` the field is optional, without it required but nullable.
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    serde::Deserialize::deserialize(d).map(Some)
}

#[derive(Clone)]
pub struct Accounts {
    pub(crate) pool: Pool,
    hasher: KeyHasher,
    pub(crate) clock: Arc<dyn Clock>,
    policy: SessionPolicy,
    pub(crate) bus: ChangeBus,
}

impl Accounts {
    pub fn new(
        pool: Pool,
        hasher: KeyHasher,
        clock: Arc<dyn Clock>,
        policy: SessionPolicy,
        bus: ChangeBus,
    ) -> Self {
        Accounts {
            pool,
            hasher,
            clock,
            policy,
            bus,
        }
    }

    pub fn session_policy(&self) -> SessionPolicy {
        self.policy
    }

    /// Runs `write` in a transaction that announces `change` on commit, then drops this
    /// instance's stale cache entries before returning.
    pub(crate) async fn write<T>(
        &self,
        change: Change,
        write: impl AsyncFnOnce(&Transaction<'_>) -> Result<T, ApiError>,
    ) -> Result<T, ApiError> {
        self.bus.write(&self.pool, change, write).await
    }

    /// `POST /api/v1/setup`: the first super administrator, recorded with `by` (no one
    /// signed in). It voids the set-up links.
    pub async fn setup(
        &self,
        by: &Author,
        credentials: UserPassword,
    ) -> Result<UserView, ApiError> {
        self.setup_through(by, None, credentials).await
    }

    /// The first start's set-up page: [`Accounts::setup`] through the one-time link
    /// whose token is `presented` (a token never issued or already void is 400 / 40001).
    pub async fn setup_with_link(
        &self,
        by: &Author,
        presented: &str,
        credentials: UserPassword,
    ) -> Result<UserView, ApiError> {
        self.setup_through(by, Some(presented), credentials).await
    }

    async fn setup_through(
        &self,
        by: &Author,
        link: Option<&str>,
        credentials: UserPassword,
    ) -> Result<UserView, ApiError> {
        // A dead link is refused before the slow hash: the page is open to anyone.
        if let Some(presented) = link {
            if !setup_link::holds(&**self.pool.get().await?, presented).await? {
                return Err(setup_link::dead());
            }
        }
        let request = users::PreparedSetup::prepare(credentials).await?;
        self.write(Change::Auth, async |tx| {
            if let Some(presented) = link {
                if !setup_link::holds(tx, presented).await? {
                    return Err(setup_link::dead());
                }
            }
            let user = users::setup(tx, request).await?;
            setup_link::void(tx).await?;
            by.record(tx, created_user(&user)).await?;
            Ok(user)
        })
        .await
    }

    /// While no super administrator exists, a new one-time set-up link's token, to print
    /// with the start-up lines (the database keeps only its digest); `None` once the
    /// service is set up.
    pub async fn issue_setup_link(&self) -> Result<Option<token::Token>, ApiError> {
        let client = self.pool.get().await?;
        setup_link::issue(&**client, self.clock.now()).await
    }

    /// Whether `presented` is a live set-up link's token (the set-up page's greeting).
    pub async fn setup_link_works(&self, presented: &str) -> Result<bool, ApiError> {
        let client = self.pool.get().await?;
        setup_link::holds(&**client, presented).await
    }

    /// The signed-in user's live sessions, the asking one marked.
    pub async fn sessions(&self, session: &ActiveSession) -> Result<Vec<SessionView>, ApiError> {
        let client = self.pool.get().await?;
        let (now, user) = (self.clock.now(), session.account.user_id);
        sessions::list(&**client, user, session.number, now, self.policy).await
    }

    /// Ends one of the signed-in user's sessions by its number (404 if not theirs).
    pub async fn end_session(&self, owner: &Account, number: &str) -> Result<(), ApiError> {
        let client = self.pool.get().await?;
        sessions::end(&**client, owner.user_id, number).await
    }

    /// Whose session the cookie `presented` is, if it is one (expired or not): the
    /// keyless per-minute limit counts a user's sessions together (D28).
    pub async fn session_owner(&self, presented: &str) -> Result<Option<i64>, ApiError> {
        let client = self.pool.get().await?;
        sessions::owner(&**client, presented).await
    }

    pub async fn logout(&self, session_id: &str) -> Result<(), ApiError> {
        let client = self.pool.get().await?;
        sessions::close(&**client, session_id).await
    }

    pub async fn session(&self, session_id: &str) -> Result<SessionLookup, ApiError> {
        let client = self.pool.get().await?;
        sessions::resolve(&**client, session_id, self.clock.now(), self.policy).await
    }

    pub async fn create_key(&self, by: &Author, new: NewKey) -> Result<CreatedKey, ApiError> {
        let (owner, now) = (by.owner()?, self.clock.now());
        self.write(Change::Auth, async |tx| {
            let created = keys::create(tx, &self.hasher, owner, new, now).await?;
            let entry = Entry::new(Action::KeyCreated, Target::new(Kind::Key, &created.view.id));
            by.record(tx, entry.after(&created.view)).await?;
            Ok(created)
        })
        .await
    }

    pub async fn list_keys(&self, owner: &Account) -> Result<Vec<KeyView>, ApiError> {
        let client = self.pool.get().await?;
        keys::list(&**client, owner.user_id, self.clock.now()).await
    }

    pub async fn delete_key(&self, by: &Author, key_id: &str) -> Result<(), ApiError> {
        let (owner, now) = (by.owner()?, self.clock.now());
        self.write(Change::Auth, async |tx| {
            let before = keys::find_by_id(tx, key_id, now).await?;
            keys::delete(tx, owner.user_id, key_id, now).await?;
            let mut entry = Entry::new(Action::KeyDeleted, Target::new(Kind::Key, key_id));
            if let Some(before) = before {
                entry = entry.before(&before.key);
            }
            by.record(tx, entry).await
        })
        .await
    }

    /// `PATCH /api/v1/admin/keys/{id}`: an administrator's change of any key.
    pub async fn patch_key(
        &self,
        by: &Author,
        key_id: &str,
        patch: KeyPatch,
    ) -> Result<KeyView, ApiError> {
        let now = self.clock.now();
        self.write(Change::Auth, async |tx| {
            let before = keys::find_by_id(tx, key_id, now).await?;
            let after = keys::patch(tx, key_id, patch, now).await?;
            let mut entry = Entry::new(Action::KeyChanged, Target::new(Kind::Key, key_id));
            if let Some(before) = before {
                entry = entry.before(&before.key);
            }
            by.record(tx, entry.after(&after)).await?;
            Ok(after)
        })
        .await
    }

    pub async fn create_user(&self, by: &Author, new: NewUser) -> Result<UserView, ApiError> {
        self.write(Change::Auth, async |tx| {
            let user = users::create(tx, new).await?;
            by.record(tx, created_user(&user)).await?;
            Ok(user)
        })
        .await
    }

    pub async fn patch_user(
        &self,
        by: &Author,
        id: &str,
        patch: UserPatch,
    ) -> Result<UserView, ApiError> {
        self.write(Change::Auth, async |tx| {
            let before = users::find(tx, id).await?;
            let after = users::patch(tx, id, patch).await?;
            let target = Target::new(Kind::User, after.account.user_id);
            let entry = Entry::new(Action::UserChanged, target).before(&before);
            by.record(tx, entry.after(&after)).await?;
            Ok(after)
        })
        .await
    }

    /// Any key's calls per UTC day (the admin usage endpoint).
    pub async fn key_usage(&self, key_id: &str, days: u32) -> Result<usage::KeyUsage, ApiError> {
        let client = self.pool.get().await?;
        usage::of_key(&**client, key_id, self.clock.now().date_naive(), days).await
    }

    /// An account's own calls per UTC day, newest first (all its keys, D11).
    pub async fn account_usage(
        &self,
        owner: &Account,
        days: u32,
    ) -> Result<Vec<usage::DayUsage>, ApiError> {
        let client = self.pool.get().await?;
        usage::of_account(
            &**client,
            owner.user_id,
            self.clock.now().date_naive(),
            days,
        )
        .await
    }
}
