//! The HTTP side of webhook delivery (D22): the [`HttpTransport`] the domain's
//! `Deliverer` sends through. It follows no redirect, connects only to public addresses
//! (unless `WEBHOOK_ALLOW_PRIVATE`), gives up after 15 s and keeps at most 1 KiB of an
//! answer. It must never log a message's body or headers.

mod transport;

pub use transport::HttpTransport;
