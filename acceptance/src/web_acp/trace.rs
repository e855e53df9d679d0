//! The browser's network trace: Chromium's own DevTools `Network.*` events
//! (read from chromedriver's performance log by
//! [`Browser::network_log`](super::browser::Browser::network_log)), kept whole
//! for the evidence bundle and summarised for checks: every HTTP request the
//! page made and every WebSocket frame it sent or received. Real events, never
//! reconstructed from what the driver did.

use serde_json::{Value, json};

/// The events of one traced browser, in arrival order.
#[derive(Debug, Default, Clone)]
pub struct NetworkTrace {
    /// Every `Network.*` DevTools message (`{method, params}`).
    pub events: Vec<Value>,
}

/// One HTTP request the page made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracedRequest {
    /// `GET`, `POST`, …
    pub method: String,
    /// The full URL.
    pub url: String,
}

impl NetworkTrace {
    /// Appends the network events among `messages` (other domains are dropped).
    pub fn extend(&mut self, messages: Vec<Value>) {
        self.events.extend(messages.into_iter().filter(|m| {
            m["method"]
                .as_str()
                .is_some_and(|n| n.starts_with("Network."))
        }));
    }

    fn of<'a>(&'a self, method: &'static str) -> impl Iterator<Item = &'a Value> + 'a {
        self.events.iter().filter(move |e| e["method"] == method)
    }

    /// Every request the page sent (`Network.requestWillBeSent`).
    #[must_use]
    pub fn requests(&self) -> Vec<TracedRequest> {
        self.of("Network.requestWillBeSent")
            .map(|e| TracedRequest {
                method: e["params"]["request"]["method"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                url: e["params"]["request"]["url"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            })
            .collect()
    }

    /// Requests with `method` whose URL path is `path` (query ignored).
    #[must_use]
    pub fn count(&self, method: &str, path: &str) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.method == method && url_path(&r.url) == path)
            .count()
    }

    /// The payloads of the WebSocket frames the page sent.
    #[must_use]
    pub fn frames_sent(&self) -> Vec<&str> {
        self.payloads("Network.webSocketFrameSent")
    }

    /// The payloads of the WebSocket frames the page received.
    #[must_use]
    pub fn frames_received(&self) -> Vec<&str> {
        self.payloads("Network.webSocketFrameReceived")
    }

    fn payloads(&self, method: &'static str) -> Vec<&str> {
        self.of(method)
            .filter_map(|e| e["params"]["response"]["payloadData"].as_str())
            .collect()
    }

    /// WebSocket connections the page opened (`Network.webSocketCreated` URLs).
    #[must_use]
    pub fn sockets(&self) -> Vec<&str> {
        self.of("Network.webSocketCreated")
            .filter_map(|e| e["params"]["url"].as_str())
            .collect()
    }

    /// The events as JSON lines (the bundle's `browser/network-trace.jsonl`).
    #[must_use]
    pub fn jsonl(&self) -> String {
        self.events.iter().map(|e| format!("{e}\n")).collect()
    }

    /// Counts for the step detail.
    #[must_use]
    pub fn summary(&self) -> Value {
        json!({
            "events": self.events.len(),
            "requests": self.requests().len(),
            "sockets": self.sockets().len(),
            "frames_sent": self.frames_sent().len(),
            "frames_received": self.frames_received().len(),
        })
    }
}

/// The path of `url` (`http://h:p/a/b?q` → `/a/b`).
fn url_path(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path = rest.find('/').map_or("/", |i| &rest[i..]);
    path.split(['?', '#']).next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_frames_are_read_from_the_devtools_events() {
        let mut t = NetworkTrace::default();
        t.extend(vec![
            json!({"method": "Network.requestWillBeSent", "params": {"request": {"method": "POST", "url": "http://127.0.0.1:5/api/session/start"}}}),
            json!({"method": "Network.requestWillBeSent", "params": {"request": {"method": "GET", "url": "http://127.0.0.1:5/api/session/state?x=1"}}}),
            json!({"method": "Page.frameNavigated", "params": {}}),
            json!({"method": "Network.webSocketCreated", "params": {"url": "ws://127.0.0.1:5/api/session/ws"}}),
            json!({"method": "Network.webSocketFrameSent", "params": {"response": {"payloadData": "{\"type\":\"input\"}"}}}),
            json!({"method": "Network.webSocketFrameReceived", "params": {"response": {"payloadData": "{\"type\":\"started\"}"}}}),
        ]);
        assert_eq!(t.events.len(), 5, "the Page event is dropped");
        assert_eq!(t.count("POST", "/api/session/start"), 1);
        assert_eq!(t.count("GET", "/api/session/state"), 1);
        assert_eq!(t.count("GET", "/api/session/start"), 0);
        assert_eq!(t.frames_sent(), ["{\"type\":\"input\"}"]);
        assert_eq!(t.frames_received(), ["{\"type\":\"started\"}"]);
        assert_eq!(t.sockets().len(), 1);
        assert_eq!(t.jsonl().lines().count(), 5);
        assert_eq!(t.summary()["frames_sent"], 1);
    }

    #[test]
    fn url_paths_drop_scheme_host_query_and_fragment() {
        assert_eq!(url_path("http://h:1/a/b?q=1#f"), "/a/b");
        assert_eq!(url_path("http://h:1"), "/");
        assert_eq!(url_path("/x"), "/x");
    }
}
