//! Learner actors: the learner side of an acceptance conversation.
//!
//! Four backends (scripted turn scripts, a LiteLLM gateway, a vendor API called
//! directly, and a second harness process in its own tmux) behind one [`Actor`]
//! trait, all returning the same [`Transcript`] with an explicit [`Outcome`], all
//! under a [`Budget`] that caps turns and output tokens before each turn. The
//! mentor side is the [`Mentor`] trait, implemented elsewhere (tmux panes, the
//! web ACP socket); this crate's only mentor is [`fake::FakeMentor`], for
//! hermetic tests. [`llm`] is the reusable synchronous chat client (judge seats
//! use it too).
//!
//! Everything is synchronous (threads, not async). Settings come from an
//! explicit [`EnvSource`], never from the process environment implicitly.

pub mod budget;
mod conversation;
pub mod direct;
pub mod env;
pub mod error;
pub mod factory;
pub mod fake;
pub mod gateway;
pub mod harness_actor;
pub mod kind;
pub mod llm;
pub mod llm_actor;
pub mod scripted;
pub mod strict_json;
pub mod transcript;
pub mod turn_script;
pub mod turn_text;

pub use budget::{Budget, BudgetError, Exhausted};
pub use conversation::{Actor, Learning};
pub use env::{ENV_VARS, EnvSource, ProcessEnv};
pub use error::{ActorError, SkipReason};
pub use factory::{ActorOptions, available, build};
pub use kind::{ActorKind, EnvVarDoc, UnknownActorKind};
pub use transcript::{
    CancelToken, Mentor, MentorError, MentorReply, Outcome, Transcript, Turn, Usage,
};
