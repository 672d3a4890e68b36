//! The harness lives in the `iq-test-support` crate, shared with the benchmarks.

pub use iq_test_support::*;
