//! Deep pages (issue 14): the service may start a page after a boundary it remembers
//! (the sort key of the row before it) instead of skipping every row before it. From
//! outside that must never show: every page is exactly the slice `[offset, offset +
//! limit)` of the one big page, with the same envelope, whatever order pages are asked
//! in, whatever page sizes and field lists share a walk, and whatever imports land
//! between two requests (then the page is the slice of the new data, as a fresh OFFSET
//! query gives; under a fixed `as_of`, the slice of the data as of then).
//!
//! These tests must never assert how a page was read (keyset or OFFSET): only what the
//! specification defines, the rows.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{json, Value};

use crate::helpers::quotes::{import, spawn_for_imports, BASES};
use crate::helpers::{Key, Session, TestApp, DATASETS_BUT_REVISIONS};

/// Weekdays 2026-11-02 .. 2026-11-30 are open.
const DAYS: [&str; 8] = [
    "20261102", "20261103", "20261104", "20261105", "20261106", "20261109", "20261110", "20261111",
];

/// `specs` specifications of equal weight for `base` on `day` (weights sum to 1).
fn day_of(
    day: usize,
    base: usize,
    specs: usize,
    step: u32,
) -> Vec<(String, String, String, String, String)> {
    let weight = match specs {
        2 => "0.5",
        4 => "0.25",
        5 => "0.2",
        _ => panic!("{specs} specifications: pick a weight that sums to 1"),
    };
    (0..specs)
        .map(|s| {
            let price = 1000 * (base as u32 + 1) + 10 * day as u32 + s as u32 + 3 * step;
            (
                DAYS[day].to_string(),
                BASES[base].to_string(),
                format!("spec {s}"),
                weight.to_string(),
                price.to_string(),
            )
        })
        .collect()
}

/// Every base on every day with four specifications: 8 x 6 x 4 = 192 quotes.
fn first_file() -> Vec<(String, String, String, String, String)> {
    (0..DAYS.len())
        .flat_map(|d| (0..BASES.len()).flat_map(move |b| day_of(d, b, 4, 0)))
        .collect()
}

async fn spawn() -> (TestApp, Session, Key) {
    let (app, admin, key) = spawn_for_imports().await;
    import(&app, &admin, "quotes.csv", &first_file()).await;
    (app, admin, key)
}

/// One page of `api_name` with `params`, in the default fields or `fields`.
async fn page(
    app: &TestApp,
    key: &Key,
    api_name: &str,
    params: &Value,
    fields: Option<&[&str]>,
    limit: usize,
    offset: usize,
) -> crate::helpers::Reply {
    let mut body =
        json!({"api_name": api_name, "params": params, "limit": limit, "offset": offset});
    if let Some(fields) = fields {
        body["fields"] = json!(fields);
    }
    let reply = app.query_with(body, Some(&key.key)).await;
    assert_eq!(reply.code(), 0, "{}", reply.body);
    reply
}

/// The one big page: every row, in order.
async fn everything(app: &TestApp, key: &Key, api_name: &str, params: &Value) -> Vec<Value> {
    let reply = page(app, key, api_name, params, None, 5000, 0).await;
    assert_eq!(reply.data()["has_more"], false, "{}", reply.body);
    reply.items().clone()
}

/// Asserts the page at `offset` is the slice of `all` a fresh OFFSET query answers.
async fn check(
    app: &TestApp,
    key: &Key,
    api_name: &str,
    params: &Value,
    all: &[Value],
    limit: usize,
    offset: usize,
) {
    let reply = page(app, key, api_name, params, None, limit, offset).await;
    let end = all.len().min(offset + limit);
    let want = if offset < all.len() {
        &all[offset..end]
    } else {
        &[][..]
    };
    let context = format!("{api_name} {params} limit {limit} offset {offset}");
    assert_eq!(reply.items().as_slice(), want, "{context}");
    let data = reply.data();
    assert_eq!(data["returned"], json!(want.len()), "{context}");
    assert_eq!(
        data["has_more"],
        json!(offset + limit < all.len()),
        "{context}"
    );
    assert_eq!(
        (data["limit"].clone(), data["offset"].clone()),
        (json!(limit), json!(offset)),
        "{context}"
    );
}

/// Walks every page as spec 4.3 says.
async fn walk(
    app: &TestApp,
    key: &Key,
    api_name: &str,
    params: &Value,
    limit: usize,
) -> Vec<Value> {
    let (mut rows, mut offset) = (Vec::new(), 0);
    loop {
        let reply = page(app, key, api_name, params, None, limit, offset).await;
        rows.extend(reply.items().iter().cloned());
        offset += reply.data()["returned"].as_u64().unwrap() as usize;
        if reply.data()["has_more"] == false {
            return rows;
        }
    }
}

#[actix_web::test]
async fn pages_in_order_out_of_order_and_repeated_are_slices_of_the_big_page() {
    let (app, _admin, key) = spawn().await;
    let quotes = json!({"end_date": "20261111"});
    let all = everything(&app, &key, "index_quote", &quotes).await;
    assert_eq!(all.len(), 192);
    assert_eq!(walk(&app, &key, "index_quote", &quotes, 7).await, all);
    // Out of order, then again: boundaries learnt by one page size serve another, and
    // offsets off every boundary start from the nearest one below.
    for limit in [7, 10, 3] {
        let offsets: Vec<usize> = (0..all.len() + limit).step_by(limit).rev().collect();
        for &offset in offsets.iter().chain(&offsets) {
            check(&app, &key, "index_quote", &quotes, &all, limit, offset).await;
            check(&app, &key, "index_quote", &quotes, &all, limit, offset + 2).await;
        }
    }
    // Repeated with the fields in another order: a new page (not the page cache's)
    // on the same walk, so it is read from a boundary.
    let fields = [
        "price",
        "specification",
        "trade_date",
        "index_code",
        "weight",
    ];
    for offset in (0..all.len()).step_by(7) {
        let reply = page(&app, &key, "index_quote", &quotes, Some(&fields), 7, offset).await;
        let want: Vec<Value> = all[offset..all.len().min(offset + 7)]
            .iter()
            .map(|r| json!([r[4], r[2], r[0], r[1], r[3]]))
            .collect();
        assert_eq!(reply.items(), &want, "offset {offset}");
    }
    // Every dataset, by pages of one and three: index_latest's sort key (sort_no) is
    // not among its fields, index_basic's is not in field order.
    for api_name in DATASETS_BUT_REVISIONS {
        let params = json!({});
        let all = everything(&app, &key, api_name, &params).await;
        assert!(all.len() > 3, "{api_name}");
        for limit in [1, 3] {
            assert_eq!(
                walk(&app, &key, api_name, &params, limit).await,
                all,
                "{api_name}"
            );
        }
    }
}

#[actix_web::test]
async fn after_an_import_the_next_page_is_what_a_fresh_offset_query_answers() {
    let (app, admin, key) = spawn().await;
    let quotes = json!({"end_date": "20261111"});
    let before = everything(&app, &key, "index_quote", &quotes).await;
    // Pages up to offset 60 teach their boundaries.
    for offset in (0..60).step_by(10) {
        check(&app, &key, "index_quote", &quotes, &before, 10, offset).await;
    }
    // A fifth specification on the first day: one more row before every boundary.
    import(&app, &admin, "more.csv", &day_of(0, 2, 5, 1)).await;
    let after = everything(&app, &key, "index_quote", &quotes).await;
    assert_eq!(after.len(), before.len() + 1);
    assert_ne!(
        after[60..70],
        before[60..70],
        "the import must move the next page"
    );
    for offset in [60, 50, 55, 10, 70, 80] {
        check(&app, &key, "index_quote", &quotes, &after, 10, offset).await;
    }
    // Two specifications less on the first day: the rows move the other way.
    import(&app, &admin, "fewer.csv", &day_of(0, 1, 2, 2)).await;
    let fewer = everything(&app, &key, "index_quote", &quotes).await;
    assert_eq!(fewer.len(), after.len() - 2);
    for offset in [80, 90, 60, 85] {
        check(&app, &key, "index_quote", &quotes, &fewer, 10, offset).await;
    }
    assert_eq!(walk(&app, &key, "index_quote", &quotes, 10).await, fewer);
}

#[actix_web::test]
async fn a_walk_as_of_a_fixed_instant_is_stable_across_an_import() {
    let (app, admin, key) = spawn().await;
    let published = app
        .query_with(
            json!({"api_name": "index_quote", "fields": ["published_at"], "limit": 1}),
            Some(&key.key),
        )
        .await;
    let at = published.items()[0][0].as_str().unwrap().to_string();
    let then = json!({"as_of": at, "end_date": "20261111"});
    let all = everything(&app, &key, "index_quote", &then).await;
    let mut rows = Vec::new();
    for offset in (0..96).step_by(12) {
        rows.extend(
            page(&app, &key, "index_quote", &then, None, 12, offset)
                .await
                .items()
                .clone(),
        );
    }
    // Every day of GPU_Index gets a fifth specification and new prices.
    for day in 0..DAYS.len() {
        import(&app, &admin, "revised.csv", &day_of(day, 2, 5, 4)).await;
    }
    for offset in (96..all.len() + 12).step_by(12) {
        rows.extend(
            page(&app, &key, "index_quote", &then, None, 12, offset)
                .await
                .items()
                .clone(),
        );
    }
    assert_eq!(rows, all, "the walk as of then is the big page as of then");
    assert_eq!(everything(&app, &key, "index_quote", &then).await, all);
    // Today's data did change.
    let now = everything(&app, &key, "index_quote", &json!({"end_date": "20261111"})).await;
    assert_eq!(now.len(), all.len() + DAYS.len());
}

/// One step of a client: a page somewhere, the next page, or an import.
#[derive(Debug, Clone)]
enum Step {
    /// The page at `k * limit + jitter` (jitter 0 is a boundary a walk would reach).
    Page {
        k: usize,
        jitter: usize,
        limit: usize,
    },
    /// The page after the previous one, as spec 4.3 walks.
    Next,
    /// Replaces (day, base) with `specs` specifications.
    Import {
        day: usize,
        base: usize,
        specs: usize,
    },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (0..30usize, prop_oneof![Just(0usize), 0..4usize], prop::sample::select(vec![5usize, 8, 13]))
            .prop_map(|(k, jitter, limit)| Step::Page { k, jitter, limit }),
        4 => Just(Step::Next),
        1 => (0..DAYS.len(), 0..BASES.len(), prop::sample::select(vec![2usize, 4, 5]))
            .prop_map(|(day, base, specs)| Step::Import { day, base, specs }),
    ]
}

#[actix_web::test]
async fn random_walks_and_imports_always_answer_the_fresh_offset_slice() {
    let (app, admin, key) = spawn().await;
    let quotes = json!({"end_date": "20261111"});
    let mut runner = TestRunner::deterministic();
    for round in 0..2 {
        let steps = prop::collection::vec(step(), 40..60)
            .new_tree(&mut runner)
            .expect("steps")
            .current();
        let mut all = everything(&app, &key, "index_quote", &quotes).await;
        let (mut offset, mut limit) = (0, 8);
        for (i, step) in steps.iter().enumerate() {
            match *step {
                Step::Page {
                    k,
                    jitter,
                    limit: l,
                } => {
                    (offset, limit) = (k * l + jitter, l);
                }
                Step::Next => offset += limit,
                Step::Import { day, base, specs } => {
                    let file = format!("round{round}-{i}.csv");
                    import(&app, &admin, &file, &day_of(day, base, specs, i as u32)).await;
                    all = everything(&app, &key, "index_quote", &quotes).await;
                    continue;
                }
            }
            if offset > all.len() + limit {
                offset = 0;
            }
            check(&app, &key, "index_quote", &quotes, &all, limit, offset).await;
        }
    }
}
