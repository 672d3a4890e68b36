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
//!   `Browser`, opened in the test and closed at its end.
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

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{json, Value};
use tokio::sync::{Semaphore, SemaphorePermit};

/// How long chromedriver has to start listening and report itself ready.
const DRIVER_READY_WITHIN: Duration = Duration::from_secs(20);
/// How long [`Browser::wait_for`] waits for an element.
const ELEMENT_WITHIN: Duration = Duration::from_secs(10);
/// How long chromedriver and then Chromium each have to exit before they are killed.
const EXIT_WITHIN: Duration = Duration::from_secs(5);

const INSTALL_HINT: &str = "install the Debian packages chromium and chromium-driver \
     (`apt-get install chromium chromium-driver`, as .ci/run does), or point CHROMIUM and \
     CHROMEDRIVER at a Chromium and its matching chromedriver";

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

fn chromium() -> PathBuf {
    std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/usr/bin/chromium".into())
}

fn chromedriver() -> PathBuf {
    std::env::var_os("CHROMEDRIVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/usr/bin/chromedriver".into())
}

/// `$CARGO_TARGET_DIR`, else the workspace's `target`.
fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => dir.into(),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"),
    }
}

/// The session's capabilities: Chromium headless, at `viewport`, on the profile `profile`,
/// with nothing that reaches out to the network by itself.
fn capabilities(viewport: Viewport, profile: &Path) -> fantoccini::wd::Capabilities {
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

/// A chromedriver process of one [`Browser`], with the temporary folder holding Chromium's
/// profile and the driver's logs. Dropping it stops chromedriver and the Chromium it runs.
struct Driver {
    child: Child,
    /// 0 until chromedriver says where it listens.
    port: u16,
    folder: tempfile::TempDir,
}

impl Driver {
    /// Starts chromedriver on a port the OS picks and waits until it reports itself ready.
    async fn start() -> Driver {
        let folder = tempfile::Builder::new()
            .prefix("iq-browser-")
            .tempdir()
            .expect("could not create a temporary folder for the browser");
        let path = chromedriver();
        let stderr = File::create(folder.path().join("chromedriver.stderr"))
            .expect("could not create chromedriver's stderr file");
        let child = Command::new(&path)
            .arg("--port=0")
            .arg(format!(
                "--log-path={}",
                folder.path().join("chromedriver.log").display()
            ))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|err| match err.kind() {
                std::io::ErrorKind::NotFound => {
                    panic!("no chromedriver at {}: {INSTALL_HINT}", path.display())
                }
                _ => panic!("could not start {}: {err}", path.display()),
            });
        let mut driver = Driver {
            child,
            port: 0,
            folder,
        };
        let deadline = Instant::now() + DRIVER_READY_WITHIN;

        // With --port=0 the OS picks a free port (no race with other tests binding ports),
        // and chromedriver prints it on stdout: "... started successfully on port 12345."
        let (port_tx, port_rx) = tokio::sync::oneshot::channel();
        let stdout = driver.child.stdout.take().expect("stdout is piped");
        std::thread::spawn(move || {
            let mut port_tx = Some(port_tx);
            // Read to the end, so chromedriver never blocks on a full pipe.
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(port) = line
                    .split_once("started successfully on port ")
                    .and_then(|(_, rest)| rest.trim_end_matches('.').trim().parse::<u16>().ok())
                {
                    if let Some(tx) = port_tx.take() {
                        let _ = tx.send(port);
                    }
                }
            }
        });
        driver.port = match tokio::time::timeout_at(deadline.into(), port_rx).await {
            Ok(Ok(port)) => port,
            Ok(Err(_)) => panic!(
                "chromedriver ({}) exited without listening\n{}",
                path.display(),
                driver.logs()
            ),
            Err(_) => panic!(
                "chromedriver ({}) did not say its port within {DRIVER_READY_WITHIN:?}\n{}",
                path.display(),
                driver.logs()
            ),
        };

        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(2))
            .build()
            .expect("a plain HTTP client");
        let status = format!("{}/status", driver.url());
        loop {
            let ready = match http.get(&status).send().await {
                Ok(reply) => reply
                    .json::<Value>()
                    .await
                    .is_ok_and(|body| body["value"]["ready"] == true),
                Err(_) => false,
            };
            if ready {
                return driver;
            }
            if let Ok(Some(exit)) = driver.child.try_wait() {
                panic!(
                    "chromedriver exited ({exit}) before it was ready\n{}",
                    driver.logs()
                );
            }
            if Instant::now() >= deadline {
                panic!(
                    "chromedriver was not ready within {DRIVER_READY_WITHIN:?} ({status})\n{}",
                    driver.logs()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Chromium's fresh profile.
    fn profile(&self) -> PathBuf {
        self.folder.path().join("profile")
    }

    /// The end of chromedriver's log and stderr, for a failure's message.
    fn logs(&self) -> String {
        let mut logs = String::new();
        for name in ["chromedriver.stderr", "chromedriver.log"] {
            let text = std::fs::read_to_string(self.folder.path().join(name)).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = lines[lines.len().saturating_sub(30)..].join("\n");
            logs.push_str(&format!("--- {name} (last lines) ---\n{tail}\n"));
        }
        logs
    }

    /// Asks chromedriver to quit (it ends its sessions, so its Chromium quits too) with a
    /// blocking request, as `Drop` cannot await.
    fn request_shutdown(&self) {
        let address = SocketAddr::from(([127, 0, 0, 1], self.port));
        let Ok(mut stream) = TcpStream::connect_timeout(&address, Duration::from_secs(1)) else {
            return;
        };
        let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
        let _ = stream.set_read_timeout(Some(EXIT_WITHIN));
        let request = format!(
            "GET /shutdown HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
            self.port
        );
        if stream.write_all(request.as_bytes()).is_ok() {
            let _ = stream.read_to_end(&mut Vec::new());
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // The Chromium chromedriver started (its children), to make sure they end too.
        let browsers = children_of(self.child.id());
        if self.port != 0 {
            self.request_shutdown();
        }
        let deadline = Instant::now() + EXIT_WITHIN;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => break,
                Ok(None) if Instant::now() >= deadline => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        // Chromium quits by itself once its session ends or chromedriver is gone; kill what
        // is still running after a while. Only then may the profile folder go.
        let deadline = Instant::now() + EXIT_WITHIN;
        for browser in browsers {
            while browser.is_running() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if browser.is_running() {
                let _ = Command::new("kill")
                    .args(["-KILL", &browser.pid.to_string()])
                    .stderr(Stdio::null())
                    .status();
            }
        }
    }
}

/// A process, told apart from a later one with the same id by its start time.
struct Process {
    pid: u32,
    started: u64,
}

impl Process {
    fn is_running(&self) -> bool {
        matches!(stat(self.pid), Some((state, _, started)) if started == self.started && state != 'Z')
    }
}

/// The running children of process `parent` (none where there is no `/proc`).
fn children_of(parent: u32) -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| match stat(pid)? {
            (state, ppid, started) if ppid == parent && state != 'Z' => {
                Some(Process { pid, started })
            }
            _ => None,
        })
        .collect()
}

/// State, parent and start time of process `pid`, from `/proc/<pid>/stat`.
fn stat(pid: u32) -> Option<(char, u32, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (command) state ppid ...": the command may hold spaces and parentheses.
    let fields: Vec<&str> = text
        .get(text.rfind(')')? + 1..)?
        .split_whitespace()
        .collect();
    let state = fields.first()?.chars().next()?;
    let ppid = fields.get(1)?.parse().ok()?;
    let started = fields.get(19)?.parse().ok()?;
    Some((state, ppid, started))
}
