//! `just certify HARNESS`: real-auth certification for an owner with vendor keys.
//! This module is its preflight (`studyloop-uat preflight HARNESS`), which runs
//! before anything launches: the harness name against the accepted set, the source
//! tree (a certification proves one commit, so a dirty tree is refused naming its
//! paths), the harness's credentials (`acceptance::harness_spec::credentials`) and the
//! keys of every seat of the council the sign-off grades real-auth runs with. The
//! recipe then runs the harness's acceptance cells and UAT journeys with
//! `STUDYLOOP_ACC_REAL_AUTH=1`, the sign-off, and the receipts (which refuse a
//! real-auth bundle of a dirty or unknown tree).

mod preflight;

pub use preflight::{EXIT_SKIPPED, PreflightError, Ready, preflight};
