//! Learner actors: the learner side of an acceptance conversation.
//!
//! Four backends (scripted turn scripts, a LiteLLM gateway, a vendor API called
//! directly, and a second harness process in its own tmux) behind one `Actor`
//! trait, all returning the same `Transcript` with an explicit outcome, all under a
//! budget guard that caps turns and output tokens before each turn. The mentor
//! side is a `Mentor` trait implemented elsewhere (tmux panes, the web ACP
//! socket); this crate never simulates a mentor outside its own tests.

pub mod kind;
pub mod turn_script;

pub use kind::{ActorKind, EnvVarDoc, UnknownActorKind};
