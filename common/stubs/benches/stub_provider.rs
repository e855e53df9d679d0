//! Per-request overhead of `studyloop-stub-provider` on loopback, beyond its
//! configured streaming delay (0 here): median latency of whole requests
//! (connect, send, read to the end) against the stub vs. a trivial HTTP 200
//! server in this process, measured in the same run with the same client.
//! Target: stub median − baseline median < 2 ms. A second stub with a 5 ms delay
//! checks the delay is all it adds: median − (events − 1) × 5 ms − baseline.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use studyloop_stubs::StubProvider;

const WARMUP: usize = 50;
const SAMPLES: usize = 500;

/// One request over a fresh connection (`Connection: close`), read to EOF;
/// returns the latency and the number of SSE `data:` events received.
fn round_trip(port: u16, path: &str, extra_headers: &str, body: &str) -> (Duration, usize) {
    let started = Instant::now();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let request = format!(
        "POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\ncontent-type: application/json\r\n{extra_headers}content-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("send");
    let mut response = Vec::new();
    stream.read_to_end(&mut response).expect("read");
    let elapsed = started.elapsed();
    let text = String::from_utf8_lossy(&response);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    (elapsed, text.matches("data: ").count())
}

/// A trivial loopback HTTP/1.1 server: read the headers and body, answer 200.
fn baseline_server() -> u16 {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let mut length = 0;
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                line.clear();
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let _ = reader
                .get_mut()
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
        }
    });
    port
}

fn median_and_p90(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e3;
    (at(0.5), at(0.9))
}

fn measure(port: u16, path: &str, headers: &str, body: &str, samples: usize) -> (f64, f64, usize) {
    for _ in 0..WARMUP.min(samples) {
        round_trip(port, path, headers, body);
    }
    let runs: Vec<(Duration, usize)> = (0..samples)
        .map(|_| round_trip(port, path, headers, body))
        .collect();
    let events = runs[0].1;
    let (median, p90) = median_and_p90(runs.into_iter().map(|(d, _)| d).collect());
    (median, p90, events)
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stub = StubProvider::spawn(
        Path::new(env!("CARGO_BIN_EXE_studyloop-stub-provider")),
        dir.path(),
        ["--delay-ms", "0"],
    )
    .expect("stub starts");
    let baseline_port = baseline_server();
    let chat = r#"{"model":"m","messages":[{"role":"system","content":"PERSONA=bench"},{"role":"user","content":"how do I start learning rust ownership today"}]}"#;
    let chat_stream = chat.replacen('{', r#"{"stream":true,"#, 1);
    let anthropic = r#"{"model":"c","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"how do I start learning rust ownership today"}]}"#;
    let responses =
        r#"{"model":"c","stream":true,"input":"how do I start learning rust ownership today"}"#;
    let av = "anthropic-version: 2023-06-01\r\n";

    let (base_median, base_p90, _) = measure(baseline_port, "/", "", chat, SAMPLES);
    println!(
        "stub_provider bench: {SAMPLES} samples each after {WARMUP} warm-up requests, fresh connection per request"
    );
    println!(
        "{:<34} median {base_median:>7.3} ms   p90 {base_p90:>7.3} ms",
        "baseline (trivial HTTP 200)"
    );
    let cases = [
        (
            "chat completions, non-stream",
            "/v1/chat/completions",
            "",
            chat,
        ),
        (
            "chat completions, stream",
            "/v1/chat/completions",
            "",
            chat_stream.as_str(),
        ),
        ("anthropic messages, stream", "/v1/messages", av, anthropic),
        ("openai responses, stream", "/v1/responses", "", responses),
    ];
    let mut worst: f64 = 0.0;
    for (name, path, headers, body) in cases {
        let (median, p90, _) = measure(stub.port(), path, headers, body, SAMPLES);
        let overhead = median - base_median;
        worst = worst.max(overhead);
        println!(
            "{name:<34} median {median:>7.3} ms   p90 {p90:>7.3} ms   overhead {overhead:>6.3} ms   ratio {:.2}x",
            median / base_median
        );
    }
    let delayed_dir = dir.path().join("delayed");
    let delayed = StubProvider::spawn(
        Path::new(env!("CARGO_BIN_EXE_studyloop-stub-provider")),
        &delayed_dir,
        ["--delay-ms", "5"],
    )
    .expect("delayed stub starts");
    let (median, p90, events) =
        measure(delayed.port(), "/v1/chat/completions", "", &chat_stream, 50);
    let configured = (events.saturating_sub(1) * 5) as f64;
    let overhead = median - configured - base_median;
    worst = worst.max(overhead);
    println!(
        "{:<34} median {median:>7.3} ms   p90 {p90:>7.3} ms   overhead {overhead:>6.3} ms beyond {configured:.0} ms of delay ({events} events)",
        "chat stream, --delay-ms 5"
    );
    println!(
        "worst median overhead beyond the configured streaming delay: {worst:.3} ms (target < 2 ms): {}",
        if worst < 2.0 { "MET" } else { "NOT MET" }
    );
}
