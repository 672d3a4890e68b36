//! The OTLP/HTTP span exporter: a batch of the SDK's `SpanData` encoded straight into an
//! `ExportTraceServiceRequest` (protobuf) and POSTed to the collector.
//!
//! Why not `opentelemetry-otlp`'s exporter: it first copies every span into the
//! generated message structs (a vector per id, a string per name and per attribute key
//! and value) and groups them through a hash map, then encodes and frees them all; on a
//! saturated instance that was three quarters of the export thread, itself a tenth of
//! the process. Here a batch is written into one buffer, field by field, with no
//! per-span allocation. The message layout is OpenTelemetry's `trace.proto` (v1); the
//! tests decode what this writes with the generated structs of `opentelemetry-proto`.
//!
//! Settings, the standard variables (traces-specific ones first):
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is) or `OTEL_EXPORTER_OTLP_ENDPOINT`
//! (plus `/v1/traces`), `OTEL_EXPORTER_OTLP_(TRACES_)HEADERS` (`key=value` pairs,
//! comma-separated, values percent-decoded), `OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT`
//! (milliseconds, default 10,000). Plain HTTP: the service ships no TLS stack.
//!
//! It runs on the batch processor's own thread and never on a request's.

use std::fmt;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use opentelemetry::trace::{SpanKind, Status};
use opentelemetry::{Array, StringValue, Value};
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use opentelemetry_sdk::Resource;
use prost::encoding::{encode_key, encode_varint, WireType};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE};

/// Where and how spans are sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub endpoint: String,
    /// Checked at start and sent with every export.
    pub headers: HeaderMap,
    pub timeout: Duration,
}

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

impl Target {
    /// From the standard variables, read through `var` (blank counts as unset); `None`
    /// when no endpoint is set.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Option<Self>, String> {
        let traces_or = |specific: &str, general: &str| var(specific).or_else(|| var(general));
        let endpoint = match var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            Some(endpoint) => endpoint,
            None => match var("OTEL_EXPORTER_OTLP_ENDPOINT") {
                Some(base) => format!("{}/v1/traces", base.trim_end_matches('/')),
                None => return Ok(None),
            },
        };
        // Checked now, so a typo turns export off with an error at start rather than a
        // warning at every batch.
        match reqwest::Url::parse(&endpoint) {
            Ok(url) if url.scheme() == "http" => {}
            Ok(url) => {
                return Err(format!(
                    "OTLP endpoint {endpoint:?}: {} is not supported (plain http only)",
                    url.scheme()
                ))
            }
            Err(err) => return Err(format!("OTLP endpoint {endpoint:?} is not a URL: {err}")),
        }
        let mut headers = HeaderMap::new();
        if let Some(list) = traces_or(
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
            "OTEL_EXPORTER_OTLP_HEADERS",
        ) {
            for pair in list.split(',').filter(|p| !p.trim().is_empty()) {
                let bad = || format!("OTEL_EXPORTER_OTLP_HEADERS: {pair:?} is not a header");
                let (name, value) = pair.split_once('=').ok_or_else(bad)?;
                let decode = |text: &str| {
                    percent_encoding::percent_decode_str(text.trim())
                        .decode_utf8()
                        .map(|t| t.into_owned())
                        .map_err(|_| bad())
                };
                let name = HeaderName::try_from(decode(name)?).map_err(|_| bad())?;
                let value = HeaderValue::try_from(decode(value)?).map_err(|_| bad())?;
                headers.append(name, value);
            }
        }
        let timeout =
            match traces_or(
                "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
                "OTEL_EXPORTER_OTLP_TIMEOUT",
            ) {
                Some(ms) => Duration::from_millis(ms.trim().parse().map_err(|_| {
                    format!("OTEL_EXPORTER_OTLP_TIMEOUT: {ms:?} is not milliseconds")
                })?),
                None => DEFAULT_TIMEOUT,
            };
        Ok(Some(Target {
            endpoint,
            headers,
            timeout,
        }))
    }
}

/// The exporter the batch processor is given.
pub struct OtlpHttp {
    target: Target,
    /// The `Resource` message, encoded once.
    resource: Vec<u8>,
    resource_schema: String,
    /// Made on first use, on the export thread: a blocking client may not be made or
    /// dropped inside the async runtime.
    client: OnceLock<reqwest::blocking::Client>,
}

impl fmt::Debug for OtlpHttp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OtlpHttp")
            .field("endpoint", &self.target.endpoint)
            .finish_non_exhaustive()
    }
}

impl OtlpHttp {
    pub fn new(target: Target) -> Self {
        OtlpHttp {
            target,
            resource: Vec::new(),
            resource_schema: String::new(),
            client: OnceLock::new(),
        }
    }

    /// The request body for `batch`.
    fn body(&self, batch: &[SpanData]) -> Vec<u8> {
        let mut out = Vec::with_capacity(batch.len() * 256 + self.resource.len() + 64);
        encode(&mut out, &self.resource, &self.resource_schema, batch);
        out
    }

    fn send(&self, body: Vec<u8>) -> Result<(), String> {
        let client = self.client.get_or_init(|| {
            reqwest::blocking::Client::builder()
                .timeout(self.target.timeout)
                .default_headers(self.target.headers.clone())
                .build()
                .unwrap_or_else(|_| reqwest::blocking::Client::new())
        });
        let response = client
            .post(&self.target.endpoint)
            .header(CONTENT_TYPE, "application/x-protobuf")
            .body(body)
            .send()
            .map_err(|e| e.to_string())?;
        let status = response.status();
        match status.is_success() {
            true => Ok(()),
            false => Err(format!("the collector answered {status}")),
        }
    }
}

impl SpanExporter for OtlpHttp {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let spans = batch.len();
        self.send(self.body(&batch)).map_err(|problem| {
            // Outside any span: it reaches the log, never a trace.
            tracing::warn!(%problem, spans, endpoint = %self.target.endpoint, "spans could not be exported");
            OTelSdkError::InternalFailure(problem)
        })
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.resource.clear();
        for (key, value) in resource.iter() {
            message(&mut self.resource, 1, |out| {
                key_value(out, key.as_str(), value)
            });
        }
        self.resource_schema = resource.schema_url().unwrap_or_default().to_owned();
    }
}

// --- The encoding: field numbers are those of trace.proto, common.proto and
// --- resource.proto (opentelemetry.proto.*.v1).

/// `ExportTraceServiceRequest { resource_spans: [ResourceSpans { resource, scope_spans:
/// [ScopeSpans { scope, spans }], schema_url }] }`: one resource (the process), and one
/// scope per run of spans with the same instrumentation scope.
fn encode(out: &mut Vec<u8>, resource: &[u8], resource_schema: &str, batch: &[SpanData]) {
    message(out, 1, |out| {
        message(out, 1, |out| out.extend_from_slice(resource));
        for run in batch.chunk_by(|a, b| a.instrumentation_scope == b.instrumentation_scope) {
            message(out, 2, |out| {
                let scope = &run[0].instrumentation_scope;
                message(out, 1, |out| {
                    string(out, 1, scope.name());
                    string(out, 2, scope.version().unwrap_or_default());
                    for kv in scope.attributes() {
                        message(out, 3, |out| key_value(out, kv.key.as_str(), &kv.value));
                    }
                });
                for span in run {
                    message(out, 2, |out| encode_span(out, span));
                }
                string(out, 3, scope.schema_url().unwrap_or_default());
            });
        }
        string(out, 3, resource_schema);
    });
}

/// `Span`, as `opentelemetry-proto` writes it: an invalid parent is no parent, and the
/// flags carry the trace flags and whether the parent is remote.
fn encode_span(out: &mut Vec<u8>, span: &SpanData) {
    let context = &span.span_context;
    bytes(out, 1, &context.trace_id().to_bytes());
    bytes(out, 2, &context.span_id().to_bytes());
    string(out, 3, &context.trace_state().header());
    if span.parent_span_id != opentelemetry::trace::SpanId::INVALID {
        bytes(out, 4, &span.parent_span_id.to_bytes());
    }
    string(out, 5, &span.name);
    let kind = match span.span_kind {
        SpanKind::Internal => 1,
        SpanKind::Server => 2,
        SpanKind::Client => 3,
        SpanKind::Producer => 4,
        SpanKind::Consumer => 5,
    };
    varint(out, 6, kind);
    fixed64(out, 7, nanos(span.start_time));
    fixed64(out, 8, nanos(span.end_time));
    for kv in &span.attributes {
        message(out, 9, |out| key_value(out, kv.key.as_str(), &kv.value));
    }
    varint(out, 10, u64::from(span.dropped_attributes_count));
    for event in &span.events.events {
        message(out, 11, |out| {
            fixed64(out, 1, nanos(event.timestamp));
            string(out, 2, &event.name);
            for kv in &event.attributes {
                message(out, 3, |out| key_value(out, kv.key.as_str(), &kv.value));
            }
            varint(out, 4, u64::from(event.dropped_attributes_count));
        });
    }
    varint(out, 12, u64::from(span.events.dropped_count));
    for link in &span.links.links {
        message(out, 13, |out| {
            bytes(out, 1, &link.span_context.trace_id().to_bytes());
            bytes(out, 2, &link.span_context.span_id().to_bytes());
            string(out, 3, &link.span_context.trace_state().header());
            for kv in &link.attributes {
                message(out, 4, |out| key_value(out, kv.key.as_str(), &kv.value));
            }
            varint(out, 5, u64::from(link.dropped_attributes_count));
            fixed32(
                out,
                6,
                flags(
                    link.span_context.is_remote(),
                    link.span_context.trace_flags().to_u8(),
                ),
            );
        });
    }
    varint(out, 14, u64::from(span.links.dropped_count));
    message(out, 15, |out| {
        let (code, text) = match &span.status {
            Status::Unset => (0, ""),
            Status::Ok => (1, ""),
            Status::Error { description } => (2, description.as_ref()),
        };
        string(out, 2, text);
        varint(out, 3, code);
    });
    fixed32(
        out,
        16,
        flags(span.parent_span_is_remote, context.trace_flags().to_u8()),
    );
}

/// `SpanFlags`: the W3C trace flags, "whether the parent is remote is known" (0x100)
/// and "it is remote" (0x200).
fn flags(remote: bool, trace_flags: u8) -> u32 {
    u32::from(trace_flags) | 0x100 | if remote { 0x200 } else { 0 }
}

fn key_value(out: &mut Vec<u8>, key: &str, value: &Value) {
    string(out, 1, key);
    message(out, 2, |out| any_value(out, value));
}

/// `AnyValue`: a oneof, so a zero or an empty string is still written.
fn any_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::String(text) => always_string(out, 1, text.as_str()),
        Value::Bool(b) => {
            encode_key(2, WireType::Varint, out);
            encode_varint(u64::from(*b), out);
        }
        Value::I64(i) => {
            encode_key(3, WireType::Varint, out);
            encode_varint(*i as u64, out);
        }
        Value::F64(f) => {
            encode_key(4, WireType::SixtyFourBit, out);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        Value::Array(array) => message(out, 5, |out| array_values(out, array)),
        other => always_string(out, 1, &other.as_str()),
    }
}

/// `ArrayValue { values: [AnyValue] }`.
fn array_values(out: &mut Vec<u8>, array: &Array) {
    let mut each = |value: Value| message(out, 1, |out| any_value(out, &value));
    match array {
        Array::Bool(values) => values.iter().for_each(|v| each(Value::Bool(*v))),
        Array::I64(values) => values.iter().for_each(|v| each(Value::I64(*v))),
        Array::F64(values) => values.iter().for_each(|v| each(Value::F64(*v))),
        Array::String(values) => values
            .iter()
            .for_each(|v: &StringValue| each(Value::String(v.clone()))),
        other => each(Value::from(other.to_string())),
    }
}

fn nanos(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// A length-delimited field written by `body`; its length is put in front afterwards
/// (a move of the bytes `body` wrote, which is cheap next to copying them into
/// structs first).
fn message(out: &mut Vec<u8>, field: u32, body: impl FnOnce(&mut Vec<u8>)) {
    encode_key(field, WireType::LengthDelimited, out);
    let start = out.len();
    body(out);
    let len = (out.len() - start) as u64;
    let mut prefix = [0u8; 10];
    let mut free = &mut prefix[..];
    encode_varint(len, &mut free);
    let written = 10 - free.len();
    out.splice(start..start, prefix[..written].iter().copied());
}

/// Proto3 scalars: a default value is not written.
fn string(out: &mut Vec<u8>, field: u32, text: &str) {
    bytes(out, field, text.as_bytes());
}

fn always_string(out: &mut Vec<u8>, field: u32, text: &str) {
    encode_key(field, WireType::LengthDelimited, out);
    encode_varint(text.len() as u64, out);
    out.extend_from_slice(text.as_bytes());
}

fn bytes(out: &mut Vec<u8>, field: u32, data: &[u8]) {
    if !data.is_empty() {
        encode_key(field, WireType::LengthDelimited, out);
        encode_varint(data.len() as u64, out);
        out.extend_from_slice(data);
    }
}

fn varint(out: &mut Vec<u8>, field: u32, value: u64) {
    if value != 0 {
        encode_key(field, WireType::Varint, out);
        encode_varint(value, out);
    }
}

fn fixed64(out: &mut Vec<u8>, field: u32, value: u64) {
    if value != 0 {
        encode_key(field, WireType::SixtyFourBit, out);
        out.extend_from_slice(&value.to_le_bytes());
    }
}

fn fixed32(out: &mut Vec<u8>, field: u32, value: u32) {
    if value != 0 {
        encode_key(field, WireType::ThirtyTwoBit, out);
        out.extend_from_slice(&value.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use opentelemetry::trace::{Event, SpanContext, SpanId, TraceFlags, TraceId, TraceState};
    use opentelemetry::{InstrumentationScope, KeyValue};
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
    use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
    use opentelemetry_sdk::trace::{SpanEvents, SpanLinks};
    use proptest::prelude::*;
    use prost::Message;

    use super::*;

    fn target(vars: &[(&str, &str)]) -> Result<Option<Target>, String> {
        let vars: HashMap<_, _> = vars.iter().copied().collect();
        Target::from_vars(|name| vars.get(name).map(|v| v.to_string()))
    }

    #[test]
    fn the_target_follows_the_standard_variables() {
        assert_eq!(target(&[]), Ok(None));
        let general = target(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "api-key=a%20b, x-team = quant",
            ),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(general.endpoint, "http://collector:4318/v1/traces");
        assert_eq!(general.headers.len(), 2);
        assert_eq!(general.headers["api-key"], "a b");
        assert_eq!(general.headers["x-team"], "quant");
        assert_eq!(general.timeout, Duration::from_millis(2500));
        let specific = target(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://traces:9999/custom",
            ),
            ("OTEL_EXPORTER_OTLP_HEADERS", "a=1"),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "b=2"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(specific.endpoint, "http://traces:9999/custom", "used as is");
        assert_eq!(specific.headers.len(), 1);
        assert_eq!(specific.headers["b"], "2");
        assert_eq!(specific.timeout, DEFAULT_TIMEOUT);
        for bad in [
            ("OTEL_EXPORTER_OTLP_HEADERS", "no-equals"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "bad name=1"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x=line%0Abreak"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "soon"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "collector:4318"),
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "https://collector:4318/v1/traces",
            ),
        ] {
            let found = target(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"), bad]);
            assert!(found.is_err(), "{bad:?}: {found:?}");
        }
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![Just(String::new()), "[a-z./_ ]{1,12}", any::<String>()]
    }

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            text().prop_map(Value::from),
            any::<i64>().prop_map(Value::I64),
            any::<bool>().prop_map(Value::Bool),
            (-1e12f64..1e12).prop_map(Value::F64),
            prop::collection::vec(any::<i64>(), 0..3).prop_map(|v| Value::Array(v.into())),
        ]
    }

    fn attributes() -> impl Strategy<Value = Vec<KeyValue>> {
        prop::collection::vec(
            ("[a-z.]{1,10}", value()).prop_map(|(k, v)| KeyValue::new(k, v)),
            0..5,
        )
    }

    fn time() -> impl Strategy<Value = SystemTime> {
        (0u64..4_000_000_000_000_000_000).prop_map(|n| UNIX_EPOCH + Duration::from_nanos(n))
    }

    prop_compose! {
        fn span()(
            trace in 1u128..,
            id in 1u64..,
            parent in any::<u64>(),
            remote in any::<bool>(),
            sampled in any::<bool>(),
            name in text(),
            kind in 0usize..5,
            start in time(),
            end in time(),
            attributes in attributes(),
            events in prop::collection::vec((text(), time(), attributes()), 0..3),
            dropped in (any::<u32>(), any::<u32>()),
            status in prop_oneof![
                Just(Status::Unset),
                Just(Status::Ok),
                text().prop_map(Status::error),
            ],
        ) -> SpanData {
            let flags = if sampled { TraceFlags::SAMPLED } else { TraceFlags::default() };
            let mut span_events = SpanEvents::default();
            span_events.events = events
                .into_iter()
                .map(|(name, at, attributes)| Event::new(name, at, attributes, dropped.1))
                .collect();
            span_events.dropped_count = dropped.0;
            SpanData {
                span_context: SpanContext::new(
                    TraceId::from(trace),
                    SpanId::from(id),
                    flags,
                    false,
                    TraceState::default(),
                ),
                parent_span_id: SpanId::from(parent),
                parent_span_is_remote: remote,
                span_kind: [
                    SpanKind::Internal,
                    SpanKind::Server,
                    SpanKind::Client,
                    SpanKind::Producer,
                    SpanKind::Consumer,
                ][kind]
                    .clone(),
                name: name.into(),
                start_time: start,
                end_time: end,
                attributes,
                dropped_attributes_count: dropped.1,
                events: span_events,
                links: SpanLinks::default(),
                status,
                instrumentation_scope: InstrumentationScope::builder("iq-service").build(),
            }
        }
    }

    proptest! {
        /// What the collector decodes is what `opentelemetry-proto`'s own conversion
        /// of the same spans would have sent.
        #[test]
        fn a_batch_decodes_as_the_reference_conversion_of_it(
            batch in prop::collection::vec(span(), 0..6),
        ) {
            let resource = Resource::builder_empty()
                .with_attributes([
                    KeyValue::new("service.name", "iq-test"),
                    KeyValue::new("host.cores", 2),
                ])
                .build();
            let mut exporter = OtlpHttp::new(Target {
                endpoint: "http://127.0.0.1:1/v1/traces".into(),
                headers: HeaderMap::new(),
                timeout: DEFAULT_TIMEOUT,
            });
            exporter.set_resource(&resource);
            let decoded = ExportTraceServiceRequest::decode(exporter.body(&batch).as_slice())
                .expect("a valid message");
            let mut reference = group_spans_by_resource_and_scope(
                batch.clone(),
                &ResourceAttributesWithSchema::from(&resource),
            );
            // The reference sends an empty scope for an empty batch; so may we not.
            if batch.is_empty() {
                reference[0].scope_spans.clear();
            }
            prop_assert_eq!(decoded.resource_spans, reference);
        }
    }
}
