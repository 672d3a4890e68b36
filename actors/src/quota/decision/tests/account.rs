//! A key and its owner's account (D11): the cap binds before any key, a refusal
//! spends nothing, a new key gets nothing more, exact across instances.

use super::*;
use crate::quota::subject::UNCAPPED;

#[test]
fn the_account_cap_binds_before_any_key_and_the_status_shows_it() {
    // Three keys of 10 a day each; the account may make 12 a day in all.
    let key_limits = limits(100, 10);
    let account_limits = limits(1000, 12);
    let now = at(9, 0, 0);
    let mut account = Leases::new(account_limits, now);
    let mut keys = [
        Leases::new(key_limits, now),
        Leases::new(key_limits, now),
        Leases::new(key_limits, now),
    ];
    let names = ["k1", "k2", "k3"];
    let mut db = Db::default();
    let (mut admitted, mut per_key) = (0, [0; 3]);
    for n in 0..30 {
        let i = n % 3;
        let verdict = call_both(
            (names[i], &mut keys[i], key_limits),
            (&mut account, account_limits),
            &mut db,
            now,
        );
        match verdict {
            Verdict::Admit(status) => {
                admitted += 1;
                per_key[i] += 1;
                // The day reported is the one with fewer calls left: the key's at
                // first, the account's once it has fewer left than the key.
                let (key_left, account_left) = (10 - per_key[i], 12 - admitted);
                let expected = if account_left < key_left {
                    (12, account_left)
                } else {
                    (10, key_left)
                };
                assert_eq!((status.day.limit, status.day.remaining), expected);
                assert_eq!(status.binding(None).remaining, expected.1, "call {n}");
            }
            Verdict::Refuse(window, status) => {
                assert_eq!(window, Window::Day);
                assert_eq!((status.day.limit, status.day.remaining), (12, 0));
            }
            Verdict::Lease | Verdict::Report => unreachable!(),
        }
    }
    assert_eq!(admitted, 12);
    assert_eq!(db.granted("acct", Window::Day), 12);
    assert!(names.iter().all(|k| db.granted(k, Window::Day) <= 10));
}

#[test]
fn a_refusal_by_the_account_spends_nothing_of_the_key() {
    let now = at(9, 0, 0);
    let mut caller = KeyAndAccount::new(limits(100, 100), limits(1000, 1));
    let first = caller.call(now);
    assert!(matches!(first, Verdict::Admit(_)));
    let held = caller.key.status(now);
    let refused = caller.call(now);
    assert!(matches!(refused, Verdict::Refuse(Window::Day, _)));
    assert_eq!(
        caller.key.status(now),
        held,
        "the key's budget is untouched"
    );
    // The budget the key holds serves the next call once the account allows it,
    // without another statement for the key.
    let before = caller.db.statements;
    caller.account_limits = limits(1000, 5);
    let admitted = caller.call(now);
    assert!(matches!(admitted, Verdict::Admit(_)));
    assert_eq!(
        caller.db.statements,
        before + 1,
        "one statement, for the account"
    );
    assert_eq!(
        caller.db.granted("key", Window::Day),
        25,
        "the key's first block only"
    );
}

#[test]
fn a_used_up_day_answers_even_when_the_other_subjects_minute_is_used_up() {
    let now = at(9, 0, 0);
    let mut caller = KeyAndAccount::new(limits(2, 100), limits(100, 2));
    for _ in 0..2 {
        let verdict = caller.call(now);
        assert!(matches!(verdict, Verdict::Admit(_)));
    }
    // The key's minute and the account's day are both used up: 42902.
    let verdict = caller.call(now);
    assert!(
        matches!(verdict, Verdict::Refuse(Window::Day, _)),
        "{verdict:?}"
    );
}

#[test]
fn a_new_key_of_the_same_account_gets_nothing_more() {
    // The measured case: a free member's only key spends the day, is deleted, and a
    // new key is created. The account's windows are not the key's: still used up.
    let now = at(9, 0, 0);
    let mut account = Leases::new(FREE, now);
    let mut old = Leases::new(FREE, now);
    let mut db = Db::default();
    for _ in 0..10 {
        let verdict = call_both(("old", &mut old, FREE), (&mut account, FREE), &mut db, now);
        assert!(matches!(verdict, Verdict::Admit(_)));
    }
    let mut new = Leases::new(FREE, now);
    let verdict = call_both(("new", &mut new, FREE), (&mut account, FREE), &mut db, now);
    let Verdict::Refuse(Window::Day, status) = verdict else {
        panic!("the account's day is used up: {verdict:?}");
    };
    assert_eq!((status.day.limit, status.day.remaining), (10, 0));
    // Another instance (fresh account leases) is refused by the database too.
    let mut elsewhere = Leases::new(FREE, now);
    let mut newer = Leases::new(FREE, now);
    let verdict = call_both(
        ("newer", &mut newer, FREE),
        (&mut elsewhere, FREE),
        &mut db,
        now,
    );
    assert!(matches!(verdict, Verdict::Refuse(Window::Day, _)));
    // The next UTC day starts empty.
    let tomorrow = now + chrono::TimeDelta::days(1);
    let mut db_tomorrow = Db::default();
    let verdict = call_both(
        ("new", &mut new, FREE),
        (&mut account, FREE),
        &mut db_tomorrow,
        tomorrow,
    );
    assert!(matches!(verdict, Verdict::Admit(_)));
}

#[test]
fn an_uncapped_account_never_binds() {
    let now = at(9, 0, 0);
    let mut caller = KeyAndAccount::new(limits(5, 5), limits(UNCAPPED, UNCAPPED));
    for n in 1..=5 {
        let verdict = caller.call(now);
        let Verdict::Admit(status) = verdict else {
            panic!("call {n}: {verdict:?}");
        };
        assert_eq!(
            status,
            caller.key.status(now),
            "the key's windows are reported"
        );
    }
    let verdict = caller.call(now);
    assert!(matches!(verdict, Verdict::Refuse(Window::Day, _)));
    // Still counted: a cap that appears later charges these calls.
    assert!(caller.db.granted("acct", Window::Day) >= 5);
}

#[test]
fn both_subjects_are_exact_across_instances() {
    // Two instances, each with its own key of one account (cap 7 a minute), calls
    // interleaved: exactly the cap is admitted, whatever the blocks each leased.
    let now = at(9, 0, 0);
    let key_limits = limits(10, 100);
    let cap = limits(7, 100);
    let mut db = Db::default();
    let mut instances = [
        (Leases::new(key_limits, now), Leases::new(cap, now), "k1"),
        (Leases::new(key_limits, now), Leases::new(cap, now), "k2"),
    ];
    let mut admitted = 0;
    for n in 0..20 {
        let (key, account, name) = &mut instances[n % 2];
        let verdict = call_both((*name, key, key_limits), (account, cap), &mut db, now);
        if let Verdict::Admit(_) = verdict {
            admitted += 1;
        } else {
            assert!(
                matches!(verdict, Verdict::Refuse(Window::Minute, _)),
                "{verdict:?}"
            );
        }
    }
    assert_eq!(admitted, 7);
    assert_eq!(db.granted("acct", Window::Minute), 7);
}
