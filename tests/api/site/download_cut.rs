//! A CSV download whose later page is refused after the file has begun: the transfer is
//! cut (no last chunk), so the browser reports a failed download instead of saving a
//! file that looks whole.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{spawn_with, Spawn, FIXTURE};

#[actix_web::test]
async fn a_later_page_refused_cuts_the_transfer_instead_of_ending_the_file() {
    // A visitor may read once a minute: the download's first page, and its second is
    // refused (42901) after the status and the first rows were sent.
    let app = spawn_with(Spawn {
        setup_sql: FIXTURE,
        tune: |settings| settings.site.website_per_minute = 1,
        ..Spawn::default()
    })
    .await;
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
    // The service may cut the connection before or after the client has read the head:
    // either way the client must not get a whole answer.
    let cut = match app.request(Method::GET, path).send().await {
        Err(error) => format!("{error:?}"),
        Ok(response) => {
            assert_eq!(response.status(), 200);
            let body = response.bytes().await;
            format!("{:?}", body.expect_err("a cut transfer, not a whole file"))
        }
    };
    assert!(
        cut.contains("IncompleteMessage") || cut.contains("Body"),
        "{cut}"
    );
    // The next minute, with pages large enough for one read, the same download is whole.
    app.put_tier(&admin, "free", max_rows(5000)).await;
    app.clock.advance(chrono::Duration::minutes(1));
    let whole = app.request(Method::GET, path).send().await.unwrap();
    assert_eq!(whole.status(), 200);
    let text = whole.text().await.expect("a whole file");
    assert!(text.contains("20261109,GPU_Index"), "{text}");
}
