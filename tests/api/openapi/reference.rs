//! The document's other forms: the reference page `GET /docs` shows every path, dataset
//! and code, and `iq-service openapi` prints the document without touching anything.

use std::collections::BTreeSet;
use std::process::Command;

use iq_actors::catalogue::DATASETS;
use iq_actors::ErrorCode;
use serde_json::Value;

use super::operations;
use crate::helpers::spawn_app;

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

    let doc: Value = serde_json::from_str(iq_service::routes::json()).unwrap();
    let text = page.html.replace("&#39;", "'").replace("&#x27;", "'");
    // The overview indexes every operation; each tag's page has it in full.
    for (method, path, operation) in operations(&doc) {
        page.assert_has(&format!("<code>{method} {path}</code>"));
        let summary = operation["summary"].as_str().unwrap();
        assert!(text.contains(summary), "the page lacks {summary:?}");
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
    for &code in ErrorCode::ALL {
        page.assert_has(&format!(r#"id="code-{}""#, code.as_u32()));
    }
    page.assert_has("X-CSRF-Token");

    // Every part of the reference: the overview, each tag's page, the schemas.
    let mut parts = vec![("/docs".to_owned(), page.html.clone())];
    let tags: BTreeSet<String> = operations(&doc)
        .iter()
        .map(|(_, _, op)| op["tags"][0].as_str().unwrap().to_owned())
        .collect();
    for part in tags.iter().map(String::as_str).chain(["schemas"]) {
        let path = format!("/docs/{part}");
        let page = app.page(&path).await;
        assert_eq!(page.status, 200, "{path}");
        assert!(!page.html.contains("<script"));
        parts.push((path, page.html));
    }
    assert_eq!(app.page("/docs/nothing").await.status, 404);
    // Every operation in full on its tag's page, its parameters shown.
    for (method, path, operation) in operations(&doc) {
        let tag = operation["tags"][0].as_str().unwrap();
        let (_, html) = parts
            .iter()
            .find(|(p, _)| *p == format!("/docs/{tag}"))
            .unwrap();
        assert!(html.contains("<h3 id="), "{tag}");
        assert!(
            html.contains(&format!("<code>{method} {path}</code>")),
            "{method} {path}"
        );
        for param in operation["parameters"].as_array().into_iter().flatten() {
            let name = param["name"].as_str().unwrap();
            assert!(
                html.contains(&format!("<code>{name}</code>")),
                "{path}: {name}"
            );
        }
    }
    // On each page every id once; every link to a part of the reference lands on an id
    // of that part.
    let ids_of = |html: &str| -> Vec<String> {
        html.split(" id=\"")
            .skip(1)
            .map(|rest| rest[..rest.find('"').unwrap()].to_owned())
            .collect()
    };
    for (path, html) in &parts {
        let ids = ids_of(html);
        let unique: BTreeSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len(), "an id is used twice on {path}");
        for link in html.split("href=\"").skip(1) {
            let target = &link[..link.find('"').unwrap()];
            let Some((page_path, anchor)) = target.split_once('#') else {
                continue;
            };
            let page_path = if page_path.is_empty() {
                path.as_str()
            } else {
                page_path
            };
            if !page_path.starts_with("/docs") {
                continue;
            }
            let (_, target_html) = parts
                .iter()
                .find(|(p, _)| p == page_path)
                .unwrap_or_else(|| panic!("{path} links to {target}, no part of the reference"));
            assert!(
                ids_of(target_html).iter().any(|id| id == anchor),
                "{path} links to {target}, which has no such id"
            );
        }
    }
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
    let served: Value = serde_json::from_str(iq_service::routes::json()).unwrap();
    assert_eq!(printed, served);
    // No settings read (an unreachable database is fine), no data folder, no file.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}
