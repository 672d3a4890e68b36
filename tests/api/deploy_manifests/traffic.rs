//! Traffic: the listeners on the container's ports, the Service and the Ingress routing
//! the public one only (with room for an import), Prometheus scraping `/metrics`.

use std::collections::BTreeMap;

use serde_json::json;

use super::objects::{config, container_port, deployment, labels_match, object, port_of};

#[test]
fn traffic_reaches_http_and_prometheus_reaches_metrics() {
    iq_test_support::require!(Python);
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
    // PUBLIC_URL names the host the Ingress serves (D28: links are built from it).
    let hosts: Vec<&str> = ingress["spec"]["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .filter_map(|rule| rule["host"].as_str())
        .collect();
    let public = settings["PUBLIC_URL"].trim_start_matches("https://");
    assert!(
        hosts.contains(&public),
        "PUBLIC_URL {public} among {hosts:?}"
    );
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
