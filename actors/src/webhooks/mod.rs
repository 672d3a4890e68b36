//! Webhooks (D22): members' endpoints and the signed delivery of their events.
//!
//! - `endpoints`: what a member manages (register with the secret shown once, list,
//!   delete, test, the delivery log, replay), within the tier's `max_webhooks`.
//! - `destination`: where a message may go (`https`, public addresses), as pure rules.
//! - `signing`: Standard Webhooks secrets and signatures; secrets are derived, never
//!   stored.
//! - `delivery`: events to deliveries (dispatch), claiming due attempts across
//!   instances, sending through the service's [`Transport`], the retry schedule.
//! - `ids`: `wh_` and `dlv_` ids.
//!
//! Messages carry what the events say, never a market value.

mod delivery;
pub mod destination;
mod endpoints;
mod ids;
mod signing;

use delivery::message_id;
pub use delivery::{Answered, Deliverer, Transport};
pub use endpoints::{
    AttemptView, CreatedWebhook, NewWebhook, OwnedWebhookView, Queued, WebhookView, Webhooks,
    ADMIN_LIST, EVENT_TYPES, TEST_TYPE,
};
pub use ids::{DeliveryId, WebhookId};
pub use signing::{Secret, SecretKeeper};
