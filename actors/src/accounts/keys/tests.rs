//! Tests of the key rules that need no database: allow-lists, names, the patch's
//! `null` and absent fields, and what an allow-list admits.

use std::sync::Arc;

use super::rules::{check_allowlist, check_name};
use super::{KeyPatch, KeyRecord};

#[test]
fn allowlists_are_normalised_and_checked() {
    let nets = check_allowlist(vec![
        "203.0.113.7".into(),
        "10.1.2.3/8".into(),
        " 2001:db8::1 ".into(),
        "10.0.0.0/8".into(),
    ])
    .unwrap();
    assert_eq!(nets, ["10.0.0.0/8", "203.0.113.7/32", "2001:db8::1/128"]);
    let err = check_allowlist(vec!["10.0.0.300".into()]).unwrap_err();
    assert!(err.message.contains("10.0.0.300"));
}

#[test]
fn an_allowlist_admits_only_its_ranges() {
    let record = KeyRecord {
        key_id: "k".into(),
        name: "k".into(),
        user_id: 1,
        owner_username: "u".into(),
        owner_role: crate::caller::Role::User,
        scopes: Arc::default(),
        index_codes: None,
        ip_allowlist: vec!["203.0.113.0/24".parse().unwrap()],
        ip_allowlist_unreadable: false,
        per_minute: None,
        per_day: None,
        expires_at: None,
        active: true,
        deleted: false,
        owner_active: true,
        owner_api_access: true,
        owner_tier: "pro".into(),
    };
    assert!(record.admits(Some("203.0.113.9".parse().unwrap())));
    assert!(!record.admits(Some("198.51.100.1".parse().unwrap())));
    assert!(!record.admits(None));
    let open = KeyRecord {
        ip_allowlist: vec![],
        ..record.clone()
    };
    assert!(open.admits(None));
    // An unreadable list admits nobody, even when nothing of it could be read.
    let unreadable = KeyRecord {
        ip_allowlist: vec![],
        ip_allowlist_unreadable: true,
        ..record
    };
    assert!(!unreadable.admits(Some("203.0.113.7".parse().unwrap())));
    assert!(!unreadable.admits(None));
}

#[test]
fn names_are_trimmed_and_checked() {
    assert_eq!(check_name("  laptop ").unwrap(), "laptop");
    assert_eq!(check_name(&"é".repeat(100)).unwrap().chars().count(), 100);
    for bad in ["", "   ", "a\nb", "tab\there", "bell\u{7}", "\u{9b}csi"] {
        assert!(check_name(bad).is_err(), "{bad:?}");
    }
    assert!(check_name(&"x".repeat(101)).is_err());
}

#[test]
fn patch_tells_null_from_absent() {
    let patch: KeyPatch =
        serde_json::from_str(r#"{"per_minute": null, "expires_at": "2027-01-01T00:00:00Z"}"#)
            .unwrap();
    assert_eq!(patch.per_minute, Some(None));
    assert_eq!(patch.per_day, None);
    assert!(matches!(patch.expires_at, Some(Some(_))));
    assert!(serde_json::from_str::<KeyPatch>(r#"{"colour": 1}"#).is_err());
}
