//! The web ACP surface of the acceptance tier: `studyloop web` driven over
//! HTTP and its session WebSocket, as a real user's browser would, but
//! without one (the browser variant drives the same journey through the SPA).
//!
//! [`server::WebServer`] runs the product in a scratch world;
//! [`http::request`] calls its API; [`mentor::AcpMentor`] turns the session
//! socket into the `Mentor` a learner actor talks to. The lane that drives
//! them is `crate::lane::web_acp`; this module holds the resources only (the
//! case engine's slots own them), so it imports no lane.

pub mod browser;
pub mod console_token;
pub mod http;
pub mod journey;
pub mod mentor;
pub mod server;
pub mod socket;
pub mod trace;

pub use mentor::{AcpMentor, Stopped, TurnRecord};
pub use server::{SessionStart, StartSessionError, WebServer, WebServerError};
pub use socket::{Frame, Logged, SessionSocket, SocketError};
