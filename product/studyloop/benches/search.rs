//! The hybrid search measured against the lexical one in the same run, on the
//! labelled set (tests/it/embed/labelled.rs: 40 struggles, a keyword query and a
//! paraphrase sharing no word with each): recall@5 for both query kinds, query
//! latency p50/p95 (library call, model loaded once) with the hybrid/lexical
//! ratio, the model load time, and the index time with and without embedding
//! (the write-time cost). Needs the model (`just deps-embed`); without it the
//! bench says so and measures nothing.

#[path = "../tests/it/embed/labelled.rs"]
mod labelled;

use std::path::Path;
use std::time::{Duration, Instant};

use studyloop::embed::{Availability, Embedder};
use studyloop::store::Store;

/// Each labelled line is one session; the rest of the corpus is filler lines
/// (realistic log lines on other topics) so the ranking has distractors.
const FILLER_SESSIONS: usize = 200;
const ROUNDS: usize = 5;

fn pct(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn index(db: &Path, e: Option<std::sync::Arc<Embedder>>) -> Duration {
    let mut s = Store::open(db).unwrap().with_embedder(e);
    let t = Instant::now();
    for (i, (line, _, _)) in labelled::SET.iter().enumerate() {
        s.index_study_log(
            &format!("study-{i:02}"),
            "/s",
            "2026-01-01T00:00:00Z",
            &[("note", (*line).to_owned())],
        )
        .unwrap();
    }
    for i in 0..FILLER_SESSIONS {
        let lines: Vec<(&str, String)> = (0..5).map(|j| ("note", format!("Filler {i} — learning: concept {j} of module {i} went fine, practised exercise {j}"))).collect();
        s.index_study_log(&format!("filler-{i}"), "/s", "2026-01-02T00:00:00Z", &lines)
            .unwrap();
    }
    t.elapsed()
}

/// Recall@5 `(keyword, paraphrase)` and every query's latency.
fn run(s: &Store, avail: &Availability) -> ((f64, f64), Vec<Duration>) {
    let mut hits = (0usize, 0usize);
    let mut times = Vec::new();
    for round in 0..ROUNDS {
        for (i, (_, keyword, para)) in labelled::SET.iter().enumerate() {
            let id = format!("study-{i:02}");
            for (q, slot) in [(keyword, 0), (para, 1)] {
                let t = Instant::now();
                let out = s.hybrid_search(q, 5, avail).unwrap();
                times.push(t.elapsed());
                if round == 0 && out.results.iter().any(|h| h.hit.session_id == id) {
                    if slot == 0 { hits.0 += 1 } else { hits.1 += 1 }
                }
            }
        }
    }
    let n = labelled::SET.len() as f64;
    ((hits.0 as f64 / n, hits.1 as f64 / n), times)
}

fn main() {
    let dir = std::env::var_os("STUDYLOOP_EMBED_MODEL")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../..")
                .join(studyloop::embed::INSTALL_DIR)
        });
    let t = Instant::now();
    let e = match Embedder::load(&dir) {
        Ok(e) => std::sync::Arc::new(e),
        Err(err) => {
            println!("search: SKIP, no embedding model: {err}");
            return;
        }
    };
    let load = t.elapsed();
    let tmp = tempfile::tempdir().unwrap();
    let plain = index(&tmp.path().join("lexical.db"), None);
    let embedded = index(&tmp.path().join("hybrid.db"), Some(e.clone()));
    let s = Store::open_read_only(&tmp.path().join("hybrid.db"))
        .unwrap()
        .unwrap();
    let rows = labelled::SET.len() + FILLER_SESSIONS * 5;
    let (lr, lt) = run(&s, &Availability::Lexical("bench baseline".into()));
    let (hr, ht) = run(&s, &Availability::Ready(e));
    let (l50, l95, h50, h95) = (
        pct(lt.clone(), 0.5),
        pct(lt, 0.95),
        pct(ht.clone(), 0.5),
        pct(ht, 0.95),
    );
    println!(
        "search: corpus {rows} lines ({} labelled struggles + filler), {} queries x {ROUNDS} rounds per mode",
        labelled::SET.len(),
        labelled::SET.len() * 2
    );
    println!(
        "search: recall@5 keyword    lexical {:.2}  hybrid {:.2}",
        lr.0, hr.0
    );
    println!(
        "search: recall@5 paraphrase lexical {:.2}  hybrid {:.2}",
        lr.1, hr.1
    );
    println!(
        "search: latency lexical p50 {:.2} ms p95 {:.2} ms; hybrid p50 {:.2} ms p95 {:.2} ms",
        ms(l50),
        ms(l95),
        ms(h50),
        ms(h95)
    );
    println!(
        "search: ratio hybrid/lexical p50 = {:.2}x, p95 = {:.2}x",
        ms(h50) / ms(l50),
        ms(h95) / ms(l95)
    );
    println!(
        "search: index {rows} lines: without vectors {:.1} ms, with vectors {:.1} ms (ratio {:.2}x)",
        ms(plain),
        ms(embedded),
        ms(embedded) / ms(plain)
    );
    println!(
        "search: model load (read + sha256 + parse, once per process) {:.1} ms",
        ms(load)
    );
}
