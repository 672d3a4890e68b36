//! The declaration's defaults, its helpers, and docs/operations.md's reference kept
//! equal to it.

use super::*;

#[test]
fn defaults_are_the_components_own() {
    let settings = Settings::defaults();
    assert_eq!(settings.http.listen_addr, "127.0.0.1:8080");
    assert!(settings.database.database_url.is_none());
    assert!(settings.database.iq_data_dir.is_absolute());
    assert_eq!(
        settings.database.pool().max_size,
        iq_actors::db::PoolSettings::default().max_size
    );
    assert_eq!(
        settings.quota.settings().lease_ttl,
        iq_actors::quota::QuotaSettings::default().lease_ttl
    );
    assert_eq!(
        settings.imports.limits().max_entry_bytes,
        iq_actors::imports::ImportLimits::default().max_entry_bytes
    );
    assert_eq!(settings.site.max_limit, 5000);
    assert_eq!(settings.imports.max_bytes(), 64 * 1024 * 1024);
    assert!(settings.runtime.quota_enforced);
}

#[test]
fn metrics_stay_off_the_public_listener_unless_asked() {
    let mut http = Settings::defaults().http;
    assert_eq!(http.metrics_listener(), Some("127.0.0.1:9464"));
    http.metrics_on_api();
    assert_eq!(http.metrics_listener(), None);
    http.metrics_addr = "API".into();
    assert_eq!(http.metrics_listener(), None);
}

#[test]
fn secrets_are_redacted_in_debug() {
    let mut settings = Settings::defaults();
    settings
        .database
        .set_database(Database::Url("postgres://iq:hunter2@db/iq".into()));
    settings.accounts.key_secret = Some(KeySecret::new(b"hunter2".repeat(8)).unwrap());
    let printed = format!("{settings:?}");
    assert!(!printed.contains("hunter2"), "{printed}");
}

/// docs/operations.md's settings reference is the declaration's. `IQ_BLESS=1` writes
/// the rendered text into the file instead of failing.
#[test]
fn the_operations_guide_lists_every_setting_as_declared() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/operations.md");
    let doc = std::fs::read_to_string(&path).expect("docs/operations.md");
    let (begin, end) = (
        doc.find(reference::BEGIN).expect("the begin marker"),
        doc.find(reference::END).expect("the end marker"),
    );
    let inside = &doc[begin + reference::BEGIN.len()..end];
    let rendered = format!("\n{}\n", reference::markdown());
    if inside == rendered {
        return;
    }
    if std::env::var_os("IQ_BLESS").is_some() {
        let updated = format!(
            "{}{rendered}{}",
            &doc[..begin + reference::BEGIN.len()],
            &doc[end..]
        );
        std::fs::write(&path, updated).expect("write docs/operations.md");
        return;
    }
    panic!(
        "docs/operations.md's settings reference differs from the declaration; run the \
         test with IQ_BLESS=1 to write it:\n{rendered}"
    );
}
