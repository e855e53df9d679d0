//! `studyloop-uat report` (issue 17) against a hostile run directory built with
//! the real evidence writer and ledger: markup in every recorded string, a
//! planted secret, symlinks out of the run directory (a file, a directory and a
//! whole bundle), a FIFO, a huge file; every page must escape, never follow a
//! link out, resolve every link, and the redacted variant must hold no secret.
//! Then the pages are parsed by real Chromium (`--dump-dom`) and photographed.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;
use studyloop_acceptance::evidence::{BundleWriter, Manifest, Outcome, RunId, Surface, Tier};
use studyloop_acceptance::ledger::{FailureCategory, ResultMeta, RunLog, TrialOutcome};

const CANARY: &str = "OUTSIDE-CANARY-7f3a";
const HOSTILE: &str = "</textarea></pre><script>alert('x')</script><img src=x onerror=alert(1)><a href=\"javascript:alert(2)\">j</a>";
const SECRET: &str = "ghp_a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5a1B2c3";
const SHA: &str = "0123456789abcdef0123456789abcdef01234567";
/// A 1×1 PNG.
const PNG: [u8; 70] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x64, 0x60, 0xf8, 0x5f,
    0x0f, 0x00, 0x02, 0x87, 0x01, 0x80, 0xeb, 0x47, 0xba, 0x92, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A lane bundle holding hostile text in every file the report shows.
fn lane_bundle(root: &Path, cell: &str, surface: Surface, huge: bool) -> PathBuf {
    let run_id = RunId::generate();
    let mut m = Manifest::new(&run_id, Tier::Acceptance, cell, surface);
    m.harness = Some("pi".into());
    m.outcome = Outcome::Completed;
    m.repo_sha = Some(SHA.into());
    m.dirty = Some(false);
    m.notes.push(format!("note {HOSTILE} {SECRET}"));
    let mut w = BundleWriter::create(root.join(run_id.as_str()), m).unwrap();
    let hostile = format!("{HOSTILE} {SECRET}");
    w.write_json(
        "transcript.json",
        &json!({"turns": [{"learner": hostile, "mentor_reply": hostile, "elapsed_ms": 5}]}),
    )
    .unwrap();
    w.write_json("fidelity.json", &json!({"turns": [{"source": hostile}]}))
        .unwrap();
    w.write_json(
        "steps.json",
        &json!([{"n": 1, "kind": "step", "name": hostile, "ok": false, "elapsed_ms": 12,
                 "error": hostile, "checks": [{"name": hostile, "ok": false, "elapsed_ms": 1, "error": hostile}]}]),
    )
    .unwrap();
    w.write_file("screens/turn-1.txt", hostile.as_bytes())
        .unwrap();
    if huge {
        w.write_file("screens/huge.txt", &vec![b'A'; 1 << 20])
            .unwrap();
    }
    w.write_file("ws-frames.jsonl", hostile.as_bytes()).unwrap();
    let cast = format!(
        "{}\n{}\n{}\n",
        json!({"version": 2, "width": 100, "height": 20, "timestamp": 0}),
        json!([0.5, "o", "\u{1b}[1mREADY\u{1b}[0m\r\n"]),
        json!([1.25, "o", hostile])
    );
    w.write_file("screens/first-session.cast", cast.as_bytes())
        .unwrap();
    let line = json!({"seq": 1, "method": "POST", "path": hostile, "reply": hostile});
    w.write_file("stub-requests.jsonl", format!("{line}\n").as_bytes())
        .unwrap();
    w.write_file("browser/01-dashboard.png", &PNG).unwrap();
    w.finish().unwrap()
}

pub(crate) struct Fixture {
    pub(crate) tmp: tempfile::TempDir,
    pub(crate) run: RunLog,
}

pub(crate) fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(outside.join("dir")).unwrap();
    std::fs::write(outside.join("secret.txt"), CANARY).unwrap();
    std::fs::write(outside.join("dir/x-frames.jsonl"), CANARY).unwrap();
    let run = RunLog::open(tmp.path().join("runs/run-1")).unwrap();
    let evidence = run.dir().join("evidence");
    let b1 = lane_bundle(&evidence, "cli-tmux::pi", Surface::CliTmux, true);
    let b2 = lane_bundle(&evidence, "cli-tmux::pi", Surface::CliTmux, true);
    // Planted after the bundle was sealed: links out, a FIFO.
    std::os::unix::fs::symlink(outside.join("secret.txt"), b2.join("screens/leak.txt")).unwrap();
    std::os::unix::fs::symlink(outside.join("dir"), b2.join("linked")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), b2.join("transcript-link.json"))
        .unwrap();
    super::common::world::fifo(&b2.join("screens/fifo.txt"));
    // A whole bundle that is a symlink to one outside the run directory.
    let foreign = lane_bundle(&outside, "web-acp::pi", Surface::WebAcp, true);
    std::fs::write(foreign.join("screens/turn-1.txt"), CANARY).unwrap();
    let linked = evidence.join("linked-bundle");
    std::os::unix::fs::symlink(&foreign, &linked).unwrap();
    let meta = |attempt, category| ResultMeta {
        attempt: Some(attempt),
        elapsed_ms: Some(1500),
        category,
    };
    let pass = TrialOutcome::Passed;
    run.record_result_meta("cli-tmux::pi", pass, None, Some(&b1), None, meta(1, None))
        .unwrap();
    let failed = format!("step `harness ready`: {HOSTILE} {SECRET}");
    let cat = Some(FailureCategory::Ready);
    run.record_result_meta(
        "cli-tmux::pi",
        TrialOutcome::Failed,
        Some(&failed),
        Some(&b2),
        None,
        meta(2, cat),
    )
    .unwrap();
    run.record_result_meta(
        "web-acp::pi",
        pass,
        None,
        Some(&linked),
        None,
        meta(1, None),
    )
    .unwrap();
    run.record_skip("probe::kiro", &format!("kiro {HOSTILE}"))
        .unwrap();
    // A name whose file would pass NAME_MAX (255 bytes) once escaped.
    run.record_skip(&format!("meta::{}", "<../".repeat(80)), "long name")
        .unwrap();
    run.record_skip(&format!("meta::{HOSTILE}"), "odd name")
        .unwrap();
    Fixture { tmp, run }
}

/// Runs the real binary with a deadline (a FIFO read would hang it).
pub(crate) fn report(args: &[&std::ffi::OsStr], home: &Path) -> std::process::Output {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_studyloop-uat"))
        .env_clear()
        .env("HOME", home)
        .arg("report")
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("studyloop-uat report hung (a FIFO or a huge file was read?)");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// The report of `run` built by the real binary into `home/site`, which it returns;
/// a failed build fails the test with the binary's stderr.
pub(crate) fn site(run: &Path, home: &Path) -> PathBuf {
    let out = home.join("site");
    let o = report(&[run.as_os_str(), "--out".as_ref(), out.as_os_str()], home);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

pub(crate) fn pages(out: &Path) -> Vec<(PathBuf, String)> {
    let mut pages = vec![(
        out.join("index.html"),
        std::fs::read_to_string(out.join("index.html")).unwrap(),
    )];
    for e in std::fs::read_dir(out.join("cells")).unwrap().flatten() {
        pages.push((e.path(), std::fs::read_to_string(e.path()).unwrap()));
    }
    pages
}

/// Every `href="…"` and `src="…"` value of `html`.
fn links(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ["href=\"", "src=\""] {
        for part in html.split(attr).skip(1) {
            out.push(part.split('"').next().unwrap_or("").to_owned());
        }
    }
    out
}

fn check_site(out: &Path) {
    let pages = pages(out);
    assert!(
        pages.len() >= 4,
        "index and a page per cell: {}",
        pages.len()
    );
    for (path, html) in &pages {
        // The only scripts: the report's own player files and the index's
        // filters, never inline.
        let allowed = [
            "<script src=\"../assets/player/asciinema-player.min.js\"></script>",
            "<script src=\"../assets/player/init.js\"></script>",
            "<script src=\"filter.js\"></script>",
        ];
        let mut lower = html.to_lowercase();
        for a in allowed {
            lower = lower.replace(a, "");
        }
        let shown = path.display();
        assert!(!lower.contains("<script"), "{shown}: a script element");
        assert!(!lower.contains("</textarea>"), "{shown}: raw </textarea>");
        assert!(!lower.contains("<img src=x"), "{shown}: injected img");
        assert!(
            !html.contains(CANARY),
            "{shown}: read through a symlink out of the run dir"
        );
        assert!(
            html.contains("<h1>") && html.contains("lang=\"en\""),
            "{shown}: headings"
        );
        assert!(html.contains("Content-Security-Policy"), "{shown}: CSP");
        assert!(
            html.len() < 2 << 20,
            "{shown}: {} bytes (the huge file was not cut)",
            html.len()
        );
        for link in links(html) {
            assert!(!link.contains(':'), "{shown}: link {link} is not relative");
            if let Some(id) = link.strip_prefix('#') {
                assert!(
                    html.contains(&format!("id=\"{id}\"")),
                    "{shown}: anchor {link} missing"
                );
                continue;
            }
            let target = path.parent().unwrap().join(link.split('#').next().unwrap());
            assert!(target.is_file(), "{shown}: link {link} does not resolve");
        }
        for img in html.split("<img").skip(1) {
            let alt = img
                .split("alt=\"")
                .nth(1)
                .map(|a| a.split('"').next().unwrap_or(""));
            assert!(
                alt.is_some_and(|a| !a.is_empty()),
                "{shown}: an image without alt text"
            );
        }
    }
}

#[test]
fn issue17_a_hostile_run_dir_gives_an_escaped_self_contained_site_that_never_leaves_it() {
    let f = fixture();
    let out = f.tmp.path().join("site");
    let o = report(
        &[f.run.dir().as_os_str(), "--out".as_ref(), out.as_os_str()],
        f.tmp.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    check_site(&out);
    let cell = std::fs::read_to_string(out.join("cells/cli-tmux..pi.html")).unwrap();
    // The hostile text is there, escaped (so the test would see a missing escape).
    assert!(
        cell.contains("&lt;/textarea&gt;&lt;/pre&gt;&lt;script&gt;"),
        "{cell}"
    );
    assert!(
        cell.contains(SECRET),
        "the unredacted report shows the planted string"
    );
    assert!(
        cell.contains("Cut: only the first 256 KiB"),
        "the huge file is cut"
    );
    assert!(
        cell.contains("not a regular file"),
        "the symlinks and FIFO are listed, not read"
    );
    assert!(
        cell.contains("flaky"),
        "passed and failed on one commit: {cell}"
    );
    assert!(cell.contains(">ready<"), "the failure's category");
    assert!(
        out.join("assets").read_dir().unwrap().count() > 0,
        "screenshots copied"
    );
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains("pass^2 no; pass@2 yes"), "{index}");
    assert!(
        index.contains("UAT sign-off verdict") && index.contains("FAIL"),
        "{index}"
    );
    let web = std::fs::read_to_string(out.join("cells/web-acp..pi.html")).unwrap();
    assert!(
        web.contains("is not read"),
        "the symlinked bundle is refused: {web}"
    );

    let red = f.tmp.path().join("site-redacted");
    let o = report(
        &[
            f.run.dir().as_os_str(),
            "--redacted".as_ref(),
            "--out".as_ref(),
            red.as_os_str(),
        ],
        f.tmp.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    check_site(&red);
    for (path, html) in pages(&red) {
        assert!(
            !html.contains(SECRET),
            "{}: the secret survived redaction",
            path.display()
        );
    }
    assert!(
        !red.join("assets").exists(),
        "no image in the redacted variant"
    );
}

#[test]
fn no_run_directory_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nope");
    let o = report(&[missing.as_os_str()], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("does not exist"), "{err}");
}

/// Issue 17's figure: a 100-cell run (each a lane bundle with a transcript,
/// steps, screens and a stub log) renders in under 2 s. The time is printed
/// for the note; the bound holds on the 2-core CI machines in a debug build.
#[test]
fn issue17_a_hundred_cell_run_renders_in_under_two_seconds() {
    let tmp = tempfile::tempdir().unwrap();
    let run = RunLog::open(tmp.path().join("runs/run-100")).unwrap();
    let evidence = run.dir().join("evidence");
    for i in 0..100 {
        let name = format!("cli-tmux::pi::n{i:03}");
        let b = lane_bundle(&evidence, &name, Surface::CliTmux, false);
        run.record_result(&name, TrialOutcome::Passed, None, Some(&b), None)
            .unwrap();
    }
    let out = tmp.path().join("site");
    let cpu_before = children_cpu();
    let started = Instant::now();
    let o = report(
        &[run.dir().as_os_str(), "--out".as_ref(), out.as_os_str()],
        tmp.path(),
    );
    let wall = started.elapsed();
    let cpu = children_cpu() - cpu_before;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let pages = std::fs::read_dir(out.join("cells")).unwrap().count();
    assert_eq!(pages, 100);
    eprintln!("report of 100 cells: {cpu:?} CPU, {wall:?} wall (debug build)");
    // CPU, not wall time: eight builds share this machine's two cores, and
    // the wall time also holds every page's fsync.
    assert!(
        cpu < Duration::from_secs(2),
        "100 cells took {cpu:?} of CPU"
    );
}

/// CPU time (user + system) of every child this process has waited for,
/// from `/proc/self/stat` (`cutime`, `cstime`, in 1/100 s clock ticks).
fn children_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // Fields after the `)` closing the command name start at field 3 (the
    // state); cutime and cstime are fields 16 and 17 of the whole line.
    let after = stat.rsplit_once(')').unwrap().1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = fields[13].parse::<u64>().unwrap() + fields[14].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}
