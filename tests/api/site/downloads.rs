//! The index pages' downloads: each file holds exactly what `POST /api/v1/query` answers
//! the same website identity (a visitor, a free member, a pro member: never a row or a
//! field more), CSV as the API's own CSV, XLSX with numbers and dates typed; a member
//! index stays closed to a visitor.

use std::io::Cursor;

use calamine::{Data, Reader, Xlsx};
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{header_text, spawn_with_fixture, TestApp, PASSWORD};

/// `GET path` with `cookies`: the status, the headers and the body's bytes.
async fn fetch(
    app: &TestApp,
    cookies: &str,
    path: &str,
) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let mut request = app.request(Method::GET, path);
    if !cookies.is_empty() {
        request = request.header("Cookie", cookies);
    }
    let response = request.send().await.unwrap();
    let (status, headers) = (response.status().as_u16(), response.headers().clone());
    (status, headers, response.bytes().await.unwrap().to_vec())
}

/// The API's CSV answer to `body` for the website identity of `cookies`.
async fn api_csv(app: &TestApp, cookies: &str, body: Value) -> String {
    let mut request = app
        .request(Method::POST, "/api/v1/query")
        .header("Accept", "text/csv")
        .json(&body);
    if !cookies.is_empty() {
        request = request.header("Cookie", cookies);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 200);
    response.text().await.unwrap()
}

#[actix_web::test]
async fn each_download_is_what_the_api_answers_the_same_reader() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    app.user(&admin, "fran", "free").await;
    app.user(&admin, "paul", "pro").await;
    let free = app.form_login("fran", PASSWORD).await.cookies;
    let pro = app.form_login("paul", PASSWORD).await.cookies;

    let mut lines_seen = Vec::new();
    for (who, cookies) in [
        ("visitor", ""),
        ("free", free.as_str()),
        ("pro", pro.as_str()),
    ] {
        for (what, api_name) in [("daily", "index_daily"), ("quotes", "index_quote")] {
            let path = format!("/indexes/Server_Index/download?what={what}&range=all&format=csv");
            let (status, headers, body) = fetch(&app, cookies, &path).await;
            assert_eq!(status, 200, "{who} {what}");
            assert_eq!(headers["content-type"], "text/csv; charset=utf-8");
            let disposition = headers["content-disposition"].to_str().unwrap();
            assert!(
                disposition.contains(&format!("Server_Index-{what}-all-")),
                "{disposition}"
            );
            let query = json!({"api_name": api_name, "params": {"index_code": "Server_Index"},
                               "limit": 5000, "offset": 0});
            let expected = api_csv(&app, cookies, query).await;
            assert_eq!(String::from_utf8(body).unwrap(), expected, "{who} {what}");
            lines_seen.push((who, what, expected.lines().count()));
        }
    }
    // The delay is the reader's: the visitor and the free member see 9 and 10 Nov, the
    // pro member 11 Nov too.
    let count = |who: &str, what: &str| {
        lines_seen
            .iter()
            .find(|(w, x, _)| *w == who && *x == what)
            .unwrap()
            .2
    };
    assert_eq!(count("visitor", "daily"), 1 + 2);
    assert_eq!(count("free", "daily"), 1 + 2);
    assert_eq!(count("pro", "daily"), 1 + 3);
    assert_eq!(count("pro", "quotes"), 1 + 4);

    // A member index is the page's 403 for a visitor, and a download for the pro member.
    let member = "/indexes/Hardware_Index/download?range=all&format=csv";
    assert_eq!(fetch(&app, "", member).await.0, 403);
    assert_eq!(fetch(&app, &pro, member).await.0, 200);
    // Bad asks are 400 pages; an unknown index 404.
    for bad in ["what=everything", "range=5Y", "format=pdf"] {
        let path = format!("/indexes/Server_Index/download?{bad}");
        assert_eq!(fetch(&app, "", &path).await.0, 400, "{bad}");
    }
    assert_eq!(fetch(&app, "", "/indexes/Nope/download").await.0, 404);
}

#[actix_web::test]
async fn an_xlsx_download_holds_numbers_with_their_decimals_and_dates() {
    let app = spawn_with_fixture().await;
    app.admin().await;
    let page = app.page("/indexes/Server_Index?range=all").await;
    page.assert_has(r#"href="/indexes/Server_Index/download?range=all&amp;format=xlsx""#);
    let (status, headers, body) = fetch(
        &app,
        "",
        "/indexes/Server_Index/download?range=all&format=xlsx",
    )
    .await;
    assert_eq!(status, 200);
    assert!(header_text(&headers, "content-type").contains("spreadsheetml"));
    let mut workbook: Xlsx<_> = Xlsx::new(Cursor::new(body)).unwrap();
    let sheet = workbook.worksheet_range_at(0).unwrap().unwrap();
    let rows: Vec<Vec<Data>> = sheet.rows().map(|r| r.to_vec()).collect();
    let header: Vec<String> = rows[0].iter().map(|c| c.to_string()).collect();
    let csv = api_csv(
        &app,
        "",
        json!({"api_name": "index_daily", "params": {"index_code": "Server_Index"}, "limit": 5000}),
    )
    .await;
    assert_eq!(header.join(","), csv.lines().next().unwrap());
    assert_eq!(rows.len(), csv.lines().count());
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    // 10 Nov: a date, and the value 1010.123456 as a number shown with six decimals.
    let day = &rows[2][col("trade_date")];
    assert!(matches!(day, Data::DateTime(_)), "{day:?}");
    match &rows[2][col("index_value")] {
        Data::Float(v) => assert!((v - 1010.123456).abs() < 1e-9, "{v}"),
        other => panic!("index_value is {other:?}"),
    }
    assert_eq!(
        rows[2][col("index_code")],
        Data::String("Server_Index".into())
    );
}
