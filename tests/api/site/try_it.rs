//! "Try it" on the reference: a dataset's form sends the query the API receives (as
//! the reader's website identity, or with a pasted key, counted like any call with it)
//! and shows the body sent and the answer with its request id; the key never comes back.

use iq_test_support::site::PageReply;

use crate::helpers::{spawn_with_fixture, TestApp};

/// The form of `dataset`, filled with `fields` and sent as a visitor's browser would.
async fn try_it(app: &TestApp, dataset: &str, fields: &[(&str, &str)]) -> PageReply {
    let form = app.page(&format!("/docs/try/{dataset}")).await;
    assert_eq!(form.status, 200, "{}", form.html);
    let cookie = form.cookie("iq_form").expect("the form sets iq_form");
    let token = form.csrf();
    let mut sent = vec![("csrf", token.as_str())];
    sent.extend_from_slice(fields);
    app.post_form(&cookie, &format!("/docs/try/{dataset}"), &sent)
        .await
}

#[actix_web::test]
async fn a_query_tried_from_the_reference_shows_the_apis_answer_and_its_request_id() {
    let app = spawn_with_fixture().await;
    let docs = app.page("/docs").await;
    docs.assert_has(r#"href="/docs/try/index_daily""#);

    let answered = try_it(
        &app,
        "index_daily",
        &[("param_index_code", "Server_Index"), ("limit", "2")],
    )
    .await;
    assert_eq!(answered.status, 200, "{}", answered.html);
    answered.assert_has("Answer: HTTP 200, code 0");
    answered.assert_has("1000.000000");
    let request_id = answered.header("x-request-id").unwrap();
    answered.assert_has(&format!(r#"<code id="try-request-id">{request_id}</code>"#));
    // The body sent, as the API received it.
    answered.assert_has("&#34;limit&#34;: 2");

    // The API's refusal, shown as it is: a limit that is not a number.
    let refused = try_it(&app, "index_daily", &[("limit", "many")]).await;
    assert_eq!(refused.status, 200);
    refused.assert_has("Answer: HTTP 400, code 40001");

    // With a pro member's key: 11 Nov, past the visitor's cutoff; the call is counted,
    // and the key is nowhere on the page.
    let key = app.member_key("pia", "pro").await;
    let with_key = try_it(
        &app,
        "index_daily",
        &[("param_index_code", "Server_Index"), ("key", &key.key)],
    )
    .await;
    with_key.assert_has("Answer: HTTP 200, code 0");
    with_key.assert_has("20261111");
    with_key.assert_has("sent with the pasted key");
    with_key.assert_lacks(&key.key);
    let membership = app.membership_with(&key.key).await;
    assert_eq!(
        membership.data()["quota"]["used_day"],
        1,
        "{}",
        membership.body
    );

    // An unknown dataset is a 404 page; a post without the form's token is refused.
    assert_eq!(app.page("/docs/try/nope").await.status, 404);
    let forged = app
        .post_form("", "/docs/try/index_daily", &[("limit", "1")])
        .await;
    assert_eq!(forged.status, 403);
}
