//! Real-browser tests: a headless Chromium driven over WebDriver (`fantoccini`), for the
//! pages of the service that only a browser can check (layout, scripts, forms).
//!
//! Each [`Browser`] is its own `chromedriver` process (on a port the OS picks) with its own
//! Chromium and a fresh profile in a temporary folder. At most two browsers run at once in
//! the test process (`BROWSERS_AT_ONCE` changes that): [`Browser::open`] waits for a slot.
//! End a test with [`Browser::close`]; when a test panics instead, dropping the `Browser`
//! still asks chromedriver to quit its Chromium, waits for both to exit (killing them if
//! they do not) and removes the profile, so no process or folder outlives a test.
//!
//! It needs Debian's `chromium` and `chromium-driver` packages (`.ci/run` installs them);
//! `CHROMIUM` and `CHROMEDRIVER` override the paths `/usr/bin/chromium` and
//! `/usr/bin/chromedriver`. Chromium runs with its background networking off: the machines
//! the tests run on may have no way out, and a test must not depend on one.
//!
//! Rules for whoever extends it:
//! - never sleep to wait for something to be ready: poll for the condition itself (the
//!   driver's `/status`, [`Browser::wait_for`] an element), with a deadline and a message
//!   saying what did not happen;
//! - never share a browser between tests, or keep one in a `static`: one test, one
//!   `Browser`, opened in the test and closed at its end;
//! - keep the parts apart: this file is the session and its steps (open, go, find, fill,
//!   click, screenshot); the chromedriver process and its cleanup are `browser/driver.rs`,
//!   Chromium's options `browser/chromium.rs`, reading the process table
//!   `browser/process.rs`. A step must never manage processes, and the driver must never
//!   drive pages.
//!
//! ```no_run
//! # async fn example() {
//! use iq_test_support::browser::{Browser, Viewport};
//!
//! let app = iq_test_support::spawn_app().await;
//! let browser = Browser::open(Viewport::Phone).await;
//! browser.goto(&format!("{}/healthz", app.address)).await;
//! assert!(browser.page_source().await.contains("ok"));
//! browser.screenshot("healthz_on_a_phone").await;
//! browser.close().await;
//! # }
//! ```

mod chromium;
mod driver;
mod process;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::json;
use tokio::sync::{Semaphore, SemaphorePermit};

use crate::tools::chromium;
use chromium::capabilities;
use driver::Driver;

/// How long [`Browser::wait_for`] waits for an element.
const ELEMENT_WITHIN: Duration = Duration::from_secs(10);

/// What to install when Chromium or chromedriver is missing: the tools' own words.
const INSTALL_HINT: &str = crate::tools::Tool::Browser.install();

/// What the browser shows pages on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Viewport {
    /// A window whose page area (`innerWidth` x `innerHeight`, and screenshots) is 1280x900.
    Desktop,
    /// A 390x844 phone screen (an iPhone 12 to 15) emulated by Chromium, at a device pixel
    /// ratio of 1, with touch events. As on a real phone, a page is 390 CSS pixels wide only
    /// if it says `<meta name="viewport" content="width=device-width">`; one that does not
    /// is laid out 980 pixels wide and shrunk to fit. The user agent stays desktop
    /// Chromium's.
    Phone,
}

impl Viewport {
    /// Width and height in CSS pixels.
    pub fn size(self) -> (u32, u32) {
        match self {
            Viewport::Desktop => (1280, 900),
            Viewport::Phone => (390, 844),
        }
    }
}

/// A headless Chromium for one test. See the [module documentation](self).
pub struct Browser {
    // Fields drop in this order: the session, then the driver (which waits for its
    // processes to exit), and only then the slot, so the bound holds.
    client: Client,
    _driver: Driver,
    _slot: SemaphorePermit<'static>,
}

impl Browser {
    /// Starts chromedriver and a headless Chromium at the given size (waiting first for a
    /// free slot, see the [module documentation](self)). Panics when either is missing or
    /// does not start.
    pub async fn open(viewport: Viewport) -> Browser {
        let slot = slots()
            .acquire()
            .await
            .expect("the semaphore of browsers is never closed");
        let driver = Driver::start().await;
        let client = ClientBuilder::new(HttpConnector::new())
            .capabilities(capabilities(viewport, &driver.profile()))
            .connect(&driver.url())
            .await
            .unwrap_or_else(|err| {
                panic!(
                    "chromedriver could not start Chromium ({}): {err}\n{}",
                    chromium().display(),
                    driver.logs()
                )
            });
        let browser = Browser {
            client,
            _driver: driver,
            _slot: slot,
        };
        if viewport == Viewport::Desktop {
            browser.fit_window(viewport.size()).await;
        }
        browser
    }

    /// Resizes the window so that the page, not the window, is `width` x `height`:
    /// `--window-size` counts the browser's own bars (143 px of height in Chromium 156).
    /// (A phone's size is the emulated device's, which has no bars.)
    async fn fit_window(&self, (width, height): (u32, u32)) {
        let bars = self
            .client
            .execute(
                "return [window.outerWidth - window.innerWidth, \
                         window.outerHeight - window.innerHeight]",
                vec![],
            )
            .await
            .expect("could not measure the browser's bars");
        let bar = |i: usize| {
            bars[i]
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(0)
        };
        self.client
            .set_window_size(width + bar(0), height + bar(1))
            .await
            .expect("could not resize the window");
        let size = self
            .client
            .execute("return [window.innerWidth, window.innerHeight]", vec![])
            .await
            .expect("could not measure the window");
        assert_eq!(
            size,
            json!([width, height]),
            "the page's size after resizing the window"
        );
    }

    /// The WebDriver client, for anything the methods below do not cover.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Loads `url` and waits for its `load` event.
    pub async fn goto(&self, url: &str) {
        self.client
            .goto(url)
            .await
            .unwrap_or_else(|err| panic!("could not load {url}: {err}"));
    }

    /// The element matching the CSS selector `css`, which must be there already (see
    /// [`Browser::wait_for`] for one that comes later).
    pub async fn find(&self, css: &str) -> Element {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|err| panic!("no element matches {css:?}: {err}"))
    }

    /// The rendered text of the element matching `css`.
    pub async fn text_of(&self, css: &str) -> String {
        self.find(css)
            .await
            .text()
            .await
            .unwrap_or_else(|err| panic!("could not read the text of {css:?}: {err}"))
    }

    /// Waits up to 10 s for an element to match `css` and returns it.
    pub async fn wait_for(&self, css: &str) -> Element {
        self.client
            .wait()
            .at_most(ELEMENT_WITHIN)
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|err| {
                panic!("no element matched {css:?} within {ELEMENT_WITHIN:?}: {err}")
            })
    }

    /// Empties the field matching `css` and types `value` into it.
    pub async fn fill(&self, css: &str, value: &str) {
        let field = self.find(css).await;
        field
            .clear()
            .await
            .unwrap_or_else(|err| panic!("could not clear {css:?}: {err}"));
        field
            .send_keys(value)
            .await
            .unwrap_or_else(|err| panic!("could not type into {css:?}: {err}"));
    }

    /// Clicks the element matching `css`.
    pub async fn click(&self, css: &str) {
        self.find(css)
            .await
            .click()
            .await
            .unwrap_or_else(|err| panic!("could not click {css:?}: {err}"));
    }

    /// The address of the current page.
    pub async fn current_url(&self) -> String {
        self.client
            .current_url()
            .await
            .expect("could not read the current address")
            .to_string()
    }

    /// The HTML of the current page, as the browser serializes its DOM now.
    pub async fn page_source(&self) -> String {
        self.client
            .source()
            .await
            .expect("could not read the page's source")
    }

    /// Saves what the window shows as `<target dir>/screenshots/<name>.png` and returns
    /// that path (`name`: letters, digits, `-` and `_`; an existing file is replaced).
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "a screenshot's name is letters, digits, - and _ only, not {name:?}"
        );
        let png = self
            .client
            .screenshot()
            .await
            .unwrap_or_else(|err| panic!("could not take the screenshot {name:?}: {err}"));
        let folder = target_dir().join("screenshots");
        std::fs::create_dir_all(&folder)
            .unwrap_or_else(|err| panic!("could not create {}: {err}", folder.display()));
        let path = folder.join(format!("{name}.png"));
        std::fs::write(&path, png)
            .unwrap_or_else(|err| panic!("could not write {}: {err}", path.display()));
        path
    }

    /// Ends the WebDriver session (Chromium quits), then stops chromedriver. Call it at the
    /// end of every test; dropping a `Browser` cleans up too, but cannot end the session
    /// politely.
    pub async fn close(self) {
        if let Err(err) = self.client.clone().close().await {
            eprintln!("browser: could not end the WebDriver session: {err}");
        }
    }
}

/// The slots that bound how many browsers run at once in this process.
fn slots() -> &'static Semaphore {
    static SLOTS: OnceLock<Semaphore> = OnceLock::new();
    SLOTS.get_or_init(|| {
        let permits = match std::env::var("BROWSERS_AT_ONCE") {
            Ok(value) => value
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .unwrap_or_else(|| {
                    panic!("BROWSERS_AT_ONCE is a number of browsers, 1 or more, not {value:?}")
                }),
            Err(_) => 2,
        };
        Semaphore::new(permits)
    })
}

/// `$CARGO_TARGET_DIR`, else the workspace's `target`.
fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => dir.into(),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"),
    }
}
