//! The ids of endpoints and deliveries.

use crate::prefixed_id::prefixed_id;

prefixed_id!(
    /// A webhook endpoint: `wh_` and a number.
    WebhookId,
    "wh_"
);

prefixed_id!(
    /// One message to one endpoint: `dlv_` and a number.
    DeliveryId,
    "dlv_"
);
