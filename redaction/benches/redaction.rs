//! Redaction rules, before (v1) and after (the current version), in one run (`just bench`):
//! secret survival over the generated corpus (every vendor kind × plain, JSON-escaped,
//! URL, split lines, key-only; target 0), false positives over the prose corpus (target
//! 0), and `Redactor::redact` throughput on transcript-shaped text with a secret every
//! ~4 KiB and on clean prose (target >= 300 MB/s in release; printed by wall clock and by
//! on-CPU time, since the bench machine may be shared). Prints figures; asserts nothing (the ungated tests in `tests/it/corpus.rs` assert survival and false positives).

#[path = "../tests/it/common/corpus/mod.rs"]
mod corpus;

use std::time::{Duration, Instant};

use corpus::{LITERAL_NAME, Rng, SEED};
use serde_json::json;
use studyloop_redaction::{CURRENT_VERSION, RedactionRules, Redactor};

const REPS: usize = 7;
const TARGET_BYTES: usize = 16 * 1024 * 1024;

fn main() {
    let secrets = corpus::secrets(&mut Rng::new(SEED));
    let (mixed, clean) = haystacks(&secrets);
    println!(
        "corpus seed {SEED:#x}: {} kinds × {} contexts; {} prose sentences; haystacks {:.1} MiB mixed, {:.1} MiB clean",
        secrets.len(),
        corpus::CONTEXTS.len(),
        corpus::sentences().len(),
        mib(mixed.len()),
        mib(clean.len())
    );
    // The machine's speed for reference (the bench host may be shared): sha256 of the
    // same clean text, the hash the evidence inventory uses.
    let (start, start_cpu) = (Instant::now(), cpu_ns());
    let digest = studyloop_redaction::pinned::digest(clean.as_bytes());
    let cpu = cpu_ns()
        .zip(start_cpu)
        .map(|(end, start)| mib(clean.len()) * 1.048_576 / ((end - start) as f64 / 1e9));
    println!(
        "reference: sha256 of the clean haystack ({}…) at {:.0} / {} MB/s (wall / on-CPU)",
        &digest[..8],
        mib(clean.len()) * 1.048_576 / start.elapsed().as_secs_f64(),
        shown(cpu)
    );
    for version in (1..=CURRENT_VERSION).filter(|v| *v == 1 || *v + 1 >= CURRENT_VERSION) {
        let rules = RedactionRules::load_shipped(version).expect("shipped rules");
        let r = Redactor::new(&rules)
            .with_secret(LITERAL_NAME, corpus::literal(&secrets))
            .expect("literal");
        let (survived, cases, _) = corpus::survival(&r, &secrets);
        let (changed, total, _) = corpus::false_positives(&r);
        let (code_changed, code_total, _) = corpus::code_false_positives(&r);
        let (unstable, text_cases, _) = corpus::unstable(&r, &secrets);
        // v1's Unicode word boundaries keep its set off the DFA on non-ASCII text, so it
        // is timed on a 1 MiB slice: the full haystack would take minutes.
        let cut = |text: &str| -> usize {
            let limit = if version == 1 { 1 << 20 } else { text.len() };
            text[..limit.min(text.len())]
                .rfind('\n')
                .map_or(text.len(), |i| i + 1)
        };
        let (mixed_wall, mixed_cpu) = throughput(&r, &mixed[..cut(&mixed)]);
        let (clean_wall, clean_cpu) = throughput(&r, &clean[..cut(&clean)]);
        println!(
            "rules v{version}: survival {survived}/{cases} ({:.1}%), false positives: prose {changed}/{total} ({:.1}%), code and prose {code_changed}/{code_total} ({:.1}%), unstable {unstable}/{text_cases}",
            pct(survived, cases),
            pct(changed, total),
            pct(code_changed, code_total)
        );
        println!(
            "rules v{version}: throughput MB/s (wall / on-CPU): mixed {mixed_wall:.0} / {}, clean prose {clean_wall:.0} / {}",
            shown(mixed_cpu),
            shown(clean_cpu)
        );
        if version == CURRENT_VERSION {
            costliest_patterns(&rules, &clean);
        }
    }
}

/// Where the clean-text time goes: each pattern's own scan of the clean haystack, the
/// five costliest printed (on-CPU milliseconds per MiB), so a slow rule is named.
fn costliest_patterns(rules: &RedactionRules, clean: &str) {
    let mut costs: Vec<(f64, &str)> = rules
        .patterns()
        .iter()
        .filter_map(|p| {
            let start = cpu_ns()?;
            let hits = p.regex().find_iter(clean).count();
            let ns = cpu_ns()? - start;
            std::hint::black_box(hits);
            Some((ns as f64 / 1e6 / mib(clean.len()), p.id()))
        })
        .collect();
    costs.sort_by(|a, b| b.0.total_cmp(&a.0));
    let total: f64 = costs.iter().map(|c| c.0).sum();
    let top: Vec<String> = costs
        .iter()
        .take(5)
        .map(|(ms, id)| format!("{id} {ms:.2}"))
        .collect();
    println!(
        "costliest patterns on clean text (ms/MiB on-CPU, all {} = {total:.2}): {}",
        costs.len(),
        top.join(", ")
    );
}

/// Transcript-shaped JSON lines of prose with a planted secret every ~4 KiB, and the same
/// prose without secrets.
fn haystacks(secrets: &[corpus::Secret]) -> (String, String) {
    let sentences = corpus::sentences();
    let (mut mixed, mut clean) = (String::new(), String::new());
    let (mut i, mut since_secret) = (0usize, 0usize);
    while mixed.len() < TARGET_BYTES {
        let s = sentences[i % sentences.len()];
        let line = json!({"learner": s, "mentor_reply": sentences[(i * 7 + 3) % sentences.len()]})
            .to_string();
        clean.push_str(&line);
        clean.push('\n');
        mixed.push_str(&line);
        mixed.push('\n');
        since_secret += line.len();
        if since_secret > 4096 {
            let secret = &secrets[i % secrets.len()];
            mixed.push_str(&json!({"learner": format!("here: {}", secret.carrier)}).to_string());
            mixed.push('\n');
            since_secret = 0;
        }
        i += 1;
    }
    (mixed, clean)
}

/// Median MB/s (10^6 bytes per second) of `REPS` redactions of `text`: by wall clock,
/// and by this thread's on-CPU time (`/proc/thread-self/schedstat`), which a machine
/// shared with other builds does not distort (unknown where that file is missing).
fn throughput(r: &Redactor, text: &str) -> (f64, Option<f64>) {
    let _ = r.redact(text);
    let mut wall: Vec<Duration> = Vec::new();
    let mut cpu: Vec<Option<u64>> = Vec::new();
    for _ in 0..REPS {
        let (start, start_cpu) = (Instant::now(), cpu_ns());
        let out = r.redact(text);
        wall.push(start.elapsed());
        cpu.push(cpu_ns().zip(start_cpu).map(|(end, start)| end - start));
        assert!(!out.is_empty());
    }
    wall.sort();
    let cpu: Option<Vec<u64>> = cpu.into_iter().collect();
    let mb = text.len() as f64 / 1e6;
    let cpu_rate = cpu.map(|mut ns| {
        ns.sort_unstable();
        mb / (ns[REPS / 2] as f64 / 1e9)
    });
    (mb / wall[REPS / 2].as_secs_f64(), cpu_rate)
}

fn cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn shown(rate: Option<f64>) -> String {
    rate.map_or_else(|| "unknown".to_owned(), |r| format!("{r:.0}"))
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn pct(part: usize, whole: usize) -> f64 {
    100.0 * part as f64 / whole as f64
}
