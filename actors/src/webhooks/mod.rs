//! Webhooks (D22): members' endpoints and the signed delivery of their events.
//!
//! - `endpoints`: what a member manages (register with the secret shown once, list,
//!   delete, rotate the secret, the delivery log), within the tier's `max_webhooks`.
//! - `resend`: what a member asks to be sent: a test, a replay, a recovery.
//! - `destination`: where a message may go (`https`, public addresses), as pure rules.
//! - `signing`: Standard Webhooks secrets and signatures; secrets are derived, never
//!   stored.
//! - `delivery`: events to deliveries (dispatch), claiming due attempts across
//!   instances, sending through the service's [`Transport`], the retry schedule.
//! - `pump`: the loop that runs them, each attempt on its own so none waits for another.
//! - `ids`: `wh_` and `dlv_` ids.
//!
//! Messages carry what the events say, never a market value.

mod delivery;
pub mod destination;
mod endpoints;
mod ids;
mod pump;
mod resend;
mod signing;

/// The event types an endpoint may subscribe to: every type of the feed.
pub use crate::events::EVENT_TYPES;
use delivery::message_id;
pub use delivery::{Answered, Deliverer, Transport, SEND_TIMEOUT};
pub use endpoints::{
    AttemptView, CreatedWebhook, NewWebhook, OwnedWebhookView, Queued, RotatedSecret, WebhookView,
    Webhooks, ADMIN_LIST, ROTATION_OVERLAP, TEST_TYPE,
};
pub use ids::{DeliveryId, WebhookId};
pub use resend::{Recover, Recovered, RECOVER_WITHIN, TESTS_PER_MINUTE};
pub use signing::{SecretKeeper, SigningSecret};
