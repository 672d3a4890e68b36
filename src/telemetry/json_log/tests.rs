use super::super::ids::{adopt, Ids, Remote};
use super::*;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::Registry;

/// Lines written to memory.
#[derive(Clone, Default)]
struct Memory(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Memory {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Memory {
    type Writer = Memory;
    fn make_writer(&'a self) -> Memory {
        self.clone()
    }
}

fn lines(log: impl FnOnce()) -> Vec<serde_json::Value> {
    logged(|memory| JsonLog::new(memory).boxed(), log)
}

/// The lines `log` writes through the layer `make` builds on a memory writer.
fn logged(
    make: impl FnOnce(Memory) -> Box<dyn Layer<Registry> + Send + Sync>,
    log: impl FnOnce(),
) -> Vec<serde_json::Value> {
    let memory = Memory::default();
    let subscriber = tracing_subscriber::registry()
        .with(make(memory.clone()))
        .with(Ids::up_to(tracing::level_filters::LevelFilter::TRACE));
    tracing::subscriber::with_default(subscriber, log);
    let text = String::from_utf8(memory.0.lock().unwrap().clone()).unwrap();
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// Events in spans of every level, some of them filtered out.
fn mixed_levels() {
    tracing::info!(at = "top", "no span at all");
    tracing::debug_span!("alone").in_scope(|| tracing::warn!("only a hidden span"));
    let outer = tracing::info_span!("request", request_id = "req_1", kept = 1);
    let _outer = outer.enter();
    tracing::debug!("below the filter");
    let hidden = tracing::debug_span!("detail", request_id = "hidden", secret = 2);
    let _hidden = hidden.enter();
    tracing::warn!(code = 50000, "inside a span the filter leaves out");
    hidden.record("secret", 3);
    let inner = tracing::warn_span!("inner", kept = 4);
    inner.in_scope(|| tracing::error!("nested under both"));
}

/// A line without what differs from run to run (the time, the random ids), and
/// whether it had the ids.
fn steady(mut line: serde_json::Value) -> (serde_json::Value, bool, bool) {
    let object = line.as_object_mut().unwrap();
    object.remove("timestamp");
    let trace = object.remove("trace_id").is_some();
    let span = object.remove("span_id").is_some();
    (line, trace, span)
}

#[test]
fn filtering_inside_the_layer_writes_what_a_per_layer_filter_did() {
    let targets = || Targets::from_str("warn,iq_service=info").unwrap();
    let outside = logged(
        |memory| JsonLog::new(memory).with_filter(targets()).boxed(),
        mixed_levels,
    );
    let inside = logged(
        |memory| JsonLog::filtered(memory, targets()).boxed(),
        mixed_levels,
    );
    assert_eq!(inside.len(), 4, "{inside:#?}");
    let inside: Vec<_> = inside.into_iter().map(steady).collect();
    let outside: Vec<_> = outside.into_iter().map(steady).collect();
    assert_eq!(inside, outside);
    // The hidden span's fields are nowhere, nor is it in a path.
    for (line, _, _) in &inside {
        assert_ne!(line["request_id"], "hidden", "{line}");
        assert!(line.get("secret").is_none(), "{line}");
        assert!(!line.to_string().contains("detail"), "{line}");
    }
}

#[test]
fn a_line_has_the_event_and_its_spans_fields_nearest_winning() {
    let lines = lines(|| {
        let outer = tracing::info_span!(
            "request",
            request_id = "req_1",
            otel.kind = "server",
            code = tracing::field::Empty,
            shared = "outer"
        );
        let _outer = outer.enter();
        outer.record("code", 40001);
        let inner = tracing::info_span!("front", shared = "inner", user_id = 7_i64);
        let _inner = inner.enter();
        tracing::warn!(
            latency_ms = 1.5,
            user_id = -1_i64,
            ok = true,
            "said \"hi\"\n"
        );
    });
    assert_eq!(lines.len(), 1);
    let line = &lines[0];
    assert_eq!(line["level"], "WARN");
    assert_eq!(line["message"], "said \"hi\"\n");
    assert_eq!(line["request_id"], "req_1");
    assert_eq!(line["code"], 40001);
    assert_eq!(line["shared"], "inner", "the nearest span wins");
    assert_eq!(line["user_id"], -1, "the event's own field wins");
    assert_eq!(line["latency_ms"], 1.5);
    assert_eq!(line["ok"], true);
    assert_eq!(line["span"], "request>front");
    assert!(line.get("otel.kind").is_none(), "{line}");
    assert!(line["timestamp"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn a_line_outside_spans_and_odd_values_stay_valid_json() {
    let lines = lines(|| {
        tracing::info!(nan = f64::NAN, big = u64::MAX, text = %"tab\there", "plain");
    });
    let line = &lines[0];
    assert_eq!(line["nan"], serde_json::Value::Null);
    assert_eq!(line["big"], u64::MAX);
    assert_eq!(line["text"], "tab\there");
    assert!(line.get("span").is_none());
}

#[test]
fn a_line_in_a_span_names_its_trace_and_span_in_hex() {
    let lines = lines(|| {
        let span = tracing::info_span!("request");
        let caller = Remote {
            trace: 0xabc,
            span: 0xdef,
            sampled: true,
        };
        adopt(&span, caller);
        span.in_scope(|| tracing::info!("inside"));
    });
    assert_eq!(lines[0]["trace_id"], format!("{:032x}", 0xabc));
    let span_id = lines[0]["span_id"].as_str().unwrap();
    assert_eq!(span_id.len(), 16, "{span_id}");
    assert!(span_id
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
}

proptest::proptest! {
    /// A caller controls paths, headers and bodies that reach log fields: whatever
    /// the text, the line stays one line of JSON with the text intact.
    #[test]
    fn any_text_stays_one_line_of_json(path in ".*", message in ".*", n in proptest::num::i64::ANY) {
        let lines = lines(|| {
            let span = tracing::info_span!("request", url.path = %path);
            let _in = span.enter();
            tracing::info!(n, "{message}");
        });
        proptest::prop_assert_eq!(lines.len(), 1);
        proptest::prop_assert_eq!(lines[0]["url.path"].as_str(), Some(path.as_str()));
        proptest::prop_assert_eq!(lines[0]["message"].as_str(), Some(message.as_str()));
        proptest::prop_assert_eq!(lines[0]["n"].as_i64(), Some(n));
    }
}
