//! Black-box tests of the running service: each test spawns the real application on a
//! random port against its own fresh PostgreSQL database and talks HTTP to it.

mod helpers;

mod back_office;
mod datasets;
mod embedded;
mod envelope;
mod keys;
mod paging;
mod quota;
mod secrets;
mod validation;
mod visitor;
