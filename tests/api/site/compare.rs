//! The compare page: chosen indexes rebased to 100 on one chart and in a table, from a
//! plain GET form whose address is the comparison; only what the reader may see.

use crate::helpers::{spawn_with_fixture, PASSWORD};

#[actix_web::test]
async fn indexes_are_rebased_to_100_on_the_first_common_day_or_the_chosen_one() {
    let app = spawn_with_fixture().await;
    let page = app
        .page("/compare?code=Server_Index&code=GPU_Index&range=all")
        .await;
    assert_eq!(page.status, 200, "{}", page.html);
    // Both on one chart, each in its colour, with a legend and the table.
    page.assert_has(r#"class="line s0""#);
    page.assert_has(r#"class="line s1""#);
    page.assert_has(r#"<li data-index="Server_Index">"#);
    page.assert_has("100 = 1000.000000 points");
    page.assert_has(r#"id="compare-table""#);
    // 9 Nov is 100 for both; on 10 Nov Server_Index stood at 1010.123456 and GPU_Index
    // at 990.
    page.assert_has(r#"<td class="num">101.01</td><td class="num">99.00</td>"#);
    page.assert_has(r#"<td class="num">100.00</td><td class="num">100.00</td>"#);
    // The visitor's delay: 11 Nov is not there.
    page.assert_lacks("20261111");
    // The form holds the choice, so the address can be shared.
    page.assert_has(r#"value="Server_Index" checked"#);

    // A chosen base day.
    let based = app
        .page("/compare?code=Server_Index&range=all&base=2026-11-10")
        .await;
    based.assert_has("100 = 1010.123456 points");
    based.assert_lacks("20261109");

    // A member index is not offered to a visitor, and not drawn when asked for.
    let member = app
        .page("/compare?code=Hardware_Index&code=Server_Index&range=all")
        .await;
    assert_eq!(member.status, 200);
    member.assert_has(r#"id="compare-note""#);
    member.assert_lacks(r#"<li data-index="Hardware_Index">"#);
    member.assert_lacks(r#"value="Hardware_Index""#);
    // A pro member sees it, and 11 Nov.
    let admin = app.admin().await;
    app.user(&admin, "pia", "pro").await;
    let pia = app.form_login("pia", PASSWORD).await;
    let theirs = app
        .page_with(
            &pia.cookies,
            "/compare?code=Hardware_Index&code=Server_Index&range=all",
        )
        .await;
    theirs.assert_has(r#"<li data-index="Hardware_Index">"#);
    theirs.assert_has("20261111");

    for bad in ["range=5Y", "base=yesterday"] {
        assert_eq!(
            app.page(&format!("/compare?{bad}")).await.status,
            400,
            "{bad}"
        );
    }
}
