//! The accept loop of `studyloop web`: HTTP/1.1 connections with a header-read
//! timeout and a connection cap, so idle and slowloris sockets cannot hold the
//! console (or the process's file descriptors) forever.
//!
//! Why our own loop instead of `axum::serve`: axum's loop sets no hyper timer
//! (so hyper's header-read timeout never fires) and accepts without a bound.
//! Here each connection is served by hyper's HTTP/1 builder with a Tokio timer;
//! the header-read timeout also covers a keep-alive connection waiting for its
//! next request (hyper arms it whenever it waits for a request head). At the
//! cap a new connection is closed at once, which keeps the fd count bounded;
//! an upgraded WebSocket leaves the count (the slot admits one live socket).
//! Every request carries [`ConnAddrs`] for the `Host` and auth checks.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

use super::guard::ConnAddrs;

/// The connection limits.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// How long a client gets to send a complete request head (also the idle
    /// timeout of a keep-alive connection).
    pub header_read_timeout: Duration,
    /// Connections served at once; more are closed on accept.
    pub max_connections: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(10),
            max_connections: 64,
        }
    }
}

/// The largest request head hyper buffers (its minimum is 8 KiB).
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// How long open connections get to finish once the server stops.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// Serves `app` on `listener` within `limits` until `shutdown` resolves.
///
/// # Errors
/// The listener's local address cannot be read.
pub async fn accept_loop(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: Limits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let local = listener.local_addr()?;
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        while tasks.try_join_next().is_some() {}
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(_) => {
                    // EMFILE/ENFILE or a connection reset before accept: back off, go on.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            drop(stream);
            continue;
        };
        let local = stream.local_addr().unwrap_or(local);
        let service = TowerToHyperService::new(
            app.clone()
                .layer(axum::Extension(ConnAddrs { local, peer })),
        );
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_read_timeout)
            .max_buf_size(MAX_HEAD_BYTES);
        let conn = builder
            .serve_connection(TokioIo::new(stream), service)
            .with_upgrades();
        let mut stop = stop_rx.clone();
        tasks.spawn(async move {
            let _permit = permit;
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = stop.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(SHUTDOWN_GRACE, conn).await;
                }
            }
        });
    }
    let _ = stop_tx.send(true);
    let drain = async { while tasks.join_next().await.is_some() {} };
    if tokio::time::timeout(SHUTDOWN_GRACE, drain).await.is_err() {
        tasks.abort_all();
    }
    Ok(())
}
