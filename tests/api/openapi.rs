//! The OpenAPI document (`GET /api/v1/openapi.json`, `GET /docs`, `iq-service openapi`):
//! it lists every route `src/routes/mod.rs` registers, every dataset of the catalogue
//! and every error code with its status; the service's real answers match it; the
//! request bodies it documents are the ones the domain reads; the page shows it.

use std::collections::BTreeSet;
use std::process::Command;

use iq_actors::catalogue::DATASETS;
use iq_service::openapi::errors::{self, CODES};
use iq_service::openapi::query::{fields_schema_name, request_schema_name};
use reqwest::Method;
use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde_json::{json, Value};

use crate::helpers::{spawn_app, spawn_with_fixture, Reply, Session, TestApp, PASSWORD};

/// The routes as the service registers them: the test reads the source, so a route
/// added there and not here fails.
const ROUTES: &str = include_str!("../../src/routes/mod.rs");

/// Every `(METHOD, path)` of [`ROUTES`], `web::scope` prefixes included.
fn registered_routes() -> Vec<(String, String)> {
    routes_in(ROUTES)
}

/// Every `.route("PATH", web::METHOD()...)` of `source`, with the prefixes of the
/// `web::scope("PREFIX")` chains it belongs to.
fn routes_in(source: &str) -> Vec<(String, String)> {
    let bytes = source.as_bytes();
    let at = |i: usize, token: &str| source[i..].starts_with(token);
    let literal = |from: usize| -> (String, usize) {
        let start = from + source[from..].find('"').expect("a string literal") + 1;
        let end = start + source[start..].find('"').expect("its end");
        (source[start..end].to_string(), end + 1)
    };
    let mut routes = Vec::new();
    // Open scopes: the depth of parentheses they were opened at, and their prefix.
    let mut scopes: Vec<(usize, String)> = Vec::new();
    let mut depth = 0usize;
    let mut handlers = 0;
    let mut i = 0;
    while i < bytes.len() {
        if at(i, "//") {
            i += source[i..].find('\n').unwrap_or(source.len() - i);
            continue;
        }
        if bytes[i] == b'"' {
            i += 1 + source[i + 1..].find('"').expect("string end") + 1;
            continue;
        }
        if at(i, "web::scope(") {
            let (prefix, _) = literal(i);
            scopes.push((depth, prefix));
            i += "web::scope".len();
            continue;
        }
        if at(i, ".route(") {
            let (path, after) = literal(i);
            let rest = source[after..].trim_start();
            let rest = rest
                .strip_prefix(',')
                .expect("`,` after the path")
                .trim_start();
            let rest = rest.strip_prefix("web::").expect("`web::METHOD()`");
            let method = &rest[..rest.find('(').expect("`(`")];
            let prefix: String = scopes.iter().map(|(_, p)| p.as_str()).collect();
            routes.push((method.to_uppercase(), format!("{prefix}{path}")));
            i += ".route".len();
            continue;
        }
        if at(i, ".to(") {
            handlers += 1;
        }
        match bytes[i] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                while scopes.last().is_some_and(|(d, _)| *d > depth) {
                    scopes.pop();
                }
            }
            _ => {}
        }
        i += 1;
    }
    // Every handler was found: another way of registering one would go unseen.
    assert_eq!(
        routes.len(),
        handlers,
        "a route is registered in a way this test cannot read: {routes:?}"
    );
    routes
}

#[test]
fn the_route_reader_follows_scopes_and_wrapped_lines() {
    let source = r#"
        cfg.route("/a", web::get().to(a)); // .route("/commented", web::get().to(x))
        cfg.service(
            web::scope("/v1")
                .route("/b/{id}", web::patch().to(b))
                .service(web::scope("/inner").route("/c", web::post().to(c)))
                .route(
                    "/d",
                    web::delete().to(d),
                ),
        );
        cfg.route("/e", web::put().to(e));
    "#;
    let routes: Vec<(&str, &str)> = vec![
        ("GET", "/a"),
        ("PATCH", "/v1/b/{id}"),
        ("POST", "/v1/inner/c"),
        ("DELETE", "/v1/d"),
        ("PUT", "/e"),
    ];
    let found = routes_in(source);
    let found: Vec<(&str, &str)> = found
        .iter()
        .map(|(m, p)| (m.as_str(), p.as_str()))
        .collect();
    assert_eq!(found, routes);
}

/// Every operation of the document: `(METHOD, path, operation)`.
fn operations(doc: &Value) -> Vec<(String, String, &Value)> {
    let mut all = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in [
            "get", "put", "post", "delete", "patch", "head", "options", "trace",
        ] {
            if let Some(operation) = item.get(method) {
                all.push((method.to_uppercase(), path.clone(), operation));
            }
        }
    }
    all
}

/// `value`, or the component its `$ref` names.
fn resolve<'d>(doc: &'d Value, value: &'d Value) -> &'d Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(target) => doc
            .pointer(target.trim_start_matches('#'))
            .unwrap_or_else(|| panic!("dangling reference {target}")),
        None => value,
    }
}

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn property_names(schema: &Value) -> BTreeSet<String> {
    schema["properties"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

async fn served_document(app: &TestApp) -> Value {
    let response = app
        .http
        .get(format!("{}/api/v1/openapi.json", app.address))
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );
    assert!(response.headers().contains_key("x-request-id"));
    let text = response.text().await.unwrap();
    // Built once, served as built.
    assert_eq!(text, iq_service::openapi::json());
    serde_json::from_str(&text).expect("the document is JSON")
}

#[actix_web::test]
async fn the_document_lists_every_route_dataset_and_error_code() {
    let app = spawn_app().await;
    let doc = served_document(&app).await;
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["version"], env!("CARGO_PKG_VERSION"));

    // Every route registered, and nothing that is not.
    let registered: BTreeSet<(String, String)> = registered_routes().into_iter().collect();
    assert!(registered.contains(&("POST".into(), "/api/v1/query".into())));
    assert!(registered.contains(&("PATCH".into(), "/api/v1/admin/indexes/{index_code}".into())));
    let documented: BTreeSet<(String, String)> = operations(&doc)
        .into_iter()
        .map(|(method, path, _)| (method, path))
        .collect();
    let missing: Vec<_> = registered.difference(&documented).collect();
    assert!(
        missing.is_empty(),
        "routes without documentation: {missing:?}"
    );
    let extra: Vec<_> = documented.difference(&registered).collect();
    assert!(extra.is_empty(), "documented but not routed: {extra:?}");

    // Each operation: a unique id, a declared tag, its path parameters, known schemes.
    let tags: Vec<&str> = doc["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let schemes = doc["components"]["securitySchemes"].as_object().unwrap();
    let mut ids = BTreeSet::new();
    for (method, path, operation) in operations(&doc) {
        let id = operation["operationId"].as_str().expect("operationId");
        assert!(ids.insert(id.to_string()), "operationId {id} twice");
        assert!(
            !operation["summary"].as_str().unwrap_or_default().is_empty(),
            "{id}"
        );
        for tag in strings(&operation["tags"]) {
            assert!(tags.contains(&tag), "{method} {path}: undeclared tag {tag}");
        }
        let params: Vec<&Value> = operation["parameters"]
            .as_array()
            .map(|p| p.iter().collect())
            .unwrap_or_default();
        for segment in path.split('/').filter(|s| s.starts_with('{')) {
            let name = segment.trim_matches(|c| c == '{' || c == '}');
            assert!(
                params
                    .iter()
                    .any(|p| p["name"] == name && p["in"] == "path" && p["required"] == true),
                "{method} {path}: path parameter {name} undocumented"
            );
        }
        for requirement in operation["security"].as_array().into_iter().flatten() {
            for scheme in requirement.as_object().unwrap().keys() {
                assert!(
                    schemes.contains_key(scheme),
                    "{id}: unknown scheme {scheme}"
                );
            }
        }
        assert!(
            operation["responses"]["200"].is_object(),
            "{method} {path}: no 200"
        );
    }
    // The credentials, where the service reads them.
    let carrier = |name: &str| {
        let s = &schemes[name];
        (
            s["type"].as_str().unwrap(),
            s["in"].as_str(),
            s["name"].as_str(),
        )
    };
    assert_eq!(
        carrier("api_key"),
        ("apiKey", Some("header"), Some("X-API-Key"))
    );
    assert_eq!(schemes["bearer"]["scheme"], "bearer");
    assert_eq!(
        carrier("session"),
        (
            "apiKey",
            Some("cookie"),
            Some(iq_service::http::session::SESSION_COOKIE)
        )
    );
    let csrf = carrier("csrf");
    assert_eq!((csrf.0, csrf.1), ("apiKey", Some("header")));
    assert!(csrf
        .2
        .unwrap()
        .eq_ignore_ascii_case(iq_service::http::session::CSRF_HEADER));

    // The query: its body from the catalogue, and its answer's envelope and headers.
    let query = &doc["paths"]["/api/v1/query"]["post"];
    let body = resolve(
        &doc,
        &query["requestBody"]["content"]["application/json"]["schema"],
    );
    assert_eq!(body["oneOf"].as_array().unwrap().len(), DATASETS.len());
    let schemas = &doc["components"]["schemas"];
    assert_eq!(
        doc["x-datasets"],
        serde_json::to_value(&DATASETS).unwrap(),
        "x-datasets is the catalogue"
    );
    for dataset in &DATASETS {
        let name = dataset.api_name;
        assert_eq!(
            body["discriminator"]["mapping"][name],
            format!("#/components/schemas/{}", request_schema_name(dataset))
        );
        let request = &schemas[request_schema_name(dataset)];
        assert_eq!(request["properties"]["api_name"]["enum"], json!([name]));
        assert_eq!(request["additionalProperties"], false, "{name}");
        let params = &request["properties"]["params"];
        let expected: BTreeSet<String> = dataset.params.iter().map(|p| p.name.into()).collect();
        assert_eq!(property_names(params), expected, "{name} params");
        for param in dataset.params {
            let described = params["properties"][param.name]["description"]
                .as_str()
                .unwrap();
            assert!(
                described.contains(param.description),
                "{name}.{}",
                param.name
            );
        }
        let fields = &request["properties"]["fields"];
        let names: Vec<&str> = dataset.fields.iter().map(|f| f.name).collect();
        assert_eq!(strings(&fields["items"]["enum"]), names, "{name} fields");
        assert_eq!(
            strings(&fields["default"]),
            dataset.default_fields,
            "{name}"
        );
        let typed = &schemas[fields_schema_name(dataset)];
        assert_eq!(
            property_names(typed),
            names.iter().map(|n| n.to_string()).collect(),
            "{name} field types"
        );
        for field in dataset.fields {
            let described = typed["properties"][field.name]["description"]
                .as_str()
                .unwrap();
            assert!(
                described.contains(field.description),
                "{name}.{}",
                field.name
            );
        }
        let limit = &request["properties"]["limit"];
        assert_eq!(
            (&limit["minimum"], &limit["default"]),
            (&json!(1), &json!(1000))
        );
    }
    let ok = &query["responses"]["200"];
    for header in [
        "X-Request-Id",
        "X-RateLimit-Limit",
        "X-RateLimit-Remaining",
        "X-RateLimit-Reset",
    ] {
        assert!(ok["headers"][header].is_object(), "200 lacks {header}");
    }
    // With `Accept: text/csv`, the page as CSV and its place in headers.
    assert!(
        ok["content"]["text/csv; charset=utf-8"].is_object(),
        "200 lacks CSV"
    );
    for header in ["X-Limit", "X-Offset", "X-Returned", "X-Has-More"] {
        assert!(ok["headers"][header].is_object(), "200 lacks {header}");
    }
    assert!(query["responses"]["429"]["headers"]["Retry-After"].is_object());
    let page = &ok["content"]["application/json"]["schema"];
    assert_eq!(page["allOf"][0]["$ref"], "#/components/schemas/Success");
    let data = resolve(&doc, &page["allOf"][1]["properties"]["data"]);
    for field in ["fields", "items", "limit", "offset", "returned", "has_more"] {
        assert!(strings(&data["required"]).contains(&field), "data.{field}");
    }
    let success = &schemas["Success"];
    assert_eq!(success["properties"]["code"]["enum"], json!([0]));
    assert_eq!(success["properties"]["message"]["enum"], json!(["ok"]));

    // Every error code with its status: in the ErrorCode schema, and under that status
    // (and no other) in the operations' answers.
    let envelope = &schemas["ErrorEnvelope"];
    for field in ["request_id", "code", "message", "data"] {
        assert!(strings(&envelope["required"]).contains(&field), "{field}");
    }
    assert!(envelope["properties"]["errors"].is_object());
    assert!(envelope["properties"]["errors_total"].is_object());
    let listed = schemas["ErrorCode"]["x-error-codes"].as_array().unwrap();
    assert_eq!(listed.len(), CODES.len());
    let mut answered: BTreeSet<(u64, u64)> = BTreeSet::new();
    for (_, _, operation) in operations(&doc) {
        for (status, response) in operation["responses"].as_object().unwrap() {
            let response = resolve(&doc, response);
            let schema = &response["content"]["application/json"]["schema"];
            for part in schema["allOf"].as_array().into_iter().flatten() {
                for code in part["properties"]["code"]["enum"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    answered.insert((code.as_u64().unwrap(), status.parse().unwrap()));
                }
            }
        }
    }
    for &code in CODES {
        let status = u64::from(iq_service::http::envelope::status_for(code).as_u16());
        let number = u64::from(code.as_u32());
        assert!(
            listed.contains(&json!({
                "code": number,
                "status": status,
                "name": format!("{code:?}"),
                "meaning": errors::meaning(code),
            })),
            "{code:?} not listed with HTTP {status}"
        );
        assert!(
            answered.contains(&(number, status)),
            "no answer carries {number}"
        );
        assert!(
            answered.iter().all(|&(c, s)| c != number || s == status),
            "{number} documented under another status than {status}"
        );
    }
}

#[actix_web::test]
async fn the_reference_page_shows_every_path_dataset_and_code() {
    let app = spawn_app().await;
    let page = app.page("/docs").await;
    assert_eq!(page.status, 200, "{}", page.html);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(
        page.header("content-security-policy"),
        Some(iq_service::site::respond::CONTENT_SECURITY_POLICY)
    );
    assert_eq!(page.header("x-frame-options"), Some("DENY"));
    // Readable without a script, and nothing the policy would block.
    assert!(!page.html.contains("<script"));
    assert!(!page.html.contains("style="));
    assert!(!page.html.contains("<style"));
    let id = page.header("x-request-id").expect("X-Request-Id");
    page.assert_has(&format!(r#"<code id="request-id">{id}</code>"#));

    let doc: Value = serde_json::from_str(iq_service::openapi::json()).unwrap();
    let text = page.html.replace("&#39;", "'").replace("&#x27;", "'");
    for (method, path, operation) in operations(&doc) {
        page.assert_has(&format!("<code>{method} {path}</code>"));
        let summary = operation["summary"].as_str().unwrap();
        assert!(text.contains(summary), "the page lacks {summary:?}");
    }
    for (_, path) in registered_routes() {
        page.assert_has(&path);
    }
    for dataset in &DATASETS {
        page.assert_has(&format!(r#"id="dataset-{}""#, dataset.api_name));
        for param in dataset.params {
            page.assert_has(&format!("<code>{}</code>", param.name));
        }
        for field in dataset.fields {
            page.assert_has(&format!("<code>{}</code>", field.name));
        }
    }
    for &code in CODES {
        page.assert_has(&format!(r#"id="code-{}""#, code.as_u32()));
    }
    // Every anchor once, every link inside the page to one of them.
    let ids: Vec<&str> = page
        .html
        .split(" id=\"")
        .skip(1)
        .map(|rest| &rest[..rest.find('"').unwrap()])
        .collect();
    let unique: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "an id is used twice");
    for link in page.html.split("href=\"#").skip(1) {
        let target = &link[..link.find('"').unwrap()];
        assert!(
            unique.contains(target),
            "a link to #{target}, which is not on the page"
        );
    }
    // Parameters and credentials are shown too.
    page.assert_has("<code>days</code>");
    page.assert_has("X-CSRF-Token");
}

#[test]
fn iq_service_openapi_prints_the_document_and_touches_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_iq-service"))
        .arg("openapi")
        .current_dir(dir.path())
        .env_remove("IQ_DATA_DIR")
        .env_remove("KEY_SECRET")
        // Settings would refuse this (no KEY_SECRET); the command never reads them.
        .env("DATABASE_URL", "postgres://nobody@127.0.0.1:1/none")
        .output()
        .expect("the binary runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let served: Value = serde_json::from_str(iq_service::openapi::json()).unwrap();
    assert_eq!(printed, served);
    // No settings read (an unreachable database is fine), no data folder, no file.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

/// Checks JSON against the document's schemas, the subset of JSON Schema the document
/// uses, and also refuses properties the document does not name.
struct Conformance<'d> {
    doc: &'d Value,
}

impl<'d> Conformance<'d> {
    fn resolve(&self, schema: &'d Value) -> &'d Value {
        resolve(self.doc, schema)
    }

    /// The property names an object schema documents, through `$ref` and `allOf`;
    /// `None` when it takes any (a map, or no properties at all).
    fn documented(&self, schema: &'d Value) -> Option<BTreeSet<String>> {
        let schema = self.resolve(schema);
        if let Some(parts) = schema["allOf"].as_array() {
            let mut all = BTreeSet::new();
            for part in parts {
                all.extend(self.documented(part)?);
            }
            return Some(all);
        }
        if schema["additionalProperties"].is_object() || !schema["properties"].is_object() {
            return None;
        }
        Some(property_names(schema))
    }

    fn check(&self, schema: &'d Value, value: &Value, at: &str, problems: &mut Vec<String>) {
        let schema = self.resolve(schema);
        if value.is_object() {
            if let Some(names) = self.documented(schema) {
                for key in value.as_object().unwrap().keys() {
                    if !names.contains(key) {
                        problems.push(format!("{at}.{key} is not documented"));
                    }
                }
            }
        }
        self.check_open(schema, value, at, problems);
    }

    /// [`Self::check`] without the undocumented-property rule (for parts of an `allOf`).
    fn check_open(&self, schema: &'d Value, value: &Value, at: &str, problems: &mut Vec<String>) {
        let schema = self.resolve(schema);
        for part in schema["allOf"].as_array().into_iter().flatten() {
            self.check_open(part, value, at, problems);
        }
        for key in ["oneOf", "anyOf"] {
            if let Some(choices) = schema[key].as_array() {
                let mut first = None;
                let fits = choices.iter().any(|choice| {
                    let mut found = Vec::new();
                    self.check(choice, value, at, &mut found);
                    if first.is_none() {
                        first = Some(found.clone());
                    }
                    found.is_empty()
                });
                if !fits {
                    problems.push(format!("{at}: {value} fits none of {key}: {first:?}"));
                }
            }
        }
        if let Some(allowed) = schema["enum"].as_array() {
            if !allowed.contains(value) {
                problems.push(format!("{at}: {value} is not one of {allowed:?}"));
            }
        }
        let types: Vec<&str> = match &schema["type"] {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !types.is_empty() {
            let fits = types.iter().any(|t| match *t {
                "null" => value.is_null(),
                "string" => value.is_string(),
                "boolean" => value.is_boolean(),
                "integer" => value.is_i64() || value.is_u64(),
                "number" => value.is_number(),
                "array" => value.is_array(),
                "object" => value.is_object(),
                _ => false,
            });
            if !fits {
                problems.push(format!("{at}: {value} is not {types:?}"));
                return;
            }
        }
        if let (Some(pattern), Some(text)) = (schema["pattern"].as_str(), value.as_str()) {
            if matches(pattern, text) == Some(false) {
                problems.push(format!("{at}: {text:?} does not match {pattern}"));
            }
        }
        if let Some(n) = value.as_f64() {
            if schema["minimum"].as_f64().is_some_and(|min| n < min) {
                problems.push(format!("{at}: {n} below {}", schema["minimum"]));
            }
            if schema["maximum"].as_f64().is_some_and(|max| n > max) {
                problems.push(format!("{at}: {n} above {}", schema["maximum"]));
            }
        }
        if let Some(object) = value.as_object() {
            for name in strings(&schema["required"]) {
                if !object.contains_key(name) {
                    problems.push(format!("{at}.{name} is required but absent"));
                }
            }
            for (key, item) in object {
                if let Some(property) = schema["properties"].get(key) {
                    self.check(property, item, &format!("{at}.{key}"), problems);
                } else if schema["additionalProperties"].is_object() {
                    let values = &schema["additionalProperties"];
                    self.check(values, item, &format!("{at}.{key}"), problems);
                }
            }
        }
        if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
            for (i, item) in array.iter().enumerate() {
                self.check(items, item, &format!("{at}[{i}]"), problems);
            }
        }
    }

    /// The problems of `reply` as an answer of `method path` (a path template).
    fn answer(&self, method: &str, path: &str, reply: &Reply) -> Vec<String> {
        let what = format!("{method} {path} -> {}", reply.status);
        let Some(operation) = self.doc["paths"][path].get(method.to_lowercase()) else {
            return vec![format!("{what}: no such operation")];
        };
        let Some(response) = operation["responses"].get(reply.status.to_string()) else {
            return vec![format!("{what}: status not documented ({})", reply.body)];
        };
        let response = self.resolve(response);
        let mut problems = Vec::new();
        for header in response["headers"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|h| h.0)
        {
            // The rate-limit headers come with a key, the page's `X-*` headers with CSV.
            let conditional = header.contains("RateLimit")
                || matches!(
                    header.as_str(),
                    "Set-Cookie"
                        | "Cache-Control"
                        | "X-Limit"
                        | "X-Offset"
                        | "X-Returned"
                        | "X-Has-More"
                );
            if !conditional && reply.header(header).is_none() {
                problems.push(format!("{what}: header {header} absent"));
            }
        }
        match response["content"]["application/json"].get("schema") {
            Some(schema) => self.check(schema, &reply.body, "body", &mut problems),
            None => problems.push(format!("{what}: no JSON body documented")),
        }
        problems
            .into_iter()
            .map(|p| format!("{what}: {p}"))
            .collect()
    }
}

/// Whether `text` matches `pattern`, for the patterns the document's answers use;
/// `None` for another (requests' patterns are not checked here).
fn matches(pattern: &str, text: &str) -> Option<bool> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if pattern == "^req_" {
        return Some(text.starts_with("req_"));
    }
    if pattern == "^[0-9]{8}$" {
        return Some(text.len() == 8 && digits(text));
    }
    if pattern == "^iq_[0-9A-Za-z]{40}$" {
        let body = text.strip_prefix("iq_")?;
        return Some(body.len() == 40 && body.bytes().all(|b| b.is_ascii_alphanumeric()));
    }
    // A decimal with a fixed scale: ^-?[0-9]+\.[0-9]{N}$
    let scale: usize = pattern
        .strip_prefix("^-?[0-9]+\\.[0-9]{")?
        .strip_suffix("}$")?
        .parse()
        .ok()?;
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    Some(match unsigned.split_once('.') {
        Some((whole, fraction)) => digits(whole) && digits(fraction) && fraction.len() == scale,
        None => false,
    })
}

#[test]
fn the_pattern_check_reads_every_pattern_of_the_columns() {
    let doc: Value = serde_json::from_str(iq_service::openapi::json()).unwrap();
    for dataset in &DATASETS {
        let typed = &doc["components"]["schemas"][fields_schema_name(dataset)];
        for (field, schema) in typed["properties"].as_object().unwrap() {
            if let Some(pattern) = schema["pattern"].as_str() {
                assert!(matches(pattern, "").is_some(), "{field}: {pattern} unread");
            }
        }
    }
    let six = "^-?[0-9]+\\.[0-9]{6}$";
    assert_eq!(matches(six, "-1003.417711"), Some(true));
    assert_eq!(matches(six, "1003.41771"), Some(false));
    assert_eq!(matches(six, "1e3"), Some(false));
    assert_eq!(matches("^[0-9]{8}$", "20261120"), Some(true));
    assert_eq!(matches("^[0-9]{8}$", "2026-11-20"), Some(false));
}

/// Sends requests and checks every answer against the document.
struct Tour<'a> {
    app: &'a TestApp,
    conformance: Conformance<'a>,
    problems: Vec<String>,
    seen: BTreeSet<(String, String, u16)>,
}

impl Tour<'_> {
    fn record(&mut self, method: &str, path: &str, reply: &Reply) {
        self.problems
            .extend(self.conformance.answer(method, path, reply));
        self.seen
            .insert((method.to_string(), path.to_string(), reply.status));
    }

    /// `method` on `url` (a path with its ids) as `session`, checked as `template`.
    async fn call(
        &mut self,
        method: Method,
        template: &str,
        url: &str,
        body: Option<Value>,
        session: Option<&Session>,
    ) -> Reply {
        let reply = self
            .app
            .call(method.clone(), url, body, session, true)
            .await;
        self.record(method.as_str(), template, &reply);
        reply
    }

    async fn query(&mut self, body: Value, key: Option<&str>) -> Reply {
        let dataset = body["api_name"]
            .as_str()
            .and_then(iq_actors::catalogue::dataset);
        let reply = self.app.query_with(body, key).await;
        self.record("POST", "/api/v1/query", &reply);
        // Each value as its dataset's `...Fields` schema types it.
        if let (Some(dataset), 0) = (dataset, reply.code()) {
            let doc = self.conformance.doc;
            let typed = &doc["components"]["schemas"][fields_schema_name(dataset)];
            let fields = reply.fields();
            for (r, row) in reply.items().iter().enumerate() {
                for (field, value) in fields.iter().zip(row.as_array().unwrap()) {
                    let at = format!("{}[{r}].{field}", dataset.api_name);
                    let schema = &typed["properties"][*field];
                    self.conformance
                        .check(schema, value, &at, &mut self.problems);
                }
            }
        }
        // A valid key's answers carry them, refusals included; an unknown key has none.
        if key.is_some() && reply.status != 401 {
            for header in [
                "x-ratelimit-limit",
                "x-ratelimit-remaining",
                "x-ratelimit-reset",
            ] {
                if reply.header(header).is_none() {
                    self.problems
                        .push(format!("query with a key -> {}: no {header}", reply.status));
                }
            }
        }
        reply
    }
}

#[actix_web::test]
async fn real_answers_match_the_document() {
    let app = spawn_with_fixture().await;
    let doc: Value = serde_json::from_str(iq_service::openapi::json()).unwrap();
    let mut tour = Tour {
        app: &app,
        conformance: Conformance { doc: &doc },
        problems: Vec::new(),
        seen: BTreeSet::new(),
    };
    let get = Method::GET;
    let post = Method::POST;
    let patch = Method::PATCH;
    let put = Method::PUT;

    for probe in [
        "/healthz",
        "/readyz",
        "/api/v1/config",
        "/api/v1/membership",
    ] {
        tour.call(get.clone(), probe, probe, None, None).await;
    }
    let root = json!({"username": "root", "password": PASSWORD});
    let setup = tour
        .call(
            post.clone(),
            "/api/v1/setup",
            "/api/v1/setup",
            Some(root.clone()),
            None,
        )
        .await;
    assert_eq!(setup.code(), 0, "{}", setup.body);
    tour.call(
        post.clone(),
        "/api/v1/setup",
        "/api/v1/setup",
        Some(root),
        None,
    )
    .await
    .assert_error(409, 40901);
    let (login, admin) = app.login("root", PASSWORD).await;
    tour.record("POST", "/api/v1/auth/login", &login);
    let admin = admin.expect("root logs in");
    let (wrong, _) = app.login("root", "not the password at all").await;
    tour.record("POST", "/api/v1/auth/login", &wrong);
    wrong.assert_error(401, 40102);

    // A member with a key, through every key endpoint.
    let kim = json!({"username": "kim", "password": PASSWORD, "tier": "pro"});
    let users = "/api/v1/admin/users";
    let created = tour
        .call(post.clone(), users, users, Some(kim.clone()), Some(&admin))
        .await;
    assert_eq!(created.code(), 0, "{}", created.body);
    let kim_id = created.data()["id"].as_str().unwrap().to_string();
    tour.call(post.clone(), users, users, Some(kim), Some(&admin))
        .await
        .assert_error(409, 40901);
    let kim = app.login_ok("kim").await;
    tour.call(
        get.clone(),
        "/api/v1/membership",
        "/api/v1/membership",
        None,
        Some(&kim),
    )
    .await;
    let keys = "/api/v1/keys";
    let new_key = json!({"name": "laptop", "index_codes": ["Server_Index", "GPU_Index"],
                         "expires_at": "2030-01-01T00:00:00Z"});
    let key = tour
        .call(post.clone(), keys, keys, Some(new_key), Some(&kim))
        .await;
    assert_eq!(key.code(), 0, "{}", key.body);
    let key_id = key.data()["id"].as_str().unwrap().to_string();
    let no_csrf = app
        .call(
            post.clone(),
            keys,
            Some(json!({"name": "x"})),
            Some(&kim),
            false,
        )
        .await;
    tour.record("POST", keys, &no_csrf);
    no_csrf.assert_error(403, 40301);
    tour.call(get.clone(), keys, keys, None, Some(&kim)).await;
    let one = format!("/api/v1/keys/{key_id}");
    tour.call(
        patch.clone(),
        "/api/v1/keys/{id}",
        &one,
        Some(json!({"name": "work"})),
        Some(&kim),
    )
    .await;
    let rotated = tour
        .call(
            post.clone(),
            "/api/v1/keys/{id}/rotate",
            &format!("{one}/rotate"),
            None,
            Some(&kim),
        )
        .await;
    let secret = rotated.data()["key"].as_str().unwrap().to_string();
    let usage = "/api/v1/keys/{id}/usage";
    tour.call(
        get.clone(),
        usage,
        &format!("{one}/usage?days=3"),
        None,
        Some(&kim),
    )
    .await;
    tour.call(
        get.clone(),
        usage,
        &format!("{one}/usage?days=0"),
        None,
        Some(&kim),
    )
    .await
    .assert_error(400, 40001);
    let membership = app
        .http
        .get(format!("{}/api/v1/membership", app.address))
        .header("X-API-Key", &secret)
        .send()
        .await
        .unwrap();
    let membership = TestApp::reply(membership).await;
    tour.record("GET", "/api/v1/membership", &membership);

    // Every dataset, as the key and as a visitor; refusals.
    for dataset in &DATASETS {
        let body = json!({"api_name": dataset.api_name, "limit": 3});
        let all_fields: Vec<&str> = dataset.fields.iter().map(|f| f.name).collect();
        let with_all = json!({"api_name": dataset.api_name, "fields": all_fields});
        let reply = tour.query(with_all, Some(&secret)).await;
        assert_eq!(reply.code(), 0, "{}", reply.body);
        tour.query(body, None).await;
    }
    let served = tour
        .query(json!({"api_name": "index_daily"}), Some(&secret))
        .await;
    assert!(
        !served.items().is_empty(),
        "the fixture has rows: {}",
        served.body
    );
    tour.query(json!({"api_name": "nope"}), None)
        .await
        .assert_error(400, 40001);
    tour.query(json!({"api_name": "index_daily"}), Some("iq_wrong"))
        .await
        .assert_error(401, 40102);
    tour.query(
        json!({"api_name": "index_daily", "params": {"index_code": "SSD_Index"}}),
        Some(&secret),
    )
    .await
    .assert_error(403, 40302);

    // The back office.
    tour.call(
        get.clone(),
        users,
        &format!("{users}?limit=5&q=i"),
        None,
        Some(&admin),
    )
    .await;
    tour.call(get.clone(), users, users, None, Some(&kim))
        .await
        .assert_error(403, 40301);
    let user = "/api/v1/admin/users/{id}";
    tour.call(
        get.clone(),
        user,
        &format!("{users}/{kim_id}"),
        None,
        Some(&admin),
    )
    .await;
    tour.call(
        get.clone(),
        user,
        &format!("{users}/nobody"),
        None,
        Some(&admin),
    )
    .await;
    tour.call(
        patch.clone(),
        user,
        &format!("{users}/{kim_id}"),
        Some(json!({"api_access": true})),
        Some(&admin),
    )
    .await;
    let all_keys = "/api/v1/admin/keys";
    tour.call(
        get.clone(),
        all_keys,
        &format!("{all_keys}?user_id={kim_id}"),
        None,
        Some(&admin),
    )
    .await;
    let admin_key = format!("{all_keys}/{key_id}");
    tour.call(
        patch.clone(),
        "/api/v1/admin/keys/{id}",
        &admin_key,
        Some(json!({"per_minute": 100, "ip_allowlist": ["203.0.113.0/24", "127.0.0.1"]})),
        Some(&admin),
    )
    .await;
    tour.call(
        get.clone(),
        "/api/v1/admin/keys/{id}/usage",
        &format!("{admin_key}/usage"),
        None,
        Some(&admin),
    )
    .await;
    let tiers = tour
        .call(
            get.clone(),
            "/api/v1/admin/tiers",
            "/api/v1/admin/tiers",
            None,
            Some(&admin),
        )
        .await;
    let mut pro = tiers.data()[1].clone();
    if pro["tier"] != "pro" {
        pro = tiers.data()[0].clone();
    }
    pro.as_object_mut().unwrap().remove("tier");
    tour.call(
        put.clone(),
        "/api/v1/admin/tiers/{tier}",
        "/api/v1/admin/tiers/pro",
        Some(pro.clone()),
        Some(&admin),
    )
    .await;
    tour.call(
        put.clone(),
        "/api/v1/admin/tiers/{tier}",
        "/api/v1/admin/tiers/gold",
        Some(pro),
        Some(&admin),
    )
    .await
    .assert_error(404, 40401);
    tour.call(
        patch.clone(),
        "/api/v1/admin/indexes/{index_code}",
        "/api/v1/admin/indexes/SSD_Index",
        Some(json!({"sort_no": 7})),
        Some(&admin),
    )
    .await;
    let calendar = "/api/v1/admin/calendar";
    tour.call(
        put.clone(),
        calendar,
        calendar,
        Some(json!({"from_year": 2027, "to_year": 2027})),
        Some(&admin),
    )
    .await;
    tour.call(
        put.clone(),
        calendar,
        calendar,
        Some(json!({"open_days": ["20261102"]})),
        Some(&admin),
    )
    .await
    .assert_error(409, 40901);

    // Imports: an accepted file, a rejected one, the list and the records.
    let good = "trade_date,index_code,specification,weight,price\n\
                20261112,SSD_Index,a,0.5,480\n20261112,SSD_Index,b,0.5,482\n";
    let accepted = app.import_file(&admin, "good.csv", good.into()).await;
    tour.record("POST", "/api/v1/admin/imports", &accepted);
    let bad = "trade_date,index_code,specification,weight,price\n20261114,SSD_Index,a,1,480\n";
    let rejected = app.import_file(&admin, "bad.csv", bad.into()).await;
    tour.record("POST", "/api/v1/admin/imports", &rejected);
    rejected.assert_error(422, 40002);
    let imports = "/api/v1/admin/imports";
    let list = tour
        .call(
            get.clone(),
            imports,
            &format!("{imports}?limit=10"),
            None,
            Some(&admin),
        )
        .await;
    for record in list.data().as_array().unwrap() {
        let id = record["id"].as_str().unwrap();
        tour.call(
            get.clone(),
            "/api/v1/admin/imports/{id}",
            &format!("{imports}/{id}"),
            None,
            Some(&admin),
        )
        .await;
    }
    tour.call(
        get.clone(),
        "/api/v1/admin/imports/{id}",
        &format!("{imports}/0"),
        None,
        Some(&admin),
    )
    .await
    .assert_error(404, 40401);

    // The end of a key and of a session.
    tour.call(Method::DELETE, "/api/v1/keys/{id}", &one, None, Some(&kim))
        .await;
    tour.call(Method::DELETE, "/api/v1/keys/{id}", &one, None, Some(&kim))
        .await
        .assert_error(404, 40401);
    tour.call(
        post.clone(),
        "/api/v1/auth/logout",
        "/api/v1/auth/logout",
        None,
        Some(&kim),
    )
    .await;
    tour.call(get.clone(), keys, keys, None, Some(&kim))
        .await
        .assert_error(401, 40102);
    tour.call(get.clone(), keys, keys, None, None)
        .await
        .assert_error(401, 40101);
    tour.call(
        get.clone(),
        "/api/v1/openapi.json",
        "/api/v1/openapi.json?api_key=x",
        None,
        None,
    )
    .await
    .assert_error(400, 40001);

    assert!(
        tour.problems.is_empty(),
        "answers that differ from the document:\n{}",
        tour.problems.join("\n")
    );
    // Every JSON operation was exercised, with a success.
    for (method, path, operation) in operations(&doc) {
        let json = operation["responses"]["200"]["content"]["application/json"].is_object();
        if json && path != "/api/v1/openapi.json" {
            assert!(
                tour.seen.contains(&(method.clone(), path.clone(), 200)),
                "{method} {path} answered 200 nowhere in this test"
            );
        }
    }
}

/// The field names a `Deserialize` struct reads, as serde hands them to a deserializer.
fn field_names<T: DeserializeOwned>() -> BTreeSet<String> {
    struct Names<'a>(&'a mut BTreeSet<String>);

    impl<'de> Deserializer<'de> for Names<'_> {
        type Error = de::value::Error;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            self.0.extend(fields.iter().map(|f| f.to_string()));
            Err(de::Error::custom("names taken"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }

    let mut names = BTreeSet::new();
    let _ = T::deserialize(Names(&mut names));
    assert!(
        !names.is_empty(),
        "{} is not a struct",
        std::any::type_name::<T>()
    );
    names
}

#[test]
fn documented_request_bodies_are_the_ones_the_domain_reads() {
    use iq_actors::accounts as a;
    let doc: Value = serde_json::from_str(iq_service::openapi::json()).unwrap();
    let bodies: Vec<(&str, &str, BTreeSet<String>)> = vec![
        ("POST", "/api/v1/setup", field_names::<a::Credentials>()),
        (
            "POST",
            "/api/v1/auth/login",
            field_names::<a::Credentials>(),
        ),
        ("POST", "/api/v1/keys", field_names::<a::NewKey>()),
        ("PATCH", "/api/v1/keys/{id}", field_names::<a::KeyRename>()),
        ("POST", "/api/v1/admin/users", field_names::<a::NewUser>()),
        (
            "PATCH",
            "/api/v1/admin/users/{id}",
            field_names::<a::UserPatch>(),
        ),
        (
            "PUT",
            "/api/v1/admin/tiers/{tier}",
            field_names::<a::TierSettings>(),
        ),
        (
            "PATCH",
            "/api/v1/admin/keys/{id}",
            field_names::<a::KeyPatch>(),
        ),
        (
            "PATCH",
            "/api/v1/admin/indexes/{index_code}",
            field_names::<a::IndexPatch>(),
        ),
        (
            "PUT",
            "/api/v1/admin/calendar",
            field_names::<iq_actors::calendar::CalendarChange>(),
        ),
    ];
    let conformance = Conformance { doc: &doc };
    for (method, path, operation) in operations(&doc) {
        let Some(schema) = operation["requestBody"]["content"]["application/json"].get("schema")
        else {
            continue;
        };
        if path == "/api/v1/query" {
            continue; // from the catalogue, checked above
        }
        let (_, _, fields) = bodies
            .iter()
            .find(|(m, p, _)| *m == method && *p == path)
            .unwrap_or_else(|| panic!("{method} {path}: add its body's type to this test"));
        // One form or several (`oneOf`): together they name the type's fields.
        let schema = resolve(&doc, schema);
        let forms: Vec<&Value> = match schema["oneOf"].as_array() {
            Some(forms) => forms.iter().collect(),
            None => vec![schema],
        };
        let mut documented = BTreeSet::new();
        for form in forms {
            documented.extend(conformance.documented(form).expect("an object"));
        }
        assert_eq!(&documented, fields, "{method} {path}");
    }
}
