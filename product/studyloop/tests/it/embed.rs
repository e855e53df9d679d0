//! The hybrid search against the REAL embedding model (`just deps-embed`; `just
//! test` installs it first). Without the model every test here fails naming the
//! command that installs it: never a pass, never a silent skip.

mod labelled;

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use studyloop::embed::{Availability, Embedder};
use studyloop::store::Store;

/// A test body's failure: any error, with its message.
type Fail = Box<dyn std::error::Error>;
type Check = Result<(), Fail>;

fn model_dir() -> PathBuf {
    match std::env::var_os("STUDYLOOP_EMBED_MODEL") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(studyloop::embed::INSTALL_DIR),
    }
}

fn ensure(cond: bool, what: impl FnOnce() -> String) -> Check {
    if cond { Ok(()) } else { Err(what().into()) }
}

/// Runs `check` with the installed model; a missing or unusable model fails the
/// test by name with the command that installs it (`just test` runs `just deps`,
/// which installs it, so a missing model is a broken set-up, never a skip).
fn with_model(check: fn(&Path) -> Check) {
    let dir = model_dir();
    if let Err(e) = Embedder::load(&dir) {
        panic!("the embedding model is not usable ({e}); run `just deps-embed`");
    }
    if let Err(failed) = check(&dir) {
        panic!("{failed}");
    }
}

#[test]
fn embed_tokenizer_matches_the_reference_ids() {
    with_model(tokenizer_matches_the_reference_ids);
}

#[test]
fn embed_hybrid_finds_paraphrases_lexical_misses() {
    with_model(hybrid_finds_paraphrases_lexical_misses);
}

#[test]
fn embed_cli_search_returns_the_paraphrased_struggle() {
    with_model(cli_search_returns_the_paraphrased_struggle);
}

#[test]
fn embed_session_end_embeds_at_write_time_and_backfills() {
    with_model(session_end_embeds_at_write_time_and_backfills);
}

#[test]
fn embed_damaged_model_files_fall_back_to_lexical_with_notice() {
    with_model(damaged_model_files_fall_back_to_lexical_with_notice);
}

#[test]
fn embed_hostile_queries_get_answers_or_clear_errors() {
    with_model(hostile_queries_get_answers_or_clear_errors);
}

/// Ids the Hugging Face `tokenizers` crate (0.23.3, `add_special_tokens=False`)
/// gives for the model's own tokenizer file.
fn tokenizer_matches_the_reference_ids(dir: &Path) -> Check {
    let e = Embedder::load(dir).map_err(|e| e.to_string())?;
    let cases: &[(&str, &[u32])] = &[
        ("window functions", &[3474, 3168]),
        (
            "I keep mixing up ROW_NUMBER and RANK when there are ties",
            &[
                306, 3013, 24907, 701, 390, 9806, 29918, 23207, 322, 390, 2190, 29968, 746, 727,
                526, 260, 583,
            ],
        ),
        (
            "  leading  and double  spaces ",
            &[259, 8236, 29871, 322, 3765, 29871, 8162, 29871],
        ),
        (
            "naïve café 日本語 🙂",
            &[
                1055, 30085, 345, 274, 28059, 29871, 30325, 30346, 30968, 29871, 243, 162, 156, 133,
            ],
        ),
        ("tab\there\nnewline", &[4434, 12, 4150, 13, 1482, 1220]),
        (
            "<s>literal</s> special<unk>",
            &[1, 16333, 2, 29871, 4266, 0],
        ),
        ("x", &[921]),
        (
            "Ünïcödé ﬁ ligature ẞ",
            &[
                7189, 29876, 30085, 29883, 9289, 29948, 29871, 31017, 14172, 1535, 29871, 228, 189,
                161,
            ],
        ),
    ];
    for (text, want) in cases {
        let got = e.token_ids(text);
        ensure(got == *want, || {
            format!("{text:?}: got {got:?}, the reference tokenizer gives {want:?}")
        })?;
    }
    Ok(())
}

/// Recall@5 over the labelled set, `(keyword, paraphrase)`.
pub fn recall_at_5(s: &Store, avail: &Availability, ids: &[String]) -> Result<(f64, f64), Fail> {
    let mut hits = (0usize, 0usize);
    for ((_, keyword, para), id) in labelled::SET.iter().zip(ids) {
        let found = |q: &str| -> Result<bool, Fail> {
            let out = s.hybrid_search(q, 5, avail).map_err(|e| e.to_string())?;
            Ok(out.results.iter().any(|h| &h.hit.session_id == id))
        };
        hits.0 += usize::from(found(keyword)?);
        let p = found(para)?;
        if !p && avail.embedder().is_some() {
            eprintln!("hybrid missed the paraphrase {para:?}");
        }
        hits.1 += usize::from(p);
    }
    let n = labelled::SET.len() as f64;
    Ok((hits.0 as f64 / n, hits.1 as f64 / n))
}

/// One session per labelled line, written with the model attached.
fn seeded(dir: &Path, db: &Path) -> Result<(Store, Vec<String>), Fail> {
    let e = Embedder::load(dir).map_err(|e| e.to_string())?;
    let mut s = Store::open(db)
        .map_err(|e| e.to_string())?
        .with_embedder(Some(e.into()));
    let mut ids = Vec::new();
    for (i, (line, _, _)) in labelled::SET.iter().enumerate() {
        let id = format!("study-{i:02}");
        s.index_study_log(
            &id,
            "/s",
            "2026-01-01T00:00:00Z",
            &[("note", (*line).to_owned())],
        )
        .map_err(|e| e.to_string())?;
        ids.push(id);
    }
    Ok((s, ids))
}

fn hybrid_finds_paraphrases_lexical_misses(dir: &Path) -> Check {
    for (line, _, para) in labelled::SET {
        let shared: Vec<String> = stems(para)
            .into_iter()
            .filter(|w| stems(line).contains(w))
            .collect();
        ensure(shared.is_empty(), || {
            format!("paraphrase {para:?} shares {shared:?} with {line:?}")
        })?;
    }
    let tmp = tempfile::tempdir()?;
    let (s, ids) = seeded(dir, &tmp.path().join("s.db"))?;
    let lexical = recall_at_5(
        &s,
        &Availability::Lexical("test: lexical baseline".into()),
        &ids,
    )?;
    let hybrid = recall_at_5(&s, &Availability::from_setting(Some(dir)), &ids)?;
    eprintln!(
        "recall@5 keyword: lexical {:.2} hybrid {:.2}; paraphrase: lexical {:.2} hybrid {:.2}",
        lexical.0, hybrid.0, lexical.1, hybrid.1
    );
    ensure(lexical.1 == 0.0, || {
        format!("lexical found a paraphrase ({lexical:?}): the set is not keyword-free")
    })?;
    ensure(hybrid.1 >= 0.5, || {
        format!("hybrid paraphrase recall@5 {:.2} < 0.50", hybrid.1)
    })?;
    ensure(hybrid.0 >= lexical.0, || {
        format!("hybrid lost keyword hits: {hybrid:?} vs lexical {lexical:?}")
    })?;
    Ok(())
}

/// The struggle the CLI tests look for, and a paraphrase sharing no word with it.
/// (`labelled::SET[8]`, session `study-08` when seeded.)
const STRUGGLE: &str = "Python — struggling: mutable default arguments shared between calls";
const PARAPHRASE: &str = "a list given as fallback parameter keeps old items across invocations";

fn search_json(w: &common::World, query: &str) -> Result<serde_json::Value, Fail> {
    let out = w.run(&["search", query, "--json"]);
    ensure(out.code == 0, || {
        format!("search exited {}: {}", out.code, out.stderr)
    })?;
    serde_json::from_str::<serde_json::Value>(&out.stdout)?;
    Ok(common::json_result(&out, "search"))
}

fn found(v: &serde_json::Value, id: &str) -> bool {
    v["results"]
        .as_array()
        .is_some_and(|r| r.iter().any(|h| h["session_id"] == id))
}

fn cli_search_returns_the_paraphrased_struggle(dir: &Path) -> Check {
    let w = common::World::new().with_env("STUDYLOOP_EMBED_MODEL", &dir.display().to_string());
    seeded(dir, &w.config_dir().join("sessions.db"))?;
    let hybrid = search_json(&w, PARAPHRASE)?;
    ensure(
        hybrid["mode"] == "hybrid" && hybrid["notice"].is_null(),
        || format!("{hybrid}"),
    )?;
    let top5 = hybrid["results"]
        .as_array()
        .map(|r| r.iter().take(5).collect::<Vec<_>>())
        .unwrap_or_default();
    ensure(
        top5.iter().any(|h| {
            h["preview"] == STRUGGLE && h["session_id"] == "study-08" && h["lexical_rank"].is_null()
        }),
        || format!("the struggle is not in the top 5: {hybrid}"),
    )?;
    // Without the model: lexical, said in the JSON and in one stderr line.
    let w = w.with_env("STUDYLOOP_EMBED_MODEL", "");
    let lexical = search_json(&w, PARAPHRASE)?;
    ensure(
        lexical["mode"] == "lexical" && !found(&lexical, "study-08"),
        || format!("{lexical}"),
    )?;
    ensure(
        lexical["notice"]
            .as_str()
            .is_some_and(|n| n.contains("STUDYLOOP_EMBED_MODEL is not set")),
        || format!("{lexical}"),
    )?;
    let text = w.run(&["search", PARAPHRASE]);
    ensure(
        text.code == 0
            && text.stderr.lines().count() == 1
            && text.stderr.contains("lexical search only"),
        || format!("{text:?}"),
    )?;
    Ok(())
}

fn session_end_embeds_at_write_time_and_backfills(dir: &Path) -> Check {
    // An older line written without a model, then a real session ended with it.
    let w = common::World::new();
    let db = w.config_dir().join("sessions.db");
    Store::open(&db)?.index_study_log(
        "old",
        "/s",
        "2026-01-01T00:00:00Z",
        &[("note", STRUGGLE.to_owned())],
    )?;
    let w = w.with_env("STUDYLOOP_EMBED_MODEL", &dir.display().to_string());
    let before = search_json(&w, PARAPHRASE)?;
    ensure(before["unembedded"] == 1 && found(&before, "old"), || {
        format!("{before}")
    })?;
    w.run(&["study", "Networking", "--agent", "pi"]).ok();
    w.run(&[
        "topic",
        "TCP handshake",
        "-s",
        "struggling",
        "-n",
        "why SYN ACK is needed",
    ])
    .ok();
    w.run(&["study", "--end"]).ok();
    let conn = w.db();
    let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0));
    let (messages, vectors) = (
        count("SELECT count(*) FROM messages")?,
        count("SELECT count(*) FROM message_vectors")?,
    );
    ensure(messages >= 2 && vectors == messages, || {
        format!("{messages} messages, {vectors} vectors")
    })?;
    let after = search_json(&w, "three step connection setup between client and server")?;
    ensure(
        after["unembedded"] == 0
            && after["results"][0]["preview"]
                .as_str()
                .is_some_and(|p| p.contains("TCP handshake")),
        || format!("{after}"),
    )?;
    Ok(())
}

/// Each damaged model: `search` still answers (exit 0), lexical, the notice
/// naming the reason; a FIFO is refused without blocking.
fn damaged_model_files_fall_back_to_lexical_with_notice(dir: &Path) -> Check {
    let weights = std::fs::read(dir.join("l2_supercat_256.safetensors"))?;
    let tokenizer = dir.join("l2_supercat_tokenizer_config.json");
    let bad = tempfile::tempdir()?;
    let w =
        common::World::new().with_env("STUDYLOOP_EMBED_MODEL", &bad.path().display().to_string());
    seeded(dir, &w.config_dir().join("sessions.db"))?;
    let target = bad.path().join("l2_supercat_256.safetensors");
    let mut flipped = weights.clone();
    flipped[weights.len() / 2] ^= 0x40;
    type Plant<'a> = Box<dyn Fn(&Path) -> std::io::Result<()> + 'a>;
    let cases: Vec<(&str, Plant, &str)> = vec![
        (
            "truncated",
            Box::new(move |p| std::fs::write(p, &weights[..weights.len() / 3])),
            "sha256",
        ),
        (
            "one byte flipped",
            Box::new(move |p| std::fs::write(p, &flipped)),
            "sha256",
        ),
        ("empty", Box::new(|p| std::fs::write(p, b"")), "sha256"),
        (
            "a symlink to the real file",
            Box::new(move |p| {
                std::os::unix::fs::symlink(dir.join("l2_supercat_256.safetensors"), p)
            }),
            "symlink",
        ),
        (
            "a FIFO",
            Box::new(|p| {
                studyloop_regular_file::make_fifo_for_tests(p);
                Ok(())
            }),
            "FIFO",
        ),
        (
            "a directory",
            Box::new(|p| std::fs::create_dir(p)),
            "directory",
        ),
    ];
    std::fs::copy(
        &tokenizer,
        bad.path().join("l2_supercat_tokenizer_config.json"),
    )?;
    for (what, plant, reason) in cases {
        let _ = std::fs::remove_file(&target);
        let _ = std::fs::remove_dir(&target);
        plant(&target)?;
        let t = Instant::now();
        let v = search_json(&w, "window functions")?;
        ensure(t.elapsed() < Duration::from_secs(20), || {
            format!("{what}: took {:?}", t.elapsed())
        })?;
        let notice = v["notice"].as_str().unwrap_or_default();
        ensure(
            v["mode"] == "lexical" && notice.contains(reason) && found(&v, "study-00"),
            || format!("{what}: {v}"),
        )?;
    }
    Ok(())
}

fn hostile_queries_get_answers_or_clear_errors(dir: &Path) -> Check {
    let w = common::World::new().with_env("STUDYLOOP_EMBED_MODEL", &dir.display().to_string());
    seeded(dir, &w.config_dir().join("sessions.db"))?;
    for empty in ["", "   ", "\t\n"] {
        let out = w.run(&["search", empty, "--json"]);
        ensure(
            out.code == 1 && out.stderr.contains("empty") && out.stderr.trim().lines().count() == 1,
            || format!("{empty:?}: {out:?}"),
        )?;
    }
    // The largest argument Linux passes (128 KiB) through the CLI; 1.2 MB
    // through the library (the MCP tool's path), both bounded in time.
    let big = "why does my query loop forever ".repeat(4_000);
    let t = Instant::now();
    let v = search_json(&w, &big)?;
    ensure(
        t.elapsed() < Duration::from_secs(30) && v["mode"] == "hybrid",
        || format!("124 KB query: {:?}", t.elapsed()),
    )?;
    let s = Store::open_read_only(&w.config_dir().join("sessions.db"))?.ok_or("no db")?;
    let huge = big.repeat(10);
    let t = Instant::now();
    let out = s.hybrid_search(&huge, 5, &Availability::from_setting(Some(dir)))?;
    ensure(
        t.elapsed() < Duration::from_secs(30) && out.count <= 5,
        || format!("1.2 MB query: {:?}", t.elapsed()),
    )?;
    for q in [
        "日本語のクエリ",
        "ẞ ﬁ 🙂🙂 \u{202e}reversed",
        "\"OR\" NEAR( * ^",
        "<s></s><unk>",
        "\u{0301}\u{0301}",
        "%%%",
    ] {
        let v = search_json(&w, q)?;
        ensure(
            v["mode"] == "hybrid"
                && v["count"].as_u64() == v["results"].as_array().map(|a| a.len() as u64),
            || format!("{q:?}: {v}"),
        )?;
    }
    Ok(())
}

/// Lowercase words, each cut to its first five letters (a crude stem that
/// catches `rows`/`row`, `loops`/`loop`), minus a few function words.
pub fn stems(text: &str) -> Vec<String> {
    const STOP: &[&str] = &[
        "a", "an", "the", "and", "or", "of", "to", "in", "on", "is", "it", "by", "for", "with",
        "not", "i", "my",
    ];
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| !w.is_empty() && !STOP.contains(&w.as_str()))
        .map(|w| w.chars().take(5).collect())
        .collect()
}
