//! `studyloop module new|check|add|list|remove`: parse, call the library,
//! print. Findings and messages go through [`crate::term::text`]: they quote
//! file names and values from a module someone else wrote.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use clap::Subcommand;

use super::check::check;
use super::error::ModuleError;
use super::finding::Finding;
use super::scaffold;
use super::store::{Added, Health, Store};
use crate::context::Ctx;

/// `studyloop module …`.
#[derive(Debug, Subcommand)]
pub enum ModuleCommand {
    /// Scaffold a conforming module with one offline drill in ./NAME.
    New {
        /// The module id (a slug, e.g. my-drills).
        name: String,
    },
    /// Check a module against MC001–MC017 (exit 0 conforming, 1 findings).
    Check {
        /// The module directory.
        path: PathBuf,
    },
    /// Check again and install a module as an immutable snapshot.
    Add {
        /// The module directory.
        path: PathBuf,
    },
    /// List installed modules (and whether each snapshot is intact).
    List {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Remove an installed module: its lockfile entry and its snapshot.
    Remove {
        /// The module id.
        id: String,
    },
}

fn out(text: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(crate::term::text(text).as_bytes());
    let _ = o.flush();
}

fn findings(list: &[Finding]) {
    let mut text = String::new();
    for f in list {
        text.push_str(&crate::term::line(&f.to_string()));
        text.push('\n');
    }
    out(&text);
}

/// Runs one module command; returns the exit code.
pub(crate) fn run(ctx: &Ctx, command: ModuleCommand) -> Result<u8, ModuleError> {
    match command {
        ModuleCommand::New { name } => {
            let dir = scaffold::create(&ctx.cwd, &name)?;
            out(&format!(
                "Created module {name} in {}\nNext: studyloop module check {}\n",
                dir.display(),
                dir.display()
            ));
            Ok(0)
        }
        ModuleCommand::Check { path } => {
            let report = check(&ctx.cwd.join(&path))?;
            if report.findings.is_empty() {
                out(&format!(
                    "{} conforms to module contract v1 (MC001-MC017).\n",
                    path.display()
                ));
                Ok(0)
            } else {
                findings(&report.findings);
                Ok(1)
            }
        }
        ModuleCommand::Add { path } => match Store::new(&ctx.env)?.add(&ctx.cwd.join(&path))? {
            Added::Installed(e) => {
                out(&format!(
                    "Installed {} {} (digest {}).\n",
                    e.id, e.version, e.digest
                ));
                Ok(0)
            }
            Added::Unchanged(e) => {
                out(&format!(
                    "{} {} is already installed with this content (digest {}).\n",
                    e.id, e.version, e.digest
                ));
                Ok(0)
            }
            Added::Refused(list) => {
                findings(&list);
                out("Nothing was installed: the module does not conform.\n");
                Ok(1)
            }
        },
        ModuleCommand::List { json } => list(ctx, json),
        ModuleCommand::Remove { id } => {
            let gone = Store::new(&ctx.env)?.remove(&id)?;
            out(&format!(
                "Removed {} {} and its snapshot.\n",
                gone.id, gone.version
            ));
            Ok(0)
        }
    }
}

fn list(ctx: &Ctx, json: bool) -> Result<u8, ModuleError> {
    let store = Store::new(&ctx.env)?;
    let entries = store.entries()?;
    let mut tampered = 0;
    let mut rows = Vec::new();
    let mut text = String::new();
    for e in &entries {
        let health = store.health(e);
        let state = match &health {
            Health::Intact => "intact".to_owned(),
            Health::Tampered(found) => {
                tampered += 1;
                format!("TAMPERED ({found}); remove and add it again")
            }
        };
        let _ = writeln!(text, "{}  {}  {}  {}", e.id, e.version, e.digest, state);
        rows.push(serde_json::json!({
            "id": e.id, "version": e.version, "digest": e.digest, "source": e.source,
            "git": e.git, "addedAt": e.added_at, "intact": health == Health::Intact,
        }));
    }
    if json {
        out(&crate::envelope::success_text("module.list", &rows));
    } else if entries.is_empty() {
        out("No modules installed; add one with `studyloop module add PATH`.\n");
    } else {
        out(&text);
    }
    Ok(u8::from(tampered > 0))
}
