//! The model side of `probe::pi::certify` (`certify_drill`): a real LiteLLM proxy in
//! the cell's world forwarding one alias to the cell's stub provider (its master key
//! enforced by a custom-auth hook, so a wrong key is a real 401), or, in local-model
//! mode, the proxy `actors/local-model/run.sh` already runs. The stub and the proxy
//! run in the world's env minus every credential-shaped variable (that env is the
//! owner's real one), so only the proxy's own master-key setting reaches it.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use studyloop_stubs::StubProvider;

use crate::bins;
use crate::caller_env::CallerEnv;
use crate::case::{Case, StepFailure};
use crate::scratch::{Env, is_denied};

/// The alias the proxy serves the stub under.
pub(crate) const STUB_ALIAS: &str = "certify-stub";
/// The local model's learner alias (`actors/local-model/run.sh`).
pub(crate) const LOCAL_ALIAS: &str = "local-learner";
/// Cold start is 13–18 s on a quiet 2-core machine, up to ~75 s contended.
pub(crate) const PROXY_START: Duration = Duration::from_secs(180);

pub(crate) fn litellm() -> PathBuf {
    bins::workspace_root().join(".venv-litellm/bin/litellm")
}

/// The proxy this trial talks to.
pub(crate) struct Proxy {
    pub(crate) base_url: String,
    pub(crate) alias: &'static str,
    /// Ours to stop (`None`: `run.sh`'s local-model proxy).
    pub(crate) child: Option<Child>,
}

/// The local-model proxy `run.sh` started (its URL; the key is the caller's).
pub(crate) fn local_proxy(caller: &CallerEnv) -> Result<Proxy, StepFailure> {
    let base_url = caller
        .var_os("LITELLM_BASE_URL")
        .and_then(|v| v.to_str())
        .map(|v| v.trim_end_matches('/').trim_end_matches("/v1").to_owned())
        .ok_or_else(|| {
            StepFailure::skipped(
                "local-model mode without LITELLM_BASE_URL: run it through `just testacc pi` (actors/local-model/run.sh)",
            )
        })?;
    Ok(Proxy {
        base_url,
        alias: LOCAL_ALIAS,
        child: None,
    })
}

/// The stub provider and a LiteLLM proxy forwarding [`STUB_ALIAS`] to it, both in the
/// world (so its close stops them), neither given the owner's credentials.
pub(crate) fn stub_proxy(c: &mut Case<'_>, secret: &str) -> Result<Proxy, StepFailure> {
    let scratch = c.scratch()?;
    let stub_bin = bins::path("studyloop-stub-provider").map_err(StepFailure::from_error)?;
    let mut cmd = scratch.command(&stub_bin);
    drop_credentials(&mut cmd, &c.env);
    let seed = c.seed.to_string();
    let stub = StubProvider::spawn_command(
        cmd,
        &scratch.root().join("stub"),
        ["--seed", seed.as_str(), "--replies", "realistic"],
    )
    .map_err(StepFailure::from_error)?;
    if let Some(pid) = stub.pid() {
        scratch.adopt_group(pid);
    }
    let stub_url = stub.base_url();
    c.slots.put_stub(stub);
    let scratch = c.scratch()?;
    let dir = scratch.root().join("litellm");
    crate::private_fs::create_dir(&dir).map_err(StepFailure::from_error)?;
    write_proxy_config(&dir, &stub_url).map_err(StepFailure::from_error)?;
    let port = std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(StepFailure::from_error)?;
    let log = std::fs::File::create(dir.join("proxy.log")).map_err(StepFailure::from_error)?;
    let mut cmd = scratch.command(litellm());
    drop_credentials(&mut cmd, &c.env);
    cmd.args([
        "--config",
        "config.yaml",
        "--host",
        "127.0.0.1",
        "--port",
        &port.to_string(),
    ])
    .current_dir(&dir)
    // The proxy's own setting: the key it checks clients against.
    .env("LITELLM_MASTER_KEY", secret)
    // No remote model-cost-map fetch (no internet here).
    .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    .stdin(Stdio::null())
    .stdout(log.try_clone().map_err(StepFailure::from_error)?)
    .stderr(log);
    let child = scratch.spawn(&mut cmd).map_err(StepFailure::from_error)?;
    let mut proxy = Proxy {
        base_url: format!("http://127.0.0.1:{port}"),
        alias: STUB_ALIAS,
        child: Some(child),
    };
    let started = Instant::now();
    while !healthy(port) {
        let exited = proxy
            .child
            .as_mut()
            .and_then(|ch| ch.try_wait().ok().flatten());
        if exited.is_some() || started.elapsed() > PROXY_START {
            let tail = std::fs::read_to_string(dir.join("proxy.log")).unwrap_or_default();
            let tail: Vec<&str> = tail.lines().rev().take(12).collect();
            if let Some(ch) = proxy.child.as_mut() {
                stop(ch);
            }
            return Err(StepFailure::errored(format!(
                "the LiteLLM proxy was not ready ({}): {}",
                exited.map_or_else(
                    || format!("{PROXY_START:?} passed"),
                    |s| format!("exited {s}")
                ),
                tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
            )));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    c.record.notes.push(format!(
        "LiteLLM proxy ready in {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    Ok(proxy)
}

/// Removes every credential-shaped variable of `env` from `cmd` (the scratch env is
/// the owner's real one: the stub and the proxy have no use for their keys).
fn drop_credentials(cmd: &mut std::process::Command, env: &Env) {
    for (name, _) in env.iter() {
        if is_denied(name) {
            cmd.env_remove(name);
        }
    }
}

fn write_proxy_config(dir: &Path, stub_url: &str) -> std::io::Result<()> {
    let config = format!(
        "model_list:\n  - model_name: {STUB_ALIAS}\n    litellm_params: {{model: openai/stub-model, api_base: \"{stub_url}/v1\", api_key: sk-stub-upstream}}\n\
         litellm_settings:\n  telemetry: false\n  drop_params: true\n  num_retries: 0\n  request_timeout: 60\n\
         general_settings:\n  master_key: os.environ/LITELLM_MASTER_KEY\n  custom_auth: custom_auth.user_api_key_auth\n"
    );
    // Without a database LiteLLM answers a wrong key with 400; this hook makes it
    // the 401 a client (and the probe's not-logged-in reading) expects.
    let auth = "import hmac, os\nfrom fastapi import Request\nfrom litellm.proxy._types import UserAPIKeyAuth\n\n\n\
async def user_api_key_auth(request: Request, api_key: str) -> UserAPIKeyAuth:\n    expected = os.environ['LITELLM_MASTER_KEY']\n    if api_key and hmac.compare_digest(api_key, expected):\n        return UserAPIKeyAuth(api_key=api_key)\n    raise Exception('invalid api key')\n";
    std::fs::write(dir.join("config.yaml"), config)?;
    std::fs::write(dir.join("custom_auth.py"), auth)
}

/// `GET /health/liveliness` answered 200.
fn healthy(port: u16) -> bool {
    let Ok(mut s) = std::net::TcpStream::connect_timeout(
        &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Duration::from_secs(1),
    ) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let mut head = [0u8; 16];
    s.write_all(b"GET /health/liveliness HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_ok()
        && s.read(&mut head).is_ok_and(|n| {
            head[..n].starts_with(b"HTTP/1.1 200") || head[..n].starts_with(b"HTTP/1.0 200")
        })
}

/// SIGTERM the child's group, 5 s, then SIGKILL; always reaped.
pub(crate) fn stop(child: &mut Child) {
    let group = rustix::process::Pid::from_child(child);
    let _ = rustix::process::kill_process_group(group, rustix::process::Signal::TERM);
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    let _ = child.wait();
}
