//! The test harness of the service, shared by its black-box tests (`tests/api`) and its
//! benchmarks. A test calls [`spawn_app`] (or a variant) and drives the [`TestApp`] it
//! answers, one typed method per endpoint; it reads answers as [`Reply`]s and polls what
//! crosses instances with [`eventually`]. Where each part lives:
//!
//! - `spawn.rs`: starting the real `Application` per test ([`spawn_with`], [`Spawn`],
//!   [`test_settings`]), another instance on the same database, attaching to a child;
//! - `app.rs`: the [`TestApp`] and the one way to send it a request ([`TestApp::call`]
//!   and its shorthands);
//! - `reply.rs`: [`Reply`], an answer read back;
//! - `endpoints/`: the typed endpoint methods of [`TestApp`], a file per resource (query,
//!   sessions, users, keys, tiers and indexes, calendar, imports);
//! - `fixture.rs`: the test clock's [`now`] and the hand-made data set [`FIXTURE`];
//! - [`quotes`]: quote-import files (the composite's six bases, their CSV, an import that
//!   must be accepted);
//! - `poll.rs`: [`eventually`];
//! - `outage.rs`: cutting the service off its database ([`TestApp::cut_database`]);
//! - [`database`], [`server`]: a database per test, cloned from a template migrated once
//!   per schema, on the PostgreSQL server found (or started);
//! - [`site`], [`browser`]: the website over plain HTTP, and in a real browser;
//! - [`tools`]: what a test needs beyond PostgreSQL, and skipping it ([`require!`]) when
//!   that is missing, unless `IQ_TEST_ALL=1`.
//!
//! Time is a `ManualClock` fixed at [`now`], so the delay cutoff is known.
//!
//! This file only declares the modules and re-exports what tests and benches name as
//! `iq_test_support::X`; it must never hold harness code of its own.

pub mod browser;
pub mod database;
pub mod quotes;
pub mod server;
pub mod site;
pub mod tools;

mod app;
mod endpoints;
mod fixture;
mod outage;
mod poll;
mod reply;
mod spawn;

pub use app::TestApp;
pub use database::{
    connect, count_rows, create_database, database_url, rename_fixture_specification, run_sql,
    select_column, select_pairs, select_value, server_url, DropDatabase,
};
pub use endpoints::keys::Key;
pub use endpoints::sessions::{Session, PASSWORD};
pub use fixture::{now, DATASETS_BUT_REVISIONS, FIXTURE};
pub use poll::eventually;
pub use reply::{header_text, Reply};
pub use spawn::{
    http_client, http_client_builder, spawn_app, spawn_with, spawn_with_demo, spawn_with_fixture,
    spawn_with_fixture_then, spawn_with_sql, test_settings, Spawn,
};
