//! The `studyloop web` command: resolve the options, bind, print the URL,
//! serve until Ctrl-C or SIGTERM, and end the live session on the way out.
//!
//! Loopback by default. `--lan` binds every interface and therefore requires
//! a password (`--password` or `STUDYLOOP_WEB_PASSWORD`); without one it
//! refuses to start rather than expose an agent console unauthenticated.
//! `--lan` is plain HTTP (no TLS): the password and the session cross the LAN
//! in cleartext, which the command says when it starts. The names the server
//! answers to (see `guard`) are loopback, plus with `--lan` the machine's
//! hostname, `<hostname>.local` and `STUDYLOOP_WEB_HOSTS`.

use std::io::Write as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use super::guard::{self, HostPolicy};
use super::security::Password;
use super::server::{AppState, router, serve};
use super::slot::LiveInfo;
use super::slot::{EndHook, Slot};
use super::token::{self, TokenFile};
use crate::context::Ctx;
use crate::env;
use crate::session::{self, EndOutcome};

/// The default port.
pub const DEFAULT_PORT: u16 = 8567;

/// `studyloop web` options.
#[derive(Debug, Clone)]
pub struct WebOptions {
    /// Port (0 = any free port).
    pub port: u16,
    /// Bind every interface (needs a password).
    pub lan: bool,
    /// The password (falls back to `STUDYLOOP_WEB_PASSWORD`).
    pub password: Option<String>,
}

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// `--lan` without a password.
    #[error(
        "--lan exposes the console to the network and needs a password; pass --password P or set STUDYLOOP_WEB_PASSWORD"
    )]
    LanNeedsPassword,
    /// An environment variable.
    #[error(transparent)]
    Env(#[from] crate::env::EnvError),
    /// Binding the port failed.
    #[error("cannot listen on {addr}: {source}; is another server using the port? try --port 0")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The OS error.
        source: std::io::Error,
    },
    /// A `STUDYLOOP_WEB_HOSTS` entry that is not a bare host name.
    #[error(
        "STUDYLOOP_WEB_HOSTS entry {0:?} is not a bare host name or IP; list names such as studybox.local,192.168.1.9 (no scheme, port or path)"
    )]
    BadHostName(String),
    /// The session directory (where the token file goes) cannot be resolved.
    #[error(transparent)]
    Settings(#[from] crate::settings::SettingsError),
    /// The token file could not be written.
    #[error(
        "cannot write the console token file {path}: {source}; check the permissions of its directory (STUDYLOOP_SESSION_DIR or ~/.config/studyloop)"
    )]
    TokenFile {
        /// The file.
        path: std::path::PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The runtime or the server failed.
    #[error("the web server failed: {0}")]
    Serve(#[source] std::io::Error),
}

/// Runs the server in the foreground.
///
/// # Errors
/// [`WebError`] for bad options, a busy port or a server failure.
pub fn run(ctx: Ctx, opts: &WebOptions) -> Result<(), WebError> {
    let password = match &opts.password {
        Some(p) if !p.is_empty() => Some(p.clone()),
        _ => ctx
            .env
            .get_nonempty(env::STUDYLOOP_WEB_PASSWORD)?
            .map(str::to_owned),
    };
    if opts.lan && password.is_none() {
        return Err(WebError::LanNeedsPassword);
    }
    let hosts = HostPolicy {
        lan: opts.lan,
        names: if opts.lan {
            lan_names(guard::parse_list(
                ctx.env.get_nonempty(env::STUDYLOOP_WEB_HOSTS)?,
            ))?
        } else {
            Vec::new()
        },
        extra_origins: guard::parse_list(ctx.env.get_nonempty(env::STUDYLOOP_ALLOWED_ORIGINS)?),
    };
    let ip = if opts.lan {
        IpAddr::V4(Ipv4Addr::UNSPECIFIED)
    } else {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    };
    let addr = SocketAddr::new(ip, opts.port);
    let session_dir = crate::settings::session_paths(&ctx.env)?.dir;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(WebError::Serve)?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| WebError::Bind { addr, source })?;
        let port = listener.local_addr().map_err(WebError::Serve)?.port();
        let state = build_state(ctx, port, hosts);
        // Removed when this scope ends: the server stopped (or failed).
        let token_file = TokenFile::write(&session_dir, port, &state.token).map_err(|source| {
            WebError::TokenFile {
                path: token::token_file(&session_dir, port),
                source,
            }
        })?;
        let app = router(state.clone(), Password(password));
        let shown = if opts.lan { "0.0.0.0" } else { "127.0.0.1" };
        // The acceptance lane and humans both read this line; the token in it
        // is what the page trades for its cookie (`token`).
        println!(
            "studyloop web listening on http://{shown}:{port}/?token={}",
            state.token.value()
        );
        // Not stdout: a reader that takes only the first line may close it.
        let _ = writeln!(
            std::io::stderr(),
            "studyloop web: other local clients send the X-StudyLoop-Token header from {}",
            token_file.path().display()
        );
        if opts.lan {
            eprintln!(
                "studyloop web: --lan serves plain HTTP (no TLS): the password and the session \
                 cross the network unencrypted; use it only on a network you trust"
            );
        }
        let served = serve(listener, app, state, shutdown_signal())
            .await
            .map_err(WebError::Serve);
        drop(token_file);
        served
    })
}

/// The server state: the slot ends sessions through the product's end path.
#[must_use]
pub fn build_state(ctx: Ctx, port: u16, hosts: HostPolicy) -> Arc<AppState> {
    let mut state = AppState::new(ctx.clone(), Slot::new(end_hook(ctx)), Vec::new());
    state.port = Some(port);
    state.hosts = hosts;
    Arc::new(state)
}

/// The `--lan` names: the configured ones (validated, lowercased), the
/// machine's hostname and `<hostname>.local`.
fn lan_names(configured: Vec<String>) -> Result<Vec<String>, WebError> {
    let mut names = Vec::new();
    for name in configured {
        let bare = name
            .strip_prefix('[')
            .map_or(name.as_str(), |n| n.trim_end_matches(']'));
        let ok = if name.starts_with('[') {
            bare.parse::<std::net::Ipv6Addr>().is_ok()
        } else {
            bare.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        };
        if !ok || bare.is_empty() {
            return Err(WebError::BadHostName(name));
        }
        names.push(name.to_ascii_lowercase());
    }
    if let Ok(host) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        let host = host.trim().to_ascii_lowercase();
        if !host.is_empty() {
            names.push(format!("{host}.local"));
            names.push(host);
        }
    }
    Ok(names)
}

/// The product's common end path for a web session that is still current.
fn end_hook(ctx: Ctx) -> EndHook {
    Arc::new(move |info: &LiveInfo, _why: &str| {
        match session::end_if_current(&ctx, &info.study_session_id)? {
            EndOutcome::Ended(_) | EndOutcome::NothingActive => Ok(()),
        }
    })
}

async fn shutdown_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lan_names_take_bare_names_and_ips_and_refuse_the_rest() {
        let names = lan_names(vec![
            "StudyBox.lan".into(),
            "192.168.1.9".into(),
            "[fe80::1]".into(),
        ])
        .expect("valid");
        assert!(names.starts_with(&[
            "studybox.lan".into(),
            "192.168.1.9".into(),
            "[fe80::1]".into()
        ]));
        for bad in [
            "http://studybox.lan",
            "studybox.lan:8567",
            "a/b",
            "[nope]",
            "evil .lan",
        ] {
            let err = lan_names(vec![bad.into()]).expect_err(bad).to_string();
            assert!(
                err.contains(bad) && err.contains("STUDYLOOP_WEB_HOSTS"),
                "{err}"
            );
        }
    }
}
