//! The process's TLS crypto: rustls on `ring`. reqwest is built without a crypto
//! provider of its own (its default, aws-lc-rs, is a long C build for nothing we use),
//! so every reqwest client, plain HTTP included, needs this installed first: the trace
//! exporter's, and the tests' (which share the build's features).
//!
//! It must stay the only place that picks the crypto.

/// Installs `ring` as the process's rustls crypto; a second call does nothing.
pub fn install_crypto() {
    // Err only when a provider is installed already, which is what was asked for.
    let _ = rustls::crypto::ring::default_provider().install_default();
}
