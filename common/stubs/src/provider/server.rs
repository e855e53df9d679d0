//! The server lifecycle: bind 127.0.0.1, announce the port (stdout line and an
//! atomically written port file), serve until SIGTERM/SIGINT, then give
//! in-flight requests a short grace period.

use std::io;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;

use super::http::{App, handle};
use super::{ProviderConfig, ProviderError};
use crate::log::RequestLog;

/// Claude Code sends ~100 KB bodies and grows with history; axum's 2 MB default
/// would turn long sessions into 413s.
const BODY_LIMIT: usize = 64 << 20;

/// How long in-flight requests (a stalled one, a slow stream) may run after a
/// shutdown signal before the process exits anyway.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Binds, announces the port (stdout line and `--port-file`), and serves until
/// SIGTERM or SIGINT; in-flight requests get a short grace period.
pub fn run(config: ProviderConfig) -> Result<(), ProviderError> {
    config.validate()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(ProviderError::Serve)?;
    runtime.block_on(serve(config))
}

/// The server's whole life, on the runtime [`run`] built.
async fn serve(config: ProviderConfig) -> Result<(), ProviderError> {
    let log = config.log.as_deref().map(RequestLog::open).transpose()?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", config.port))
        .await
        .map_err(|source| ProviderError::Bind {
            port: config.port,
            source,
        })?;
    let port = listener.local_addr().map_err(ProviderError::Serve)?.port();
    if let Some(path) = &config.port_file {
        write_port_file(path, port).map_err(|source| ProviderError::PortFile {
            path: path.clone(),
            source,
        })?;
    }
    let app = Arc::new(App {
        config,
        log,
        seq: AtomicU64::new(0),
        model_requests: AtomicU64::new(0),
    });
    let router = Router::new()
        .fallback(handle)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(app);
    println!("studyloop-stub-provider listening on http://127.0.0.1:{port}");
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(async {
                let _ = stop_rx.await;
            })
            .await
    });
    shutdown_signal().await.map_err(ProviderError::Serve)?;
    let _ = stop_tx.send(());
    match tokio::time::timeout(SHUTDOWN_GRACE, server).await {
        Ok(Ok(result)) => result.map_err(ProviderError::Serve),
        // A panicked server task or an expired grace period: exit anyway; the
        // runtime drop cancels what is left.
        Ok(Err(_)) | Err(_) => Ok(()),
    }
}

async fn shutdown_signal() -> io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    Ok(())
}

/// Temp file in the same directory, then rename: a reader never sees a partial port.
fn write_port_file(path: &std::path::Path, port: u16) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other("the path has no file name"))?;
    let tmp = path.with_file_name(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    let written = file
        .write_all(format!("{port}\n").as_bytes())
        .and_then(|()| file.sync_all());
    let renamed = written.and_then(|()| std::fs::rename(&tmp, path));
    if renamed.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    renamed
}
