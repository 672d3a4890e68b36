//! Every manifest validates, each kustomization lists exactly the manifests beside it,
//! the default one holds built-in kinds only, and no manifest pins a namespace.

use std::collections::BTreeSet;

use super::objects::{kustomization, yaml_files};
use super::render::{manifests_dir, rendered};

#[test]
fn every_manifest_is_valid_and_listed() {
    iq_test_support::require!(Python);
    let problems = rendered()["problems"].as_array().expect("problems");
    assert!(
        problems.is_empty(),
        "deploy/kubernetes does not validate:\n{}",
        problems
            .iter()
            .map(|p| format!("- {}", p.as_str().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join("\n")
    );

    // Each kustomization lists exactly the manifests beside it, so that no file
    // escapes validation and none is missing from `kubectl apply -k`.
    let mut files = BTreeSet::new();
    yaml_files(&manifests_dir(), "", &mut files);
    let mut listed = BTreeSet::new();
    let kustomizations = rendered()["kustomizations"]
        .as_array()
        .expect("kustomizations");
    let dirs: BTreeSet<&str> = kustomizations
        .iter()
        .map(|k| k["dir"].as_str().expect("dir"))
        .collect();
    assert_eq!(
        dirs,
        BTreeSet::from([".", "monitoring", "postgres"]),
        "the service, the optional ServiceMonitor and the optional CloudNativePG cluster"
    );
    for k in kustomizations {
        let dir = k["dir"].as_str().unwrap();
        let prefix = if dir == "." {
            String::new()
        } else {
            format!("{dir}/")
        };
        listed.insert(format!("{prefix}kustomization.yaml"));
        let resources: BTreeSet<String> = k["kustomization"]["resources"]
            .as_array()
            .unwrap_or_else(|| panic!("{dir}/kustomization.yaml lists no resources"))
            .iter()
            .map(|r| format!("{prefix}{}", r.as_str().expect("a file name")))
            .collect();
        let present: BTreeSet<String> = files
            .iter()
            .filter(|f| {
                f.strip_prefix(&prefix)
                    .is_some_and(|rest| !rest.contains('/') && rest != "kustomization.yaml")
            })
            .cloned()
            .collect();
        assert_eq!(
            resources, present,
            "{dir}/kustomization.yaml must list exactly the manifests beside it"
        );
        listed.extend(resources);
    }
    assert_eq!(
        files, listed,
        "every .yaml file under deploy/kubernetes is listed"
    );

    // The default kustomization holds built-in kinds only: it must apply on a cluster
    // without the optional operators.
    for e in kustomization(".")["objects"].as_array().unwrap() {
        let api = e["object"]["apiVersion"].as_str().unwrap_or_default();
        assert!(
            !api.contains(".cnpg.io") && !api.contains(".coreos.com"),
            "{}: a custom resource in the default kustomization",
            e["source"]
        );
    }
    // Neither does any manifest pin a namespace: `kubectl apply -k ... -n` chooses.
    for k in kustomizations {
        for e in k["objects"].as_array().unwrap() {
            assert!(
                e["object"]["metadata"].get("namespace").is_none(),
                "{}: metadata.namespace is set",
                e["source"]
            );
        }
    }
}
