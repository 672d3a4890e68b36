//! The defining property, on random sequences of imports: `as_of` at each import's
//! publication equals what a plain query answered right after that import.

use std::collections::BTreeMap;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{json, Value};

use super::*;
use crate::helpers::quotes::import;

/// One random import: a price per (day, base) it replaces.
fn import_strategy() -> impl Strategy<Value = Vec<(usize, usize, u32)>> {
    prop::collection::vec((0..DAYS.len(), 0..BASES.len(), 1u32..4), 1..6)
}

#[actix_web::test]
async fn as_of_each_publication_answers_what_a_plain_query_answered_right_after_it() {
    let (app, admin, key) = spawn().await;
    import(&app, &admin, "quotes.csv", &first_file()).await;
    let mut runner = TestRunner::deterministic();
    let sequence = prop::collection::vec(import_strategy(), 4..6)
        .new_tree(&mut runner)
        .expect("a sequence")
        .current();
    let mut seen: Vec<(String, Vec<Value>, Vec<Value>)> = Vec::new();
    for changes in sequence {
        let mut file: BTreeMap<(usize, usize), u32> = BTreeMap::new();
        for (day, base, step) in changes {
            file.insert((day, base), step);
        }
        let quotes_file: Vec<Quote> = file
            .iter()
            .map(|(&(day, base), &step)| {
                let price = 1000 * (base as u32 + 1) + 5 * step + day as u32;
                quote(DAYS[day], BASES[base], "unit", "1", &price.to_string())
            })
            .collect();
        let published = published_at(&import(&app, &admin, "quotes.csv", &quotes_file).await);
        seen.push((
            published,
            daily(&app, &key, json!({})).await,
            quotes(&app, &key, json!({})).await,
        ));
    }
    for (published, daily_then, quotes_then) in &seen {
        assert_eq!(
            &daily(&app, &key, json!({"as_of": published})).await,
            daily_then
        );
        assert_eq!(
            &quotes(&app, &key, json!({"as_of": published})).await,
            quotes_then
        );
    }
}
