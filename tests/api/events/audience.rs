//! Who hears what, and when: a pro member hears every index of an import at once, a
//! free member only its indexes and only the days within its delay window, each day
//! when it enters the window; corrections are `index.revised` for the days the member
//! could see; a key's range narrows what it hears; a rejected import says nothing; two
//! instances crossing a day boundary tell each day once.

use std::collections::BTreeMap;

use chrono::{TimeZone, Utc};

use super::*;
use crate::helpers::quotes::BASES;

fn expected(kind: &str, codes: &[&str], days: &[&str]) -> BTreeMap<(String, String), Vec<String>> {
    codes
        .iter()
        .map(|code| ((kind.to_string(), code.to_string()), strings(days)))
        .collect()
}

/// Wednesday 25 Nov 2026, noon in Shanghai: the free tier's cutoff is Mon 16 Nov.
fn wednesday() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 25, 4, 0, 0).unwrap()
}

#[actix_web::test]
async fn a_pro_member_hears_every_index_at_once_and_a_free_one_its_window() {
    let (app, _admin, pro, free) = imported().await;

    let (events, _) = all_events(&app, &pro, "evt_0").await;
    let mut codes = BASES.to_vec();
    codes.push("Hardware_Index");
    assert_eq!(days_by_index(&events), expected(PUBLISHED, &codes, &DAYS));
    // Facts, never values: exactly these members.
    for event in &events {
        let mut keys: Vec<&str> = event
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(keys, ["data", "id", "timestamp", "type"], "{event}");
        let mut data: Vec<&str> = event["data"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        data.sort_unstable();
        assert_eq!(
            data,
            ["index_code", "published_at", "trade_dates"],
            "{event}"
        );
    }

    let (events, _) = all_events(&app, &free, "evt_0").await;
    assert_eq!(
        days_by_index(&events),
        expected(PUBLISHED, &BASES, &DAYS[..3]),
        "a free member hears its indexes up to its cutoff, never the member index"
    );
}

#[actix_web::test]
async fn a_delayed_member_hears_a_day_when_it_enters_its_window() {
    let (app, _admin, pro, free) = imported().await;
    let (_, free_next) = all_events(&app, &free, "evt_0").await;
    let (_, pro_next) = all_events(&app, &pro, "evt_0").await;

    app.clock.set(wednesday());
    // Held until the window moves (the keeper looks at the clock every second).
    let reply = app
        .events_with(&free.key, &format!("after={free_next}&wait=10"))
        .await;
    assert!(!events_of(&reply).is_empty(), "{}", reply.body);
    let (events, _) = all_events(&app, &free, &free_next).await;
    assert_eq!(
        days_by_index(&events),
        expected(PUBLISHED, &BASES, &DAYS[3..6]),
        "the days between the cutoffs, once each"
    );
    let (events, _) = all_events(&app, &pro, &pro_next).await;
    assert!(
        events.is_empty(),
        "nothing new for a pro member: {events:?}"
    );
}

#[actix_web::test]
async fn corrections_are_heard_as_revised_for_the_days_a_member_could_see() {
    let (app, admin, pro, free) = imported().await;
    let (_, free_next) = all_events(&app, &free, "evt_0").await;
    let (_, pro_next) = all_events(&app, &pro, "evt_0").await;

    // GPU_Index on 10 Nov, within both windows, at another price.
    let fix = [("20261110", "GPU_Index", "unit", "1", "2222")];
    import(&app, &admin, "fix.csv", &fix).await;
    let (events, free_next) = all_events(&app, &free, &free_next).await;
    let heard = days_by_index(&events);
    let revised = &heard[&(REVISED.to_string(), "GPU_Index".to_string())];
    assert!(revised.contains(&"20261110".to_string()), "{heard:?}");
    assert!(
        revised.iter().all(|d| d.as_str() <= "20261111"),
        "beyond the cutoff: {heard:?}"
    );
    assert!(heard.keys().all(|(kind, _)| kind == REVISED), "{heard:?}");
    let (events, pro_next) = all_events(&app, &pro, &pro_next).await;
    let heard = days_by_index(&events);
    for code in ["GPU_Index", "Hardware_Index"] {
        let revised = &heard[&(REVISED.to_string(), code.to_string())];
        assert!(
            revised.contains(&"20261110".to_string()),
            "{code}: {heard:?}"
        );
    }

    // 18 Nov is beyond the free member's window: only the pro member hears of it.
    let fix = [("20261118", "GPU_Index", "unit", "1", "3333")];
    import(&app, &admin, "fix2.csv", &fix).await;
    let (events, _) = all_events(&app, &free, &free_next).await;
    assert!(events.is_empty(), "{events:?}");
    let (events, _) = all_events(&app, &pro, &pro_next).await;
    let heard = days_by_index(&events);
    let revised = &heard[&(REVISED.to_string(), "GPU_Index".to_string())];
    assert!(revised.contains(&"20261118".to_string()), "{heard:?}");
}

#[actix_web::test]
async fn a_key_with_a_range_hears_only_its_indexes() {
    let (app, _admin, _pro, _free) = imported().await;
    let rita = app.member("rita", "pro").await;
    let key = app.key_for_indexes(&rita, "gpu only", &["GPU_Index"]).await;
    let (events, _) = all_events(&app, &key, "evt_0").await;
    assert_eq!(
        days_by_index(&events),
        expected(PUBLISHED, &["GPU_Index"], &DAYS)
    );
}

#[actix_web::test]
async fn a_rejected_import_writes_no_event() {
    let (app, admin, pro, _free) = imported().await;
    let (_, next) = all_events(&app, &pro, "evt_0").await;
    let before = crate::helpers::count_rows(&app.db, "events").await;
    let bad = [
        ("20261123", "GPU_Index", "unit", "1", "2000"),
        ("20261123", "GPU_Index", "unit", "1", "not a price"),
    ];
    let reply = app
        .import_file(&admin, "bad.csv", crate::helpers::quotes::csv(&bad))
        .await;
    assert_ne!(reply.code(), 0, "{}", reply.body);
    assert_eq!(crate::helpers::count_rows(&app.db, "events").await, before);
    let (events, _) = all_events(&app, &pro, &next).await;
    assert!(events.is_empty(), "{events:?}");
}

#[actix_web::test]
async fn two_instances_crossing_a_day_boundary_tell_each_day_once() {
    let (app, _admin, _pro, free) = imported().await;
    let other = app.another_instance().await;
    let (_, next) = all_events(&app, &free, "evt_0").await;
    app.clock.set(wednesday());
    let reply = other
        .events_with(&free.key, &format!("after={next}&wait=10"))
        .await;
    assert!(!events_of(&reply).is_empty(), "{}", reply.body);
    // Both keepers look at the clock every second: a second telling of the days would
    // arrive within this wait.
    let (_, end) = all_events(&app, &free, &next).await;
    let quiet = app
        .events_with(&free.key, &format!("after={end}&wait=3"))
        .await;
    assert!(events_of(&quiet).is_empty(), "{}", quiet.body);
    let (events, _) = all_events(&app, &free, &next).await;
    assert_eq!(
        days_by_index(&events),
        expected(PUBLISHED, &BASES, &DAYS[3..6])
    );
}
