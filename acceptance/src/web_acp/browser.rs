//! Real headless Chromium driven through chromedriver (W3C WebDriver), behind
//! a small synchronous facade: the one module that uses `fantoccini`.
//!
//! chromedriver is started on `--port=0` (it prints the port it took) in its
//! own process group with the scratch world's environment (so Chromium's
//! crashpad database, caches and `TMPDIR` scoped dirs land in the scratch tree,
//! never in the real HOME or `/tmp`), Chromium runs headless with a scratch profile, no
//! sandbox (required as root) and every background-network feature off, so a
//! run is offline and leaves nothing behind: [`Browser::close`] ends the
//! WebDriver session and kills the driver's group, and `Drop` does the same.
//! Each [`Browser::snapshot`] returns a viewport PNG and the page HTML for the
//! evidence bundle. A browser launched with [`Browser::launch_traced`] also
//! keeps Chromium's performance log (DevTools `Network.*` events: every HTTP
//! request and every WebSocket frame, as Chromium saw them), drained by
//! [`Browser::network_log`] (see `super::trace`). Every browser keeps the
//! page's console ([`Browser::console_log`]), so a test can demand a page load
//! without errors.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use rustix::process::{Pid, Signal, kill_process_group};
use serde_json::{Value, json};

use crate::scratch::Scratch;

/// Where Debian installs them (`apt-get install chromium chromium-driver`).
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// The driver binary.
pub(crate) const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// The install command named in skip reasons.
pub const INSTALL_HINT: &str = "run `just deps-browser` (apt-get install chromium chromium-driver)";

/// Why the browser failed.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// chromium or chromedriver is not installed.
    #[error("{0} is not installed; {INSTALL_HINT}")]
    Missing(&'static str),
    /// chromedriver did not start.
    #[error("chromedriver did not start: {0}")]
    Driver(String),
    /// A WebDriver command failed.
    #[error("browser step `{step}` failed: {detail}")]
    Step {
        /// What was being done.
        step: String,
        /// The WebDriver error.
        detail: String,
    },
}

/// Whether both binaries are installed.
///
/// # Errors
/// [`BrowserError::Missing`] naming the missing binary and the install command.
pub fn available() -> Result<(), BrowserError> {
    for bin in [CHROMIUM, CHROMEDRIVER] {
        if !Path::new(bin).is_file() {
            return Err(BrowserError::Missing(bin));
        }
    }
    Ok(())
}

/// How long one browser wait may last before the interrupt flag is looked at.
const INTERRUPT_SLICE: Duration = Duration::from_secs(1);

/// A headless Chromium session.
#[derive(Debug)]
pub struct Browser {
    rt: tokio::runtime::Runtime,
    client: Option<Client>,
    driver: Child,
    /// chromedriver's loopback port (the performance log is read from it).
    port: u16,
    /// The consoles this browser already opened through their printed URL (it
    /// holds their cookie since).
    consoles: std::sync::Mutex<std::collections::BTreeSet<String>>,
}

impl Browser {
    /// Starts chromedriver and a headless Chromium whose profile lives in
    /// `profile_dir` (inside the scratch tree), with `scratch`'s environment
    /// and its process group recorded by `scratch`.
    ///
    /// # Errors
    /// [`BrowserError`] when a binary is missing or the session cannot start.
    pub fn launch(scratch: &Scratch, profile_dir: &Path) -> Result<Self, BrowserError> {
        Self::launch_with(scratch, profile_dir, Mode::Plain)
    }

    /// As [`Browser::launch`], with the pages' own scripts disabled (Chromium's
    /// JavaScript content setting): what a reader with scripts off sees.
    /// WebDriver's [`Browser::eval`] still runs (it goes through DevTools).
    ///
    /// # Errors
    /// As [`Browser::launch`].
    pub fn launch_without_page_scripts(
        scratch: &Scratch,
        profile_dir: &Path,
    ) -> Result<Self, BrowserError> {
        Self::launch_with(scratch, profile_dir, Mode::NoPageScripts)
    }

    /// As [`Browser::launch`], with Chromium's performance log on (network
    /// events only), for [`Browser::network_log`].
    ///
    /// # Errors
    /// As [`Browser::launch`].
    pub fn launch_traced(scratch: &Scratch, profile_dir: &Path) -> Result<Self, BrowserError> {
        Self::launch_with(scratch, profile_dir, Mode::Traced)
    }

    fn launch_with(
        scratch: &Scratch,
        profile_dir: &Path,
        mode: Mode,
    ) -> Result<Self, BrowserError> {
        available()?;
        let mut driver = scratch
            .spawn(
                scratch
                    .command(CHROMEDRIVER)
                    .args(["--port=0", "--log-level=WARNING"])
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null()),
            )
            .map_err(|e| BrowserError::Driver(e.to_string()))?;
        let port = read_port(&mut driver).map_err(|e| {
            kill_group(&driver);
            let _ = driver.wait();
            BrowserError::Driver(e)
        })?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| BrowserError::Driver(e.to_string()))?;
        let caps = capabilities(profile_dir, mode);
        let connected = rt.block_on(async {
            ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
                .capabilities(caps)
                .connect(&format!("http://127.0.0.1:{port}"))
                .await
        });
        match connected {
            Ok(client) => Ok(Self {
                consoles: std::sync::Mutex::default(),
                rt,
                client: Some(client),
                driver,
                port,
            }),
            Err(e) => {
                kill_group(&driver);
                let _ = driver.wait();
                Err(BrowserError::Driver(format!("new session: {e}")))
            }
        }
    }

    /// The chromedriver's pid, which leads the browser's process group.
    #[must_use]
    pub fn pid(&self) -> u32 {
        self.driver.id()
    }

    fn client(&self) -> &Client {
        // Present until close(), which consumes self.
        self.client
            .as_ref()
            .unwrap_or_else(|| unreachable!("client is taken only by close"))
    }

    fn step<T>(
        &self,
        step: &str,
        r: Result<T, fantoccini::error::CmdError>,
    ) -> Result<T, BrowserError> {
        r.map_err(|e| BrowserError::Step {
            step: step.to_owned(),
            detail: e.to_string(),
        })
    }

    /// Opens `url`.
    ///
    /// # Errors
    /// [`BrowserError::Step`].
    pub fn goto(&self, url: &str) -> Result<(), BrowserError> {
        // The first visit of a console goes through its printed URL, as the learner's does.
        let login = super::console_token::login_url(url).filter(|_| {
            let rest = url.strip_prefix("http://").unwrap_or(url);
            let origin = rest.split(['/', '#']).next().unwrap_or(rest).to_owned();
            self.consoles
                .lock()
                .map(|mut seen| seen.insert(origin))
                .unwrap_or(true)
        });
        let url = login.as_deref().unwrap_or(url);
        let r = self.rt.block_on(self.client().goto(url));
        self.step(&format!("goto {url}"), r)
    }

    /// Waits up to `timeout` for an element matching `css`.
    ///
    /// # Errors
    /// [`BrowserError::Step`] when it never appears.
    pub fn wait_for(&self, css: &str, timeout: Duration) -> Result<(), BrowserError> {
        let c = self.client();
        let deadline = std::time::Instant::now() + timeout;
        loop {
            // Slices, so a Ctrl-C ends the wait within one of them.
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let slice = left.min(INTERRUPT_SLICE);
            let r = self
                .rt
                .block_on(c.wait().at_most(slice).for_element(Locator::Css(css)));
            let timed_out = matches!(r, Err(fantoccini::error::CmdError::WaitTimeout));
            if !timed_out || left <= slice {
                return self.step(&format!("wait for {css}"), r.map(drop));
            }
            if let Err(e) = crate::interrupt::check(&format!("the page to show {css}")) {
                return Err(BrowserError::Step {
                    step: format!("wait for {css}"),
                    detail: e.to_string(),
                });
            }
        }
    }

    /// Clears the field `css` and types `text` into it.
    ///
    /// # Errors
    /// [`BrowserError::Step`].
    pub fn fill(&self, css: &str, text: &str) -> Result<(), BrowserError> {
        let c = self.client();
        let r = self.rt.block_on(async {
            let el = c.find(Locator::Css(css)).await?;
            el.clear().await?;
            el.send_keys(text).await
        });
        self.step(&format!("fill {css}"), r)
    }

    /// Clicks the element `css`.
    ///
    /// # Errors
    /// [`BrowserError::Step`].
    pub fn click(&self, css: &str) -> Result<(), BrowserError> {
        let c = self.client();
        let r = self
            .rt
            .block_on(async { c.find(Locator::Css(css)).await?.click().await });
        self.step(&format!("click {css}"), r)
    }

    /// Sets the window's outer size in CSS px (a layout test at a phone's or a
    /// laptop's width); in headless Chromium the viewport is the window.
    ///
    /// # Errors
    /// [`BrowserError::Step`].
    pub fn resize(&self, width: u32, height: u32) -> Result<(), BrowserError> {
        let r = self
            .rt
            .block_on(self.client().set_window_size(width, height));
        self.step(&format!("resize to {width}x{height}"), r)
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the page.
    ///
    /// # Errors
    /// [`BrowserError::Step`].
    pub fn eval(&self, script: &str, args: Vec<Value>) -> Result<Value, BrowserError> {
        let r = self.rt.block_on(self.client().execute(script, args));
        self.step("execute script", r)
    }

    /// The performance-log entries gathered since the last call (chromedriver
    /// drains its buffer on every read): each entry's DevTools message, parsed.
    /// Empty unless launched with [`Browser::launch_traced`].
    ///
    /// # Errors
    /// [`BrowserError::Step`] when chromedriver does not answer with a log.
    pub fn network_log(&self) -> Result<Vec<Value>, BrowserError> {
        Ok(self
            .read_log("performance")?
            .iter()
            .filter_map(|e| e["message"].as_str())
            .filter_map(|m| serde_json::from_str::<Value>(m).ok())
            .map(|m| m["message"].clone())
            .collect())
    }

    /// The page's console entries gathered since the last call (what DevTools'
    /// console shows: script errors, failed loads such as a 404 favicon, logged
    /// messages), each `{level, message, source, timestamp}`; `level` is
    /// `SEVERE` for errors.
    ///
    /// # Errors
    /// [`BrowserError::Step`] when chromedriver does not answer with a log.
    pub fn console_log(&self) -> Result<Vec<Value>, BrowserError> {
        self.read_log("browser")
    }

    /// chromedriver's log of `kind` (its non-W3C `se/log` endpoint; reading drains it).
    fn read_log(&self, kind: &str) -> Result<Vec<Value>, BrowserError> {
        let failed = |detail: String| BrowserError::Step {
            step: format!("read the {kind} log"),
            detail,
        };
        let id = self
            .rt
            .block_on(self.client().session_id())
            .map_err(|e| failed(e.to_string()))?
            .ok_or_else(|| failed("no WebDriver session".into()))?;
        let r = super::http::request(
            &format!("127.0.0.1:{}", self.port),
            "POST",
            &format!("/session/{id}/se/log"),
            Some(&json!({"type": kind})),
            Duration::from_secs(30),
        )
        .map_err(|e| failed(e.to_string()))?;
        let Some(entries) = r.body["value"].as_array() else {
            return Err(failed(format!(
                "HTTP {}: {}",
                r.status,
                r.text.chars().take(300).collect::<String>()
            )));
        };
        Ok(entries.clone())
    }

    /// A viewport PNG and the page HTML.
    ///
    /// # Errors
    /// [`BrowserError::Step`].
    pub fn snapshot(&self) -> Result<(Vec<u8>, String), BrowserError> {
        let c = self.client();
        let r = self
            .rt
            .block_on(async { Ok((c.screenshot().await?, c.source().await?)) });
        self.step("snapshot", r)
    }

    /// Ends the WebDriver session and the driver's process group.
    pub fn close(mut self) {
        if let Some(client) = self.client.take() {
            let _ = self.rt.block_on(async {
                tokio::time::timeout(Duration::from_secs(10), client.close()).await
            });
        }
        kill_group(&self.driver);
        let _ = self.driver.wait();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // close() already ran when the client is gone; this is the panic path.
        if self.client.is_some() {
            kill_group(&self.driver);
            let _ = self.driver.wait();
        }
    }
}

/// The offline headless capabilities (reference A4); `traced` adds the
/// performance log with network events only.
/// How a session is launched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// As a learner's browser.
    Plain,
    /// With the performance log (network events).
    Traced,
    /// With the pages' scripts disabled.
    NoPageScripts,
}

fn capabilities(profile_dir: &Path, mode: Mode) -> serde_json::Map<String, Value> {
    let args = [
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--window-size=1280,800",
    ];
    let mut args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    args.push(format!("--user-data-dir={}", profile_dir.display()));
    let mut caps = json!({
        "browserName": "chrome",
        "goog:chromeOptions": {"binary": CHROMIUM, "args": args},
    });
    if mode == Mode::NoPageScripts {
        // 2 = block: the content setting a user sets in chrome://settings.
        caps["goog:chromeOptions"]["prefs"] =
            json!({"profile.managed_default_content_settings.javascript": 2});
    }
    // The page's console is always kept (`Browser::console_log`).
    caps["goog:loggingPrefs"] = json!({"browser": "ALL"});
    if mode == Mode::Traced {
        caps["goog:loggingPrefs"]["performance"] = json!("ALL");
        caps["goog:chromeOptions"]["perfLoggingPrefs"] =
            json!({"enableNetwork": true, "enablePage": false});
    }
    caps.as_object().cloned().unwrap_or_default()
}

/// How long chromedriver may take to print its port. It prints it in well
/// under a second on a quiet machine; the bound is a liveness bound for a
/// loaded one (CI runs eight journeys on two cores beside Chromium), not a
/// timing claim, so it is generous: a driver that is merely slow is waited
/// for, one that died is named at once (its stdout closes).
const PORT_DEADLINE: Duration = Duration::from_secs(60);

/// Reads `ChromeDriver was started successfully on port N.`, within
/// [`PORT_DEADLINE`].
fn read_port(driver: &mut Child) -> Result<u16, String> {
    read_port_within(driver, PORT_DEADLINE)
}

fn read_port_within(driver: &mut Child, deadline: Duration) -> Result<u16, String> {
    let stdout = driver.stdout.take().ok_or("no stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            // "Starting ChromeDriver … on port 0" comes first; wait for the real one.
            if let Some(rest) = line.split("started successfully on port ").nth(1) {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                let _ = tx.send(digits.parse::<u16>().ok());
                return;
            }
        }
        // stdout closed without the line: `tx` drops and the reader hears it.
    });
    match rx.recv_timeout(deadline) {
        Ok(Some(port)) => Ok(port),
        Ok(None) => Err("it printed an unreadable port".into()),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            let status = driver
                .wait()
                .map_or_else(|e| format!("status unknown: {e}"), |s| s.to_string());
            Err(format!("it exited before printing its port ({status})"))
        }
        Err(mpsc::RecvTimeoutError::Timeout) => Err(format!(
            "it printed no port within {} s",
            deadline.as_secs_f64()
        )),
    }
}

fn kill_group(child: &Child) {
    if let Some(pid) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) {
        // The driver and every Chromium process it started share this group.
        let _ = kill_process_group(pid, Signal::KILL);
    }
}

/// A private Chromium profile directory under `parent`.
///
/// # Errors
/// The I/O error.
pub fn profile_dir(parent: &Path) -> std::io::Result<PathBuf> {
    let dir = parent.join("chromium-profile");
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use std::process::{Command, Stdio};
    use std::time::Duration;

    use super::read_port_within;

    fn sh(script: &str) -> std::process::Child {
        Command::new("sh")
            .args(["-c", script])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    #[test]
    fn a_slow_driver_is_waited_for_past_the_first_line() {
        let mut d = sh("echo 'Starting ChromeDriver on port 0'; sleep 1; \
                        echo 'ChromeDriver was started successfully on port 43117.'; sleep 5");
        assert_eq!(read_port_within(&mut d, Duration::from_secs(20)), Ok(43117));
        let _ = d.kill();
        let _ = d.wait();
    }

    #[test]
    fn a_driver_that_dies_is_named_as_exited_with_its_status_not_as_slow() {
        let mut d = sh("echo 'Starting ChromeDriver on port 0'; exit 3");
        let started = std::time::Instant::now();
        let err = read_port_within(&mut d, Duration::from_secs(20)).unwrap_err();
        assert_eq!(err, "it exited before printing its port (exit status: 3)");
        // Heard from the closed pipe, not from the deadline.
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn a_silent_driver_is_named_with_the_bound_it_missed() {
        let mut d = sh("sleep 30");
        let err = read_port_within(&mut d, Duration::from_millis(300)).unwrap_err();
        assert_eq!(err, "it printed no port within 0.3 s");
        let _ = d.kill();
        let _ = d.wait();
    }
}
