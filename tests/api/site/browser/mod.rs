//! The website in a real browser (headless Chromium): what a person sees and does on it.
//! The HTTP-level checks of the same pages are in `public` and `member`; these are about
//! layout, the script, forms filled in by typing, the keyboard and the phone.
//!
//! Every test saves screenshots under `target/screenshots/browser_*.png` to look at. A
//! test waits for what it needs (an element, the page's `load` event, the page that
//! replaces the one shown) and never sleeps; the steps it shares with the back office's
//! browser tests are in `browser_steps`.
//!
//! A file per topic: `visitor` (the public indexes and a chart), `keys` (a member makes,
//! uses, rotates, renames and deletes a key), `phone` (every page on a phone's screen),
//! `keyboard` (logging in and making a key with the keyboard alone) and `tushare_guide`
//! (the guide in both languages, from the examples page). The step these
//! files share, and the back office's do not, is here: [`attributes`].

mod compare;
mod downloads;
mod keyboard;
mod keys;
mod phone;
mod setup;
mod try_it;
mod tushare_guide;
mod two_factor;
mod visitor;
mod webhooks;

use iq_test_support::browser::Browser;
use serde_json::json;

use crate::site::browser_steps::js;

/// The attribute `attribute` of each element matching `selector`, in document order.
async fn attributes(browser: &Browser, selector: &str, attribute: &str) -> Vec<String> {
    let script = format!(
        "return [...document.querySelectorAll({})].map(e => e.getAttribute({}))",
        json!(selector),
        json!(attribute)
    );
    serde_json::from_value(js(browser, &script).await).expect("a list of strings")
}
