//! Hostile input, as an attacker or a careless administrator would send it: every case
//! gets its documented refusal, the process stays up, and an ordinary query served
//! alongside still succeeds.

use std::time::Duration;

use futures_util::future::join_all;
use reqwest::Method;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::child::{database_name, drop_database, Service};
use crate::helpers::{
    create_database, spawn_with, spawn_with_demo, Reply, Spawn, TestApp, PASSWORD,
};
use crate::imports;

/// The process still answers, and a visitor's query still gets its data.
async fn still_serving(app: &TestApp) {
    let reply = app.query(json!({"api_name": "index_latest"})).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.code(), 0, "{}", reply.body);
}

/// Sends raw bytes on a new connection and reads the answer until the server closes.
async fn raw(app: &TestApp, request: &[u8]) -> String {
    let addr = app.address.trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request).await.expect("send");
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

/// The JSON envelope of a raw answer.
fn envelope_of(answer: &str) -> Value {
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not an envelope ({e}): {answer}"))
}

#[actix_web::test]
async fn keys_are_taken_from_the_headers_d12_and_nowhere_else() {
    let app = spawn_with_demo().await;
    let admin = app.admin().await;
    let key = app.key_of_tier(&admin, "kim", "pro").await;
    let url = format!("{}/api/v1/query", app.address);
    let body = json!({"api_name": "index_latest"});
    let send = |headers: Vec<(&'static str, String)>, url: String| {
        let mut request = app.http.post(url).json(&body);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        async move { TestApp::reply(request.send().await.unwrap()).await }
    };

    // Bearer is the same key, with the same answer and the quota headers.
    let bearer = send(
        vec![("Authorization", format!("bearer {}", key.key))],
        url.clone(),
    )
    .await;
    assert_eq!(bearer.code(), 0, "{}", bearer.body);
    assert!(bearer.header("x-ratelimit-limit").is_some());
    let same_twice = send(
        vec![
            ("X-API-Key", key.key.clone()),
            ("Authorization", format!("Bearer {}", key.key)),
        ],
        url.clone(),
    )
    .await;
    assert_eq!(same_twice.code(), 0, "{}", same_twice.body);

    // Ambiguity is refused before any key check: 401 / 40102.
    for headers in [
        vec![
            ("X-API-Key", key.key.clone()),
            ("Authorization", "Bearer iq_other".to_string()),
        ],
        vec![
            ("X-API-Key", key.key.clone()),
            ("X-API-Key", key.key.clone()),
        ],
        vec![("Authorization", "Basic cm9vdDpwYXNz".to_string())],
        vec![("Authorization", "Token abc".to_string())],
    ] {
        send(headers, url.clone()).await.assert_error(401, 40102);
    }

    // A key in the URL: 400 / 40001 on any endpoint under /api, never echoed.
    for path in [
        "/api/v1/query?api_key=",
        "/api/v1/query?apiKey=iq_x",
        "/api/v1/query?token=iq_x",
        "/api/v1/query?key=iq_x",
    ] {
        let reply = send(vec![], format!("{}{path}{}", app.address, key.key)).await;
        reply.assert_error(400, 40001);
        assert!(!reply.body.to_string().contains(&key.key), "{}", reply.body);
    }
    app.get(&format!("/api/v1/config?apikey={}", key.key))
        .await
        .assert_error(400, 40001);
    still_serving(&app).await;
}

#[actix_web::test]
async fn duplicate_json_names_are_refused_by_path_d13() {
    let app = spawn_with_demo().await;
    let reply = app
        .query_raw(
            r#"{"api_name":"index_daily","params":{"index_code":"GPU_Index","index_code":"CPU_Index"}}"#,
            "application/json",
        )
        .await;
    reply.assert_error(400, 40001);
    assert!(
        reply.message().contains("params.index_code"),
        "{}",
        reply.body
    );
    let reply = app
        .query_raw(
            r#"{"api_name":"index_daily","limit":1,"limit":5000}"#,
            "application/json",
        )
        .await;
    reply.assert_error(400, 40001);
    assert!(reply.message().contains("'limit'"), "{}", reply.body);
    // Back-office bodies too.
    let login = app
        .http
        .post(format!("{}/api/v1/auth/login", app.address))
        .header("Content-Type", "application/json")
        .body(r#"{"username":"a","username":"b","password":"x"}"#)
        .send()
        .await
        .unwrap();
    TestApp::reply(login).await.assert_error(400, 40001);
    still_serving(&app).await;
}

#[actix_web::test]
async fn keyless_callers_are_limited_per_minute_d15() {
    let app = spawn_with(Spawn {
        demo_data: true,
        tune: |s| s.website_per_minute = 3,
        ..Spawn::default()
    })
    .await;
    let body = json!({"api_name": "index_basic"});
    for _ in 0..3 {
        assert_eq!(app.query(body.clone()).await.code(), 0);
    }
    let refused = app.query(body.clone()).await;
    refused.assert_error(429, 42901);
    let retry: i64 = refused.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    // A session has its own window; config and membership are not limited.
    let admin = app.admin().await;
    let as_session = app
        .call(
            Method::POST,
            "/api/v1/query",
            Some(body.clone()),
            Some(&admin),
            false,
        )
        .await;
    assert_eq!(as_session.code(), 0, "{}", as_session.body);
    assert_eq!(app.config().await.code(), 0);
    assert_eq!(app.membership().await.code(), 0);
    // Key callers are held to their quota, not to this.
    let key = app.key_of_tier(&admin, "kai", "pro").await;
    assert_eq!(app.query_with(body.clone(), Some(&key.key)).await.code(), 0);
    // The next calendar minute starts afresh.
    app.clock.advance(chrono::Duration::seconds(60));
    assert_eq!(app.query(body).await.code(), 0);
}

#[actix_web::test]
async fn a_setup_flood_after_initialisation_is_answered_at_once() {
    let app = spawn_with_demo().await;
    app.admin().await;
    let setup = |i: usize| {
        let request = app
            .http
            .post(format!("{}/api/v1/setup", app.address))
            .json(&json!({"username": format!("intruder{i}"), "password": PASSWORD}));
        async move { TestApp::reply(request.send().await.unwrap()).await }
    };
    let flood = join_all((0..300).map(setup));
    let (answers, query) = tokio::join!(flood, async {
        app.query(json!({"api_name": "index_latest"})).await
    });
    for answer in answers {
        answer.assert_error(409, 40901);
    }
    assert_eq!(query.code(), 0, "{}", query.body);
    still_serving(&app).await;
}

#[actix_web::test]
async fn setup_before_initialisation_is_limited_per_address() {
    let app = spawn_with(Spawn::default()).await;
    let mut codes = Vec::new();
    for _ in 0..12 {
        // A password below the policy: refused without hashing, still counted.
        let reply = app
            .call(
                Method::POST,
                "/api/v1/setup",
                Some(json!({"username": "root", "password": "short"})),
                None,
                false,
            )
            .await;
        codes.push(reply.code());
    }
    assert_eq!(codes[..10], [40001; 10]);
    assert_eq!(codes[10..], [42901; 2]);
}

#[actix_web::test]
async fn a_body_that_trickles_is_cut() {
    let app = spawn_with(Spawn {
        demo_data: true,
        tune: |s| {
            s.body_pace.grace = Duration::from_secs(1);
            s.body_pace.min_bytes_per_sec = 1000;
        },
        ..Spawn::default()
    })
    .await;
    let addr = app.address.trim_start_matches("http://").to_string();
    let mut stream = TcpStream::connect(&addr).await.unwrap();
    stream
        .write_all(
            b"POST /api/v1/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
              Content-Length: 500\r\n\r\n{",
        )
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(15), stream.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    let envelope = envelope_of(&answer);
    assert_eq!(envelope["code"], 40001);
    assert!(
        envelope["message"].as_str().unwrap().contains("too slowly"),
        "{answer}"
    );
    still_serving(&app).await;
}

#[actix_web::test]
async fn connections_per_address_are_capped() {
    let app = spawn_with(Spawn {
        demo_data: true,
        tune: |s| s.max_connections_per_ip = 4,
        ..Spawn::default()
    })
    .await;
    let addr = app.address.trim_start_matches("http://").to_string();
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(TcpStream::connect(&addr).await.unwrap());
    }
    // Accepting is asynchronous: a fifth connection is refused once the four are seen.
    let mut refused = String::new();
    for _ in 0..50 {
        let answer = raw(&app, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await;
        if answer.starts_with("HTTP/1.1 429") {
            refused = answer;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(refused.starts_with("HTTP/1.1 429"), "{refused}");
    assert_eq!(envelope_of(&refused)["code"], 42901);
    assert!(
        refused
            .to_ascii_lowercase()
            .contains("\r\nretry-after: 1\r\n"),
        "{refused}"
    );
    // Closing them frees the address again.
    drop(held);
    let mut served = false;
    for _ in 0..50 {
        let reply = app
            .http
            .get(format!("{}/healthz", app.address))
            .send()
            .await;
        if reply.is_ok_and(|r| r.status() == 200) {
            served = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        served,
        "the address stayed blocked after its connections closed"
    );
}

#[actix_web::test]
async fn refusals_of_the_http_parser_are_envelopes() {
    let app = spawn_with_demo().await;
    let smuggled = raw(
        &app,
        b"POST /api/v1/query HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\
          Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    )
    .await;
    assert!(smuggled.starts_with("HTTP/1.1 400"), "{smuggled}");
    let envelope = envelope_of(&smuggled);
    assert_eq!(envelope["code"], 40001);
    assert!(envelope["request_id"].as_str().unwrap().starts_with("req_"));
    assert!(envelope["data"].is_null());

    let mut many = b"GET /healthz HTTP/1.1\r\nHost: x\r\n".to_vec();
    for i in 0..200 {
        many.extend_from_slice(format!("X-Filler-{i}: y\r\n").as_bytes());
    }
    many.extend_from_slice(b"\r\n");
    let too_many = raw(&app, &many).await;
    assert!(too_many.starts_with("HTTP/1.1 431"), "{too_many}");
    assert_eq!(envelope_of(&too_many)["code"], 40001);
    still_serving(&app).await;
}

#[actix_web::test]
async fn permuted_fields_answer_in_the_order_asked() {
    let app = spawn_with_demo().await;
    let fields = ["pct_change", "trade_date", "index_value", "index_code"];
    let mut reference: Option<Vec<Value>> = None;
    for rotation in 0..fields.len() {
        let mut asked = fields.to_vec();
        asked.rotate_left(rotation);
        let reply = app
            .query(json!({
                "api_name": "index_daily",
                "params": {"index_code": "GPU_Index"},
                "fields": asked,
                "limit": 5
            }))
            .await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        assert_eq!(reply.fields(), asked);
        let rows: Vec<Value> = (0..fields.len())
            .map(|i| Value::Array(reply.column(fields[i])))
            .collect();
        match &reference {
            None => reference = Some(rows),
            Some(expected) => assert_eq!(&rows, expected),
        }
    }
}

#[actix_web::test]
async fn secrets_are_not_stored_or_cached() {
    let app = spawn_with_demo().await;
    let admin = app.admin().await;
    // A password typed into the user-name box is never stored as typed.
    let typed = "my secret passphrase 42";
    let (reply, _) = app.login(typed, "whatever").await;
    reply.assert_error(401, 40102);
    let rows = app
        .db
        .query("SELECT subject FROM login_failures", &[])
        .await
        .unwrap();
    assert!(!rows.is_empty());
    for row in rows {
        let subject: String = row.get(0);
        assert!(
            !subject.contains("secret") && !subject.contains("127.0.0.1"),
            "{subject}"
        );
    }
    // Answers carrying a secret are never stored by a cache (D16).
    let (login, _) = app.login("root", PASSWORD).await;
    assert_eq!(login.header("cache-control"), Some("no-store"));
    let created = app
        .send_as(&admin, Method::POST, "/api/v1/keys", json!({"name": "k"}))
        .await;
    assert_eq!(created.code(), 0, "{}", created.body);
    assert_eq!(created.header("cache-control"), Some("no-store"));
}

#[actix_web::test]
async fn an_allow_list_holds_only_ranges() {
    let app = spawn_with_demo().await;
    let admin = app.admin().await;
    let key = app
        .new_key(
            &admin,
            json!({"name": "k", "ip_allowlist": ["203.0.113.7"]}),
        )
        .await;
    // The database itself refuses an entry that is not a range.
    let garbage = app
        .db
        .execute(
            "UPDATE api_keys SET ip_allowlist = '{not-an-address}' WHERE key_id = $1",
            &[&key.id],
        )
        .await;
    assert!(garbage.is_err());
    // The stored range still binds: this client (127.0.0.1) is outside it.
    app.query_with(json!({"api_name": "index_basic"}), Some(&key.key))
        .await
        .assert_error(403, 40301);
}

#[actix_web::test]
async fn workbook_bombs_are_refused_and_the_service_stays_up() {
    let app = imports::spawn().await;
    let admin = app.admin().await;

    // 2,000,000 junk lines are more rows than a sheet holds: refused whole.
    let junk = "x\n".repeat(2_000_000);
    let reply = imports::upload(&app, &admin, "junk.csv", junk.into_bytes()).await;
    reply.assert_error(400, 40001);
    // 500,000 junk lines: 1,000 problems listed, the total counted.
    let junk = format!(
        "trade_date,index_code,specification,weight,price\n{}",
        "x\n".repeat(500_000)
    );
    let reply: Reply = imports::upload(&app, &admin, "junk.csv", junk.into_bytes()).await;
    reply.assert_error(422, 40002);
    let body = &reply.body;
    assert_eq!(body["errors"].as_array().unwrap().len(), 1000);
    assert!(
        body["errors_total"].as_u64().unwrap() > 1000,
        "{}",
        body["message"]
    );
    let size = body.to_string().len();
    assert!(size < 1_000_000, "the answer is {size} bytes");

    // A NUL in a cell is a row error, not an internal error.
    let nul = "trade_date,index_code,specification,weight,price\n\
               20261102,GPU_Index,A\u{0}B,1,100\n";
    let reply = imports::upload(&app, &admin, "nul.csv", nul.as_bytes().to_vec()).await;
    reply.assert_error(422, 40002);

    // A huge cell is refused with a short echo.
    let huge = format!(
        "trade_date,index_code,specification,weight,price\n20261102,GPU_Index,{},1,100\n",
        "S".repeat(1_000_000)
    );
    let reply = imports::upload(&app, &admin, "huge.csv", huge.into_bytes()).await;
    reply.assert_error(422, 40002);
    let size = reply.body.to_string().len();
    assert!(size < 10_000, "the answer is {size} bytes");

    // A workbook cell beyond the last column (this aborted the process once).
    let bomb = xlsx_with_cell_ref("LXQEASV1");
    let reply = imports::upload(&app, &admin, "bomb.xlsx", bomb).await;
    assert_eq!(reply.code(), 40001, "{}", reply.body);
    let bomb = xlsx_with_cell_ref("ZZZZZZ4294967295");
    let reply = imports::upload(&app, &admin, "bomb.xlsx", bomb).await;
    assert_eq!(reply.code(), 40001, "{}", reply.body);
    still_serving(&app).await;
}

#[actix_web::test]
async fn a_workbook_part_that_inflates_past_the_cap_is_refused_unread() {
    let app = spawn_with(Spawn {
        tune: |s| s.import_limits.max_entry_bytes = 1024 * 1024,
        ..Spawn::default()
    })
    .await;
    let admin = app.admin().await;
    // 4 MiB of one letter compresses to a few kilobytes: a small upload, a large part.
    let bomb = xlsx_with_sheet(format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>{}</t></is></c></row></sheetData></worksheet>"#,
        "a".repeat(4 * 1024 * 1024)
    ));
    assert!(bomb.len() < 100_000, "{} bytes", bomb.len());
    let reply = imports::upload(&app, &admin, "bomb.xlsx", bomb).await;
    reply.assert_error(400, 40001);
    still_serving(&app).await;
}

/// The real binary, so its memory is its own: the bombs that once took it to gigabytes
/// or aborted it leave its peak resident memory small.
#[actix_web::test]
async fn bombs_and_floods_leave_the_process_memory_bounded() {
    let database_url = create_database().await;
    let mut service = Service::start(
        &database_url,
        &[
            ("RUST_LOG", "warn"),
            ("IMPORT_MAX_ENTRY_MB", "4"),
            // The flood below opens a connection per call.
            ("MAX_CONNECTIONS_PER_IP", "1000"),
        ],
    )
    .await;
    let app = TestApp::attach(&service.base, &database_url).await;
    let admin = app.admin().await;
    for bomb in [
        xlsx_with_cell_ref("LXQEASV1"),
        xlsx_with_cell_ref("ZZZZZZ4294967295"),
        xlsx_with_sheet(format!(
            r#"<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>{}</t></is></c></row></sheetData></worksheet>"#,
            "a".repeat(16 * 1024 * 1024)
        )),
    ] {
        let reply = imports::upload(&app, &admin, "bomb.xlsx", bomb).await;
        reply.assert_error(400, 40001);
    }
    let setups = (0..300).map(|i| {
        let request = app
            .http
            .post(format!("{}/api/v1/setup", app.address))
            .json(&json!({"username": format!("intruder{i}"), "password": PASSWORD}));
        async move { TestApp::reply(request.send().await.unwrap()).await }
    });
    for answer in join_all(setups).await {
        answer.assert_error(409, 40901);
    }
    let peak = service.peak_memory_bytes();
    eprintln!("peak resident memory: {} MiB", peak / (1024 * 1024));
    assert!(
        peak < 512 * 1024 * 1024,
        "peak resident memory {peak} bytes"
    );
    let output = service.stop();
    assert!(output.status.success(), "{}", output.logs());
    drop_database(&database_name(&database_url)).await;
}

/// A minimal workbook whose one cell has the reference `cell_ref`.
fn xlsx_with_cell_ref(cell_ref: &str) -> Vec<u8> {
    xlsx_with_sheet(format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="{cell_ref}" t="inlineStr"><is><t>x</t></is></c></row></sheetData></worksheet>"#
    ))
}

/// A minimal workbook whose first sheet's XML is `sheet`.
fn xlsx_with_sheet(sheet: String) -> Vec<u8> {
    use std::io::Write;
    let files = [
        (
            "[Content_Types].xml",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#.to_string(),
        ),
        (
            "_rels/.rels",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#.to_string(),
        ),
        (
            "xl/workbook.xml",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>"#.to_string(),
        ),
        (
            "xl/_rels/workbook.xml.rels",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#.to_string(),
        ),
        ("xl/worksheets/sheet1.xml", sheet),
    ];
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, text) in files {
        let deflated = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        zip.start_file(name, deflated).unwrap();
        zip.write_all(text.as_bytes()).unwrap();
    }
    zip.finish().unwrap().into_inner()
}
