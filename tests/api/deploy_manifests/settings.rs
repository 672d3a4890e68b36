//! The settings: `DATABASE_URL` and `KEY_SECRET` from the Secret (made from the
//! example, which is too short to run with), every ConfigMap key a variable the service
//! reads and none a secret, and the settings a deployment behind an Ingress needs.

use std::collections::BTreeSet;
use std::fs;

use iq_service::settings::KeySecret;
use serde_json::json;

use super::objects::{config, container, entry};
use super::render::manifests_dir;

#[test]
fn secrets_from_the_secret_and_every_setting_a_real_one() {
    iq_test_support::require!(Python);
    let c = container();
    let env = c["env"].as_array().expect("env");
    for name in ["DATABASE_URL", "KEY_SECRET"] {
        let var = env
            .iter()
            .find(|v| v["name"] == name)
            .unwrap_or_else(|| panic!("the container sets {name}"));
        assert!(var.get("value").is_none(), "{name} is never written inline");
        let reference = &var["valueFrom"]["secretKeyRef"];
        assert_eq!(reference["name"], "iq-service-secrets", "{name}");
        assert_eq!(reference["key"], name);
    }
    assert_eq!(
        c["envFrom"],
        json!([{"configMapRef": {"name": "iq-service-config"}}]),
        "the settings come from the ConfigMap"
    );

    // The Secret's keys, from the example; the real file is gitignored.
    let secret = entry(".", "Secret", "iq-service-secrets");
    let pairs = secret["generated"]["pairs"].as_object().expect("pairs");
    assert_eq!(
        pairs.keys().map(String::as_str).collect::<Vec<_>>(),
        ["DATABASE_URL", "KEY_SECRET"]
    );
    let placeholder = pairs["KEY_SECRET"].as_str().unwrap();
    assert!(
        placeholder.len() < KeySecret::MIN_LEN,
        "the example's KEY_SECRET is too short to start with, so a copy that was not \
         filled in fails at start-up instead of running with a published secret"
    );
    let gitignore = fs::read_to_string(manifests_dir().join(".gitignore"))
        .expect("deploy/kubernetes/.gitignore");
    for env in secret["generated"]["envs"].as_array().unwrap() {
        let env = env.as_str().unwrap();
        assert!(
            gitignore.lines().any(|line| line.trim() == env),
            "{env} is gitignored"
        );
    }

    // Every setting is a variable the service reads (its declaration says which), and
    // none is a secret.
    let known: BTreeSet<String> = iq_service::settings::reference::variables()
        .into_iter()
        .collect();
    let settings = config();
    for name in settings.keys() {
        assert!(
            known.contains(name),
            "config.env sets {name}, which the service does not read"
        );
        assert!(
            !pairs.contains_key(name),
            "{name} is in both the ConfigMap and the Secret"
        );
    }
    assert!(
        settings.get("DEMO_DATA").is_none_or(|v| v == "0"),
        "no demo data in a deployment"
    );
    // Behind the Ingress: its X-Forwarded-For is believed, and TLS ends there.
    assert!(
        settings
            .get("TRUSTED_PROXIES")
            .is_some_and(|v| !v.is_empty()),
        "TRUSTED_PROXIES is set, or every visitor shares the Ingress controller's address"
    );
    assert_eq!(settings.get("COOKIE_SECURE").map(String::as_str), Some("1"));
    // Links from the public address, and the service claimed only with its token (D28).
    assert!(
        settings
            .get("PUBLIC_URL")
            .is_some_and(|v| v.starts_with("https://")),
        "PUBLIC_URL is the https address the Ingress serves"
    );
    assert_eq!(
        settings.get("SETUP_TOKEN_REQUIRED").map(String::as_str),
        Some("1")
    );
}
