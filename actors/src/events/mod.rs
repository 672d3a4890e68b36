//! Events (D22): facts about availability, never values. `index.published` says
//! trading days of an index became visible to a tier; `index.revised` says values a
//! tier could already see changed. Receivers fetch the values with a query.
//!
//! - `outbox`: the one statement that writes events, run in the transaction that makes
//!   them true (an import's, or a day boundary's) and placing each tier's window.
//! - `keeper`: moves every tier's window at each day boundary of the service time zone
//!   (and after a change to the calendar or a tier), so a delayed tier hears of a day
//!   when it enters its window.
//! - `feed`: reads a tier's events after an id, waiting for new ones when asked.
//! - `signal`: what wakes the feed's waiters and the keeper: the change bus's news.
//!
//! Nothing here ever reads or writes a market value, and no event is written outside
//! the transaction that makes it true.

mod feed;
mod keeper;
mod outbox;
mod signal;

pub use feed::{
    Event, EventData, EventFeed, EventId, FeedPage, FeedRequest, DEFAULT_EVENTS, EVENT_TYPES,
    MAX_EVENTS, MAX_WAIT,
};
pub use keeper::WindowKeeper;
pub use outbox::record;
pub use signal::ChangeSignal;
