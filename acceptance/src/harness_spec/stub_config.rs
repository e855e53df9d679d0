//! Per-harness offline configuration pointing a harness at the cell's stub
//! provider: the exact recipes verified in `shared/reference/harness-offline-*`
//! (no first-run dialog, no daemon, no update check, no telemetry, loopback
//! only), as data: files relative to the scratch HOME plus environment.
//!
//! Pure functions, unit-tested for the files and env they produce; writing them
//! (and generating codex's model catalog) is `super::provision`'s job. The stub
//! key is a fixed fake (`sk-stub-local`), never a real credential.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::json;

/// Model id every harness is configured with; the stub answers any model.
pub(crate) const STUB_MODEL: &str = "stub-model";
/// The fake key harnesses send to the stub (it checks none unless told to).
pub(crate) const STUB_KEY: &str = "sk-stub-local";
/// Where codex's one-model catalog goes, relative to HOME.
pub(crate) const CODEX_CATALOG: &str = ".codex/stub-model-catalog.json";

/// Where the stub is and where the harness's HOME is.
#[derive(Debug, Clone)]
pub struct StubTarget {
    /// `http://127.0.0.1:<port>` (no trailing slash, no `/v1`).
    pub base_url: String,
    /// The scratch HOME (absolute).
    pub home: PathBuf,
}

/// One file to write, relative to HOME.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConfigFile {
    /// Path under HOME.
    pub path: PathBuf,
    /// Full contents.
    pub contents: String,
}

/// What a harness needs to talk to the stub.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct StubConfig {
    /// Files under HOME.
    pub files: Vec<ConfigFile>,
    /// Variables added to the scratch env.
    pub env: Vec<(&'static str, String)>,
}

fn file(path: &str, contents: String) -> ConfigFile {
    ConfigFile {
        path: PathBuf::from(path),
        contents,
    }
}

/// `value` as 2-space-indented JSON with a trailing newline (`Value`'s alternate
/// `Display`, the same bytes as `to_string_pretty`, and infallible: no empty config).
fn pretty(value: &serde_json::Value) -> String {
    format!("{value:#}\n")
}

/// A TOML basic string (quotes, backslashes and controls escaped).
pub(crate) fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// codex 0.171: a custom Responses-API provider (no login, no WebSocket), the
/// daemon and plugins off (no persistent app-server, no `git ls-remote`), full
/// access (no bubblewrap warning), and a one-model catalog (no metadata warning).
pub fn codex(t: &StubTarget) -> StubConfig {
    let catalog = t.home.join(CODEX_CATALOG);
    let config = format!(
        "model = {model}\n\
         model_provider = \"stub\"\n\
         model_catalog_json = {catalog}\n\
         approval_policy = \"never\"\n\
         sandbox_mode = \"danger-full-access\"\n\
         check_for_update_on_startup = false\n\
         \n\
         [features]\n\
         daemon_auto_start = false\n\
         plugins = false\n\
         \n\
         [model_providers.stub]\n\
         name = \"Stub\"\n\
         base_url = {url}\n\
         wire_api = \"responses\"\n",
        model = toml_string(STUB_MODEL),
        catalog = toml_string(&catalog.to_string_lossy()),
        url = toml_string(&format!("{}/v1", t.base_url)),
    );
    StubConfig {
        files: vec![file(".codex/config.toml", config)],
        env: vec![(
            "CODEX_HOME",
            t.home.join(".codex").to_string_lossy().into_owned(),
        )],
    }
}

/// The env that keeps Claude Code on loopback whatever the auth mode.
pub(crate) const CLAUDE_OFFLINE_ENV: [(&str, &str); 5] = [
    ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
    ("CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL", "1"),
    ("DISABLE_AUTOUPDATER", "1"),
    ("DISABLE_TELEMETRY", "1"),
    ("DISABLE_ERROR_REPORTING", "1"),
];

/// Claude Code's switch for deferred MCP tools, off against the stub.
pub(crate) const CLAUDE_TOOL_SEARCH: (&str, &str) = ("ENABLE_TOOL_SEARCH", "false");

/// Claude Code 2.1.332: onboarding marked done (offline it otherwise exits
/// rc=1), the stub as base URL with a bearer token (no API-key dialog). The
/// product pre-trusts the session dir in the same `~/.claude.json`.
pub fn claude(t: &StubTarget) -> StubConfig {
    let mut env: Vec<(&'static str, String)> = vec![
        ("ANTHROPIC_BASE_URL", t.base_url.clone()),
        ("ANTHROPIC_AUTH_TOKEN", STUB_KEY.to_owned()),
    ];
    env.extend(
        CLAUDE_OFFLINE_ENV
            .iter()
            .map(|(k, v)| (*k, (*v).to_owned())),
    );
    // MCP tools offered directly, not deferred behind Claude Code's
    // `ToolSearch` round (which a stub model cannot drive): the `mcp::claude`
    // lane needs `mcp__studyloop__log_topic` in the request.
    env.push((CLAUDE_TOOL_SEARCH.0, CLAUDE_TOOL_SEARCH.1.to_owned()));
    StubConfig {
        files: vec![
            file(
                ".claude.json",
                pretty(&json!({"hasCompletedOnboarding": true, "theme": "dark", "projects": {}})),
            ),
            // The product scrubs credential-like variables from its web children
            // (ANTHROPIC_AUTH_TOKEN included), so over ACP the token must come from
            // Claude Code's own settings, which it applies to every session.
            file(
                ".claude/settings.json",
                pretty(&json!({"env": {"ANTHROPIC_AUTH_TOKEN": STUB_KEY,
                    CLAUDE_TOOL_SEARCH.0: CLAUDE_TOOL_SEARCH.1}})),
            ),
        ],
        env,
    }
}

/// The env that keeps pi offline whatever the auth mode.
pub(crate) const PI_OFFLINE_ENV: [(&str, &str); 3] = [
    ("PI_OFFLINE", "1"),
    ("PI_SKIP_VERSION_CHECK", "1"),
    ("PI_TELEMETRY", "0"),
];

/// pi 0.73.1: an OpenAI-compatible provider in `models.json`, chosen as the
/// default in `settings.json`; offline mode skips the fd/ripgrep downloads.
pub fn pi(t: &StubTarget) -> StubConfig {
    let models = json!({"providers": {"stub": {
        "baseUrl": format!("{}/v1", t.base_url),
        "api": "openai-completions",
        "apiKey": STUB_KEY,
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
        "models": [{"id": STUB_MODEL, "name": "Stub Model", "contextWindow": 128_000, "maxTokens": 4096,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]
    }}});
    let settings = json!({"defaultProvider": "stub", "defaultModel": STUB_MODEL,
                          "enableInstallTelemetry": false, "quietStartup": true});
    StubConfig {
        files: vec![
            file(".pi/agent/models.json", pretty(&models)),
            file(".pi/agent/settings.json", pretty(&settings)),
        ],
        env: PI_OFFLINE_ENV
            .iter()
            .map(|(k, v)| (*k, (*v).to_owned()))
            .collect(),
    }
}

/// The env that stops opencode's update check, models.dev fetch and background
/// plugin install. `npm_config_offline`: in a fresh HOME opencode npm-installs
/// `@opencode-ai/plugin` into `~/.config/opencode` (even with `--pure`), which
/// fetched from registry.npmjs.org wherever the registry is reachable (CI); offline,
/// npm answers from its (empty) cache at once, opencode logs "background dependency
/// install failed" and carries on. The finish step's registry check proves it.
pub(crate) const OPENCODE_OFFLINE_ENV: [(&str, &str); 3] = [
    ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
    ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
    ("npm_config_offline", "true"),
];

/// opencode 1.18.33: an `@ai-sdk/openai-compatible` provider (bundled in the
/// binary, nothing downloaded) as the model and small model; no sharing.
pub fn opencode(t: &StubTarget) -> StubConfig {
    let config = json!({
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": false,
        "share": "disabled",
        "model": format!("stub/{STUB_MODEL}"),
        "small_model": format!("stub/{STUB_MODEL}"),
        "provider": {"stub": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Local Stub",
            "options": {"baseURL": format!("{}/v1", t.base_url), "apiKey": STUB_KEY},
            "models": {STUB_MODEL: {"name": "Stub Model", "limit": {"context": 128_000, "output": 4096}}}
        }}
    });
    StubConfig {
        files: vec![file(".config/opencode/opencode.json", pretty(&config))],
        env: OPENCODE_OFFLINE_ENV
            .iter()
            .map(|(k, v)| (*k, (*v).to_owned()))
            .collect(),
    }
}

/// grok 0.0.34: env only (its `-k`/`-u` flags would write back into the user
/// settings file); it makes no other network calls.
pub fn grok(t: &StubTarget) -> StubConfig {
    StubConfig {
        files: Vec::new(),
        env: vec![
            ("GROK_API_KEY", STUB_KEY.to_owned()),
            ("GROK_BASE_URL", format!("{}/v1", t.base_url)),
            ("GROK_MODEL", STUB_MODEL.to_owned()),
        ],
    }
}

/// Why codex's bundled model catalog could not become the stub's one-model catalog.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CatalogError {
    /// The output of `codex debug models --bundled` is not JSON.
    #[error("the bundled catalog is not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// Neither a `models` array nor a top-level array.
    #[error("the bundled catalog has no `models` array")]
    NoModels,
    /// The array is empty.
    #[error("the bundled catalog lists no model")]
    Empty,
    /// The chosen entry is not a JSON object.
    #[error("a model entry of the bundled catalog is not an object")]
    NotAnObject,
}

/// Builds codex's one-model catalog from `codex debug models --bundled`: the
/// `gpt-5.5` entry (or the first) renamed to the stub model, its upgrade prompt
/// removed, plus the two fields older codex cores (zed codex-acp 0.16's 0.137)
/// require.
///
/// # Errors
/// [`CatalogError`] naming what the bundled catalog lacks.
pub(crate) fn codex_catalog(bundled_json: &str) -> Result<String, CatalogError> {
    let bundled: serde_json::Value =
        serde_json::from_str(bundled_json).map_err(CatalogError::NotJson)?;
    let models = bundled.get("models").unwrap_or(&bundled);
    let list = models.as_array().ok_or(CatalogError::NoModels)?;
    let base = list
        .iter()
        .find(|m| m.get("slug").and_then(|s| s.as_str()) == Some("gpt-5.5"))
        .or_else(|| list.first())
        .ok_or(CatalogError::Empty)?;
    let mut entry = base.as_object().cloned().ok_or(CatalogError::NotAnObject)?;
    entry.insert("slug".into(), json!(STUB_MODEL));
    entry.insert("display_name".into(), json!("Stub Model"));
    entry.insert(
        "description".into(),
        json!("local stub (studyloop-stub-provider)"),
    );
    entry.insert("availability_nux".into(), serde_json::Value::Null);
    // MCP tools offered directly, not deferred behind codex's client-side
    // `tool_search` (a BM25 discovery round a stub model cannot drive): the
    // `mcp::codex` lane needs `mcp__studyloop` `log_topic` in the request.
    entry.insert("supports_search_tool".into(), json!(false));
    entry.remove("upgrade");
    entry
        .entry("supports_reasoning_summaries")
        .or_insert(json!(false));
    entry
        .entry("supports_parallel_tool_calls")
        .or_insert(json!(true));
    Ok(pretty(&json!({"models": [entry]})))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> StubTarget {
        StubTarget {
            base_url: "http://127.0.0.1:4321".into(),
            home: PathBuf::from("/tmp/sl-acc-x/home"),
        }
    }

    fn env_of(c: &StubConfig, name: &str) -> Option<String> {
        c.env
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone())
    }

    #[test]
    fn codex_config_points_at_the_stub_with_daemon_and_plugins_off() {
        let c = codex(&target());
        assert_eq!(c.files.len(), 1);
        let toml = &c.files[0].contents;
        assert_eq!(c.files[0].path, PathBuf::from(".codex/config.toml"));
        assert!(toml.contains("base_url = \"http://127.0.0.1:4321/v1\""));
        assert!(toml.contains("wire_api = \"responses\""));
        assert!(toml.contains("daemon_auto_start = false"));
        assert!(toml.contains("plugins = false"));
        assert!(toml.contains(
            "model_catalog_json = \"/tmp/sl-acc-x/home/.codex/stub-model-catalog.json\""
        ));
        assert!(
            !toml.contains("env_key"),
            "no credential variable is needed"
        );
        assert_eq!(
            env_of(&c, "CODEX_HOME").as_deref(),
            Some("/tmp/sl-acc-x/home/.codex")
        );
    }

    #[test]
    fn claude_token_also_reaches_scrubbed_acp_children_through_settings() {
        let c = claude(&target());
        let settings = c
            .files
            .iter()
            .find(|f| f.path == std::path::Path::new(".claude/settings.json"));
        let v: serde_json::Value =
            serde_json::from_str(&settings.expect("settings.json").contents).unwrap();
        assert_eq!(v["env"]["ANTHROPIC_AUTH_TOKEN"], json!(STUB_KEY));
    }

    #[test]
    fn claude_config_skips_onboarding_and_stays_on_loopback() {
        let c = claude(&target());
        let v: serde_json::Value = serde_json::from_str(&c.files[0].contents).unwrap();
        assert_eq!(c.files[0].path, PathBuf::from(".claude.json"));
        assert_eq!(v["hasCompletedOnboarding"], json!(true));
        assert_eq!(
            env_of(&c, "ANTHROPIC_BASE_URL").as_deref(),
            Some("http://127.0.0.1:4321")
        );
        assert_eq!(
            env_of(&c, "ANTHROPIC_AUTH_TOKEN").as_deref(),
            Some(STUB_KEY)
        );
        assert_eq!(
            env_of(&c, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC").as_deref(),
            Some("1")
        );
        assert_eq!(
            env_of(&c, "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL").as_deref(),
            Some("1")
        );
        assert_eq!(
            env_of(&c, "ANTHROPIC_API_KEY"),
            None,
            "an API key would raise a dialog"
        );
    }

    #[test]
    fn pi_config_names_the_stub_provider_as_default() {
        let c = pi(&target());
        let models: serde_json::Value = serde_json::from_str(&c.files[0].contents).unwrap();
        let settings: serde_json::Value = serde_json::from_str(&c.files[1].contents).unwrap();
        assert_eq!(
            models["providers"]["stub"]["baseUrl"],
            json!("http://127.0.0.1:4321/v1")
        );
        assert_eq!(
            models["providers"]["stub"]["api"],
            json!("openai-completions")
        );
        assert_eq!(settings["defaultProvider"], json!("stub"));
        assert_eq!(settings["defaultModel"], json!(STUB_MODEL));
        assert_eq!(env_of(&c, "PI_OFFLINE").as_deref(), Some("1"));
    }

    #[test]
    fn opencode_config_uses_the_bundled_openai_compatible_provider() {
        let c = opencode(&target());
        let v: serde_json::Value = serde_json::from_str(&c.files[0].contents).unwrap();
        assert_eq!(
            c.files[0].path,
            PathBuf::from(".config/opencode/opencode.json")
        );
        assert_eq!(v["model"], json!("stub/stub-model"));
        assert_eq!(
            v["provider"]["stub"]["options"]["baseURL"],
            json!("http://127.0.0.1:4321/v1")
        );
        assert_eq!(v["autoupdate"], json!(false));
        assert_eq!(
            env_of(&c, "OPENCODE_DISABLE_MODELS_FETCH").as_deref(),
            Some("1")
        );
    }

    #[test]
    fn grok_is_configured_by_env_only() {
        let c = grok(&target());
        assert!(c.files.is_empty());
        assert_eq!(
            env_of(&c, "GROK_BASE_URL").as_deref(),
            Some("http://127.0.0.1:4321/v1")
        );
        assert_eq!(env_of(&c, "GROK_MODEL").as_deref(), Some(STUB_MODEL));
    }

    #[test]
    fn codex_catalog_renames_the_base_model_and_adds_compat_fields() {
        let bundled =
            r#"{"models":[{"slug":"gpt-6","x":1},{"slug":"gpt-5.5","upgrade":{"to":"y"},"x":2}]}"#;
        let out: serde_json::Value =
            serde_json::from_str(&codex_catalog(bundled).unwrap()).unwrap();
        let m = &out["models"][0];
        assert_eq!(out["models"].as_array().unwrap().len(), 1);
        assert_eq!(m["slug"], json!(STUB_MODEL));
        assert_eq!(m["x"], json!(2));
        assert!(m.get("upgrade").is_none());
        assert_eq!(m["supports_reasoning_summaries"], json!(false));
        assert!(codex_catalog("not json").is_err());
        assert!(codex_catalog(r#"{"models":[]}"#).is_err());
    }

    #[test]
    fn toml_strings_escape_quotes_and_backslashes() {
        assert_eq!(toml_string(r#"a"b\c"#), r#""a\"b\\c""#);
    }
}
