//! The IQ index service: configuration, start-up and shutdown, the HTTP edge and the
//! front actor. Domain logic lives in the `iq-actors` crate; this crate only wires it to
//! HTTP and to the process.

pub mod cli;
pub mod demo_accounts;
pub mod embedded_pg;
pub mod front_actor;
pub mod http;
pub mod import_command;
pub mod local_secret;
pub mod migrations;
pub mod openapi;
pub mod routes;
pub mod settings;
pub mod site;
pub mod startup;
pub mod state;
pub mod telemetry;
pub mod tls;
pub mod webhooks;
