//! Issue 11 §2/§5: a corpus of crafted run directories and bundles, each built at run time
//! from one genuine sign-off input (real evidence writer, real ledger, an arbitration
//! recomputed from seat replies) and then broken in exactly one way. The genuine input must
//! PASS; every crafted one must FAIL (or be refused with no verdict) with a reason naming
//! what is wrong, and none may hang (FIFOs in place of the files a sign-off reads).

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use common::world::World;
use studyloop_redaction::Redactor;
use studyloop_uat::signoff;

/// Longest a sign-off may take on any crafted input before it counts as a hang.
const HANG: Duration = Duration::from_secs(30);

/// How one sign-off ended.
#[derive(Debug)]
enum Ending {
    Pass,
    Fail(Vec<String>),
    NoVerdict(String),
    Hang,
}

fn sign_off(w: &World, inputs: Vec<PathBuf>) -> Ending {
    let pins = w.pins.clone();
    let out = w.path("releases");
    let (tx, rx) = mpsc::channel();
    // A FIFO blocks `open` forever on today's code: the sign-off runs on its own thread so
    // a hang is counted instead of hanging the test.
    std::thread::spawn(move || {
        let redactor = Redactor::new(&pins.rules);
        let ending = match signoff::run(&pins, &inputs, &redactor, &out) {
            Ok(r) if r.verdict.passed() => Ending::Pass,
            Ok(r) => Ending::Fail(r.verdict.reasons),
            Err(e) => Ending::NoVerdict(e.to_string()),
        };
        let _ = tx.send(ending);
    });
    rx.recv_timeout(HANG).unwrap_or(Ending::Hang)
}

type Craft = fn(&World) -> Vec<PathBuf>;

mod billing;
mod claims;
mod digests;
mod readers;
mod records;

/// Every crafted input: (name, what its FAIL reason or refusal must mention, how to craft
/// it). The craft returns the sign-off's inputs (empty = the run directory).
fn corpus() -> Vec<(&'static str, &'static str, Craft)> {
    let mut all = records::cases();
    all.extend(readers::cases());
    all.extend(claims::cases());
    all.extend(digests::cases());
    all.extend(billing::cases());
    all
}

#[test]
fn the_genuine_input_passes_and_every_crafted_one_fails_by_name() {
    let genuine = World::new();
    let ending = sign_off(&genuine, vec![genuine.run.dir().to_owned()]);
    assert!(matches!(ending, Ending::Pass), "genuine input: {ending:#?}");

    let corpus = corpus();
    assert!(corpus.len() >= 125, "{} crafted inputs", corpus.len());
    let mut passed = Vec::new();
    let mut unnamed = Vec::new();
    let mut hung = Vec::new();
    let mut table = BTreeMap::new();
    for (name, needle, craft) in &corpus {
        let w = World::new();
        let mut inputs = craft(&w);
        if inputs.is_empty() {
            inputs.push(w.run.dir().to_owned());
        }
        let ending = sign_off(&w, inputs);
        let text = match &ending {
            Ending::Pass => {
                passed.push(*name);
                "PASS".to_owned()
            }
            Ending::Hang => {
                hung.push(*name);
                "HANG".to_owned()
            }
            Ending::Fail(reasons) => format!("FAIL: {}", reasons.join(" | ")),
            Ending::NoVerdict(e) => format!("NO VERDICT: {e}"),
        };
        if matches!(ending, Ending::Fail(_) | Ending::NoVerdict(_))
            && !text.to_lowercase().contains(needle)
        {
            unnamed.push(format!("{name}: wants `{needle}`: {text}"));
        }
        table.insert(*name, text);
        // The hung thread holds the FIFO open for reading; unblock it so it can end.
        if matches!(ending, Ending::Hang) {
            unblock_fifos(w.tmp.path());
        }
    }
    for (name, text) in &table {
        eprintln!("{name}: {text}");
    }
    eprintln!(
        "crafted inputs: {}; PASS: {}; hung: {}",
        corpus.len(),
        passed.len(),
        hung.len()
    );
    assert!(
        passed.is_empty(),
        "{} of {} crafted inputs PASSed: {passed:#?}",
        passed.len(),
        corpus.len()
    );
    assert!(hung.is_empty(), "sign-off hung on: {hung:#?}");
    assert!(unnamed.is_empty(), "reasons not named: {unnamed:#?}");
}

/// Opens every FIFO under `root` for writing (non-blocking once a reader waits), so a
/// sign-off thread blocked opening it for reading can go on.
fn unblock_fifos(root: &Path) {
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(e.path());
            } else if std::os::unix::fs::FileTypeExt::is_fifo(&t) {
                let _ = rustix::fs::open(
                    e.path(),
                    rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::NONBLOCK,
                    rustix::fs::Mode::empty(),
                );
            }
        }
    }
}
