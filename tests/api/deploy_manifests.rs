//! The Kubernetes manifests (`deploy/kubernetes/`) are valid and say what the service
//! needs, offline, so that a typo fails here rather than in a cluster.
//!
//! kustomize is not at hand, so a small renderer in Python does its part for the
//! features the kustomizations use (and refuses any other): each listed resource file,
//! the `images` rewrite, and the ConfigMap and Secret generators from env files, parsed
//! as kustomize does. The Secret is always made from `secrets.env.example`, never from
//! a real `secrets.env` that may sit beside it. Every object is then validated in strict
//! mode (an unknown field is an error) against the schemas of Kubernetes 1.30, the
//! oldest version the manifests are written for, and of the newest one
//! `kubernetes-validate` (from PyPI, pinned) knows. A custom resource (CloudNativePG's
//! `Cluster`, the Prometheus Operator's `ServiceMonitor`) has no schema there: it is
//! validated against its CRD's own schema, kept in `deploy/kubernetes/crd-schemas/`,
//! with unknown fields refused as the API server's strict field validation would. A
//! kind with neither schema is an error, not a warning.
//!
//! The renderer's JSON output is then checked for what the service needs: three
//! replicas, the probes on `/readyz` and `/healthz`, a grace period longer than the
//! service's own stop (its timeouts read from the code), `DATABASE_URL` and
//! `KEY_SECRET` from the Secret, every ConfigMap key a variable the service reads, the
//! ports, and a fleet that fits in the database's connections.
//!
//! The tool lives in its own virtual environment, `target/kubernetes-validate-venv`
//! (`python_venv`), installed once; after that the test needs no network. The
//! rendering and validation have a deadline, past which Python is killed.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use iq_actors::db::PoolSettings;
use iq_service::settings::KeySecret;
use serde_json::{json, Value};

use crate::python_venv::{self, Venv};

/// The release of the validator and its bundled schemas.
const KUBERNETES_VALIDATE: &str = "kubernetes-validate==1.37.0";
/// The oldest Kubernetes the manifests are written for (`autoscaling/v2`,
/// `policy/v1`, the preStop `sleep` action), and the newest the validator knows.
const KUBERNETES_VERSIONS: [&str; 2] = ["1.30.0", "1.37.0"];
/// How long rendering and validating may take before Python is killed.
const DEADLINE: Duration = Duration::from_secs(60);
/// Longest the OpenTelemetry SDK waits for the last spans at exit: `Telemetry::shutdown`
/// calls `SdkTracerProvider::shutdown`, whose timeout the SDK fixes at 5 s.
const TELEMETRY_SHUTDOWN_SECS: u64 = 5;
/// Database connections kept free of the fleet: PostgreSQL's superuser reserve (3),
/// the operator, the streaming replica and an administrator's psql.
const CONNECTION_RESERVE: u64 = 20;
/// Connections of one pod besides its pool: the change listener, and the migrations'
/// own connection at start-up.
const CONNECTIONS_OUTSIDE_THE_POOL: u64 = 2;
/// Variables the service reads through its libraries rather than in its own code:
/// `RUST_LOG` (tracing's `EnvFilter::try_from_default_env`) and the OpenTelemetry SDK's
/// standard variables (the README's configuration table lists them).
const LIBRARY_VARIABLES: &[&str] = &[
    "RUST_LOG",
    "OTEL_TRACES_SAMPLER",
    "OTEL_TRACES_SAMPLER_ARG",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TIMEOUT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_BSP_SCHEDULE_DELAY",
    "OTEL_BSP_EXPORT_TIMEOUT",
    "OTEL_BSP_MAX_QUEUE_SIZE",
    "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
];

/// Renders every kustomization under the directory and validates every object. Reads
/// one JSON request on stdin, writes one JSON answer on stdout.
const RENDER_AND_VALIDATE: &str = r##"
import base64, json, os, re, sys

import jsonschema
import yaml
from kubernetes_validate import utils as kv

request = json.load(sys.stdin)
root = request["root"]
versions = request["versions"]
problems = []


class UniqueKeys(yaml.SafeLoader):
    """YAML where a repeated key is an error: PyYAML would keep the last silently."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping", node.start_mark,
                    "the key %r is repeated" % (key,), key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


def documents(rel):
    try:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            return [d for d in yaml.load_all(f, Loader=UniqueKeys) if d is not None]
    except (OSError, yaml.YAMLError) as e:
        problems.append("%s: %s" % (rel, e))
        return []


# -- custom resources: their CRD's schema, strict ----------------------------------
def strict(schema):
    """An openAPIV3Schema as JSON Schema that refuses unknown fields."""
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key in ("properties", "patternProperties"):
            out[key] = {name: strict(s) for name, s in value.items()}
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [strict(s) for s in value]
        elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
            out[key] = strict(value)
        else:
            out[key] = value
    if schema.get("nullable") and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    if schema.get("x-kubernetes-embedded-resource"):
        props = out.setdefault("properties", {})
        for name in ("apiVersion", "kind"):
            props.setdefault(name, {"type": "string"})
        props.setdefault("metadata", {"type": "object"})
    if ("properties" in out and "additionalProperties" not in schema
            and not schema.get("x-kubernetes-preserve-unknown-fields")):
        out["additionalProperties"] = False
    return out


crds = {}
crd_dir = os.path.join(root, "crd-schemas")
for name in (sorted(os.listdir(crd_dir)) if os.path.isdir(crd_dir) else []):
    rel = "crd-schemas/" + name
    if not name.endswith(".json"):
        problems.append("%s: only .json schemas belong in crd-schemas/" % rel)
        continue
    with open(os.path.join(crd_dir, name), encoding="utf-8") as f:
        crd = json.load(f)
    validator = jsonschema.Draft202012Validator(strict(crd["openAPIV3Schema"]))
    crds[(crd["apiVersion"], crd["kind"])] = (rel, validator)


def at(path):
    return ".".join(str(p) for p in path) or "(the object)"


def validate(obj, where):
    if not isinstance(obj, dict):
        problems.append("%s: a document that is not a mapping" % where)
        return
    kind, api = obj.get("kind"), obj.get("apiVersion")
    name = (obj.get("metadata") or {}).get("name")
    what = "%s %s/%s" % (where, kind, name)
    if not name:
        problems.append("%s: metadata.name is missing" % what)
    if (api, kind) in crds:
        rel, validator = crds[(api, kind)]
        for e in sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path))):
            problems.append("%s: against %s: %s: %s" % (what, rel, at(e.absolute_path), e.message))
        return
    for version in versions:
        try:
            kv.validate(obj, version, strict=True)
        except kv.ValidationError as e:
            problems.append("%s: Kubernetes %s: %s: %s" % (what, version, at(e.absolute_path), e.message))
        except kv.SchemaNotFoundError as e:
            problems.append("%s: %s (a custom resource needs its CRD's schema in crd-schemas/)"
                            % (what, e.message))
        except kv.VersionNotSupportedError as e:
            problems.append("%s: %s" % (what, e.message))


# -- kustomizations -----------------------------------------------------------------
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def env_pairs(rel):
    """KEY=VALUE lines as kustomize reads an env file: everything after the first '='
    is the value, quotes and spaces included, so both are refused here."""
    pairs = {}
    try:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        problems.append("%s: %s" % (rel, e))
        return pairs
    for number, line in enumerate(text.lstrip("\ufeff").splitlines(), 1):
        line = line.lstrip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        where = "%s:%d" % (rel, number)
        if not ENV_NAME.fullmatch(key):
            problems.append("%s: %r is not a variable name" % (where, key))
        elif not sep:
            problems.append("%s: %s has no '=' (kustomize would make it empty)" % (where, key))
        elif value != value.strip():
            problems.append("%s: %s: spaces around the value would be part of it" % (where, key))
        elif len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            problems.append("%s: %s: kustomize keeps the quotes as part of the value" % (where, key))
        elif " #" in value:
            problems.append("%s: %s: a comment after a value is part of the value" % (where, key))
        elif key in pairs:
            problems.append("%s: %s is repeated" % (where, key))
        else:
            pairs[key] = value
    return pairs


KUSTOMIZATION_KEYS = {"apiVersion", "kind", "resources", "images", "configMapGenerator",
                      "secretGenerator"}
GENERATOR_KEYS = {"name", "envs"}
IMAGE_KEYS = {"name", "newName", "newTag", "digest"}


def containers(obj):
    spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    return (spec.get("containers") or []) + (spec.get("initContainers") or [])


def render(directory):
    rel_dir = os.path.relpath(directory, root)
    prefix = "" if rel_dir == "." else rel_dir + "/"
    where = prefix + "kustomization.yaml"
    docs = documents(where)
    if len(docs) != 1:
        problems.append("%s: expected one document" % where)
        return {"dir": rel_dir, "kustomization": {}, "objects": []}
    k = docs[0]
    for key in sorted(set(k) - KUSTOMIZATION_KEYS):
        problems.append("%s: %s: not a field this renderer knows; teach "
                        "tests/api/deploy_manifests.rs or do without" % (where, key))
    if k.get("apiVersion") != "kustomize.config.k8s.io/v1beta1" or k.get("kind") != "Kustomization":
        problems.append("%s: apiVersion/kind must be kustomize.config.k8s.io/v1beta1 Kustomization" % where)
    objects = []
    for resource in k.get("resources") or []:
        if not isinstance(resource, str) or "/" in resource or not resource.endswith(".yaml"):
            problems.append("%s: resources: %r: only .yaml files beside it" % (where, resource))
            continue
        for doc in documents(prefix + resource):
            objects.append({"source": prefix + resource, "object": doc})
    for image in k.get("images") or []:
        for key in sorted(set(image) - IMAGE_KEYS):
            problems.append("%s: images: %s: not a field this renderer knows" % (where, key))
        name = image.get("name")
        new = image.get("newName", name)
        if "digest" in image:
            new += "@" + image["digest"]
        elif "newTag" in image:
            new += ":" + str(image["newTag"])
        used = False
        for entry in objects:
            for container in containers(entry["object"]):
                current = container.get("image", "")
                if current == name or current.startswith(name + ":") or current.startswith(name + "@"):
                    container["image"] = new
                    used = True
        if not used:
            problems.append("%s: images: %s: no container runs it" % (where, name))
    for field, kind in (("configMapGenerator", "ConfigMap"), ("secretGenerator", "Secret")):
        for generator in k.get(field) or []:
            for key in sorted(set(generator) - GENERATOR_KEYS):
                problems.append("%s: %s: %s: not a field this renderer knows" % (where, field, key))
            read, data = [], {}
            for env in generator.get("envs") or []:
                # Never the real secrets: the committed example stands for them.
                rel = prefix + env + (".example" if kind == "Secret" else "")
                read.append(rel)
                for key, value in env_pairs(rel).items():
                    if key in data:
                        problems.append("%s: %s: %s is set twice" % (where, field, key))
                    data[key] = value
            meta = {"name": generator.get("name")}
            if kind == "Secret":
                obj = {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": "Opaque",
                       "data": {key: base64.b64encode(v.encode()).decode() for key, v in data.items()}}
            else:
                obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}
            objects.append({"source": "%s %s" % (where, field), "object": obj,
                            "generated": {"envs": generator.get("envs") or [], "read": read,
                                          "pairs": data}})
    for entry in objects:
        validate(entry["object"], entry["source"])
    seen = set()
    for entry in objects:
        obj = entry["object"]
        if isinstance(obj, dict):
            key = (obj.get("kind"), (obj.get("metadata") or {}).get("name"))
            if key in seen:
                problems.append("%s: %s/%s is defined twice" % (where, key[0], key[1]))
            seen.add(key)
    return {"dir": rel_dir, "kustomization": k, "objects": objects}


kustomizations = []
for directory, subdirs, files in sorted(os.walk(root)):
    subdirs.sort()
    for other in ("kustomization.yml", "Kustomization"):
        if other in files:
            problems.append("%s: name it kustomization.yaml"
                            % os.path.relpath(os.path.join(directory, other), root))
    if "kustomization.yaml" in files:
        kustomizations.append(render(directory))

json.dump({"kustomizations": kustomizations, "problems": problems}, sys.stdout, default=str)
"##;

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn manifests_dir() -> PathBuf {
    repository().join("deploy").join("kubernetes")
}

fn venv_python() -> PathBuf {
    python_venv::build(&Venv {
        name: "kubernetes-validate-venv",
        what: KUBERNETES_VALIDATE,
        stamp_file: ".iq-kubernetes-validate-stamp",
        stamp: format!("{KUBERNETES_VALIDATE}\n"),
        requirements: vec![KUBERNETES_VALIDATE.into()],
        no_venv_hint: "the manifest test needs python3 with the venv module \
                       (Debian: apt-get install python3-venv)",
        pip_hint: "is PyPI reachable?",
    })
}

/// The renderer's answer: every kustomization with its objects, and every problem.
fn render() -> Value {
    let python = venv_python();
    let request = json!({
        "root": manifests_dir(),
        "versions": KUBERNETES_VERSIONS,
    });
    let mut out = tempfile::tempfile().expect("a temporary file for the output");
    let mut err = tempfile::tempfile().expect("a temporary file for the errors");
    let mut child = Command::new(&python)
        .arg("-c")
        .arg(RENDER_AND_VALIDATE)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("PYTHONPATH")
        .stdin(Stdio::piped())
        .stdout(out.try_clone().expect("clone the output file"))
        .stderr(err.try_clone().expect("clone the error file"))
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", python.display()));
    child
        .stdin
        .take()
        .expect("the renderer's stdin")
        .write_all(request.to_string().as_bytes())
        .expect("send the request");
    let deadline = Instant::now() + DEADLINE;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the renderer") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("rendering and validating the manifests took more than {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |file: &mut fs::File| {
        let mut text = String::new();
        file.rewind().expect("rewind");
        file.read_to_string(&mut text).expect("read the output");
        text
    };
    let (stdout, stderr) = (read(&mut out), read(&mut err));
    assert!(
        status.success(),
        "the renderer failed ({status}):\n{stderr}"
    );
    serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("the renderer's answer is not JSON: {e}\n{stdout}\n{stderr}"))
}

fn rendered() -> &'static Value {
    static RENDERED: OnceLock<Value> = OnceLock::new();
    RENDERED.get_or_init(render)
}

/// The kustomization of `dir` (relative to `deploy/kubernetes`, `.` for itself).
fn kustomization(dir: &str) -> &'static Value {
    rendered()["kustomizations"]
        .as_array()
        .expect("kustomizations")
        .iter()
        .find(|k| k["dir"] == dir)
        .unwrap_or_else(|| panic!("no kustomization.yaml in deploy/kubernetes/{dir}"))
}

/// The rendered entry (`source`, `object`, maybe `generated`) of one object.
fn entry(dir: &str, kind: &str, name: &str) -> &'static Value {
    kustomization(dir)["objects"]
        .as_array()
        .expect("objects")
        .iter()
        .find(|e| e["object"]["kind"] == kind && e["object"]["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("deploy/kubernetes/{dir} has no {kind} {name}"))
}

fn object(dir: &str, kind: &str, name: &str) -> &'static Value {
    &entry(dir, kind, name)["object"]
}

fn deployment() -> &'static Value {
    object(".", "Deployment", "iq-service")
}

fn container() -> &'static Value {
    let containers = deployment()["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers");
    assert_eq!(containers.len(), 1, "one container per pod");
    &containers[0]
}

/// The settings of `config.env`, as the generated ConfigMap holds them.
fn config() -> BTreeMap<String, String> {
    let data = object(".", "ConfigMap", "iq-service-config")["data"]
        .as_object()
        .expect("the ConfigMap's data");
    data.iter()
        .map(|(k, v)| (k.clone(), v.as_str().expect("a string").to_owned()))
        .collect()
}

fn number(value: &Value, what: &str) -> u64 {
    value
        .as_u64()
        .unwrap_or_else(|| panic!("{what}: expected a number, found {value}"))
}

/// The port of an `ADDR:PORT` setting.
fn port_of(addr: &str) -> u64 {
    addr.rsplit_once(':')
        .and_then(|(_, port)| port.parse().ok())
        .unwrap_or_else(|| panic!("{addr:?} has no port"))
}

/// The container port named `name`.
fn container_port(name: &str) -> u64 {
    let port = container()["ports"]
        .as_array()
        .expect("ports")
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("the container has no port named {name}"));
    number(&port["containerPort"], name)
}

/// A memory quantity in MiB (`Mi` or `Gi` only).
fn mebibytes(quantity: &str) -> u64 {
    let (digits, factor) = if let Some(d) = quantity.strip_suffix("Gi") {
        (d, 1024)
    } else if let Some(d) = quantity.strip_suffix("Mi") {
        (d, 1)
    } else {
        panic!("{quantity:?}: write memory in Mi or Gi")
    };
    digits.parse::<u64>().expect("a whole number") * factor
}

/// The number after `marker` in `file` (a path in the repository): how the test reads
/// a timeout the code does not export.
fn number_after(file: &str, marker: &str) -> u64 {
    let source = fs::read_to_string(repository().join(file)).expect("read the source");
    let start = source.find(marker).unwrap_or_else(|| {
        panic!("{file} no longer contains {marker:?}: update the grace period check")
    }) + marker.len();
    let digits: String = source[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("{file}: no number after {marker:?}"))
}

/// The string literals of Rust `source`, each with the code before it; comments, char
/// literals and escapes skipped (raw strings are not expected).
fn string_literals(source: &str) -> Vec<(&str, String)> {
    let bytes = source.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = source[i..].find('\n').map_or(bytes.len(), |end| i + end);
            }
            b'\'' if bytes.get(i + 1) == Some(&b'\\') => i += 4,
            b'\'' if bytes.get(i + 2) == Some(&b'\'') => i += 3,
            b'"' => {
                let mut literal = String::new();
                let mut j = i + 1;
                while let Some(&byte) = bytes.get(j).filter(|b| **b != b'"') {
                    if byte == b'\\' {
                        j += 1;
                    }
                    literal.extend(bytes.get(j).map(|b| char::from(*b)));
                    j += 1;
                }
                found.push((&source[..i], literal));
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    found
}

/// Every `"NAME"` passed as the first argument of a call (`var("..")`, `parsed("..",`,
/// `flag("..")`) in the files that read the environment, outside their unit tests: the
/// variables the service reads itself. There is no public list of them to use instead.
fn variables_read_by_the_code() -> BTreeSet<String> {
    let mut files = vec![repository().join("src").join("settings.rs")];
    let telemetry = repository().join("src").join("telemetry");
    for entry in fs::read_dir(&telemetry).expect("src/telemetry") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    let mut names = BTreeSet::new();
    for file in files {
        let source = fs::read_to_string(&file).expect("read the source");
        let code = source.split("#[cfg(test)]").next().unwrap_or_default();
        for (before, name) in string_literals(code) {
            let is_variable = name.starts_with(|c: char| c.is_ascii_uppercase())
                && name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
            if is_variable && before.trim_end().ends_with('(') {
                names.insert(name);
            }
        }
    }
    names
}

/// Every `.yaml` file under `dir`, relative to it.
fn yaml_files(dir: &Path, prefix: &str, out: &mut BTreeSet<String>) {
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

fn labels_match(selector: &Value, labels: &Value, what: &str) {
    let selector = selector.as_object().expect("matchLabels");
    assert!(!selector.is_empty(), "{what}: an empty selector");
    for (key, value) in selector {
        assert_eq!(
            &labels[key], value,
            "{what}: selects {key}={value}, not the pods' label"
        );
    }
}

#[test]
fn every_manifest_is_valid_and_listed() {
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

#[test]
fn three_replicas_probed_on_readyz_and_healthz() {
    let spec = &deployment()["spec"];
    assert_eq!(spec["replicas"], 3);
    labels_match(
        &spec["selector"]["matchLabels"],
        &spec["template"]["metadata"]["labels"],
        "the Deployment",
    );
    assert_eq!(spec["strategy"]["type"], "RollingUpdate");
    assert_eq!(
        spec["strategy"]["rollingUpdate"]["maxUnavailable"], 0,
        "a rolling update removes an old pod only once a new one is ready"
    );

    let c = container();
    let probe = |name: &str| {
        let probe = &c[name]["httpGet"];
        assert_eq!(probe["port"], "http", "{name} asks the public listener");
        probe["path"].as_str().unwrap_or_default().to_owned()
    };
    assert_eq!(probe("readinessProbe"), "/readyz");
    assert_eq!(probe("livenessProbe"), "/healthz");
    assert_eq!(probe("startupProbe"), "/healthz");

    for kind in ["requests", "limits"] {
        for resource in ["cpu", "memory"] {
            assert!(
                c["resources"][kind][resource].is_string(),
                "resources.{kind}.{resource} is set"
            );
        }
    }
    // The result cache and an uploaded quote file fit in the memory limit.
    let settings = config();
    let setting = |name: &str| -> u64 {
        settings
            .get(name)
            .unwrap_or_else(|| panic!("config.env sets {name}"))
            .parse()
            .expect("a number")
    };
    let limit = mebibytes(c["resources"]["limits"]["memory"].as_str().unwrap());
    assert!(
        limit > setting("PAGE_CACHE_MB") + setting("IMPORT_MAX_MB"),
        "a memory limit of {limit} MiB leaves no room for the cache and an import"
    );

    // Not root, as the image's user, with nothing to write.
    let dockerfile = fs::read_to_string(repository().join("deploy").join("Dockerfile"))
        .expect("deploy/Dockerfile");
    let uid: u64 = dockerfile
        .split("--uid ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|uid| uid.parse().ok())
        .expect("the image's user id in deploy/Dockerfile (useradd --uid)");
    let pod = &spec["template"]["spec"]["securityContext"];
    assert_eq!(pod["runAsNonRoot"], true);
    assert_eq!(pod["runAsUser"], uid, "the image's user");
    let own = &c["securityContext"];
    assert_eq!(own["readOnlyRootFilesystem"], true);
    assert_eq!(own["allowPrivilegeEscalation"], false);
    assert_eq!(own["capabilities"]["drop"], json!(["ALL"]));
}

#[test]
fn the_grace_period_outlasts_the_services_stop() {
    let in_flight = number_after("src/http/listener.rs", ".shutdown_timeout(");
    let drain = number_after(
        "src/startup.rs",
        "const DRAIN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(",
    );
    let pre_stop = &container()["lifecycle"]["preStop"];
    let pre_stop = number(&pre_stop["sleep"]["seconds"], "the preStop sleep");
    assert!(
        pre_stop >= 5,
        "the preStop sleep gives the load balancers time to stop routing"
    );
    let needed = pre_stop + in_flight + drain + TELEMETRY_SHUTDOWN_SECS;
    let grace = number(
        &deployment()["spec"]["template"]["spec"]["terminationGracePeriodSeconds"],
        "terminationGracePeriodSeconds",
    );
    assert!(
        grace > needed,
        "terminationGracePeriodSeconds {grace} must exceed the preStop sleep ({pre_stop} s) \
         plus the service's stop: requests {in_flight} s, quota drain {drain} s, traces \
         {TELEMETRY_SHUTDOWN_SECS} s"
    );
}

#[test]
fn secrets_from_the_secret_and_every_setting_a_real_one() {
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

    // Every setting is a variable the service reads, and none is a secret.
    let known = variables_read_by_the_code();
    for sure in [
        "DATABASE_URL",
        "KEY_SECRET",
        "LISTEN_ADDR",
        "DB_ACQUIRE_TIMEOUT_MS",
        "OTEL_SERVICE_NAME",
    ] {
        assert!(
            known.contains(sure),
            "reading variable names from the code found no {sure}: {known:?}"
        );
    }
    let telemetry = fs::read_to_string(repository().join("src/telemetry/mod.rs")).unwrap();
    assert!(
        telemetry.contains("EnvFilter::try_from_default_env"),
        "RUST_LOG is read through EnvFilter"
    );
    let settings = config();
    for name in settings.keys() {
        assert!(
            known.contains(name) || LIBRARY_VARIABLES.contains(&name.as_str()),
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
}

#[test]
fn traffic_reaches_http_and_prometheus_reaches_metrics() {
    let settings = config();
    let listen = &settings["LISTEN_ADDR"];
    let metrics = &settings["METRICS_ADDR"];
    assert_eq!(port_of(listen), container_port("http"), "LISTEN_ADDR");
    assert_eq!(port_of(metrics), container_port("metrics"), "METRICS_ADDR");
    assert!(
        metrics.starts_with("0.0.0.0:"),
        "METRICS_ADDR listens on the pod's address, for Prometheus (its default is the pod \
         itself only)"
    );

    let annotations = &deployment()["spec"]["template"]["metadata"]["annotations"];
    assert_eq!(annotations["prometheus.io/scrape"], "true");
    assert_eq!(annotations["prometheus.io/path"], "/metrics");
    assert_eq!(
        annotations["prometheus.io/port"],
        container_port("metrics").to_string()
    );

    let pod_labels = &deployment()["spec"]["template"]["metadata"]["labels"];
    let service = object(".", "Service", "iq-service");
    labels_match(&service["spec"]["selector"], pod_labels, "the Service");
    let ports = service["spec"]["ports"].as_array().expect("ports");
    let targets: BTreeMap<&str, &str> = ports
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap(),
                p["targetPort"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        targets,
        BTreeMap::from([("http", "http"), ("metrics", "metrics")])
    );

    // The Ingress routes the public listener only; imports fit through it.
    let ingress = object(".", "Ingress", "iq-service");
    for rule in ingress["spec"]["rules"].as_array().expect("rules") {
        for path in rule["http"]["paths"].as_array().expect("paths") {
            let backend = &path["backend"]["service"];
            assert_eq!(backend["name"], "iq-service");
            assert_eq!(backend["port"], json!({"name": "http"}), "never /metrics");
        }
    }
    let body = ingress["metadata"]["annotations"]["nginx.ingress.kubernetes.io/proxy-body-size"]
        .as_str()
        .expect("the Ingress's body-size limit");
    let body_mib: u64 = body
        .strip_suffix('m')
        .and_then(|n| n.parse().ok())
        .expect("a size in m");
    let import_mib: u64 = settings["IMPORT_MAX_MB"].parse().unwrap();
    assert!(
        body_mib > import_mib,
        "the Ingress takes bodies of {body}, the service quote files of {import_mib} MiB"
    );

    // The optional ServiceMonitor scrapes the Service's port metrics.
    let monitor = object("monitoring", "ServiceMonitor", "iq-service");
    labels_match(
        &monitor["spec"]["selector"]["matchLabels"],
        &service["metadata"]["labels"],
        "the ServiceMonitor",
    );
    for endpoint in monitor["spec"]["endpoints"].as_array().expect("endpoints") {
        assert_eq!(endpoint["port"], "metrics");
        assert_eq!(endpoint["path"], "/metrics");
    }
}

#[test]
fn the_autoscaler_and_the_budget_keep_three_up() {
    let pod_labels = &deployment()["spec"]["template"]["metadata"]["labels"];
    let hpa = object(".", "HorizontalPodAutoscaler", "iq-service");
    assert_eq!(
        hpa["spec"]["scaleTargetRef"],
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "iq-service"})
    );
    assert_eq!(hpa["spec"]["minReplicas"], deployment()["spec"]["replicas"]);
    assert!(number(&hpa["spec"]["maxReplicas"], "maxReplicas") > 3);
    let metrics = hpa["spec"]["metrics"].as_array().expect("metrics");
    assert!(
        metrics
            .iter()
            .any(|m| m["type"] == "Resource" && m["resource"]["name"] == "cpu"),
        "the HPA follows CPU"
    );

    let pdb = object(".", "PodDisruptionBudget", "iq-service");
    labels_match(
        &pdb["spec"]["selector"]["matchLabels"],
        pod_labels,
        "the PodDisruptionBudget",
    );
    assert_eq!(
        pdb["spec"]["maxUnavailable"], 1,
        "a drain takes one pod at a time"
    );
}

#[test]
fn the_fleet_fits_in_the_databases_connections() {
    let cluster = object("postgres", "Cluster", "iq-db");
    assert!(
        number(&cluster["spec"]["instances"], "instances") >= 2,
        "a standby to fail over to"
    );
    let initdb = &cluster["spec"]["bootstrap"]["initdb"];
    assert_eq!(initdb["database"], "iq");
    assert_eq!(initdb["owner"], "iq");
    let max_connections: u64 = cluster["spec"]["postgresql"]["parameters"]["max_connections"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .expect("max_connections is set");

    let hpa = object(".", "HorizontalPodAutoscaler", "iq-service");
    let surge = number(
        &deployment()["spec"]["strategy"]["rollingUpdate"]["maxSurge"],
        "maxSurge (a number of pods)",
    );
    let pods = number(&hpa["spec"]["maxReplicas"], "maxReplicas") + surge;
    let pool = config()
        .get("DB_POOL_SIZE")
        .map_or(PoolSettings::default().max_size as u64, |v| {
            v.parse().unwrap()
        });
    let fleet = pods * (pool + CONNECTIONS_OUTSIDE_THE_POOL);
    assert!(
        fleet + CONNECTION_RESERVE <= max_connections,
        "{pods} pods x ({pool} + {CONNECTIONS_OUTSIDE_THE_POOL}) connections = {fleet}, plus \
         a reserve of {CONNECTION_RESERVE}, exceed max_connections {max_connections}"
    );
}
