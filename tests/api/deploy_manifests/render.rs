//! The harness: the Python renderer of `deploy/kubernetes` (a kustomize subset) and
//! validator (the Kubernetes schemas of `kubernetes-validate`, the CRDs' own), run once
//! per test process in its virtual environment with a deadline; [`rendered`] is its JSON
//! answer. It must never check what the manifests say: the test files do.

use std::fs;
use std::io::{Read, Seek, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::python_venv::{self, Venv};

/// The release of the validator and its bundled schemas.
const KUBERNETES_VALIDATE: &str = "kubernetes-validate==1.37.0";
/// The oldest Kubernetes the manifests are written for (`autoscaling/v2`,
/// `policy/v1`, the preStop `sleep` action), and the newest the validator knows.
const KUBERNETES_VERSIONS: [&str; 2] = ["1.30.0", "1.37.0"];
/// How long rendering and validating may take before Python is killed.
const DEADLINE: Duration = Duration::from_secs(60);

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
                        "tests/api/deploy_manifests/render.rs or do without" % (where, key))
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

pub(super) fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub(super) fn manifests_dir() -> PathBuf {
    repository().join("deploy").join("kubernetes")
}

pub(super) fn venv_python() -> PathBuf {
    python_venv::build(&Venv::pinned(
        "kubernetes-validate-venv",
        ".iq-kubernetes-validate-stamp",
        KUBERNETES_VALIDATE,
        "the manifest test needs python3 with the venv module \
         (Debian: apt-get install python3-venv)",
    ))
}

/// The renderer's answer: every kustomization with its objects, and every problem.
pub(super) fn render() -> Value {
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

pub(super) fn rendered() -> &'static Value {
    static RENDERED: OnceLock<Value> = OnceLock::new();
    RENDERED.get_or_init(render)
}
