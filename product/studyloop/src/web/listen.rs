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
//!
//! Two budgets, so that sockets held by a process without the console token
//! (`token`) never lock the learner out: every connection starts in the small
//! *unauthenticated* budget ([`Limits::max_unauthenticated`]) and leaves it for
//! the authenticated one ([`Limits::max_connections`]) on its first request
//! that carries the token ([`ConnBudget::promote`]). When the unauthenticated
//! budget is full, a new connection evicts the oldest unauthenticated one
//! instead of being refused: a client with the token connects and sends its
//! request at once, so it is promoted before a holder of idle sockets can
//! push it out (an attacker who reconnects in a tight loop can still slow a
//! tokenless client; it cannot hold an authenticated one).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;

use super::guard::ConnAddrs;

/// The connection limits.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// How long a client gets to send a complete request head (also the idle
    /// timeout of a keep-alive connection).
    pub header_read_timeout: Duration,
    /// Authenticated connections (one request carried the token) served at once.
    pub max_connections: usize,
    /// Connections that have not (yet) shown the token; when full, the oldest
    /// of them is closed for a new one.
    pub max_unauthenticated: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(10),
            max_connections: 64,
            max_unauthenticated: 16,
        }
    }
}

/// One connection's place in the budgets (a request extension, so the token
/// middleware can promote it).
#[derive(Debug, Clone)]
pub struct ConnBudget(Arc<Place>);

#[derive(Debug)]
struct Place {
    /// Held while the connection has not shown the token.
    unauthenticated: Mutex<Option<OwnedSemaphorePermit>>,
    /// Held once it has.
    authenticated: Mutex<Option<OwnedSemaphorePermit>>,
    pool: Arc<Semaphore>,
    /// Told when a newer connection needs this one's place.
    evict: Notify,
}

impl ConnBudget {
    /// The connection showed the token: it moves to the authenticated budget
    /// (when that is full it keeps its unauthenticated place).
    pub fn promote(&self) {
        let place = &self.0;
        let mut auth = lock(&place.authenticated);
        if auth.is_some() {
            return;
        }
        if let Ok(permit) = place.pool.clone().try_acquire_owned() {
            *auth = Some(permit);
            lock(&place.unauthenticated).take();
        }
    }

    fn is_unauthenticated(&self) -> bool {
        lock(&self.0.unauthenticated).is_some()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The unauthenticated budget: its permits and its connections, oldest first.
struct Unauthenticated {
    permits: Arc<Semaphore>,
    queue: VecDeque<Weak<Place>>,
}

impl Unauthenticated {
    /// Drops the connections gone or promoted (entries are weak: a closed
    /// connection leaves only its entry behind).
    fn prune(&mut self) {
        self.queue.retain(|w| {
            w.upgrade()
                .is_some_and(|p| ConnBudget(p).is_unauthenticated())
        });
    }

    /// A place for a new connection: a free permit, else the permit of the
    /// oldest unauthenticated connection, which is told to close. Taken, not
    /// waited for: the newcomer never depends on how fast the old one goes.
    fn admit(&mut self) -> Option<OwnedSemaphorePermit> {
        // Promoted and closed connections leave entries behind: keep the queue bounded.
        if self.queue.len() > 1024 {
            self.prune();
        }
        if let Ok(p) = self.permits.clone().try_acquire_owned() {
            return Some(p);
        }
        while let Some(oldest) = self.queue.pop_front() {
            let Some(oldest) = oldest.upgrade() else {
                continue;
            };
            // `None`: promoted since it was queued.
            if let Some(permit) = lock(&oldest.unauthenticated).take() {
                oldest.evict.notify_one();
                return Some(permit);
            }
        }
        None
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
    let authenticated = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let mut unauthenticated = Unauthenticated {
        permits: Arc::new(Semaphore::new(limits.max_unauthenticated.max(1))),
        queue: VecDeque::new(),
    };
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
        let Some(permit) = unauthenticated.admit() else {
            drop(stream);
            continue;
        };
        let place = Arc::new(Place {
            unauthenticated: Mutex::new(Some(permit)),
            authenticated: Mutex::new(None),
            pool: authenticated.clone(),
            evict: Notify::new(),
        });
        unauthenticated.queue.push_back(Arc::downgrade(&place));
        let local = stream.local_addr().unwrap_or(local);
        let service = TowerToHyperService::new(
            app.clone()
                .layer(axum::Extension(ConnAddrs { local, peer }))
                .layer(axum::Extension(ConnBudget(place.clone()))),
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
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                // A newer connection needs the place; an authenticated one ignores this.
                () = evicted(&place) => {}
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

/// Resolves when the connection's place was given to a newer one (ignored
/// when it showed the token in the meantime).
async fn evicted(place: &Arc<Place>) {
    loop {
        place.evict.notified().await;
        if lock(&place.authenticated).is_none() {
            return;
        }
    }
}
