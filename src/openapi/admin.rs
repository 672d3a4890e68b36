//! The schemas of the back office's admin endpoints (`/api/v1/admin/...`): users, every
//! key, tiers, index settings, the trading calendar and the audit trail, as the answers and bodies of the
//! handlers in `src/routes/admin.rs` and `calendar.rs`.

// Each derives its schema where it is defined, in the domain crate (its `openapi`
// feature). A page of a list is the generic `Page<T>`, which the document names by its
// rows (`Page_UserSummary`, `Page_OwnedKeyView`); `IndexView` is named `IndexSettings`.
pub use iq_actors::accounts::{
    IndexPatch, IndexView, KeyPatch, NewUser, OwnedKeyView, ResetLink, TierSettings, UserDetail,
    UserPatch, UserSummary, UserView,
};
pub use iq_actors::audit::AuditRecord;
pub use iq_actors::calendar::{CalendarChange, CalendarSummary};
pub use iq_actors::caller::Tier;
pub use iq_actors::paging::Page;
