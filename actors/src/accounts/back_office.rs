//! The back office's views over every account and key (super administrators): the user
//! list and a user's detail, every key, one key; and an owner's own key care: a new
//! secret for a key, a new name, its usage. A further `impl Accounts` block: the writes
//! still go through [`Accounts::write`].

use super::keys::{self, CreatedKey, KeyRename, KeyView, OwnedKeyView};
use super::usage::{self, KeyUsage};
use super::users::{self, UserDetail, UserSummary};
use super::Accounts;
use crate::audit::{trail, Action, AuditFilter, AuditRecord, Author, Entry, Kind, Target};
use crate::caller::Account;
use crate::changes::Change;
use crate::paging::{Page, PageRequest, SearchText};
use crate::ApiError;

/// The days of an account's usage a user's detail shows.
pub const USER_DETAIL_DAYS: u32 = 30;

impl Accounts {
    /// `GET /api/v1/admin/users`: users whose name contains `q` (any letter case), by
    /// user name, each with their key count and the account's calls today.
    pub async fn list_users(
        &self,
        page: PageRequest,
        q: &SearchText,
    ) -> Result<Page<UserSummary>, ApiError> {
        let client = self.pool.get().await?;
        users::list(&**client, page, q, self.clock.now()).await
    }

    /// `GET /api/v1/admin/users/{id}`: one user, their live keys (with `calls_today`)
    /// and the account's calls per UTC day over the last [`USER_DETAIL_DAYS`] days.
    pub async fn user_detail(&self, id: &str) -> Result<UserDetail, ApiError> {
        let client = self.pool.get().await?;
        let now = self.clock.now();
        let user = users::find(&**client, id).await?;
        let user_id = user.account.user_id;
        let keys = keys::list(&**client, user_id, now).await?;
        let usage =
            usage::of_account(&**client, user_id, now.date_naive(), USER_DETAIL_DAYS).await?;
        Ok(UserDetail { user, keys, usage })
    }

    /// `GET /api/v1/admin/keys`: every live key with its owner, or one owner's
    /// (`user_id`), or those whose name contains `q`; newest first.
    pub async fn list_all_keys(
        &self,
        page: PageRequest,
        user_id: Option<&str>,
        q: &SearchText,
    ) -> Result<Page<OwnedKeyView>, ApiError> {
        let client = self.pool.get().await?;
        keys::list_all(&**client, page, user_id, q, self.clock.now()).await
    }

    /// One live key with its owner and today's calls, as [`Accounts::list_all_keys`]
    /// shows it (the back office's key page); `None` when there is none or it was
    /// deleted.
    pub async fn key(&self, key_id: &str) -> Result<Option<OwnedKeyView>, ApiError> {
        let client = self.pool.get().await?;
        keys::find_by_id(&**client, key_id, self.clock.now()).await
    }

    /// `GET /api/v1/admin/audit`: the audit trail's records matching `filter`, newest
    /// first.
    pub async fn audit_trail(
        &self,
        filter: &AuditFilter,
        page: PageRequest,
    ) -> Result<Page<AuditRecord>, ApiError> {
        let client = self.pool.get().await?;
        trail::list(&**client, filter, page).await
    }

    /// `POST /api/v1/keys/{id}/rotate`: a new secret for one of the owner's keys, shown
    /// once; the old one is refused from the moment this returns on this instance, and
    /// as soon as the change notification arrives on the others.
    pub async fn rotate_key(&self, by: &Author, key_id: &str) -> Result<CreatedKey, ApiError> {
        let (owner, now) = (by.owner()?, self.clock.now());
        self.write(Change::Auth, async |tx| {
            let before = keys::find_by_id(tx, key_id, now).await?;
            let rotated = keys::rotate(tx, &self.hasher, owner.user_id, key_id, now).await?;
            by.record(tx, key_entry(Action::KeyRotated, before, &rotated.view))
                .await?;
            Ok(rotated)
        })
        .await
    }

    /// `PATCH /api/v1/keys/{id}`: renames one of the owner's keys.
    pub async fn rename_key(
        &self,
        by: &Author,
        key_id: &str,
        rename: KeyRename,
    ) -> Result<KeyView, ApiError> {
        let (owner, now) = (by.owner()?, self.clock.now());
        self.write(Change::Auth, async |tx| {
            let before = keys::find_by_id(tx, key_id, now).await?;
            let renamed = keys::rename(tx, owner.user_id, key_id, rename, now).await?;
            by.record(tx, key_entry(Action::KeyRenamed, before, &renamed))
                .await?;
            Ok(renamed)
        })
        .await
    }

    /// `GET /api/v1/keys/{id}/usage`: one of the owner's live keys' calls per UTC day
    /// (and the account's), as [`Accounts::key_usage`] shows any key to administrators.
    pub async fn own_key_usage(
        &self,
        owner: &Account,
        key_id: &str,
        days: u32,
    ) -> Result<KeyUsage, ApiError> {
        let client = self.pool.get().await?;
        keys::check_owned(&**client, owner.user_id, key_id).await?;
        usage::of_key(&**client, key_id, self.clock.now().date_naive(), days).await
    }
}

/// The record of a change to a key, with the key before (when it was found: a key not
/// the owner's fails the change itself) and after.
fn key_entry(action: Action, before: Option<OwnedKeyView>, after: &KeyView) -> Entry {
    let entry = Entry::new(action, Target::new(Kind::Key, &after.id));
    match before {
        Some(before) => entry.before(&before.key),
        None => entry,
    }
    .after(after)
}
