//! The runtime a throughput benchmark's load runs on: one worker, on a thread of the
//! load's own, so that the load does not share the event loop of what it measures.
//! Included by the benches that drive load with `#[path = "load_runtime.rs"] mod
//! load_runtime;`.

/// A multi-thread runtime with one worker and every driver (I/O, time) enabled.
pub fn build() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("load runtime")
}
