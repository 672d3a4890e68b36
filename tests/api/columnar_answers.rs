//! Arrow and Parquet answers on `POST /api/v1/query` (D29), read back by pyarrow (pinned)
//! as an analyst's script would: for every dataset, with every field, each cell is the
//! JSON answer's (decimals exact at their scale, nulls, dates, UTC instants), for a page
//! loaded for its format and for the same page served again from the cache; the column
//! types are D29's, the page's place is in headers, later pages are the JSON's later
//! pages, gzip is the same bytes, and a refusal stays a JSON envelope.

use std::path::PathBuf;

use iq_actors::catalogue::{ValueKind, DATASETS};
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::quotes::{every_base_on, import, import_noted, spawn_for_imports};
use crate::helpers::{header_text, Key, TestApp};
use crate::python_run;
use crate::python_venv::{self, Venv};

/// The pyarrow analysts load with, pinned: also the Python client's test extra's.
const PYARROW: &str = "pyarrow==26.0.1";

const ARROW: &str = "application/vnd.apache.arrow.stream";
const PARQUET: &str = "application/vnd.apache.parquet";

/// Reads each file named after it (`.arrow`: an IPC stream, `.parquet`: a Parquet file)
/// with pyarrow and prints, per file, the schema and the rows, each cell as the JSON
/// answer writes it: decimals in fixed notation, dates `YYYYMMDD`, instants RFC 3339 in
/// UTC with microseconds.
const READER: &str = r#"
import datetime, decimal, json, sys
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

def cell(v):
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, datetime.datetime):
        assert v.tzinfo is not None, "an instant without its zone"
        return v.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if isinstance(v, datetime.date):
        return v.strftime("%Y%m%d")
    return v

out = {}
for path in sys.argv[1:]:
    if path.endswith(".arrow"):
        with open(path, "rb") as f:
            table = ipc.open_stream(f).read_all()
    else:
        table = pq.read_table(path)
    out[path] = {
        "schema": [[f.name, str(f.type), f.nullable] for f in table.schema],
        "rows": [[cell(row[name]) for name in table.column_names] for row in table.to_pylist()],
    }
print(json.dumps(out))
"#;

fn pyarrow() -> PathBuf {
    python_venv::build(&Venv::pinned(
        "pyarrow-venv",
        ".iq-pyarrow-stamp",
        PYARROW,
        "the Arrow and Parquet tests need python3 with the venv module \
         (Debian: apt-get install python3-venv)",
    ))
}

/// pyarrow's name of the type D29 gives a field of `kind`.
fn arrow_type(kind: ValueKind) -> String {
    match kind {
        ValueKind::Text => "string".into(),
        ValueKind::Date => "date32[day]".into(),
        ValueKind::Integer => "int32".into(),
        ValueKind::Boolean => "bool".into(),
        ValueKind::Decimal { scale } | ValueKind::Number { scale } => {
            format!("decimal128(38, {scale})")
        }
        ValueKind::Timestamp => "timestamp[us, tz=UTC]".into(),
    }
}

async fn ask(app: &TestApp, key: &Key, body: &Value, accept: &str) -> reqwest::Response {
    app.request(Method::POST, "/api/v1/query")
        .header("X-API-Key", &key.key)
        .header("Accept", accept)
        .json(body)
        .send()
        .await
        .unwrap()
}

/// The body of an answer in `accept`'s form, its headers checked against the JSON
/// answer's `data`.
async fn columns(app: &TestApp, key: &Key, body: &Value, accept: &str, data: &Value) -> Vec<u8> {
    let answer = ask(app, key, body, accept).await;
    assert_eq!(answer.status(), 200, "{body} as {accept}");
    let headers = answer.headers().clone();
    assert_eq!(header_text(&headers, "content-type"), accept);
    assert!(headers.contains_key("x-request-id"));
    assert!(headers.contains_key("x-ratelimit-remaining"));
    assert!(!headers.contains_key("content-encoding"), "gzip unasked");
    for (header, field) in [
        ("x-limit", "limit"),
        ("x-offset", "offset"),
        ("x-returned", "returned"),
        ("x-has-more", "has_more"),
    ] {
        assert_eq!(
            header_text(&headers, header),
            data[field].to_string(),
            "{header}"
        );
    }
    answer.bytes().await.unwrap().to_vec()
}

/// An instance with a week published, then a day corrected with a reason: rows in every
/// dataset, revisions among them, nulls where a first day has no change.
async fn published_and_revised() -> (TestApp, Key) {
    let (app, admin, key) = spawn_for_imports().await;
    let days = ["20261109", "20261110", "20261111", "20261112", "20261113"];
    import(&app, &admin, "week.csv", &every_base_on(&days)).await;
    let mut corrected = every_base_on(&days[1..2]);
    corrected[0].4 = "1003.25".into();
    import_noted(
        &app,
        &admin,
        "correction.csv",
        &corrected,
        Some("a quote, \"re-keyed\""),
    )
    .await;
    (app, key)
}

#[actix_web::test]
async fn every_dataset_reads_back_in_pyarrow_cell_for_cell() {
    iq_test_support::require!(Python);
    let (app, key) = published_and_revised().await;
    let python = python_venv::prepared(pyarrow).await;
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    let mut expected = Vec::new();
    for dataset in &DATASETS {
        let fields: Vec<&str> = dataset.fields.iter().map(|f| f.name).collect();
        let schema: Vec<Value> = dataset
            .fields
            .iter()
            .map(|f| json!([f.name, arrow_type(f.kind), true]))
            .collect();
        // Two pages past the first. Each is asked in one column format before its JSON
        // (the page is loaded for it) and again after (the cached page: the same
        // bytes), and in the other format after (a page of its own, loaded for it).
        for (offset, first, then) in [(1, ARROW, PARQUET), (2, PARQUET, ARROW)] {
            let body = json!({"api_name": dataset.api_name, "fields": fields,
                              "limit": 4, "offset": offset});
            let before = ask(&app, &key, &body, first).await;
            assert_eq!(before.status(), 200, "{body} as {first}");
            let before = before.bytes().await.unwrap();
            let reply = app.query_with(body.clone(), Some(&key.key)).await;
            assert_eq!(reply.code(), 0, "{}", reply.body);
            assert!(!reply.items().is_empty(), "{}: no rows", dataset.api_name);
            let again = columns(&app, &key, &body, first, reply.data()).await;
            assert_eq!(again, before.to_vec(), "{first}: the page asked again");
            let after = columns(&app, &key, &body, then, reply.data()).await;
            for (accept, bytes) in [(first, again), (then, after)] {
                let extension = if accept == ARROW { "arrow" } else { "parquet" };
                let path = dir
                    .path()
                    .join(format!("{}-{offset}.{extension}", dataset.api_name));
                std::fs::write(&path, bytes).unwrap();
                files.push(path.to_str().unwrap().to_string());
                expected.push(json!({"schema": schema, "rows": reply.items()}));
            }
        }
    }
    let args: Vec<&str> = files.iter().map(String::as_str).collect();
    let output = python_run::script(python, "pyarrow", READER, &args, &[]).await;
    let read = python_run::last_json(&output);
    for (file, expected) in files.iter().zip(&expected) {
        assert_eq!(&read[file], expected, "{file}");
    }
    // What the comparison covered: nulls, an instant, a revision's reason.
    let all = read.to_string();
    assert!(all.contains("null") && all.contains("re-keyed"), "{all}");
    assert!(all.contains("timestamp[us, tz=UTC]"), "{all}");
}

#[actix_web::test]
async fn an_empty_page_gzip_and_refusals() {
    iq_test_support::require!(Python);
    let (app, key) = published_and_revised().await;
    let python = python_venv::prepared(pyarrow).await;
    let dir = tempfile::tempdir().unwrap();

    // A query matching nothing: a stream of the page's columns and no row.
    let nothing = json!({"api_name": "index_daily", "params": {"trade_date": "20261231"},
                         "fields": ["trade_date", "index_value"]});
    let reply = app.query_with(nothing.clone(), Some(&key.key)).await;
    let mut args = Vec::new();
    for (accept, extension) in [(ARROW, "arrow"), (PARQUET, "parquet")] {
        let bytes = columns(&app, &key, &nothing, accept, reply.data()).await;
        let path = dir.path().join(format!("empty.{extension}"));
        std::fs::write(&path, bytes).unwrap();
        args.push(path.to_str().unwrap().to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let read =
        python_run::last_json(&python_run::script(python, "pyarrow", READER, &args, &[]).await);
    for file in &args {
        assert_eq!(
            read[*file],
            json!({"schema": [["trade_date", "date32[day]", true],
                              ["index_value", "decimal128(38, 6)", true]],
                   "rows": []})
        );
    }

    // Gzip when asked for: the same bytes, compressed (D16).
    let page = json!({"api_name": "index_quote", "limit": 50});
    for accept in [ARROW, PARQUET] {
        let plain = ask(&app, &key, &page, accept).await.bytes().await.unwrap();
        let zipped = app
            .request(Method::POST, "/api/v1/query")
            .header("X-API-Key", &key.key)
            .header("Accept", accept)
            .header("Accept-Encoding", "gzip")
            .json(&page)
            .send()
            .await
            .unwrap();
        assert_eq!(header_text(zipped.headers(), "content-encoding"), "gzip");
        let bytes = zipped.bytes().await.unwrap();
        let mut unzipped = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut unzipped)
            .unwrap();
        assert_eq!(unzipped, plain.to_vec(), "{accept}");
    }

    // Refusals stay JSON envelopes, whatever the caller accepts.
    for accept in [ARROW, PARQUET] {
        let refused = ask(&app, &key, &json!({"api_name": "nope"}), accept).await;
        assert_eq!(refused.status(), 400);
        assert!(header_text(refused.headers(), "content-type").starts_with("application/json"));
        let envelope: Value = refused.json().await.unwrap();
        assert_eq!(envelope["code"], 40001);
        let unknown = app
            .request(Method::POST, "/api/v1/query")
            .header("X-API-Key", "iq_0000000000000000000000000000000000000000")
            .header("Accept", accept)
            .json(&page)
            .send()
            .await
            .unwrap();
        assert_eq!(unknown.status(), 401);
        let envelope: Value = unknown.json().await.unwrap();
        assert!(envelope["request_id"].is_string());
    }
}
