//! The served document is the router's: every operation it lists answers (a method or
//! path not routed is 404 / 40401, so anything else proves the route), a method it does
//! not list on a documented path is refused like an unknown path; and it lists every
//! dataset of the catalogue and every error code with its status, and nothing else.

use std::collections::BTreeSet;

use iq_actors::catalogue::DATASETS;
use iq_actors::ErrorCode;
use iq_service::openapi::query::{fields_schema_name, request_schema_name};
use serde_json::{json, Value};

use super::{operations, property_names, resolve, served_document, strings};
use crate::helpers::spawn_app;

/// Asserts that property `property` of `schema` (of dataset `dataset`) carries the
/// catalogue's `description` of it.
fn assert_describes(schema: &Value, dataset: &str, property: &str, description: &str) {
    let described = schema["properties"][property]["description"]
        .as_str()
        .unwrap();
    assert!(described.contains(description), "{dataset}.{property}");
}

#[actix_web::test]
async fn the_document_lists_every_route_dataset_and_error_code() {
    let app = spawn_app().await;
    let doc = served_document(&app).await;
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["version"], env!("CARGO_PKG_VERSION"));

    // Every operation is routed: without credentials and with any id, each answers
    // something other than the 404 of a path or method the router does not know.
    let documented: BTreeSet<(String, String)> = operations(&doc)
        .into_iter()
        .map(|(method, path, _)| (method, path))
        .collect();
    assert!(documented.contains(&("POST".into(), "/api/v1/query".into())));
    assert!(documented.contains(&("PATCH".into(), "/api/v1/admin/indexes/{index_code}".into())));
    for (method, path) in &documented {
        let concrete = path
            .split('/')
            .map(|part| match part {
                // The reference's parts are its tags.
                "{section}" => "query",
                _ if part.starts_with('{') => "GPU_Index",
                _ => part,
            })
            .collect::<Vec<_>>()
            .join("/");
        let answer = app
            .http
            .request(
                method.parse().unwrap(),
                format!("{}{concrete}", app.address),
            )
            .send()
            .await
            .expect("request");
        assert_ne!(
            answer.status(),
            404,
            "{method} {path} is documented but not routed"
        );
        assert_ne!(answer.status(), 405, "{method} {path}");
    }
    // A method a documented path does not take is refused as an unknown path is.
    for (method, path) in [("PUT", "/api/v1/query"), ("DELETE", "/api/v1/config")] {
        let answer = app
            .http
            .request(method.parse().unwrap(), format!("{}{path}", app.address))
            .send()
            .await
            .expect("request");
        assert_eq!(answer.status(), 404, "{method} {path}");
        let body: Value = answer.json().await.expect("an envelope");
        assert_eq!(body["code"], 40401, "{method} {path}");
    }

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
            operation["responses"]["200"].is_object() || operation["responses"]["201"].is_object(),
            "{method} {path}: no 200 or 201"
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
            assert_describes(params, name, param.name, param.description);
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
            assert_describes(typed, name, field.name, field.description);
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
    assert_eq!(listed.len(), ErrorCode::ALL.len());
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
    for &code in ErrorCode::ALL {
        let status = u64::from(iq_service::http::envelope::status_for(code).as_u16());
        let number = u64::from(code.as_u32());
        assert!(
            listed.contains(&json!({
                "code": number,
                "status": status,
                "name": format!("{code:?}"),
                "meaning": code.meaning(),
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

/// The bounds the document states as literals (utoipa's attributes take no constants)
/// are the ones the code checks.
#[test]
fn the_documents_literal_bounds_are_the_codes() {
    use iq_actors::accounts::{password, MAX_KEY_NAME_CHARS, USERNAME_LEN};
    use iq_actors::imports::service::MAX_NOTE_CHARS;
    let doc: Value = serde_json::from_str(&iq_service::routes::pretty_json()).unwrap();
    let schemas = &doc["components"]["schemas"];
    let (min, max) = (*USERNAME_LEN.start() as u64, *USERNAME_LEN.end() as u64);
    for name in ["SetupRequest", "NewUser"] {
        let username = &schemas[name]["properties"]["username"];
        assert_eq!(username["minLength"], min, "{name}");
        assert_eq!(username["maxLength"], max, "{name}");
        assert_eq!(
            username["pattern"],
            format!("^[A-Za-z0-9._@-]{{{min},{max}}}$"),
            "{name}"
        );
        let secret = &schemas[name]["properties"]["password"];
        assert_eq!(secret["minLength"], password::MIN_LEN as u64, "{name}");
        assert_eq!(secret["maxLength"], password::MAX_LEN as u64, "{name}");
    }
    for name in ["NewKey", "KeyRename"] {
        let key_name = &schemas[name]["properties"]["name"];
        assert_eq!(key_name["maxLength"], MAX_KEY_NAME_CHARS as u64, "{name}");
    }
    let note = &schemas["ImportUpload"]["properties"]["note"];
    assert_eq!(note["maxLength"], MAX_NOTE_CHARS as u64);
}
