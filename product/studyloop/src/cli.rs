//! The `studyloop` command line: clap definitions and one dispatch function.
//! Each arm parses the user's values into typed ones (so bad input becomes a
//! one-line error naming the value and the accepted set), calls the library,
//! and prints. A new subcommand (e.g. `web`) is one enum variant and one arm.

use std::fmt::Write as _;
use std::io::Write as _;

use clap::{Parser, Subcommand};

use crate::adapters::Harness;
use crate::context::Ctx;
use crate::envelope::{self, Code, Failure};
use crate::feeds::{self, TopicStatus};
use crate::persona::Mode;
use crate::session::{self, EndOutcome, Energy, ResumeOutcome, SessionError, StartRequest, Wait};
use crate::settings::{self, SettingsError};
use crate::{config, doctor, sidebar, state, status, store};

/// StudyLoop: a study mentor that runs a coding-agent CLI in tmux.
#[derive(Debug, Parser)]
#[command(name = "studyloop", version, about, long_about = None)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Whether the command was asked for `--json`: its failure is then printed as the
    /// envelope's `{"error": …}` on stdout too (main.rs).
    #[must_use]
    pub fn wants_json(&self) -> bool {
        use crate::plans::cli::PlanCommand as P;
        match &self.command {
            Command::Status { json }
            | Command::Doctor { json, .. }
            | Command::Search { json, .. }
            | Command::Plan(P::List { json, .. } | P::Show { json, .. } | P::Interview { json })
            | Command::Module(crate::modules::ModuleCommand::List { json }) => *json,
            Command::Now(args) => args.json,
            Command::Plan(p) => p.json_input().is_some(),
            _ => false,
        }
    }
}

/// `studyloop study` options.
#[derive(Debug, clap::Args)]
pub struct StudyArgs {
    /// What to study, e.g. "SQL window functions".
    pub topic: Option<String>,
    /// Harness: codex, claude, kiro, pi, opencode or grok (default: detected).
    #[arg(short, long)]
    pub agent: Option<String>,
    /// Energy 1 (low) .. 10 (high).
    #[arg(short, long, default_value = "5")]
    pub energy: String,
    /// Persona mode: study, co-study or plan-architect.
    #[arg(short, long, default_value = "study")]
    pub mode: String,
    /// Resume the last session (same tmux name and dir, harness resume flags).
    #[arg(long, conflicts_with = "end")]
    pub resume: bool,
    /// End the active session.
    #[arg(long)]
    pub end: bool,
    /// Remove credential-like variables from the harness environment.
    #[arg(long)]
    pub scrub_env: bool,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start, resume (--resume) or end (--end) a tmux study session.
    Study(StudyArgs),
    /// Log a topic to the live session (the agent calls this).
    Topic {
        /// The topic or concept.
        name: String,
        /// learning, struggling, insight, win or parked.
        #[arg(short, long, default_value = "learning")]
        status: String,
        /// A short note.
        #[arg(short, long, default_value = "")]
        note: String,
    },
    /// Park a question for later (the agent calls this).
    Park {
        /// The question.
        question: String,
    },
    /// Show the live session.
    Status {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// The sidebar pane (run by `study`).
    Sidebar {
        /// Print one frame and exit.
        #[arg(long)]
        once: bool,
    },
    /// Health checks (read-only); `--fix` repairs the session state.
    Doctor {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Finish or roll back an interrupted start/end and rebuild a damaged
        /// session state from the history DB and tmux (damaged files are kept).
        #[arg(long)]
        fix: bool,
    },
    /// Write or show config.yaml.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Search what past sessions recorded: FTS5 and embeddings fused by rank
    /// (lexical only, with a one-line notice, when the model is not installed).
    Search {
        /// Words to look for.
        query: String,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// At most this many hits.
        #[arg(long, default_value_t = 10)]
        limit: u32,
    },
    /// Write one session as a self-describing JSON artefact
    /// (docs/schemas/session-export.schema.json), to stdout or `--out`.
    Export {
        /// The study session id (see `--list`).
        #[arg(required_unless_present = "list")]
        session: Option<String>,
        /// Write here (atomically, 0600) instead of stdout.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
        /// Replace an existing `--out` file.
        #[arg(long, requires = "out")]
        force: bool,
        /// List the sessions (id, topic, started, outcome) instead.
        #[arg(long, conflicts_with = "session")]
        list: bool,
    },
    /// Study plans: list, show, new, interview, status, milestone, evaluate,
    /// record, reindex, path, architect, delete.
    #[command(subcommand)]
    Plan(crate::plans::cli::PlanCommand),
    /// The recommended next action (the same engine as `GET /api/now`).
    Now(crate::plans::cli::NowArgs),
    /// Serve the web console (PTY or ACP sessions) on 127.0.0.1.
    Web {
        /// Port to listen on (0 = any free port).
        #[arg(short, long, default_value_t = crate::web::run::DEFAULT_PORT)]
        port: u16,
        /// Listen on every interface (requires a password).
        #[arg(long)]
        lan: bool,
        /// HTTP Basic auth password (default: STUDYLOOP_WEB_PASSWORD).
        #[arg(long)]
        password: Option<String>,
    },
    /// Modules: new, check, add, list, remove (docs/modules.md).
    #[command(subcommand)]
    Module(crate::modules::ModuleCommand),
    /// Run one drill phase (setup, check, cleanup) after your typed consent.
    Drill(crate::modules::DrillArgs),
    /// Register `studyloop-mcp` (as `studyloop`) in the harness homes.
    #[command(subcommand)]
    Install(InstallCommand),
    /// Internal: run by the agent pane when the agent exits.
    #[command(hide = true)]
    EndOnExit {
        /// Only end this study session.
        #[arg(long)]
        study_id: String,
    },
    /// Internal: exec a command with credentials scrubbed from the environment.
    #[command(hide = true)]
    ScrubbedExec {
        /// The command and its arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        argv: Vec<String>,
    },
}

/// `studyloop config …`.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Write the commented default config (passes the scope gate).
    Init {
        /// Overwrite an existing file.
        #[arg(long)]
        force: bool,
    },
    /// Show the config file and the resolved paths.
    Show,
}

/// A command failed; the message is one line.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A session operation.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// Paths.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// Config.
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    /// State.
    #[error(transparent)]
    State(#[from] state::StateError),
    /// Status.
    #[error(transparent)]
    Status(#[from] status::StatusError),
    /// Store.
    #[error(transparent)]
    Store(#[from] store::StoreError),
    /// The web server.
    #[error(transparent)]
    Web(#[from] crate::web::run::WebError),
    /// `doctor --fix`.
    #[error(transparent)]
    Fix(#[from] doctor::FixError),
    /// A module command.
    #[error(transparent)]
    Module(#[from] crate::modules::ModuleError),
    /// A study-plan operation.
    #[error(transparent)]
    Plan(#[from] crate::plans::PlanError),
    /// `export`.
    #[error(transparent)]
    Export(#[from] crate::export::ExportError),
    /// Anything else the user must fix.
    #[error("{0}")]
    Usage(String),
}

impl CliError {
    /// The envelope's failure for this error (what `--json` prints on stdout): the
    /// closed-set class a script matches on and the same one-line message.
    #[must_use]
    pub fn failure(&self) -> Failure {
        use crate::modules::ModuleError as M;
        let code = match self {
            Self::Plan(e) => return e.failure(),
            Self::Session(SessionError::Scope(_)) => Code::ScopeUnconfigured,
            Self::Session(
                SessionError::InvalidEnergy(_)
                | SessionError::InvalidMode(_)
                | SessionError::EmptyTopic,
            )
            | Self::Store(store::StoreError::EmptyQuery)
            | Self::Module(M::BadId(_) | M::BadDrill(_) | M::BadPhase(_))
            | Self::Usage(_) => Code::InvalidInput,
            Self::Session(SessionError::NoSessionToResume | SessionError::SessionGone { .. }) => {
                Code::NoActiveSession
            }
            Self::Session(SessionError::Claim(session::ClaimError::Blocked { .. })) => {
                Code::SessionActive
            }
            Self::Module(M::NotInstalled { .. } | M::UnknownDrill { .. }) => Code::NotFound,
            Self::Module(M::AlreadyInstalled { .. } | M::Exists(_) | M::Tampered { .. }) => {
                Code::Conflict
            }
            _ => Code::Internal,
        };
        Failure::new(code, self.to_string())
    }

    /// Exit code: 2 for the scope gate, else 1.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Session(e) => e.exit_code(),
            Self::Plan(crate::plans::PlanError::Scope(_)) => 2,
            _ => 1,
        }
    }
}

fn json_line(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// Everything printed goes through [`crate::term::text`]: it carries topic
/// names, notes and state values that the agent or another writer stored.
fn out(text: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(crate::term::text(text).as_bytes());
    let _ = o.flush();
}

fn warn(text: &str) {
    eprintln!("studyloop: warning: {}", crate::term::text(text));
}

/// Finish or roll back an interrupted start or end before the command's own
/// work. Commands that write wait for one in progress; `status` and `search`
/// never wait and only warn; `doctor` reports (and `--fix` repairs) it itself.
fn repair_first(ctx: &Ctx, command: &Command) -> Result<(), CliError> {
    let wait = match command {
        // The sidebar is a pane of the session a repair may kill: it only renders.
        Command::Doctor { .. }
        | Command::Config(_)
        | Command::ScrubbedExec { .. }
        | Command::Module(_)
        | Command::Drill(_)
        | Command::Sidebar { .. } => return Ok(()),
        Command::Status { .. } | Command::Search { .. } | Command::Export { .. } => Wait::Skip,
        _ => Wait::Block,
    };
    match session::repair(ctx, wait) {
        Ok(Some(what)) => warn(&format!("repaired: {what}")),
        Ok(None) => {}
        Err(e) if wait == Wait::Skip => warn(&format!(
            "an interrupted start or end is not repaired yet: {e}"
        )),
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

/// Run one command; returns the exit code.
pub fn run(cli: Cli, ctx: &Ctx) -> Result<u8, CliError> {
    repair_first(ctx, &cli.command)?;
    match cli.command {
        Command::Study(args) => study(ctx, args),
        Command::Topic { name, status, note } => {
            let status = TopicStatus::parse(&status).ok_or_else(|| {
                CliError::Usage(format!(
                    "status `{status}` is not accepted; use one of: {}",
                    TopicStatus::ACCEPTED
                ))
            })?;
            let paths = require_active(ctx)?;
            let f = paths.topics();
            // Stored without controls: the feeds are rendered on terminals.
            let (name, note) = (crate::term::text(&name), crate::term::text(&note));
            feeds::append_topic(&paths, &crate::context::now_hhmm(), &name, status, &note)
                .map_err(|e| CliError::Usage(format!("cannot append to {}: {e}", f.display())))?;
            Ok(0)
        }
        Command::Park { question } => {
            let paths = require_active(ctx)?;
            let f = paths.parking();
            feeds::append_parked(&paths, &crate::term::text(&question))
                .map_err(|e| CliError::Usage(format!("cannot append to {}: {e}", f.display())))?;
            Ok(0)
        }
        Command::Status { json } => {
            let st = status::read(&settings::session_paths(&ctx.env)?)?;
            out(&if json {
                envelope::success_text("status", &st)
            } else {
                status::render(&st)
            });
            Ok(0)
        }
        Command::Sidebar { once } => {
            sidebar::run(&settings::session_paths(&ctx.env)?, once)?;
            Ok(0)
        }
        Command::Doctor { json, fix } => {
            if fix {
                return doctor_fix(ctx, json);
            }
            let report = doctor::run(ctx);
            out(&if json {
                envelope::success_text("doctor", &report)
            } else {
                doctor::render(&report)
            });
            Ok(report.exit_code)
        }
        Command::Config(ConfigCommand::Init { force }) => {
            let path = settings::config_file(&ctx.env)?;
            config::init(&path, force)?;
            out(&format!("Wrote {}\n", path.display()));
            Ok(0)
        }
        Command::Config(ConfigCommand::Show) => config_show(ctx),
        Command::Search { query, json, limit } => search(ctx, &query, json, limit),
        Command::Export {
            session,
            out: path,
            force,
            list,
        } => export(ctx, session.as_deref(), path.as_deref(), force, list),
        Command::Plan(cmd) => plans_out(crate::plans::cli::run_plan(ctx, cmd)),
        Command::Now(args) => plans_out(crate::plans::cli::run_now(ctx, &args)),
        Command::Web {
            port,
            lan,
            password,
        } => {
            let opts = crate::web::run::WebOptions {
                port,
                lan,
                password,
            };
            crate::web::run::run(ctx.clone(), &opts)?;
            Ok(0)
        }
        Command::EndOnExit { study_id } => {
            session::end_if_current(ctx, &study_id)?;
            Ok(0)
        }
        Command::ScrubbedExec { argv } => scrubbed_exec(ctx, &argv),
        Command::Module(command) => Ok(crate::modules::command::run(ctx, command)?),
        Command::Drill(args) => Ok(crate::modules::drill_command::run(ctx, &args)?),
        Command::Install(InstallCommand::Agents { tool }) => {
            let (text, ok) = crate::install_agents::install_agents(ctx, tool.as_deref())?;
            out(&text);
            Ok(if ok { 0 } else { 1 })
        }
    }
}

/// `studyloop install …`.
#[derive(Debug, Subcommand)]
pub enum InstallCommand {
    /// Register `studyloop-mcp` in each harness's own config (those on PATH, or --tool).
    Agents {
        /// Only this harness (codex, claude, kiro, pi, opencode, grok).
        #[arg(long)]
        tool: Option<String>,
    },
}

/// Print a plan command's text; a refusal is a one-line error (exit 2 for the
/// scope gate, like every DB-touching command).
fn plans_out(result: Result<String, crate::plans::PlanError>) -> Result<u8, CliError> {
    match result {
        Ok(text) => {
            out(&text);
            Ok(0)
        }
        Err(e) => Err(CliError::Plan(e)),
    }
}

fn require_active(ctx: &Ctx) -> Result<crate::settings::SessionPaths, CliError> {
    let paths = settings::session_paths(&ctx.env)?;
    match state::StateStore::new(&paths).read()? {
        Some(s) if s.is_active() => Ok(paths),
        _ => Err(CliError::Usage(
            "No active session; start one with `studyloop study TOPIC --agent NAME`".into(),
        )),
    }
}

fn study(ctx: &Ctx, args: StudyArgs) -> Result<u8, CliError> {
    if args.end {
        match session::end(ctx)? {
            EndOutcome::NothingActive => out("No active session found.\n"),
            EndOutcome::Ended(e) => {
                e.warnings.iter().for_each(|w| warn(w));
                out(&format!(
                    "Ended study session {} (`{}`): {} min, {} wins, {} struggles.\n",
                    e.study_id,
                    e.topic,
                    e.duration_minutes
                        .map_or_else(|| "?".to_owned(), |m| m.to_string()),
                    e.win_count,
                    e.struggle_count
                ));
            }
        }
        return Ok(0);
    }
    if args.resume {
        return match session::resume(ctx, args.scrub_env)? {
            ResumeOutcome::StillRunning { name, tmux } => {
                if !tmux.attach(&name).map_err(SessionError::from)? {
                    out(&format!(
                        "Session {name} is still running; attach with: tmux attach -t {name}\n"
                    ));
                }
                Ok(0)
            }
            ResumeOutcome::Restarted(started) => launched(*started, "Resumed"),
        };
    }
    // Validate every value before anything touches the disk.
    let agent = args
        .agent
        .as_deref()
        .map(Harness::parse)
        .transpose()
        .map_err(SessionError::from)?;
    let energy = Energy::parse(&args.energy)?;
    let mode =
        Mode::parse_cli(&args.mode).ok_or_else(|| SessionError::InvalidMode(args.mode.clone()))?;
    let topic = args.topic.unwrap_or_default();
    let started = session::start(
        ctx,
        &StartRequest {
            topic,
            agent,
            energy,
            mode,
            scrub_env: args.scrub_env,
        },
    )?;
    launched(started, "Started")
}

fn launched(started: session::Started, verb: &str) -> Result<u8, CliError> {
    started.warnings.iter().for_each(|w| warn(w));
    let s = &started.state;
    let name = s.mux_session().unwrap_or_default().to_owned();
    out(&format!(
        "{verb} study session {} in tmux session {name} (agent {}, energy {}/10, mode {}).\n",
        s.study_session_id.as_deref().unwrap_or("?"),
        s.agent.as_deref().unwrap_or("?"),
        s.energy.unwrap_or_default(),
        s.mode.as_deref().unwrap_or("?"),
    ));
    // Attaching replaces this process when stdin is a terminal; otherwise say how.
    if !started.tmux.attach(&name).map_err(SessionError::from)? {
        out(&format!("Attach with: tmux attach -t {name}\n"));
    }
    Ok(0)
}

fn doctor_fix(ctx: &Ctx, json: bool) -> Result<u8, CliError> {
    let fixed = doctor::fix(ctx)?;
    out(&if json {
        envelope::success_text("doctor.fix", &fixed)
    } else {
        fixed.render()
    });
    Ok(0)
}

fn config_show(ctx: &Ctx) -> Result<u8, CliError> {
    let path = settings::config_file(&ctx.env)?;
    let loaded = config::load(&path)?;
    let paths = settings::Paths::resolve(&ctx.env, &loaded.config)?;
    let mut text = format!(
        "config file:  {}{}\nsession dir:  {}\nstate dir:    {}\ndatabase:     {}\n",
        path.display(),
        if loaded.exists {
            ""
        } else {
            " (missing; `studyloop config init` writes one)"
        },
        paths.session.dir.display(),
        paths.state_dir.display(),
        paths.db.display(),
    );
    if !loaded.unknown_keys.is_empty() {
        let _ = writeln!(text, "unknown keys: {}", loaded.unknown_keys.join(", "));
    }
    if loaded.exists {
        let body = std::fs::read_to_string(&path).unwrap_or_default();
        text.push_str("---\n");
        text.push_str(&body);
    }
    out(&text);
    Ok(0)
}

fn search(ctx: &Ctx, query: &str, json: bool, limit: u32) -> Result<u8, CliError> {
    let loaded = session::load(ctx)?;
    let avail = crate::embed::Availability::from_env(&ctx.env)?;
    let found = store::search_db(&loaded.paths.db, query, limit, &avail)?;
    if json {
        out(&envelope::success_text("search", &found));
        return Ok(0);
    }
    // The one-line notice: a lexical-only search is never silent.
    if let Some(notice) = &found.notice {
        eprintln!("studyloop: {}", crate::term::text(notice));
    }
    if found.results.is_empty() {
        out(&format!("No matches for `{query}`.\n"));
    } else {
        for h in found.results.iter().map(|f| &f.hit) {
            let turn = h
                .turn_id
                .as_deref()
                .map(|t| format!("  turn {t}"))
                .unwrap_or_default();
            out(&format!(
                "{}  {}  {}{turn}\n    {}\n",
                h.timestamp, h.source, h.session_id, h.preview
            ));
        }
    }
    Ok(0)
}

fn scrubbed_exec(ctx: &Ctx, argv: &[String]) -> Result<u8, CliError> {
    use std::os::unix::process::CommandExt;
    let env = crate::child_env::scrub(&ctx.env);
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| CliError::Usage("scrubbed-exec needs a command".into()))?;
    let err = std::process::Command::new(program)
        .args(args)
        .env_clear()
        .envs(env.iter())
        .exec();
    Err(CliError::Usage(format!("cannot run `{program}`: {err}")))
}

fn export(
    ctx: &Ctx,
    session: Option<&str>,
    path: Option<&std::path::Path>,
    force: bool,
    list: bool,
) -> Result<u8, CliError> {
    let db = session::load(ctx)?.paths.db;
    let Some(id) = session.filter(|_| !list) else {
        for (id, topic, started, outcome) in crate::export::list(&db)? {
            out(&format!("{id}  {started}  {outcome}  {topic}\n"));
        }
        return Ok(0);
    };
    let artefact = crate::export::build(&db, id, &crate::context::now_rfc3339())?;
    let text = json_line(&artefact) + "\n";
    match path {
        Some(p) => {
            crate::export::write_out(p, text.as_bytes(), force)?;
            out(&format!("Exported session {id} to {}\n", p.display()));
        }
        // Raw JSON on stdout: it is data for a program, not text for a terminal.
        None => print!("{text}"),
    }
    Ok(0)
}
