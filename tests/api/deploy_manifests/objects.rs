//! Finding things in the renderer's answer: a kustomization, an object, the
//! Deployment's container and its ports, the ConfigMap's settings; and reading values
//! (numbers, ports, memory quantities, label selectors). It must never run the renderer
//! itself (`render.rs` does).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use serde_json::Value;

use super::render::rendered;

/// The kustomization of `dir` (relative to `deploy/kubernetes`, `.` for itself).
pub(super) fn kustomization(dir: &str) -> &'static Value {
    rendered()["kustomizations"]
        .as_array()
        .expect("kustomizations")
        .iter()
        .find(|k| k["dir"] == dir)
        .unwrap_or_else(|| panic!("no kustomization.yaml in deploy/kubernetes/{dir}"))
}

/// The rendered entry (`source`, `object`, maybe `generated`) of one object.
pub(super) fn entry(dir: &str, kind: &str, name: &str) -> &'static Value {
    kustomization(dir)["objects"]
        .as_array()
        .expect("objects")
        .iter()
        .find(|e| e["object"]["kind"] == kind && e["object"]["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("deploy/kubernetes/{dir} has no {kind} {name}"))
}

pub(super) fn object(dir: &str, kind: &str, name: &str) -> &'static Value {
    &entry(dir, kind, name)["object"]
}

pub(super) fn deployment() -> &'static Value {
    object(".", "Deployment", "iq-service")
}

pub(super) fn container() -> &'static Value {
    let containers = deployment()["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers");
    assert_eq!(containers.len(), 1, "one container per pod");
    &containers[0]
}

/// The settings of `config.env`, as the generated ConfigMap holds them.
pub(super) fn config() -> BTreeMap<String, String> {
    let data = object(".", "ConfigMap", "iq-service-config")["data"]
        .as_object()
        .expect("the ConfigMap's data");
    data.iter()
        .map(|(k, v)| (k.clone(), v.as_str().expect("a string").to_owned()))
        .collect()
}

pub(super) fn number(value: &Value, what: &str) -> u64 {
    value
        .as_u64()
        .unwrap_or_else(|| panic!("{what}: expected a number, found {value}"))
}

/// The port of an `ADDR:PORT` setting.
pub(super) fn port_of(addr: &str) -> u64 {
    addr.rsplit_once(':')
        .and_then(|(_, port)| port.parse().ok())
        .unwrap_or_else(|| panic!("{addr:?} has no port"))
}

/// The container port named `name`.
pub(super) fn container_port(name: &str) -> u64 {
    let port = container()["ports"]
        .as_array()
        .expect("ports")
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("the container has no port named {name}"));
    number(&port["containerPort"], name)
}

/// A memory quantity in MiB (`Mi` or `Gi` only).
pub(super) fn mebibytes(quantity: &str) -> u64 {
    let (digits, factor) = if let Some(d) = quantity.strip_suffix("Gi") {
        (d, 1024)
    } else if let Some(d) = quantity.strip_suffix("Mi") {
        (d, 1)
    } else {
        panic!("{quantity:?}: write memory in Mi or Gi")
    };
    digits.parse::<u64>().expect("a whole number") * factor
}

/// Every `.yaml` file under `dir`, relative to it.
pub(super) fn yaml_files(dir: &Path, prefix: &str, out: &mut BTreeSet<String>) {
    for entry in fs::read_dir(dir).expect("read a manifest directory") {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            yaml_files(&path, &format!("{prefix}{name}/"), out);
        } else if name.ends_with(".yaml") || name.ends_with(".yml") {
            out.insert(format!("{prefix}{name}"));
        }
    }
}

pub(super) fn labels_match(selector: &Value, labels: &Value, what: &str) {
    let selector = selector.as_object().expect("matchLabels");
    assert!(!selector.is_empty(), "{what}: an empty selector");
    for (key, value) in selector {
        assert_eq!(
            &labels[key], value,
            "{what}: selects {key}={value}, not the pods' label"
        );
    }
}
