//! Sending an answer: JSON or SSE frames through a channel body, paced by the
//! streaming delay, and cut mid-message when a truncation fault applies.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::Response;
use http_body::Frame;
use tokio::sync::mpsc;

use super::render::Rendered;

/// Pause before an injected cut so the kept part is flushed to the client.
const FLUSH_BEFORE_CUT: Duration = Duration::from_millis(20);

/// Sends the rendered answer through a channel body. A truncation keeps only the
/// first `n` events (or bytes) and then ends the body with an error, which makes
/// hyper abort the connection mid-message: no terminal event, no final chunk.
pub(super) fn send(rendered: Rendered, delay: Duration, truncate: Option<u64>) -> Response {
    let keep = |total: usize| {
        truncate
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| *n < total)
    };
    let (pieces, cut, content_type, length) = match rendered {
        Rendered::Json(body) => {
            let bytes = Bytes::from(body.to_string());
            let len = bytes.len();
            match keep(len) {
                Some(n) => (vec![bytes.slice(..n)], true, "application/json", Some(len)),
                None => (vec![bytes], false, "application/json", Some(len)),
            }
        }
        Rendered::Events(mut events) => {
            let cut = keep(events.len())
                .inspect(|n| events.truncate(*n))
                .is_some();
            let pieces = events.into_iter().map(Bytes::from).collect();
            (pieces, cut, "text/event-stream", None)
        }
    };
    let (tx, rx) = mpsc::channel::<Result<Bytes, io::Error>>(4);
    let pause = if length.is_none() {
        delay
    } else {
        Duration::ZERO
    };
    tokio::spawn(async move {
        // Event i is due at start + i × delay: sleeping until absolute deadlines
        // keeps the timer's 1 ms rounding from accumulating over a stream.
        let start = tokio::time::Instant::now();
        for (i, piece) in pieces.into_iter().enumerate() {
            if i > 0 && !pause.is_zero() {
                let due = u32::try_from(i).map_or(Duration::MAX, |i| pause.saturating_mul(i));
                tokio::time::sleep_until(start + due).await;
            }
            if tx.send(Ok(piece)).await.is_err() {
                return;
            }
        }
        if cut {
            // Let hyper see an idle body and flush what was sent: a cut must
            // deliver the kept part, then abort.
            tokio::time::sleep(FLUSH_BEFORE_CUT).await;
            let _ = tx
                .send(Err(io::Error::other("studyloop stub: injected truncation")))
                .await;
        }
    });
    let mut response = Response::new(Body::new(ChannelBody { rx }));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type),
    );
    if let Some(len) = length {
        headers.insert(header::CONTENT_LENGTH, header::HeaderValue::from(len));
    } else {
        headers.insert(
            header::CACHE_CONTROL,
            header::HeaderValue::from_static("no-cache"),
        );
    }
    response
}

struct ChannelBody {
    rx: mpsc::Receiver<Result<Bytes, io::Error>>,
}

impl http_body::Body for ChannelBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        self.rx
            .poll_recv(cx)
            .map(|item| item.map(|piece| piece.map(Frame::data)))
    }
}
