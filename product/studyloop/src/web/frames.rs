//! The WebSocket frame protocol of `/api/session/ws` (reference §5.2).
//!
//! Client→server frames are JSON text: `input`, `resize`, `stop`,
//! `permission_response`. Server→client frames are binary (raw PTY bytes) or
//! JSON text: `started`, `agent_message`, `transport_error`, `stopped`,
//! `attach_superseded`, `gap` (output dropped by a bounded queue). The ACP events already serialise as their frames
//! (`AcpEvent`); this module adds the rest.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A frame from the browser (or a non-browser driver).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientFrame {
    /// Keyboard input (PTY) or one prompt (ACP).
    Input {
        /// The text.
        data: String,
    },
    /// A terminal resize (PTY only; ignored for ACP).
    Resize {
        /// Columns.
        cols: u16,
        /// Rows.
        rows: u16,
    },
    /// End the session now.
    Stop,
    /// The answer to an ACP permission request.
    PermissionResponse {
        /// The `_request_id` of the `request_permission` message.
        #[serde(rename = "requestId")]
        request_id: String,
        /// `{"outcome":"selected","optionId":…}` or `{"outcome":"cancelled"}`.
        outcome: Value,
    },
}

impl ClientFrame {
    /// Parses one text frame; the error text is sent back as a `transport_error`.
    ///
    /// # Errors
    /// [`FrameError`], naming the accepted frame types, when the JSON does not fit.
    pub fn parse(text: &str) -> Result<Self, FrameError> {
        serde_json::from_str(text).map_err(FrameError)
    }
}

/// A client frame that is not one of the accepted types.
#[derive(Debug, thiserror::Error)]
#[error("unreadable frame ({0}); send JSON with type input|resize|stop|permission_response")]
pub struct FrameError(#[source] serde_json::Error);

/// The server frames that are not ACP events.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerFrame {
    /// The socket is attached to a live session.
    Started {
        /// The harness name.
        agent: String,
    },
    /// Something failed; the text says what.
    TransportError {
        /// The cause.
        message: String,
    },
    /// The session ended.
    Stopped {
        /// The child's exit status (`None`: killed by a signal).
        returncode: Option<i32>,
        /// `exit`, `cancel` or `error`.
        reason: String,
    },
    /// A newer socket took over this session.
    AttachSuperseded {
        /// The session.
        study_session_id: String,
    },
    /// The session's bounded queue dropped output nobody read in time; the
    /// frames that follow come after the gap.
    Gap {
        /// How many events (ACP) or output chunks (PTY) were dropped.
        dropped: u64,
        /// The same, for a human.
        message: String,
    },
}

impl ServerFrame {
    /// The notice for `dropped` lost items.
    #[must_use]
    pub fn gap(dropped: u64) -> Self {
        Self::Gap {
            dropped,
            message: format!(
                "{dropped} message(s) from the agent were dropped here: they arrived faster than the console read them"
            ),
        }
    }

    /// The frame as JSON text.
    #[must_use]
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_every_client_frame_and_names_the_set_on_error() {
        assert_eq!(
            ClientFrame::parse(r#"{"type":"input","data":"hi"}"#).ok(),
            Some(ClientFrame::Input { data: "hi".into() })
        );
        assert_eq!(
            ClientFrame::parse(r#"{"type":"resize","cols":100,"rows":30}"#).ok(),
            Some(ClientFrame::Resize {
                cols: 100,
                rows: 30
            })
        );
        assert_eq!(
            ClientFrame::parse(r#"{"type":"stop"}"#).ok(),
            Some(ClientFrame::Stop)
        );
        let perm =
            r#"{"type":"permission_response","requestId":"7","outcome":{"outcome":"cancelled"}}"#;
        assert_eq!(
            ClientFrame::parse(perm).ok(),
            Some(ClientFrame::PermissionResponse {
                request_id: "7".into(),
                outcome: json!({"outcome": "cancelled"})
            })
        );
        let err = ClientFrame::parse(r#"{"type":"dance"}"#)
            .expect_err("unknown type")
            .to_string();
        assert!(
            err.contains("input|resize|stop|permission_response"),
            "{err}"
        );
    }

    #[test]
    fn server_frames_have_the_reference_shape() {
        let f = ServerFrame::Stopped {
            returncode: None,
            reason: "cancel".into(),
        };
        assert_eq!(
            serde_json::from_str::<Value>(&f.to_text()).expect("json"),
            json!({"type": "stopped", "returncode": null, "reason": "cancel"})
        );
        let f = ServerFrame::Started {
            agent: "codex".into(),
        };
        assert_eq!(f.to_text(), r#"{"type":"started","agent":"codex"}"#);
    }
}
