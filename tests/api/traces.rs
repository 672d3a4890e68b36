//! Traces reach an OTLP/HTTP receiver, one per request, linked by `request_id`.
//!
//! A small OTLP receiver runs inside the test; the real binary runs as a child process
//! pointed at it, with a batch delay of a minute, so spans can only arrive through the
//! shutdown flush: the tests also prove nothing queued is lost at a graceful stop. One
//! receiver speaks HTTPS with a certificate of its own, as managed collectors do.

use std::collections::HashMap;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::Span as ProtoSpan;
use prost::Message;
use reqwest::Method;
use serde_json::{json, Value};

use crate::child::{database_name, drop_database, Output, Service};
use crate::helpers::{create_database, TestApp, PASSWORD};
use crate::otlp::Receiver;

/// A received span, flattened: ids as hex, attributes as strings.
#[derive(Debug, Clone)]
struct Received {
    trace_id: String,
    span_id: String,
    parent_span_id: String,
    name: String,
    attributes: HashMap<String, String>,
    /// The names of the span's events.
    events: Vec<String>,
    service_name: String,
}

impl Received {
    fn attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }
}

fn text(value: &Option<opentelemetry_proto::tonic::common::v1::AnyValue>) -> String {
    match value.as_ref().and_then(|v| v.value.as_ref()) {
        Some(AnyValue::StringValue(s)) => s.clone(),
        Some(AnyValue::IntValue(i)) => i.to_string(),
        Some(AnyValue::BoolValue(b)) => b.to_string(),
        Some(AnyValue::DoubleValue(d)) => d.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

fn flatten(request: ExportTraceServiceRequest) -> Vec<Received> {
    let mut spans = Vec::new();
    for resource_spans in request.resource_spans {
        let service_name = resource_spans
            .resource
            .iter()
            .flat_map(|r| &r.attributes)
            .find(|kv| kv.key == "service.name")
            .map(|kv| text(&kv.value))
            .unwrap_or_default();
        for scope in resource_spans.scope_spans {
            for span in scope.spans {
                let ProtoSpan {
                    trace_id,
                    span_id,
                    parent_span_id,
                    name,
                    attributes,
                    events,
                    ..
                } = span;
                spans.push(Received {
                    trace_id: hex(&trace_id),
                    span_id: hex(&span_id),
                    parent_span_id: hex(&parent_span_id),
                    name,
                    attributes: attributes
                        .iter()
                        .map(|kv| (kv.key.clone(), text(&kv.value)))
                        .collect(),
                    events: events.into_iter().map(|e| e.name).collect(),
                    service_name: service_name.clone(),
                });
            }
        }
    }
    spans
}

/// Every span the receiver got so far.
fn received(receiver: &Receiver) -> Vec<Received> {
    receiver
        .exports()
        .iter()
        .flat_map(|export| {
            flatten(ExportTraceServiceRequest::decode(&export.body[..]).expect("an OTLP body"))
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn request_id(reply: &Value) -> String {
    reply["request_id"]
        .as_str()
        .expect("a request_id")
        .to_string()
}

/// The root span of the request `id`, and every span of its trace.
fn trace_of<'a>(spans: &'a [Received], id: &str) -> (&'a Received, Vec<&'a Received>) {
    let roots: Vec<_> = spans
        .iter()
        .filter(|s| s.attr("request_id") == Some(id))
        .collect();
    assert_eq!(roots.len(), 1, "one root span for {id}: {roots:#?}");
    let root = roots[0];
    let trace = spans
        .iter()
        .filter(|s| s.trace_id == root.trace_id)
        .collect();
    (root, trace)
}

fn child_named<'a>(trace: &[&'a Received], parent: &Received, name: &str) -> &'a Received {
    trace
        .iter()
        .copied()
        .find(|s| s.name == name && s.parent_span_id == parent.span_id)
        .unwrap_or_else(|| panic!("no {name} under {}: {trace:#?}", parent.name))
}

#[actix_web::test]
async fn every_request_is_one_trace_linked_by_its_request_id() {
    let receiver = Receiver::start();
    let database_url = create_database().await;
    let endpoint = receiver.endpoint();
    let mut service = Service::start(
        &database_url,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("OTEL_SERVICE_NAME", "iq-test"),
            // Nothing is exported before the shutdown flush.
            ("OTEL_BSP_SCHEDULE_DELAY", "60000"),
            ("OTEL_BSP_MAX_QUEUE_SIZE", "65536"),
            ("DEMO_DATA", "1"),
            ("RUST_LOG", "info"),
        ],
    )
    .await;
    let app = TestApp::attach(&service.base, &database_url).await;
    let admin = app.admin().await;
    let owner = app.user(&admin, "olga", "pro").await;
    let key = app.new_key(&owner, json!({"name": "traced"})).await;

    let daily = json!({"api_name": "index_daily", "params": {"index_code": "GPU_Index"}});
    let by_key = app.query_with(daily.clone(), Some(&key.key)).await;
    assert_eq!(by_key.code(), 0, "{}", by_key.body);
    let by_visitor = app.query(json!({"api_name": "index_latest"})).await;
    assert_eq!(by_visitor.code(), 0, "{}", by_visitor.body);
    let bad_key = app
        .query_with(daily.clone(), Some("iq_not_a_real_key"))
        .await;
    assert_eq!(bad_key.code(), 40102, "{}", bad_key.body);
    let listing = app.get_as(&owner, "/api/v1/keys").await;
    assert_eq!(listing.code(), 0, "{}", listing.body);
    let unknown = app.get("/api/v1/nowhere").await;
    assert_eq!(unknown.code(), 40401, "{}", unknown.body);
    // An import the D8 rules refuse: traced like any other, with its own span.
    let csv = "trade_date,index_code,specification,weight,price\n\
               2026-11-19,No_Such_Index,H100,1,100\n";
    let import = app.import_file(&admin, "bad.csv", csv.into()).await;
    assert_eq!(import.code(), 40002, "{}", import.body);

    // The key's membership: the front actor's span says the key came from memory.
    let membership = app.membership_with(&key.key).await;
    assert_eq!(membership.code(), 0, "{}", membership.body);

    // A caller's own trace continues into ours.
    let remote_trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let remote_parent = "00f067aa0ba902b7";
    let continued = app
        .request(Method::POST, "/api/v1/query")
        .header(
            "traceparent",
            format!("00-{remote_trace}-{remote_parent}-01"),
        )
        .header("X-API-Key", &key.key)
        .json(&daily)
        .send()
        .await
        .unwrap();
    let continued = TestApp::reply(continued).await.body;
    assert_eq!(continued["code"], 0, "{continued}");

    let output = service.stop_cleanly();
    let spans = received(&receiver);
    receiver.stop().await;
    drop_database(&database_name(&database_url)).await;
    assert!(!spans.is_empty(), "no span arrived: {}", output.logs());
    assert!(spans.iter().all(|s| s.service_name == "iq-test"));

    // The key's query: root, then the front actor, which says how auth, quota and the
    // dataset went; what missed a cache is a lookup under it, with its named SQL
    // statements and their row counts.
    let key_request = request_id(&by_key.body);
    let (root, trace) = trace_of(&spans, &key_request);
    assert_eq!(root.parent_span_id, "", "a root span: {root:#?}");
    assert_eq!(root.name, "POST /api/v1/query");
    assert_eq!(root.attr("http.route"), Some("/api/v1/query"));
    assert_eq!(root.attr("http.request.method"), Some("POST"));
    assert_eq!(root.attr("http.response.status_code"), Some("200"));
    assert_eq!(root.attr("code"), Some("0"));
    assert_eq!(root.attr("caller"), Some("key"));
    assert_eq!(root.attr("key_id"), Some(key.id.as_str()));
    assert_eq!(root.attr("user_id"), Some(owner.user_id.as_str()));
    assert_eq!(root.attr("dataset"), Some("index_daily"));
    // The access line is a log line only: the span already says all it says.
    assert!(root.events.is_empty(), "{root:#?}");
    let front = child_named(&trace, root, "front.run_query");
    assert_eq!(front.attr("auth.cache.hit"), Some("false"), "{front:#?}");
    assert_eq!(front.attr("dataset.cache.hit"), Some("false"), "{front:#?}");
    assert!(front.attr("dataset.rows").is_some(), "{front:#?}");
    // The key's first call needs a lease: the shard's actor serves it, in its own span.
    child_named(&trace, front, "quota.charge");
    assert_eq!(front.attr("quota.in_memory"), Some("false"), "{front:#?}");
    let lookup = |cache: &str| {
        trace
            .iter()
            .find(|s| {
                s.name == "cache.lookup"
                    && s.parent_span_id == front.span_id
                    && s.attr("cache.name") == Some(cache)
            })
            .unwrap_or_else(|| panic!("no {cache} lookup under front.run_query: {trace:#?}"))
    };
    let page = lookup("pages");
    assert_eq!(page.attr("cache.hit"), Some("false"));
    let page_sql = child_named(&trace, page, "index_daily");
    assert_eq!(page_sql.attr("db.system.name"), Some("postgresql"));
    assert!(page_sql.attr("db.rows").is_some(), "{page_sql:#?}");
    let key_sql = child_named(&trace, lookup("keys"), "keys.lookup");
    assert_eq!(key_sql.attr("db.statement.name"), Some("keys.lookup"));
    // Every span of the trace hangs off the root.
    for span in &trace {
        let mut at = *span;
        let mut steps = 0;
        while at.span_id != root.span_id {
            at = trace
                .iter()
                .find(|p| p.span_id == at.parent_span_id)
                .unwrap_or_else(|| panic!("{} is not under the root: {trace:#?}", span.name));
            steps += 1;
            assert!(steps < 20, "a parent cycle");
        }
    }

    // The visitor's query, the refused key, the back office and an unknown path are
    // each one trace of their own, with the caller and the code.
    let (visitor_root, _) = trace_of(&spans, &request_id(&by_visitor.body));
    assert_eq!(visitor_root.attr("caller"), Some("visitor"));
    assert_eq!(visitor_root.attr("key_id"), None);
    let (refused_root, _) = trace_of(&spans, &request_id(&bad_key.body));
    assert_eq!(refused_root.attr("code"), Some("40102"));
    assert_eq!(refused_root.attr("http.response.status_code"), Some("401"));
    let (listing_root, _) = trace_of(&spans, &request_id(&listing.body));
    assert_eq!(listing_root.name, "GET /api/v1/keys");
    assert_eq!(listing_root.attr("caller"), Some("session"));
    let (unknown_root, _) = trace_of(&spans, &request_id(&unknown.body));
    assert_eq!(unknown_root.attr("http.route"), Some("unmatched"));
    let (membership_root, membership_trace) = trace_of(&spans, &request_id(&membership.body));
    assert_eq!(membership_root.name, "GET /api/v1/membership");
    let shown = child_named(&membership_trace, membership_root, "front.show_membership");
    assert_eq!(shown.attr("auth.cache.hit"), Some("true"), "{shown:#?}");
    let (import_root, import_trace) = trace_of(&spans, &request_id(&import.body));
    assert_eq!(import_root.name, "POST /api/v1/admin/imports");
    let import_span = child_named(&import_trace, import_root, "import");
    assert_eq!(
        import_span.attr("result"),
        Some("rejected"),
        "{import_span:#?}"
    );
    assert_eq!(import_span.attr("file_name"), Some("bad.csv"));
    assert!(
        import_trace
            .iter()
            .any(|s| s.attr("db.statement.name") == Some("imports.record")),
        "the refused import's record statement: {import_trace:#?}"
    );
    let roots: Vec<_> = [&by_key, &by_visitor, &bad_key, &listing, &unknown]
        .iter()
        .map(|r| trace_of(&spans, &request_id(&r.body)).0.trace_id.clone())
        .collect();
    let distinct: std::collections::HashSet<_> = roots.iter().collect();
    assert_eq!(distinct.len(), roots.len(), "one trace per request");

    let (continued_root, continued_trace) = trace_of(&spans, &request_id(&continued));
    assert_eq!(continued_root.trace_id, remote_trace);
    assert_eq!(continued_root.parent_span_id, remote_parent);
    // The same query again: key and page come from memory, which the front span says,
    // and no lookup or statement span is made for them: the request is two spans.
    let front = child_named(&continued_trace, continued_root, "front.run_query");
    assert_eq!(front.attr("auth.cache.hit"), Some("true"), "{front:#?}");
    assert_eq!(front.attr("dataset.cache.hit"), Some("true"), "{front:#?}");
    // With budget in hand, the charge is settled in memory, which the front span says.
    assert_eq!(front.attr("quota.in_memory"), Some("true"), "{front:#?}");
    assert!(
        !continued_trace.iter().any(|s| s.name == "cache.lookup"
            || s.name == "quota.charge"
            || s.attr("db.statement.name").is_some()),
        "a cached query with budget in hand makes no lookup, charge or statement span: \
         {continued_trace:#?}"
    );
    assert_eq!(continued_trace.len(), 2, "{continued_trace:#?}");

    // No credential in any attribute of any span.
    let secrets = [
        key.key.as_str(),
        PASSWORD,
        owner.cookie.as_str(),
        owner.csrf.as_str(),
        admin.cookie.as_str(),
        "iq_not_a_real_key",
    ];
    for span in &spans {
        for (name, value) in &span.attributes {
            for secret in secrets {
                assert!(
                    !value.contains(secret),
                    "a secret in attribute {name} of span {}: {value}",
                    span.name
                );
            }
        }
    }

    // The access log line of the key's request carries the ids of its trace.
    let access = output
        .stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l["request_id"] == key_request.as_str() && l["message"] == "request completed")
        .unwrap_or_else(|| panic!("no access log line for {key_request}:\n{}", output.stderr));
    assert_eq!(access["trace_id"], root.trace_id.as_str(), "{access}");
    assert_eq!(access["span_id"], root.span_id.as_str(), "{access}");
    assert_eq!(access["code"], 0);
    assert!(access["latency_ms"].as_f64().is_some(), "{access}");
}

/// Without an exporter, spans are not built for OpenTelemetry, but log lines still carry
/// a trace and a span id, and a caller's `traceparent` is continued in them.
#[actix_web::test]
async fn without_export_log_lines_carry_ids_and_continue_the_callers_trace() {
    let database_url = create_database().await;
    let mut service = Service::start(&database_url, &[("RUST_LOG", "info")]).await;
    let http = crate::helpers::http_client();
    let remote_trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let get = |traceparent: Option<String>| {
        let mut request = http.get(format!("{}/api/v1/nowhere", service.base));
        if let Some(traceparent) = traceparent {
            request = request.header("traceparent", traceparent);
        }
        async move {
            let reply: Value = request.send().await.unwrap().json().await.unwrap();
            request_id(&reply)
        }
    };
    let continued = get(Some(format!("00-{remote_trace}-00f067aa0ba902b7-01"))).await;
    let fresh = get(None).await;
    let output = service.stop();
    drop_database(&database_name(&database_url)).await;

    let line = |id: &str| {
        output
            .stderr
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|l| l["request_id"] == id && l["message"] == "request completed")
            .unwrap_or_else(|| {
                panic!(
                    "no access line for {id} (exit {:?}, killed: {}):\n{}",
                    output.status, output.killed, output.stderr
                )
            })
    };
    let hex = |v: &Value, digits: usize| {
        let text = v.as_str().unwrap_or_default();
        text.len() == digits
            && text.bytes().all(|b| b.is_ascii_hexdigit())
            && text.bytes().any(|b| b != b'0')
    };
    let (continued, fresh) = (line(&continued), line(&fresh));
    assert_eq!(continued["trace_id"], remote_trace, "{continued}");
    assert!(hex(&continued["span_id"], 16), "{continued}");
    assert_ne!(
        continued["span_id"], "00f067aa0ba902b7",
        "a span of our own"
    );
    assert!(
        hex(&fresh["trace_id"], 32) && hex(&fresh["span_id"], 16),
        "{fresh}"
    );
    assert_ne!(fresh["trace_id"], remote_trace);
}

/// Over HTTPS, spans reach a collector whose certificate the service was told to trust
/// (`OTEL_EXPORTER_OTLP_CERTIFICATE`), gzipped when asked; told nothing, the service
/// refuses the unknown certificate, sends nothing, says so, and serves all the same.
#[actix_web::test]
async fn traces_reach_an_https_collector_only_when_its_certificate_is_trusted() {
    let receiver = Receiver::start_tls();
    let endpoint = receiver.endpoint();
    let ca = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(ca.path(), receiver.certificate.as_deref().unwrap()).unwrap();
    let ca_path = ca.path().to_str().unwrap();
    let database_url = create_database().await;
    let exporting = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_BSP_SCHEDULE_DELAY", "60000"),
        ("RUST_LOG", "info"),
    ];
    let (_, untrusted) = one_request(&database_url, &exporting).await;
    assert!(
        receiver.exports().is_empty(),
        "an unknown certificate was accepted"
    );
    assert!(
        untrusted.stderr.lines().any(|line| {
            serde_json::from_str::<Value>(line).is_ok_and(|l| {
                l["level"] == "ERROR"
                    && l["target"]
                        .as_str()
                        .is_some_and(|t| t.starts_with("opentelemetry"))
            })
        }),
        "the failed export is logged as an error:\n{}",
        untrusted.stderr
    );

    let mut trusted = exporting.to_vec();
    trusted.push(("OTEL_EXPORTER_OTLP_CERTIFICATE", ca_path));
    trusted.push(("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"));
    let (request, output) = one_request(&database_url, &trusted).await;
    let exports = receiver.exports();
    assert!(!exports.is_empty(), "nothing arrived: {}", output.logs());
    assert!(
        exports
            .iter()
            .all(|e| e.encoding.as_deref() == Some("gzip")),
        "every export gzipped"
    );
    let spans = received(&receiver);
    receiver.stop().await;
    drop_database(&database_name(&database_url)).await;
    let (root, _) = trace_of(&spans, &request);
    assert_eq!(root.name, "POST /api/v1/query");
    assert_eq!(root.service_name, "iq-service");
}

/// A service started with `env`, asked one visitor query, and stopped: the query's
/// request id and the service's output.
async fn one_request(database_url: &str, env: &[(&str, &str)]) -> (String, Output) {
    let mut service = Service::start(database_url, env).await;
    let app = TestApp::attach(&service.base, database_url).await;
    let reply = app.query(json!({"api_name": "index_latest"})).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    let output = service.stop_cleanly();
    (request_id(&reply.body), output)
}
