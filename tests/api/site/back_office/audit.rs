//! The audit trail's page: a change made with a form appears with who made it, what
//! moved and its request id; the filters narrow it; pages of users link to their
//! history; a member is refused.

use super::back_office;
use crate::helpers::PASSWORD;

#[actix_web::test]
async fn a_change_made_with_a_form_is_on_the_audit_page_with_its_request_id() {
    let (app, admin, root) = back_office().await;
    let user_id = {
        app.user(&admin, "anna", "free").await;
        let found = app.admin_users(&admin, "q=anna").await;
        found.data()["items"][0]["id"].as_str().unwrap().to_owned()
    };
    let page = app
        .page_with(&root.cookies, &format!("/admin/users/{user_id}"))
        .await;
    page.assert_has(&format!(r#"href="/admin/audit?target=user:{user_id}""#));
    let saved = app
        .submit(
            &root,
            &format!("/admin/users/{user_id}"),
            &page.csrf(),
            &[
                ("tier", "pro"),
                ("role", "user"),
                ("active", "1"),
                ("api_access", "1"),
            ],
        )
        .await;
    assert_eq!(saved.status, 303, "{}", saved.html);
    let request_id = saved.header("x-request-id").unwrap().to_owned();

    let history = app
        .page_with(
            &root.cookies,
            &format!("/admin/audit?target=user:{user_id}"),
        )
        .await;
    assert_eq!(history.status, 200);
    history.assert_has(r#"data-action="user.changed""#);
    history.assert_has(r#"data-action="user.created""#);
    history.assert_has("tier: free → pro");
    history.assert_has(&request_id);
    // Filtered by action, the creation is gone; a bad filter names itself.
    let changed = app
        .page_with(&root.cookies, "/admin/audit?action=user.changed")
        .await;
    changed.assert_lacks(r#"data-action="user.created""#);
    let bad = app
        .page_with(&root.cookies, "/admin/audit?from=yesterday")
        .await;
    assert_eq!(bad.status, 400);
    bad.assert_has("from must be a date");

    // Moving an index in the display order, from its page, is recorded with the order
    // before and after.
    let indexes = app.page_with(&root.cookies, "/admin/indexes").await;
    let moved = app
        .submit(
            &root,
            "/admin/indexes/GPU_Index",
            &indexes.csrf(),
            &[("action", "down")],
        )
        .await;
    assert_eq!(moved.status, 303, "{}", moved.html);
    let records = app.audit_records("index.moved", "index:GPU_Index").await;
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(
        records[0]["request_id"].as_str(),
        moved.header("x-request-id")
    );
    assert_ne!(records[0]["before"]["order"], records[0]["after"]["order"]);

    let anna = app.form_login("anna", PASSWORD).await;
    let refused = app.page_with(&anna.cookies, "/admin/audit").await;
    assert_eq!(refused.status, 403);
}
