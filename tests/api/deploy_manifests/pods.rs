//! The pods: three replicas rolled one at a time, probed on `/readyz` and `/healthz`,
//! with resources that fit the cache and an import, not root; a grace period longer than
//! the service's own stop; an autoscaler and a disruption budget that keep three up.

use std::fs;

use serde_json::json;

use super::objects::{config, container, deployment, labels_match, mebibytes, number, object};
use super::render::repository;

/// Longest the OpenTelemetry SDK waits for the last spans at exit: `Telemetry::shutdown`
/// calls `SdkTracerProvider::shutdown`, whose timeout the SDK fixes at 5 s.
const TELEMETRY_SHUTDOWN_SECS: u64 = 5;

#[test]
fn three_replicas_probed_on_readyz_and_healthz() {
    iq_test_support::require!(Python);
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
    iq_test_support::require!(Python);
    let in_flight = iq_service::http::listener::IN_FLIGHT_TIMEOUT.as_secs();
    let drain = iq_service::startup::DRAIN_TIMEOUT.as_secs();
    let pre_stop = &container()["lifecycle"]["preStop"];
    let pre_stop = number(&pre_stop["sleep"]["seconds"], "the preStop sleep");
    assert!(
        pre_stop >= 5,
        "the preStop sleep gives the load balancers time to stop routing"
    );
    // SHUTDOWN_DELAY_MS: the drain before the server stops accepting (0 when unset).
    let delay_ms: u64 = config()
        .get("SHUTDOWN_DELAY_MS")
        .map_or(0, |v| v.parse().expect("SHUTDOWN_DELAY_MS is a number"));
    let delay = delay_ms.div_ceil(1000);
    let needed = pre_stop + delay + in_flight + drain + TELEMETRY_SHUTDOWN_SECS;
    let grace = number(
        &deployment()["spec"]["template"]["spec"]["terminationGracePeriodSeconds"],
        "terminationGracePeriodSeconds",
    );
    assert!(
        grace > needed,
        "terminationGracePeriodSeconds {grace} must exceed the preStop sleep ({pre_stop} s) \
         plus the service's stop: drain {delay} s, requests {in_flight} s, quota drain \
         {drain} s, traces {TELEMETRY_SHUTDOWN_SECS} s"
    );
}

#[test]
fn the_autoscaler_and_the_budget_keep_three_up() {
    iq_test_support::require!(Python);
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
