//! Reasons for corrections (D26): an import's `note` is the `reason` of every revision
//! it makes, on demand in `index_revisions`, in its `index.revised` events and on the
//! index page (its revisions list, and the banner of the view before it); a revision
//! made without a note has none.

use serde_json::{json, Value};

use super::*;
use crate::helpers::quotes::{import, import_noted};

const WHY: &str = "Server_Index 3 Nov: the 8x H100 quote was a list price, replaced by the \
                   distributor's invoice (修正)";

/// The first file, then Server_Index's 8x H100 on 20261103 corrected with `note`.
async fn corrected(app: &TestApp, admin: &crate::helpers::Session, note: Option<&str>) -> Reply {
    import(app, admin, "quotes.csv", &first_file()).await;
    let mut fix: Vec<Quote> = first_file()
        .into_iter()
        .filter(|q| q.0 == "20261103" && q.1 == "Server_Index")
        .collect();
    fix[0].4 = "1234.5".into();
    import_noted(app, admin, "fix.csv", &fix, note).await
}

/// The `index.revised` events the feed gives `key`, asserting there are some.
async fn revised_events(app: &TestApp, key: &Key) -> Vec<Value> {
    let feed = app.events_with(&key.key, "limit=100").await;
    assert_eq!(feed.code(), 0, "{}", feed.body);
    let events = feed.data()["events"].as_array().unwrap().clone();
    let revised: Vec<Value> = events
        .iter()
        .filter(|e| e["type"] == "index.revised")
        .cloned()
        .collect();
    assert!(!revised.is_empty(), "{}", feed.body);
    // A publication has no reason at all.
    assert!(events
        .iter()
        .filter(|e| e["type"] == "index.published")
        .all(|e| e["data"].get("reason").is_none()));
    revised
}

fn revision_rows(reply: &Reply) -> Vec<Value> {
    assert_eq!(reply.code(), 0, "{}", reply.body);
    reply.items().clone()
}

#[actix_web::test]
async fn a_note_is_the_reason_of_every_revision_its_import_made() {
    let (app, admin, key) = spawn().await;
    let reply = corrected(&app, &admin, Some(WHY)).await;
    let p2 = published_at(&reply);

    // On demand only: the default fields are D21's.
    let plain = app
        .query_with(json!({"api_name": "index_revisions"}), Some(&key.key))
        .await;
    assert_eq!(plain.code(), 0, "{}", plain.body);
    assert!(!plain.data()["fields"]
        .as_array()
        .unwrap()
        .contains(&json!("reason")));
    let named = app
        .query_with(
            json!({"api_name": "index_revisions",
                   "fields": ["index_code", "trade_date", "published_at", "reason"]}),
            Some(&key.key),
        )
        .await;
    let rows = revision_rows(&named);
    // Server_Index's day and the next, and the composite from that day on.
    assert!(rows.len() >= 3, "{}", named.body);
    for row in &rows {
        assert_eq!(row[2], p2.as_str(), "{row}");
        assert_eq!(row[3], WHY, "{row}");
    }

    // The event feed tells the same reason with each `index.revised`.
    let revised = revised_events(&app, &key).await;
    assert!(
        revised.iter().all(|e| e["data"]["reason"] == WHY),
        "{revised:?}"
    );

    // The index page lists it with the revision, and the view before the revision
    // says why it was replaced.
    let page = app.page("/indexes/Server_Index").await;
    assert_eq!(page.status, 200);
    page.assert_has("<td class=\"reason\">Server_Index 3 Nov: the 8x H100 quote");
    let link = page
        .html
        .split("href=\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap().replace("&#38;", "&"))
        .find(|href| href.starts_with("/indexes/Server_Index?") && href.contains("day=20261103"))
        .unwrap_or_else(|| panic!("no link to the view before the revision"));
    let before = app.page(&link).await;
    assert_eq!(before.status, 200);
    before.assert_has("Revised later: <span id=\"past-reason\">Server_Index 3 Nov");
}

#[actix_web::test]
async fn a_correction_without_a_note_has_no_reason() {
    let (app, admin, key) = spawn().await;
    corrected(&app, &admin, None).await;
    let named = app
        .query_with(
            json!({"api_name": "index_revisions", "fields": ["index_code", "reason"]}),
            Some(&key.key),
        )
        .await;
    let rows = revision_rows(&named);
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r[1].is_null()), "{}", named.body);
    let revised = revised_events(&app, &key).await;
    assert!(revised.iter().all(|e| e["data"]["reason"].is_null()));
    assert!(revised.iter().all(|e| e["data"].get("reason").is_some()));
}

#[actix_web::test]
async fn a_long_or_formula_note_is_refused_naming_it_and_nothing_is_imported() {
    let (app, admin, _key) = spawn().await;
    let file = crate::helpers::quotes::csv(&first_file());
    for note in [
        "x".repeat(501),
        "=HYPERLINK(\"http://x\")".into(),
        "a\u{7}b".into(),
    ] {
        let reply = app
            .import_noted(&admin, "quotes.csv", file.clone(), Some(&note))
            .await;
        assert_eq!((reply.status, reply.code()), (400, 40001), "{}", reply.body);
        let message = reply.body["message"].as_str().unwrap();
        assert!(message.contains("'note'"), "{message}");
    }
    // 500 characters in any script are a note.
    let longest: String = "价".repeat(500);
    let reply = app
        .import_noted(&admin, "quotes.csv", file, Some(&longest))
        .await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    assert_eq!(
        crate::helpers::count_rows(&app.db, "vintages WHERE reason IS NOT NULL").await,
        1
    );
}
