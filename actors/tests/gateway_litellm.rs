//! The gateway actor against a REAL LiteLLM proxy from PyPI (installed by
//! `just deps` into `.venv-litellm/`): a `mock_response` alias, an alias
//! forwarded (`api_base`) to the stub provider, a master key enforced by a
//! custom auth hook (so a wrong key is a 401), and an unknown alias (an error,
//! never a skip), and a conversation through the proxy recorded into a cassette and
//! replayed with the proxy and the stub gone. One trial, because the proxy takes
//! 13–18 s to start cold.
//!
//! Without the venv the trial is ignored and the reason (run `just deps`) is
//! printed; CI always installs it.

#[path = "it/common/mod.rs"]
mod common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use libtest_mimic::{Arguments, Failed, Trial};
use studyloop_actors::fake::FakeMentor;
use studyloop_actors::gateway::GatewaySettings;
use studyloop_actors::llm::cassette::{
    CASSETTE_FILE_NAME, Cassette, CassetteMode, CassetteSetting,
};
use studyloop_actors::llm_actor::{LlmActor, LlmActorOptions};
use studyloop_actors::{Actor, ActorKind, Budget, CancelToken, Outcome, Transcript};
use studyloop_stubs::Protocol;

const TRIAL: &str = "gateway_litellm::real_proxy_mock_forwarded_wrong_key_unknown_alias";
const MASTER_KEY: &str = "sk-studyloop-test-master";
const UPSTREAM_KEY: &str = "sk-studyloop-upstream";
const MOCK_TEXT: &str = "Hello from the LiteLLM mock model.";
const LEARNER: [&str; 3] = [
    "What does a borrow mean?",
    "And a mutable one?",
    "Thanks, one more question.",
];
/// Cold start is 13–18 s on a quiet 2-core machine and up to ~75 s contended.
const START_TIMEOUT: Duration = Duration::from_secs(180);

fn litellm_bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv-litellm/bin/litellm")
}

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let bin = litellm_bin();
    let trial = if bin.exists() {
        Trial::test(TRIAL, move || real_proxy(&bin))
    } else {
        eprintln!(
            "{TRIAL}: SKIPPED: {} not found; run `just deps` to install the LiteLLM proxy",
            bin.display()
        );
        Trial::test(TRIAL, || Ok(())).with_ignored_flag(true)
    };
    libtest_mimic::run(&args, vec![trial]).exit_code()
}

/// The proxy child in its own process group, stopped (TERM, then KILL) on drop.
struct Proxy {
    child: Child,
    log: PathBuf,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let group = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::TERM);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        let _ = self.child.wait();
    }
}

impl Proxy {
    fn tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(15)..].join("\n")
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn write_config(dir: &Path, stub_base: &str) {
    let config = format!(
        "model_list:
  - model_name: studyloop-mock
    litellm_params: {{model: openai/mock-gpt, api_key: not-used, mock_response: \"{MOCK_TEXT}\"}}
  - model_name: studyloop-stub
    litellm_params: {{model: openai/stub-model, api_base: \"{stub_base}/v1\", api_key: {UPSTREAM_KEY}}}
litellm_settings:
  telemetry: false
  drop_params: true
  num_retries: 0
  request_timeout: 30
general_settings:
  master_key: os.environ/LITELLM_MASTER_KEY
  custom_auth: custom_auth.user_api_key_auth
"
    );
    // Without a database LiteLLM answers a wrong key with 400 `no_db_connection`;
    // this hook (plus the `prisma` package) makes it the 401 a client expects.
    let auth = "import hmac, os
from fastapi import Request
from litellm.proxy._types import UserAPIKeyAuth


async def user_api_key_auth(request: Request, api_key: str) -> UserAPIKeyAuth:
    expected = os.environ['LITELLM_MASTER_KEY']
    if api_key and hmac.compare_digest(api_key, expected):
        return UserAPIKeyAuth(api_key=api_key)
    raise Exception('invalid api key')
";
    std::fs::write(dir.join("config.yaml"), config).expect("write config");
    std::fs::write(dir.join("custom_auth.py"), auth).expect("write custom_auth.py");
}

fn start_proxy(bin: &Path, dir: &Path, port: u16) -> Result<Proxy, Failed> {
    let log = dir.join("proxy.log");
    let out = std::fs::File::create(&log).map_err(|e| format!("proxy log: {e}"))?;
    let err = out.try_clone().map_err(|e| format!("proxy log: {e}"))?;
    let home = dir.join("home");
    std::fs::create_dir_all(&home).map_err(|e| format!("proxy home: {e}"))?;
    let child = Command::new(bin)
        .args([
            "--config",
            "config.yaml",
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ])
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", &home)
        .env("LITELLM_MASTER_KEY", MASTER_KEY)
        // Skip the remote model-cost-map fetch at import (no internet here).
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
    let mut proxy = Proxy { child, log };
    let health = format!("http://127.0.0.1:{port}/health/liveliness");
    let started = Instant::now();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(2)))
        .proxy(None)
        .build()
        .into();
    loop {
        if agent.get(&health).call().is_ok_and(|r| r.status() == 200) {
            eprintln!(
                "{TRIAL}: LiteLLM proxy ready in {:.1} s",
                started.elapsed().as_secs_f64()
            );
            return Ok(proxy);
        }
        if let Ok(Some(status)) = proxy.child.try_wait() {
            return Err(format!(
                "the LiteLLM proxy exited ({status}) before it was ready:\n{}",
                proxy.tail()
            )
            .into());
        }
        if started.elapsed() > START_TIMEOUT {
            return Err(format!(
                "the LiteLLM proxy was not ready within {START_TIMEOUT:?}:\n{}",
                proxy.tail()
            )
            .into());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn gateway(port: u16, key: &str, model: &str) -> LlmActor {
    let base = format!("http://127.0.0.1:{port}");
    let env: &[(&str, &str)] = &[
        ("LITELLM_BASE_URL", &base),
        ("LITELLM_API_KEY", key),
        ("STUDYLOOP_ACC_GATEWAY_MODEL", model),
    ];
    assert_eq!(
        studyloop_actors::available(ActorKind::Gateway, env).expect("well-formed"),
        Ok(())
    );
    LlmActor::gateway(
        &GatewaySettings::from_env(env).expect("settings"),
        LlmActorOptions::default(),
    )
    .expect("actor")
}

fn cassette(mode: CassetteMode, file: &Path) -> Result<Cassette, Failed> {
    let setting = CassetteSetting {
        mode,
        file: Some(file.to_owned()),
    };
    Cassette::open(&setting, None).map_err(|e| e.to_string().into())
}

fn talk(actor: &mut LlmActor, turns: u32) -> Transcript {
    actor.converse(
        &mut FakeMentor::echo(),
        &mut Budget::new(turns, None).expect("budget"),
        &CancelToken::new(),
    )
}

fn real_proxy(bin: &Path) -> Result<(), Failed> {
    let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let roles = dir.path().join("roles.json");
    std::fs::write(
        &roles,
        serde_json::json!({"version": 1, "learner": LEARNER}).to_string(),
    )
    .map_err(|e| e.to_string())?;
    let stub = common::stub(
        &dir.path().join("stub"),
        &[
            "--api-key",
            UPSTREAM_KEY,
            "--role",
            "learner",
            "--script",
            roles.to_str().unwrap_or_default(),
        ],
    );
    write_config(dir.path(), &stub.base_url());
    let port = free_port();
    let proxy = start_proxy(bin, dir.path(), port)?;
    let mut failures = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            failures.push(what);
        }
    };

    let t = talk(&mut gateway(port, MASTER_KEY, "studyloop-mock"), 2);
    check(
        t.outcome == Outcome::BudgetExhausted && t.turns.len() == 2,
        format!("mock alias: {t:?}"),
    );
    for turn in &t.turns {
        check(
            turn.learner == MOCK_TEXT,
            format!("mock alias text: {:?}", turn.learner),
        );
        // The mock's non-stream usage is fixed, not counted: assert it is known and positive.
        let known = turn.usage.input_tokens.is_some_and(|n| n > 0)
            && turn.usage.output_tokens.is_some_and(|n| n > 0);
        check(known, format!("mock alias usage: {:?}", turn.usage));
    }

    let t = talk(&mut gateway(port, MASTER_KEY, "studyloop-stub"), 3);
    let said: Vec<&str> = t.turns.iter().map(|turn| turn.learner.as_str()).collect();
    check(
        t.outcome == Outcome::BudgetExhausted && said == LEARNER,
        format!("forwarded alias: {t:?}"),
    );
    let all = stub.records().map_err(|e| format!("stub log: {e}"))?;
    // LiteLLM also probes each api_base on its own (e.g. a model listing); only
    // chat requests carry the conversation.
    let records: Vec<_> = all
        .iter()
        .filter(|r| r.protocol == Protocol::ChatCompletions)
        .collect();
    let others: Vec<String> = all
        .iter()
        .filter(|r| r.protocol != Protocol::ChatCompletions)
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    eprintln!("{TRIAL}: other requests LiteLLM sent upstream: {others:?}");
    check(
        records.len() == 3,
        format!("the stub saw {} chat requests, expected 3", records.len()),
    );
    for (turn, record) in t.turns.iter().zip(records) {
        check(
            record.model.as_deref() == Some("stub-model"),
            format!("upstream model: {:?}", record.model),
        );
        let passed_through = turn.usage.input_tokens == record.usage.input_tokens
            && turn.usage.output_tokens == record.usage.output_tokens;
        check(
            passed_through,
            format!("usage {:?} != the stub's {:?}", turn.usage, record.usage),
        );
    }

    // The same conversation recorded into a cassette through the real proxy; it is
    // replayed below, once the proxy and the stub are gone.
    let cassette_file = dir.path().join("run").join(CASSETTE_FILE_NAME);
    let recorder = cassette(CassetteMode::Record, &cassette_file)?;
    let started = Instant::now();
    let recorded = talk(
        &mut gateway(port, MASTER_KEY, "studyloop-stub").with_cassette(Some(recorder.tap(TRIAL))),
        3,
    );
    let live_ms = started.elapsed().as_millis();
    drop(recorder);

    let t = talk(&mut gateway(port, "sk-wrong", "studyloop-mock"), 2);
    let error = t.error.clone().unwrap_or_default();
    check(
        t.outcome == Outcome::Errored && t.turns.is_empty() && error.contains("HTTP 401"),
        format!("wrong key: {t:?}"),
    );
    check(
        !error.contains("sk-wrong"),
        "the key leaked into the error".to_owned(),
    );

    let t = talk(&mut gateway(port, MASTER_KEY, "no-such-alias"), 2);
    let error = t.error.clone().unwrap_or_default();
    let rejected = error.contains("HTTP 400") && error.contains("Invalid model name");
    check(
        t.outcome == Outcome::Errored && rejected,
        format!("unknown alias: {t:?}"),
    );

    let tail = proxy.tail();
    drop(proxy);
    drop(stub);
    // Replay with the proxy and the stub gone (the port is closed): the same turns
    // and usage from the cassette alone; the keys never entered it.
    let replayer = cassette(CassetteMode::Replay, &cassette_file)?;
    let started = Instant::now();
    let replayed = talk(
        &mut gateway(port, MASTER_KEY, "studyloop-stub").with_cassette(Some(replayer.tap(TRIAL))),
        3,
    );
    let replay_ms = started.elapsed().as_millis();
    check(
        recorded.turns.len() == 3 && replayed.turns.len() == 3,
        format!("cassette round trip: recorded {recorded:?}, replayed {replayed:?}"),
    );
    for (r, p) in recorded.turns.iter().zip(&replayed.turns) {
        check(
            r.learner == p.learner && r.usage == p.usage && r.mentor_reply == p.mentor_reply,
            format!("replayed turn {p:?} differs from recorded {r:?}"),
        );
    }
    let text = std::fs::read_to_string(&cassette_file).unwrap_or_default();
    check(
        !text.contains(MASTER_KEY) && !text.contains(UPSTREAM_KEY),
        "a key entered the cassette".to_owned(),
    );
    eprintln!(
        "{TRIAL}: cassette {} bytes; 3 turns live through the proxy {live_ms} ms, replayed {replay_ms} ms",
        text.len()
    );
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\n--- proxy log tail ---\n{tail}", failures.join("\n")).into())
    }
}
