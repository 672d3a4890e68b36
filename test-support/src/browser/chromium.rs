//! The Chromium a [`Browser`](super::Browser) runs: where its binary is and the session's
//! capabilities (headless, the viewport, a fresh profile, no network of its own). It must
//! never start a process: chromedriver does, from these capabilities.

use std::path::Path;

use serde_json::{json, Value};

use super::{Viewport, INSTALL_HINT};
use crate::tools::chromium;

/// The session's capabilities: Chromium headless, at `viewport`, on the profile `profile`,
/// with nothing that reaches out to the network by itself.
pub(super) fn capabilities(viewport: Viewport, profile: &Path) -> fantoccini::wd::Capabilities {
    let binary = chromium();
    if binary.is_absolute() && !binary.exists() {
        panic!("no Chromium at {}: {INSTALL_HINT}", binary.display());
    }
    let (width, height) = viewport.size();
    let mut options = json!({
        "binary": binary,
        "args": [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            format!("--user-data-dir={}", profile.display()),
            format!("--window-size={width},{height}"),
        ],
    });
    if viewport == Viewport::Phone {
        options["mobileEmulation"] = json!({
            "deviceMetrics": {"width": width, "height": height, "pixelRatio": 1},
        });
    }
    match json!({ "goog:chromeOptions": options }) {
        Value::Object(capabilities) => capabilities,
        _ => unreachable!("a JSON object literal"),
    }
}
