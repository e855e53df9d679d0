//! `studyloop-uat`: sign off a UAT run (`signoff`), grade one bundle with the council
//! (`grade`), build the HTML run report (`report`), merge a partitioned run's shards
//! (`merge`), prune old durable bundles (`prune`), certify one harness with real
//! auth by hand (`certify HARNESS --real-auth`), and check what certify needs before
//! anything launches (`preflight`), and sign a run's release record with a release
//! manager's ed25519 key (`keygen`, `sign`, `verify --signed`).
//!
//! Exit codes: 0 = PASS / graded / pruned / ready / signed / verified; 1 = FAIL /
//! rejected / not signed (a FAIL sign-off) / signature not valid; 2 = the command
//! could not reach a verdict (bad input, a tampered pinned file, an unwritable output, a
//! dirty tree to certify); 3 = certification skipped (credentials missing or expired).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser as _;
use studyloop_acceptance::caller_env::CallerEnv;
use studyloop_uat::bundle::Bundle;
use studyloop_uat::cli::{Cli, Command, TrajectoryFormat};
use studyloop_uat::council::{self, CellContext, Grader, SeatApprovals, SeatStatus, StubTarget};
use studyloop_uat::output::Out;
use studyloop_uat::prune;
use studyloop_uat::signing;
use studyloop_uat::signoff::{self, Pins};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let env = CallerEnv::capture();
    // Every line below is printed through `out`, which redacts it first.
    let out = Out::new(&env);
    let result = match cli.command {
        Command::Signoff { inputs, out: dir } => run_signoff(&inputs, &dir, &out),
        Command::Grade {
            bundle,
            council,
            stub_url,
        } => run_grade(&bundle, council.as_deref(), stub_url, &env, &out),
        Command::Receipts { runs, out: dir } => run_receipts(runs, &dir, &out),
        Command::Preflight { harness, repo } => run_preflight(&harness, &repo, &env, &out),
        Command::Certify {
            harness,
            real_auth,
            repo,
        } => run_certify(&harness, real_auth, &repo, &env, &out),
        Command::Merge { runs, expect } => run_merge(&runs, expect.as_deref(), &out),
        Command::ExportTrajectory {
            bundle,
            format,
            out: path,
        } => run_export(&bundle, format, path.as_deref(), &out),
        Command::Keygen { out: dir } => run_keygen(&dir, &out),
        Command::Sign { run, key } => run_sign(&run, &key, &out),
        Command::Verify { signed, pubkey } => run_verify(&signed, &pubkey, &out),
        Command::Prune {
            older_than,
            root,
            apply,
        } => run_prune(&older_than, root, apply, &env, &out),
        Command::Report {
            compare: Some(pair),
            out: dir,
            fail_on_breaks,
            ..
        } => run_compare(&pair, dir, fail_on_breaks, &out),
        Command::Report {
            latest: Some(root),
            redacted,
            ..
        } => run_latest_reports(&root, redacted, &out),
        Command::Report {
            runs,
            latest: None,
            out: dir,
            redacted,
            compare: None,
            ..
        } => run_report(runs, dir, redacted, &out),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            out.err(format!("studyloop-uat: error: {err:#}"));
            ExitCode::from(2)
        }
    }
}

/// The redactor of `out`; absent only when the shipped rules cannot load, which the
/// command's own pin loading reports by name first.
fn redactor(out: &Out) -> anyhow::Result<&studyloop_redaction::Redactor> {
    out.redactor()
        .context("the pinned redaction rules could not be loaded, so nothing can be printed safely")
}

fn run_signoff(inputs: &[PathBuf], dir: &std::path::Path, out: &Out) -> anyhow::Result<ExitCode> {
    let pins = Pins::load_default()?;
    let report = signoff::run(&pins, inputs, redactor(out)?, dir)?;
    out.line(format!("studyloop-uat signoff: {}", report.verdict.word()));
    out.line(format!(
        "definition: signoff v{} ({}), rubric v{}, council `{}` (roster v{}), redaction v{}",
        pins.definition.version(),
        pins.definition.sha256(),
        pins.rubric.version(),
        pins.definition.council(),
        pins.roster.version(),
        pins.rules.version()
    ));
    out.line(format!(
        "inputs: {} run director(ies), {} bundle(s)",
        report.inputs.0, report.inputs.1
    ));
    out.line("cells:");
    for cell in &report.cells {
        out.line(format!(
            "  {:<32} {:<8} {:<8} {:<8} bundle {}",
            cell.id,
            if cell.required {
                "required"
            } else {
                "optional"
            },
            if cell.graded { "graded" } else { "ungraded" },
            cell.outcome.map_or("missing", |o| o.as_str()),
            cell.bundle.as_deref().unwrap_or("-")
        ));
    }
    out.line("notes:");
    for note in &report.notes {
        out.line(format!("  - {note}"));
    }
    if report.verdict.passed() {
        out.line("reasons: none");
    } else {
        out.line(format!("reasons ({}):", report.verdict.reasons.len()));
        for reason in &report.verdict.reasons {
            out.line(format!("  - {reason}"));
        }
    }
    match &report.written {
        Some(path) => out.line(format!("summary: {}", path.display())),
        None => out.line("summary: not written (a failed sign-off is not a release record)"),
    }
    Ok(if report.verdict.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn run_keygen(dir: &Path, out: &Out) -> anyhow::Result<ExitCode> {
    let pair = signing::keygen(dir)?;
    out.line(format!(
        "studyloop-uat keygen: private key {} (0600, keep it; never share it)",
        pair.private.display()
    ));
    out.line(format!(
        "public key {} (give it to whoever verifies), fingerprint {}",
        pair.public.display(),
        pair.fingerprint
    ));
    Ok(ExitCode::SUCCESS)
}

fn run_sign(run: &Path, key: &Path, out: &Out) -> anyhow::Result<ExitCode> {
    // The key first: a wrong key file is refused before the sign-off runs.
    let key = signing::read_private(key)?;
    let pins = Pins::load_default()?;
    match signing::sign(&pins, run, &key, redactor(out)?)? {
        signing::Signed::Written {
            path,
            fingerprint,
            cells,
        } => {
            out.line(format!(
                "studyloop-uat sign: SIGNED the release record of {} ({cells} cell(s)) with key {fingerprint}",
                run.display()
            ));
            out.line(format!("signature: {}", path.display()));
            Ok(ExitCode::SUCCESS)
        }
        signing::Signed::Refused { reasons } => {
            out.line(format!(
                "studyloop-uat sign: NOT SIGNED: the sign-off of {} is FAIL (a failed sign-off is not a release record)",
                run.display()
            ));
            for reason in &reasons {
                out.line(format!("  - {reason}"));
            }
            Ok(ExitCode::from(1))
        }
    }
}

fn run_verify(run: &Path, pubkey: &Path, out: &Out) -> anyhow::Result<ExitCode> {
    let key = signing::read_public(pubkey)?;
    let pins = Pins::load_default()?;
    match signing::verify(&pins, run, &key, redactor(out)?)? {
        signing::Verified::Valid { fingerprint } => {
            out.line(format!(
                "studyloop-uat verify: SIGNED: {} is the release record key {fingerprint} signed, unchanged",
                run.display()
            ));
            Ok(ExitCode::SUCCESS)
        }
        signing::Verified::Failed { reasons } => {
            out.line(format!(
                "studyloop-uat verify: NOT VALID: {} ({} reason(s)):",
                run.display(),
                reasons.len()
            ));
            for reason in &reasons {
                out.line(format!("  - {reason}"));
            }
            Ok(ExitCode::from(1))
        }
    }
}

fn run_grade(
    dir: &std::path::Path,
    council: Option<&str>,
    stub_url: Option<String>,
    env: &CallerEnv,
    out: &Out,
) -> anyhow::Result<ExitCode> {
    let pins = Pins::load_default()?;
    let bundle = Bundle::open(dir)?;
    let council = council.unwrap_or(pins.definition.council());
    let spec = pins
        .definition
        .cell_specs()
        .iter()
        .find(|c| c.id == bundle.manifest().cell);
    let cell = CellContext {
        required: spec.is_some_and(|c| c.required),
        skipped: bundle.manifest().outcome == studyloop_acceptance::evidence::Outcome::Skipped,
    };
    let redactor = redactor(out)?;
    let keys: std::collections::BTreeMap<String, String> = env
        .iter()
        .filter_map(|(k, v)| Some((k.to_str()?.to_owned(), v.to_str()?.to_owned())))
        .collect();
    // Every seat that bills is asked of the one policy; a malformed value refuses.
    let approvals = match studyloop_acceptance::approval::Approvals::from_env(env) {
        Ok(approvals) => approvals,
        Err(e) => {
            out.err(format!("studyloop-uat grade: refused (no seat asked): {e}"));
            return Ok(ExitCode::from(2));
        }
    };
    let grader = Grader {
        rubric: &pins.rubric,
        rules: &pins.rules,
        redactor,
        roster: &pins.roster,
        council,
        env: &keys,
        stub: stub_url.map(|base_url| StubTarget {
            base_url,
            api_key: None,
        }),
        // `studyloop-uat grade` grades live; cassettes belong to a journey run.
        cassette: None,
        // No auth mode here: the gateway may be any proxy, so its seats bill too.
        approvals: SeatApprovals {
            approvals: &approvals,
            local_gateway: false,
        },
    };
    let graded = grader.grade(&bundle, cell)?;
    let written = council::write(&bundle, &graded).context("writing the arbitration")?;
    let a = &graded.arbitration;
    out.line(format!(
        "studyloop-uat grade: {} `{}` ({}) by council `{}`: {} of {} seat(s) scored",
        if a.rejected() { "REJECTED" } else { "GRADED" },
        a.cell,
        a.bundle_run_id,
        a.council,
        a.scored_seats(),
        a.seats.len()
    ));
    for seat in &a.seats {
        match &seat.status {
            SeatStatus::Scored { .. } => out.line(format!("  seat {}: scored", seat.id)),
            SeatStatus::Unscored { reason } => {
                out.line(format!("  seat {}: unscored: {reason}", seat.id));
            }
            SeatStatus::Absent { reason } => {
                out.line(format!("  seat {}: absent: {reason}", seat.id));
            }
        }
    }
    for r in &a.rejections {
        out.line(format!("  reject_if `{}`: {}", r.id, r.detail));
    }
    for (id, c) in &a.criteria {
        let median = c
            .median
            .map_or_else(|| "none".to_owned(), |m| m.to_string());
        out.line(format!(
            "  {id}: median {median}, spread {}",
            c.spread.map_or_else(|| "-".to_owned(), |s| s.to_string())
        ));
    }
    out.line(format!(
        "arbitration: {}",
        written.join(council::ARBITRATION_MD).display()
    ));
    Ok(if a.rejected() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn run_prune(
    older_than: &str,
    root: Option<PathBuf>,
    apply: bool,
    env: &CallerEnv,
    out: &Out,
) -> anyhow::Result<ExitCode> {
    let age = prune::parse_age(older_than)?;
    let root = match root {
        Some(root) => root,
        None => prune::default_root(env)?,
    };
    let plan = prune::plan(&root, age, jiff::Timestamp::now())?;
    let mode = if apply {
        "deleting"
    } else {
        "dry run (pass --apply to delete)"
    };
    out.line(format!(
        "studyloop-uat prune: {mode}; root {}; older than {older_than}",
        plan.root.display()
    ));
    for c in &plan.delete {
        let extra = if c.arbitration.is_some() {
            " and its arbitration"
        } else {
            ""
        };
        out.line(format!(
            "  {} {} (age {}d){extra}",
            if apply { "delete" } else { "would delete" },
            c.run_id,
            c.age_days
        ));
    }
    out.line(format!("  kept {} newer bundle(s)", plan.kept));
    for (name, why) in &plan.skipped {
        out.line(format!("  left alone {name}: {why}"));
    }
    if apply {
        let removed = prune::apply(&plan)?;
        out.line(format!("removed {} director(ies)", removed.len()));
    }
    Ok(ExitCode::SUCCESS)
}

fn preflight_result(
    harness: &str,
    repo: &std::path::Path,
    env: &CallerEnv,
    out: &Out,
) -> anyhow::Result<Result<studyloop_uat::certify::Ready, ExitCode>> {
    let pins = Pins::load_default()?;
    let council = pins.definition.council();
    let now = jiff::Timestamp::now().as_millisecond();
    let result = studyloop_uat::certify::preflight(harness, env, repo, &pins.roster, council, now);
    Ok(studyloop_uat::certify::report_preflight(result, out))
}

fn run_preflight(
    harness: &str,
    repo: &std::path::Path,
    env: &CallerEnv,
    out: &Out,
) -> anyhow::Result<ExitCode> {
    Ok(match preflight_result(harness, repo, env, out)? {
        Ok(_) => ExitCode::SUCCESS,
        Err(code) => code,
    })
}

fn run_certify(
    harness: &str,
    real_auth: bool,
    repo: &std::path::Path,
    env: &CallerEnv,
    out: &Out,
) -> anyhow::Result<ExitCode> {
    if let Err(refusal) = studyloop_uat::certify::refusal(harness, real_auth, env) {
        out.err(format!("certify: refused (nothing launched): {refusal}"));
        return Ok(ExitCode::from(2));
    }
    let ready = match preflight_result(harness, repo, env, out)? {
        Ok(ready) => ready,
        Err(code) => return Ok(code),
    };
    let exe = std::env::current_exe().context("cannot find this binary to sign off with")?;
    studyloop_uat::certify::run(&ready, repo, &exe, out)
}

fn run_merge(
    runs: &[PathBuf],
    expect: Option<&std::path::Path>,
    out: &Out,
) -> anyhow::Result<ExitCode> {
    let report = studyloop_uat::merge::merge(runs, expect)?;
    out.line(format!(
        "studyloop-uat merge: {}",
        if report.passed { "PASS" } else { "FAIL" }
    ));
    for line in &report.lines {
        out.line(line);
    }
    Ok(ExitCode::from(u8::from(!report.passed)))
}

fn run_receipts(runs: Vec<PathBuf>, dir: &std::path::Path, out: &Out) -> anyhow::Result<ExitCode> {
    use studyloop_uat::receipts;
    let runs = if runs.is_empty() {
        let root = studyloop_acceptance::bins::workspace_root().join("target/studyloop/runs");
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
            .map(|e| e.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        dirs.sort();
        dirs
    } else {
        runs
    };
    let evidence: Vec<PathBuf> = runs.iter().map(|r| r.join("evidence")).collect();
    let collected = receipts::collect_all(&evidence, dir, redactor(out)?)?;
    let added = collected.added;
    for (_, why) in &collected.refused {
        out.err(format!("receipts: no receipt: {why}"));
    }
    let all = receipts::load_all(dir)?;
    let coverage = dir.join(receipts::COVERAGE_FILE);
    std::fs::write(&coverage, receipts::coverage_markdown(&all))
        .with_context(|| format!("writing {}", coverage.display()))?;
    out.line(format!(
        "receipts: {added} new from {} run dir(s); {} receipt(s) in {}; {} regenerated",
        runs.len(),
        all.len(),
        dir.display(),
        coverage.display()
    ));
    Ok(ExitCode::SUCCESS)
}

/// One report per latest run (`--latest`), each named for the tier(s) it is the
/// latest run of, so the reader knows which runs the reports are of.
fn run_latest_reports(root: &Path, redacted: bool, out: &Out) -> anyhow::Result<ExitCode> {
    for run in studyloop_uat::report::latest_runs(root)? {
        out.line(format!(
            "studyloop-uat report: the latest {} run: {}",
            run.tiers.join(" and "),
            run.dir.display()
        ));
        run_report(vec![run.dir], None, redacted, out)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn run_export(
    bundle: &Path,
    format: TrajectoryFormat,
    path: Option<&Path>,
    out: &Out,
) -> anyhow::Result<ExitCode> {
    use studyloop_uat::trajectory::{Conversation, atif, otlp};
    if let Some(p) = path {
        let inside = std::path::absolute(p)?.starts_with(std::path::absolute(bundle)?);
        anyhow::ensure!(
            !inside,
            "--out {} is inside the bundle {}: its inventory would no longer match; write it beside the bundle",
            p.display(),
            bundle.display()
        );
    }
    let conversation = Conversation::read(bundle, redactor(out)?)?;
    let doc = match format {
        TrajectoryFormat::Atif => atif::trajectory(&conversation),
        TrajectoryFormat::Otlp => otlp::spans(&conversation)?,
    };
    let text = serde_json::to_string_pretty(&doc)? + "\n";
    match path {
        Some(p) => {
            std::fs::write(p, &text).with_context(|| format!("writing {}", p.display()))?;
            out.line(format!(
                "studyloop-uat export-trajectory: {} turn(s) of {} to {}",
                conversation.turns.len(),
                conversation.cell,
                p.display()
            ));
        }
        None => out.line(text.trim_end()),
    }
    Ok(ExitCode::SUCCESS)
}

/// `report --compare OLD_RUN NEW_RUN`: the comparison page.
fn run_compare(
    pair: &[PathBuf],
    dir: Option<PathBuf>,
    fail_on_breaks: bool,
    out: &Out,
) -> anyhow::Result<ExitCode> {
    use studyloop_uat::report::{CompareOptions, compare};
    // clap takes exactly two values; a slice pattern keeps that visible here.
    let [old, new] = pair else {
        anyhow::bail!("--compare takes two run directories: OLD_RUN NEW_RUN");
    };
    let options = CompareOptions {
        old: old.clone(),
        new: new.clone(),
        out: dir.unwrap_or_else(|| new.join("compare")),
    };
    let c = compare(&options)?;
    out.line(format!(
        "studyloop-uat report --compare: {} new failure(s), {} fixed, {} newly flaky, {} changed pin(s), {} broken step(s)",
        c.new_failures, c.fixed, c.newly_flaky, c.changed_pins, c.broken_steps
    ));
    // The rows that would have to change, one line each (also in the page and
    // in compare.json): what `just drift` ends with.
    for (trial, row) in &c.rows {
        let shown = |v: &Option<String>| match (v, row.fact) {
            (Some(s), _) => s.clone(),
            (None, Some(_)) => "none".to_owned(),
            (None, None) => "unknown".to_owned(),
        };
        out.line(format!(
            "row to change: {trial}: `{}` ({}): harness table: {}; product: {}",
            row.name,
            row.fact.map_or(
                "no rule names this step in acceptance/src/harness_spec/drift_rows.rs",
                |f| f.label()
            ),
            shown(&row.harness_spec),
            shown(&row.product),
        ));
    }
    out.line(format!("json: {}", c.json.display()));
    let index = std::fs::canonicalize(&c.index).unwrap_or(c.index);
    out.line(format!("open file://{}", index.display()));
    // --fail-on-breaks (`just drift`): a trial that newly fails or a step that no
    // longer holds is a non-zero exit.
    Ok(
        if fail_on_breaks && (c.new_failures > 0 || c.broken_steps > 0) {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        },
    )
}

fn run_report(
    runs: Vec<PathBuf>,
    dir: Option<PathBuf>,
    redacted: bool,
    out: &Out,
) -> anyhow::Result<ExitCode> {
    use studyloop_uat::report::{ReportOptions, build};
    let default_name = if redacted {
        "report-redacted"
    } else {
        "report"
    };
    let dir = match (dir, runs.first()) {
        (Some(dir), _) => dir,
        (None, Some(first)) => first.join(default_name),
        (None, None) => PathBuf::from(default_name),
    };
    let options = ReportOptions {
        runs,
        out: dir,
        redacted,
    };
    let written = build(&options, redactor(out)?)?;
    out.line(format!(
        "studyloop-uat report: {} cell page(s), {} file(s) copied (screenshots, recordings), sign-off {}, in {} ms{}",
        written.cells,
        written.copied,
        written.verdict,
        written.elapsed.as_millis(),
        if redacted { " (redacted)" } else { "" }
    ));
    let index = std::fs::canonicalize(&written.index).unwrap_or(written.index);
    out.line(format!("open file://{}", index.display()));
    Ok(ExitCode::SUCCESS)
}
