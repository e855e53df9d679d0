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
            // `ChannelBody` makes sure the kept part is flushed before this aborts.
            let _ = tx
                .send(Err(io::Error::other("studyloop stub: injected truncation")))
                .await;
        }
    });
    let mut response = Response::new(Body::new(ChannelBody::new(rx)));
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

/// The body hyper polls. An injected cut must deliver the kept part first, but
/// hyper drops its unflushed write buffer when a body errors, and it keeps
/// polling the body without flushing while frames are ready. So an error that
/// follows data is held back for one poll: the body answers `Pending` (waking
/// itself), hyper's dispatch loop flushes on `Pending`, and the next poll
/// returns the error. No timing is involved (a sleep before the cut lost the
/// kept part on a loaded machine).
struct ChannelBody {
    rx: mpsc::Receiver<Result<Bytes, io::Error>>,
    /// Data was yielded since the last `Pending`: hyper may not have flushed it.
    unflushed: bool,
    held: Option<io::Error>,
}

impl ChannelBody {
    fn new(rx: mpsc::Receiver<Result<Bytes, io::Error>>) -> Self {
        Self {
            rx,
            unflushed: false,
            held: None,
        }
    }
}

impl http_body::Body for ChannelBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        if let Some(err) = self.held.take() {
            return Poll::Ready(Some(Err(err)));
        }
        match self.rx.poll_recv(cx) {
            Poll::Pending => {
                self.unflushed = false;
                Poll::Pending
            }
            Poll::Ready(Some(Ok(piece))) => {
                self.unflushed = true;
                Poll::Ready(Some(Ok(Frame::data(piece))))
            }
            Poll::Ready(Some(Err(err))) if self.unflushed => {
                self.unflushed = false;
                self.held = Some(err);
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Poll::Ready(other) => Poll::Ready(other.map(|item| item.map(Frame::data))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body::Body as _;

    /// With the kept part and the cut both queued, the body still yields
    /// `Pending` between them, so hyper flushes the kept part before aborting.
    #[test]
    fn a_cut_queued_behind_data_waits_one_poll_for_the_flush() {
        let (tx, rx) = mpsc::channel(4);
        tx.try_send(Ok(Bytes::from_static(b"kept"))).unwrap();
        tx.try_send(Err(io::Error::other("cut"))).unwrap();
        let mut body = ChannelBody::new(rx);
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut poll = || Pin::new(&mut body).poll_frame(&mut cx);
        assert!(
            matches!(poll(), Poll::Ready(Some(Ok(f))) if f.data_ref().is_some_and(|d| d == "kept"))
        );
        assert!(
            poll().is_pending(),
            "the cut must not follow the data in the same flush window"
        );
        assert!(matches!(poll(), Poll::Ready(Some(Err(e))) if e.to_string() == "cut"));
    }
}
