//! Public pages: a visitor sees the free tier's indexes up to its cutoff, a member on a
//! plan with member indexes sees `Hardware_Index` and today's data.

use chrono::TimeZone;
use iq_test_support::site::PageReply;
use serde_json::json;

use crate::helpers::{spawn_with_fixture, TestApp, PASSWORD};

fn assert_page(page: &PageReply) {
    assert_eq!(page.status, 200, "{}", page.html);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    // The request id is in the header and in the footer.
    let id = page.header("x-request-id").expect("X-Request-Id");
    page.assert_has(&format!(r#"<code id="request-id">{id}</code>"#));
}

/// The page `path` as the browser with `cookies` (a visitor: none) sees it, asserted to
/// be a page as [`assert_page`] has it.
async fn good_page(app: &TestApp, cookies: &str, path: &str) -> PageReply {
    let page = app.page_with(cookies, path).await;
    assert_page(&page);
    page
}

#[actix_web::test]
async fn home_shows_a_visitor_the_public_indexes_up_to_the_free_cutoff() {
    let app = spawn_with_fixture().await;
    let home = good_page(&app, "", "/").await;
    // Free delay: 7 open days before Friday 20 November is Tuesday 10 November.
    home.assert_has("10 Nov 2026");
    home.assert_has("20261110");
    home.assert_has("7 trading days delayed");
    home.assert_has("members on the pro plan see today");
    home.assert_has(r#"href="/indexes/Server_Index""#);
    home.assert_has("1010.123456");
    // A rise is signed; a fall has its own sign.
    home.assert_has("<span>+10.123456</span> <span>(+1.012346%)</span>");
    home.assert_has("<span>-10.000000</span>");
    // Nothing after the cutoff, no member index.
    home.assert_lacks("999.500000");
    home.assert_lacks("Hardware_Index");
    // A small chart per index with history.
    home.assert_has(r#"<svg xmlns="http://www.w3.org/2000/svg""#);
    assert_eq!(home.header("cache-control"), Some("no-cache"));
}

#[actix_web::test]
async fn a_pro_member_sees_the_member_index_and_todays_data() {
    let (app, _) = spawn_with_fixture().await.with_member("pat", "pro").await;
    let pat = app.form_login("pat", PASSWORD).await;
    let home = good_page(&app, &pat.cookies, "/").await;
    home.assert_has("Hardware_Index");
    home.assert_has("999.500000");
    home.assert_has("up to date");
    home.assert_has(r#"id="account-link">pat</a>"#);
    // A member's page is theirs alone.
    assert_eq!(home.header("cache-control"), Some("private, no-store"));
    let index = good_page(&app, &pat.cookies, "/indexes/Hardware_Index").await;
    index.assert_has("1003.300000");
}

#[actix_web::test]
async fn an_index_page_has_its_chart_table_and_the_quotes_of_its_latest_visible_day() {
    let app = spawn_with_fixture().await;
    let page = good_page(&app, "", "/indexes/Server_Index?range=1M").await;
    page.assert_has(r#"class="chart""#);
    page.assert_has(r#"data-value="1010.123456""#);
    page.assert_has(r#"aria-current="page">1M</a>"#);
    // The quotes of 10 November (the visitor's latest day), with weights and prices as
    // the API prints them.
    page.assert_has("Specification quotes on 10 Nov 2026");
    page.assert_has("b 8x H100 SXM 80GB");
    page.assert_has("0.50000000");
    page.assert_has("250000.100000");
    page.assert_has("252531.360000");
    page.assert_lacks("249875.120000");

    // An index_only index: points, no weighted price, no quotes.
    let gpu = good_page(&app, "", "/indexes/GPU_Index").await;
    gpu.assert_has("990.000000");
    gpu.assert_lacks("29700");
    gpu.assert_lacks("Specification quotes");
    // Its quotes are the API's to give (to any key): the page says so.
    gpu.assert_has(r#"id="quotes-by-api""#);
    page.assert_lacks(r#"id="quotes-by-api""#);
}

#[actix_web::test]
async fn a_member_index_or_an_unknown_one_is_a_page_not_an_envelope() {
    let app = spawn_with_fixture().await;
    let member = app.page("/indexes/Hardware_Index").await;
    assert_eq!(member.status, 403, "{}", member.html);
    member.assert_has("<!doctype html>");
    member.assert_has("Hardware_Index");
    let unknown = app.page("/indexes/Nope_Index").await;
    assert_eq!(unknown.status, 404, "{}", unknown.html);
    unknown.assert_has("<!doctype html>");
    let range = app.page("/indexes/GPU_Index?range=5Y").await;
    assert_eq!(range.status, 400, "{}", range.html);
    let nowhere = app.page("/no/such/page").await;
    assert_eq!(nowhere.status, 404);
    let id = nowhere.header("x-request-id").unwrap().to_owned();
    nowhere.assert_has(&id);
    // The API keeps its envelopes.
    app.get("/api/v1/nothing").await.assert_error(404, 40401);
}

#[actix_web::test]
async fn the_calendar_shows_open_and_closed_days() {
    let app = spawn_with_fixture().await;
    let page = good_page(&app, "", "/calendar?year=2026").await;
    page.assert_has(r#"class="day open" title="20261117 open" data-date="20261117""#);
    page.assert_has(r#"class="day closed" title="20261116 closed" data-date="20261116""#);
    page.assert_has(r#"class="day closed" title="20261121 closed" data-date="20261121""#);
    assert_eq!(app.page("/calendar?year=abc").await.status, 400);
    assert_eq!(app.page("/calendar?year=99999").await.status, 400);
}

#[actix_web::test]
async fn plans_are_read_from_the_settings_and_follow_a_change() {
    let (app, admin) = spawn_with_fixture().await.with_admin().await;
    let mut free = app.tier(&admin, "free").await;
    free["per_day"] = json!(4321);
    free.as_object_mut().unwrap().remove("tier");
    let before = good_page(&app, "", "/plans").await;
    // As a cell: the digits alone could turn up in a random request id.
    before.assert_lacks(r#"<td class="num">4321</td>"#);
    app.put_tier(&admin, "free", free).await;
    let after = app.page("/plans").await;
    after.assert_has(r#"data-tier="free""#);
    after.assert_has(r#"<td class="num">4321</td>"#);
}

#[actix_web::test]
async fn methodology_and_examples_speak_of_the_callers_own_data() {
    let app = spawn_with_fixture().await;
    let method = good_page(&app, "", "/methodology").await;
    method.assert_has("round6");
    method.assert_has("a ratio to the base day");
    method.assert_has("<strong>free</strong>: 7 trading days");
    // Revisions, and how to reproduce a past answer.
    method.assert_has(r#"id="revisions""#);
    method.assert_has("<code>as_of</code>");
    let examples = good_page(&app, "", "/examples").await;
    // The visitor's first visible index and cutoff.
    examples.assert_has(r#""index_code": "Server_Index""#);
    examples.assert_has(r#"<a href="/docs#datasets" id="examples-reference">"#);
    examples.assert_has("20261110");
    // The client's install line (the wheel test runs it), Arrow and Parquet pages, and
    // the Tushare user's two-line change.
    examples.assert_has("python -m build --wheel clients/python");
    examples.assert_has("pip install 'clients/python/dist/iq_client-");
    examples.assert_has("-H 'Accept: application/vnd.apache.parquet'");
    examples.assert_has(r#"client.index_quote(format="arrow")"#);
    examples.assert_has("import iq_client.tushare as ts");
    examples.assert_has(r#"pro.index_daily(ts_code="Server_Index""#);
}

/// The Tushare guide, in English and in Simplified Chinese: each page in its language,
/// each linking the other, the one line to change naming this host's Tushare wire, and
/// `/examples` linking both. The language is the address's alone: a browser asking for
/// Chinese in `Accept-Language` still gets the English guide at the English address.
#[actix_web::test]
async fn the_tushare_guide_is_in_english_and_in_chinese_each_linking_the_other() {
    let app = spawn_with_fixture().await;
    let english = good_page(&app, "", "/tushare-guide").await;
    let chinese = good_page(&app, "", "/zh-CN/tushare-guide").await;
    english.assert_has(r#"<html lang="en">"#);
    chinese.assert_has(r#"<html lang="zh-CN">"#);
    english.assert_has(
        r#"<a href="/zh-CN/tushare-guide" hreflang="zh-CN" lang="zh-CN" id="other-language">中文</a>"#,
    );
    chinese.assert_has(
        r#"<a href="/tushare-guide" hreflang="en" lang="en" id="other-language">English</a>"#,
    );
    english.assert_has("<h1>Coming from Tushare</h1>");
    chinese.assert_has("<h1>从 Tushare 迁移</h1>");
    // The chrome stays English on the Chinese page, and says so.
    chinese.assert_has(r#"<header class="top" lang="en">"#);
    chinese.assert_has(r#"<footer lang="en">"#);
    for page in [&english, &chinese] {
        // The one line, naming this service's Tushare wire as the request reached it.
        page.assert_has(&format!(
            r#"pro._DataApi__http_url = "{}/tushare""#,
            app.address
        ));
        page.assert_has("import iq_client.tushare as ts");
        page.assert_has(r#"<a href="/plans""#);
        page.assert_has(r#"<a href="/methodology#delay""#);
        page.assert_has(r#"id="guide-example""#);
        // Each names the other for search engines, by its full address.
        page.assert_has(&format!(
            r#"<link rel="alternate" hreflang="zh-CN" href="{}/zh-CN/tushare-guide">"#,
            app.address
        ));
        // A visitor is told where a key comes from; none is ever shown.
        page.assert_has(r#"<a href="/login""#);
        assert_eq!(page.header("cache-control"), Some("no-cache"));
    }

    let asking_for_chinese = app
        .request(reqwest::Method::GET, "/tushare-guide")
        .header("Accept-Language", "zh-CN,zh;q=0.9")
        .send()
        .await
        .expect("the guide");
    assert_eq!(asking_for_chinese.status(), 200);
    let html = asking_for_chinese.text().await.unwrap();
    assert!(html.contains(r#"<html lang="en">"#), "{html}");
    assert!(html.contains("<h1>Coming from Tushare</h1>"), "{html}");

    let examples = good_page(&app, "", "/examples").await;
    examples.assert_has(r#"<a href="/tushare-guide" id="tushare-guide-link">"#);
    examples.assert_has(
        r#"<a href="/zh-CN/tushare-guide" hreflang="zh-CN" lang="zh-CN" id="tushare-guide-zh-link">"#,
    );
}

#[actix_web::test]
async fn a_kept_visitor_page_has_its_own_request_id_and_follows_every_change() {
    let app = spawn_with_fixture().await;
    let first = app.page("/").await;
    let second = app.page("/").await;
    assert_page(&first);
    assert_page(&second);
    assert_ne!(first.header("x-request-id"), second.header("x-request-id"));
    first.assert_has("AI Server");
    // A back-office change reaches the next visitor at once.
    let admin = app.admin().await;
    let renamed = app
        .patch_index(
            &admin,
            "Server_Index",
            json!({"index_name": "Renamed Server Index"}),
        )
        .await;
    assert_eq!(renamed.code(), 0, "{}", renamed.body);
    let after = good_page(&app, "", "/").await;
    after.assert_has("Renamed Server Index");
    // And so does a new tier delay.
    let mut free = app.tier(&admin, "free").await;
    free["delay_days"] = json!(0);
    free.as_object_mut().unwrap().remove("tier");
    app.put_tier(&admin, "free", free).await;
    app.page("/").await.assert_has("999.500000");
}

/// D20 on the website: each index page's facts box (currency, what a price includes,
/// source, base, publication time, methodology version, last and next publication),
/// the home page's next values, and the methodology's revision policy.
#[actix_web::test]
async fn index_pages_say_what_each_number_is_and_when_the_next_comes() {
    let app = spawn_with_fixture().await;
    let page = good_page(&app, "", "/indexes/Server_Index").await;
    page.assert_has(r#"<dd id="fact-currency">USD"#);
    page.assert_has("Selling price of one complete 8-GPU server system");
    page.assert_has("Daily quotes from system integrators and distributors");
    page.assert_has("each trading day at 18:00 (Asia/Shanghai)");
    page.assert_has(r#"<a href="/methodology">version 1.0</a>"#);
    // The visitor's last day is its cutoff's (10 Nov); the schedule is everyone's.
    page.assert_has(r#"<dd id="fact-latest">10 Nov 2026</dd>"#);
    app.member("pat", "pro").await;
    let pro_schedule = {
        let key = app.member_key("facts", "pro").await;
        let reply = app
            .query_with(
                json!({"api_name": "index_basic", "params": {"index_code": "Server_Index"},
                       "fields": ["next_publication_at"]}),
                Some(&key.key),
            )
            .await;
        reply.items()[0][0].as_str().expect("a schedule").to_owned()
    };
    let local = chrono::DateTime::parse_from_rfc3339(&pro_schedule)
        .unwrap()
        .with_timezone(&chrono_tz::Asia::Shanghai)
        .format("%a %-d %b %Y, %H:%M")
        .to_string();
    assert!(local.ends_with("18:00"), "{local}");
    // The fixture's Server_Index stops on 11 Nov, before the clock's 20 Nov: its next
    // values are due and not in yet.
    page.assert_has(&format!(
        r#"<dd id="fact-next">{local} (Asia/Shanghai) <span class="note">(due; not published yet)</span></dd>"#
    ));
    // The home page names the next publication still ahead, and none once all are
    // due: with the clock at 11 Nov 09:00 UTC (17:00 in Shanghai), Hardware_Index
    // (last value 10 Nov) has its next values at 18:00 that day; at the fixture's 20
    // Nov, every index's next values are overdue.
    let home = good_page(&app, "", "/").await;
    home.assert_lacks("Next values");
    app.clock
        .set(chrono::Utc.with_ymd_and_hms(2026, 11, 11, 9, 0, 0).unwrap());
    let pat = app.form_login("pat", PASSWORD).await;
    let home = good_page(&app, &pat.cookies, "/").await;
    home.assert_has(
        r#"id="next-publication">Next values: <strong>Wed 11 Nov 2026, 18:00 (Asia/Shanghai)</strong>"#,
    );
    let methodology = app.page("/methodology").await;
    methodology.assert_has("Revision policy.");
    methodology.assert_has("in <strong>US dollars (USD)</strong>");
}

/// Every page says what it is to a search engine, has the site icon, and links to the
/// API reference; an error page keeps the site's menu; `/favicon.ico` is the icon.
#[actix_web::test]
async fn every_page_has_a_description_the_icon_and_the_reference_in_its_menu() {
    let app = spawn_with_fixture().await;
    let icon = |page: &PageReply| {
        let at = page
            .html
            .find(r#"<link rel="icon" href=""#)
            .expect("an icon link");
        let rest = &page.html[at + r#"<link rel="icon" href=""#.len()..];
        rest[..rest.find('"').unwrap()].to_owned()
    };
    let mut icons = Vec::new();
    for path in super::VISITOR_PAGES.into_iter().chain(["/docs"]) {
        let page = app.page(path).await;
        page.assert_has(r#"<meta name="description" content=""#);
        // English, but for the pages whose address says otherwise.
        let lang = if path.starts_with("/zh-CN/") {
            "zh-CN"
        } else {
            "en"
        };
        page.assert_has(&format!(r#"<html lang="{lang}">"#));
        icons.push(icon(&page));
        if path != "/docs" {
            // The reference's own page has its own menu, of its sections.
            page.assert_has(r#"<a href="/docs" id="reference-link">API reference</a>"#);
            page.assert_has(r#"<a href="/methodology""#);
        }
    }
    assert!(icons.iter().all(|i| i == &icons[0]), "{icons:?}");
    assert!(
        icons[0].starts_with("/assets/favicon.") && icons[0].ends_with(".svg"),
        "{}",
        icons[0]
    );
    for path in [icons[0].as_str(), "/favicon.ico"] {
        let answer = app.page(path).await;
        assert_eq!(answer.status, 200, "{path}");
        assert_eq!(
            answer.header("content-type"),
            Some("image/svg+xml"),
            "{path}"
        );
        assert!(answer.html.starts_with("<svg"), "{path}");
    }
}
