//! `studyloop-mcp --http ADDR`: the same server over MCP's Streamable HTTP
//! transport (rmcp's own `StreamableHttpService`, sessions in memory), for
//! clients and test suites that speak HTTP only (the official conformance
//! suite). Harnesses keep stdio; this is a second door to the same handler.
//!
//! Loopback only, and the console's rules for who may talk to it
//! (`studyloop::web::guard::HostPolicy`, without `--lan`): `Host` must be
//! `127.0.0.1`, `localhost` or `[::1]` with the bound port (`421` otherwise:
//! a page on a rebound domain sends its own name), and an `Origin`, when a
//! browser sends one, must be this server's own (`403`, as the MCP transport
//! chapter says). rmcp's own loopback `Host` list stays on behind it.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use studyloop::context::Ctx;
use studyloop::web::guard::HostPolicy;

use crate::server::StudyLoopMcp;

/// The path the endpoint is served at.
pub const ENDPOINT: &str = "/mcp";

/// `--http`'s value that cannot be served, with the fix.
#[derive(Debug, thiserror::Error)]
pub enum HttpArgError {
    /// Not `IP:PORT`.
    #[error(
        "--http `{0}` is not an address; pass IP:PORT, e.g. --http 127.0.0.1:8765 (port 0: any free port)"
    )]
    NotAnAddress(String),
    /// An address other machines could reach.
    #[error(
        "--http `{0}` is not a loopback address; studyloop-mcp serves HTTP on 127.0.0.1 or [::1] only"
    )]
    NotLoopback(SocketAddr),
}

/// Parse `--http`'s value: a loopback `IP:PORT`.
///
/// # Errors
/// Not an address, or not loopback.
pub fn parse_addr(value: &str) -> Result<SocketAddr, HttpArgError> {
    let addr: SocketAddr = value
        .parse()
        .map_err(|_| HttpArgError::NotAnAddress(value.chars().take(80).collect()))?;
    if addr.ip().is_loopback() {
        Ok(addr)
    } else {
        Err(HttpArgError::NotLoopback(addr))
    }
}

/// A JSON-RPC error without an id, as the transport chapter allows in a refusal's body.
fn refuse(status: StatusCode, message: String) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": message}});
    (status, axum::Json(body)).into_response()
}

fn header_str(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The module doc's `Host` and `Origin` rules, before rmcp sees the request.
async fn guard(local: SocketAddr, request: Request, next: Next) -> Response {
    let policy = HostPolicy::default();
    let headers = request.headers();
    let host = header_str(headers, header::HOST);
    if !host.is_some_and(|h| policy.host_allowed(h, local)) {
        return refuse(
            StatusCode::MISDIRECTED_REQUEST,
            format!(
                "Host {:?} is not a name of this server; use one of {}",
                host.unwrap_or("").chars().take(80).collect::<String>(),
                policy.own_origins(local).join(", ")
            ),
        );
    }
    if let Some(origin) = header_str(headers, header::ORIGIN)
        && !policy.origin_allowed(origin, local)
    {
        return refuse(
            StatusCode::FORBIDDEN,
            format!(
                "Origin {:?} is not this server's; a page may call it only from {}",
                origin.chars().take(80).collect::<String>(),
                policy.own_origins(local).join(", ")
            ),
        );
    }
    next.run(request).await
}

/// Serve on `addr` until the process is stopped; the first stdout line is the endpoint URL.
///
/// # Errors
/// Binding the address, a schema that does not compile, or the server's failure.
pub async fn serve_http(ctx: Ctx, addr: SocketAddr) -> Result<(), Box<dyn std::error::Error>> {
    let server = StudyLoopMcp::new(ctx)?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let local = listener.local_addr()?;
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let app =
        axum::Router::new()
            .route_service(ENDPOINT, service)
            .layer(axum::middleware::from_fn(
                move |req: Request, next: Next| guard(local, req, next),
            ));
    // The one line a launcher reads to find the port it asked the OS to pick.
    println!("http://{local}{ENDPOINT}");
    axum::serve(listener, app).await?;
    Ok(())
}
