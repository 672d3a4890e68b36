//! The chromedriver process of one [`Browser`](super::Browser): started on a port the OS
//! picks and waited for until ready, its logs for failure messages, and on drop stopped
//! with the Chromium it started (politely, then killed) before its temporary folder goes.
//! It must never drive a page: that is the session's job (`browser.rs`).

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::process::children_of;
use super::INSTALL_HINT;
use crate::tools::chromedriver;

/// How long chromedriver has to start listening and report itself ready.
const DRIVER_READY_WITHIN: Duration = Duration::from_secs(20);
/// How long chromedriver and then Chromium each have to exit before they are killed.
const EXIT_WITHIN: Duration = Duration::from_secs(5);

/// A chromedriver process of one [`Browser`](super::Browser), with the temporary folder holding Chromium's
/// profile and the driver's logs. Dropping it stops chromedriver and the Chromium it runs.
pub(super) struct Driver {
    child: Child,
    /// 0 until chromedriver says where it listens.
    port: u16,
    folder: tempfile::TempDir,
}

impl Driver {
    /// Starts chromedriver on a port the OS picks and waits until it reports itself ready.
    ///
    /// With `--port=0` chromedriver takes a port for IPv6 and then tries the same number
    /// for IPv4, which another process may hold: it then exits at once without
    /// listening ("bind() failed: Address already in use"). That start is tried again,
    /// a few times; any other failure is the test's.
    pub(super) async fn start() -> Driver {
        const ATTEMPTS: usize = 5;
        for _ in 1..ATTEMPTS {
            match Self::start_once().await {
                Ok(driver) => return driver,
                Err(logs) if logs.contains("ERR_ADDRESS_IN_USE") => continue,
                Err(logs) => panic!("{logs}"),
            }
        }
        Self::start_once()
            .await
            .unwrap_or_else(|logs| panic!("{logs}"))
    }

    /// One start: the driver, or what to say of its failure.
    async fn start_once() -> Result<Driver, String> {
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
            Ok(Err(_)) => {
                return Err(format!(
                    "chromedriver ({}) exited without listening\n{}",
                    path.display(),
                    driver.logs()
                ))
            }
            Err(_) => panic!(
                "chromedriver ({}) did not say its port within {DRIVER_READY_WITHIN:?}\n{}",
                path.display(),
                driver.logs()
            ),
        };

        let http = crate::http_client_builder()
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
                return Ok(driver);
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

    pub(super) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Chromium's fresh profile.
    pub(super) fn profile(&self) -> PathBuf {
        self.folder.path().join("profile")
    }

    /// The end of chromedriver's log and stderr, for a failure's message.
    pub(super) fn logs(&self) -> String {
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
