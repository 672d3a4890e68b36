//! API keys (D3, D7): what an owner does with their keys, what an administrator sees and
//! changes of any key, and the record the AuthActor caches.
//!
//! - [`record`]: the [`KeyRecord`] the AuthActor looks up by keyed hash (steps 2-6).
//! - [`view`]: what owners and administrators are shown of a key, never the key itself.
//! - [`rules`]: the checks of a key's name, index range, allow-list, scopes, expiry,
//!   limits and count, shared by creation and the administrators' changes.
//! - [`owned`]: an owner's keys: creation (the full key shown once), listing, rotation,
//!   renaming, deletion.
//! - [`admin`]: every live key (the administrators' list), one key by id, and an
//!   administrator's change of any key.
//!
//! Only the keyed hash is stored: nothing here keeps, logs or returns a full key except
//! in the one answer that made it ([`CreatedKey`]). A deleted key is kept (soft delete)
//! so that call logs still name it, and so that its later use is a plain 40102. Nothing
//! here commits or announces a change: callers run the writes through
//! [`super::Accounts::write`] with `Change::Auth`.

mod admin;
mod owned;
mod record;
mod rules;
pub use rules::MAX_KEY_NAME_CHARS;
mod view;

pub use admin::{find_by_id, list_all, patch, KeyPatch};
pub use owned::{check_owned, create, delete, list, rename, rotate, KeyRename, NewKey};
pub use record::{find, KeyRecord};
#[cfg(feature = "openapi")]
pub use view::KeyState;
pub use view::{CreatedKey, KeyOwner, KeyView, OwnedKeyView};

#[cfg(test)]
mod tests;
