//! Who may open which back-office page: administrators their own, super administrators
//! every one, nobody a login form and a member a 403 page; the back office's link and
//! the landing page's links follow the role.

use super::back_office;
use crate::helpers::PASSWORD;

#[actix_web::test]
async fn each_role_sees_its_pages_and_a_403_page_for_the_others() {
    let (app, admin_session, root) = back_office().await;
    app.user_with_role(&admin_session, "ada", "admin").await;
    app.user(&admin_session, "uma", "free").await;
    let ada = app.form_login("ada", PASSWORD).await;
    let uma = app.form_login("uma", PASSWORD).await;
    let admin_pages = ["/admin", "/admin/imports", "/admin/calendar"];
    let super_pages = ["/admin/tiers", "/admin/indexes"];
    for path in admin_pages.iter().chain(&super_pages) {
        let nobody = app.page(path).await;
        assert_eq!(
            (nobody.status, nobody.header("location")),
            (303, Some("/login")),
            "{path}"
        );
        let user = app.page_with(&uma.cookies, path).await;
        assert_eq!(user.status, 403, "{path}");
        user.assert_has("This page is for");
        assert_eq!(
            app.page_with(&root.cookies, path).await.status,
            200,
            "{path}"
        );
    }
    for path in admin_pages {
        assert_eq!(
            app.page_with(&ada.cookies, path).await.status,
            200,
            "{path}"
        );
    }
    for path in super_pages {
        let page = app.page_with(&ada.cookies, path).await;
        assert_eq!(page.status, 403, "{path}");
        page.assert_has("super administrators");
    }
    // The back office's link shows to administrators only.
    app.page_with(&ada.cookies, "/")
        .await
        .assert_has(r#"id="back-office-link""#);
    app.page_with(&uma.cookies, "/")
        .await
        .assert_lacks(r#"id="back-office-link""#);
    // Ada sees imports and the calendar on the landing page, not the rest.
    let home = app.page_with(&ada.cookies, "/admin").await;
    home.assert_has(r#"href="/admin/imports""#);
    home.assert_lacks(r#"href="/admin/tiers""#);
}
