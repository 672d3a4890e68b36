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
//!
//! A file per topic. The harness: `render.rs` runs the Python renderer and validator and
//! keeps its answer; `objects.rs` finds objects and values in that answer; what the
//! service itself says (timeouts, the variables it reads) comes from its code's public
//! items, never its source text. The checks: `listing.rs` (everything validates and is listed), `pods.rs` (replicas,
//! probes, resources, the grace period, the autoscaler and disruption budget),
//! `settings.rs` (the Secret and the ConfigMap), `traffic.rs` (ports, Service, Ingress,
//! scraping), `fleet.rs` (the database's connections). The harness must never assert
//! what a manifest should say, and a check must never run Python itself.

mod fleet;
mod listing;
mod objects;
mod pods;
mod render;
mod settings;
mod traffic;
