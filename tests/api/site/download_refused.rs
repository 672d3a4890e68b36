//! A download whose later page is refused is that refusal's page, never a file cut
//! short: every page is read before the answer starts.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{header_text, spawn_with, Spawn, FIXTURE};

#[actix_web::test]
async fn a_later_page_refused_is_the_refusal_not_a_short_file() {
    // A visitor may read once a minute: the download's first page, and its second is
    // refused (42901).
    let app = spawn_with(Spawn::sql(FIXTURE).tuned(|s| s.site.website_per_minute = 1)).await;
    let admin = app.admin().await;
    // Pages of one row, so the two days a visitor sees take two.
    let mut free = app.tier(&admin, "free").await;
    free.as_object_mut().unwrap().remove("tier");
    let max_rows = |rows: i64| {
        let mut tier = free.clone();
        tier["max_rows"] = json!(rows);
        tier
    };
    let put = app.put_tier(&admin, "free", max_rows(1)).await;
    assert_eq!(put.code(), 0, "{}", put.body);

    let path = "/indexes/GPU_Index/download?what=daily&range=all&format=csv";
    let refused = app.request(Method::GET, path).send().await.unwrap();
    assert_eq!(refused.status(), 429);
    assert!(refused.headers().contains_key("retry-after"));
    assert!(header_text(refused.headers(), "content-type").starts_with("text/html"));
    let page = refused.text().await.unwrap();
    assert!(!page.contains("20261109,GPU_Index"), "{page}");

    // The next minute, with pages large enough for one read, the same download is whole.
    let put = app.put_tier(&admin, "free", max_rows(5000)).await;
    assert_eq!(put.code(), 0, "{}", put.body);
    app.clock.advance(chrono::Duration::minutes(1));
    let whole = app.request(Method::GET, path).send().await.unwrap();
    assert_eq!(whole.status(), 200);
    let text = whole.text().await.expect("a whole file");
    assert!(text.contains("20261109,GPU_Index"), "{text}");
    assert!(text.contains("20261110,GPU_Index"), "{text}");
}
