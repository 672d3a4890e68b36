//! The typed endpoint methods of [`crate::TestApp`], a file per resource. Each method
//! sends one request through [`crate::TestApp::call`] (or its shorthands) and answers
//! the raw [`crate::Reply`], so a test can assert refusals as well as successes; the few
//! that assert success say so (`login_ok`, `user`, `new_key`, ...) and answer what the
//! test needs next. A file here must never start a service or hold a fixture.

pub mod audit;
pub mod calendar;
pub mod imports;
pub mod keys;
pub mod query;
pub mod sessions;
pub mod tiers;
pub mod users;
pub mod webhooks;
