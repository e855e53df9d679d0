//! Reading the auth files a harness keeps in the operator's HOME, for the real-auth
//! preflight (`super::credentials`): what each file proves (a key, an OAuth login and
//! until when), never its secret values. A file is read only as a regular file (no
//! FIFO, no symlink, at most [`MAX_AUTH_FILE_BYTES`]) and parsed as untyped JSON, so a
//! parse error can only name a position, never quote a value.
//!
//! Expiry: where the format carries one (codex's access-token JWT `exp`, Claude
//! Code's `expiresAt`, pi's and opencode's OAuth `expires`), an expired access token
//! with no refresh token is a problem ("expired at …"); one with a refresh token is a
//! login the harness renews by itself, so it counts, and the description says so.

use std::path::Path;

use serde_json::Value;

use crate::caller_env::CallerEnv;

/// An auth file larger than this is not read (real ones are a few KiB).
pub(crate) const MAX_AUTH_FILE_BYTES: u64 = 1 << 20;

/// The layout a harness's auth file has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// codex `auth.json`: `OPENAI_API_KEY` or a ChatGPT login (`tokens`).
    CodexAuth,
    /// Claude Code `.credentials.json`: `claudeAiOauth {accessToken, refreshToken, expiresAt}`.
    ClaudeCredentials,
    /// pi's and opencode's `auth.json`: provider → `{type: api|api_key, key}` or
    /// `{type: oauth, access, refresh, expires}`.
    ProviderMap,
    /// pi's `models.json`: `providers.<name>.apiKey`, a literal or a variable name.
    PiModels,
    /// grok's `user-settings.json`: `apiKey`.
    GrokSettings,
}

/// What one file proved: a usable credential (described), or why it did not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CredentialFinding {
    /// A credential the harness can use, described without its value.
    Usable(String),
    /// The file is absent.
    Absent,
    /// Present but no usable credential: why (no value quoted).
    Unusable(String),
}

/// Reads `path` as `format`, judging expiry against `now_ms` (Unix ms) and
/// variable references against `env`.
pub fn judge(path: &Path, format: Format, env: &CallerEnv, now_ms: i64) -> CredentialFinding {
    let bytes = match studyloop_regular_file::read_regular(path, MAX_AUTH_FILE_BYTES) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return CredentialFinding::Absent,
        Err(e) => return CredentialFinding::Unusable(format!("not read ({})", io_reason(&e))),
    };
    let value: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        // serde_json's syntax errors name a line and column, never the text.
        Err(e) => {
            return CredentialFinding::Unusable(format!(
                "not valid JSON (line {}, column {})",
                e.line(),
                e.column()
            ));
        }
    };
    let found = match format {
        Format::CodexAuth => codex(&value, now_ms),
        Format::ClaudeCredentials => claude(&value, now_ms),
        Format::ProviderMap => provider_map(&value, now_ms),
        Format::PiModels => pi_models(&value, env),
        Format::GrokSettings => text(value.get("apiKey"))
            .map(|_| Ok("an apiKey".to_owned()))
            .unwrap_or_else(|| Err("no apiKey".to_owned())),
    };
    match found {
        Ok(what) => CredentialFinding::Usable(what),
        Err(why) => CredentialFinding::Unusable(why),
    }
}

/// The OS reason without the path (the caller names the file once).
fn io_reason(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(code) if code == rustix::io::Errno::LOOP.raw_os_error() => {
            "it is a symlink; auth files are read only as regular files, so replace the link with the file".into()
        }
        _ => e.to_string(),
    }
}

/// A non-empty string field.
fn text(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str).filter(|s| !s.trim().is_empty())
}

/// A Unix time in ms as an RFC 3339 UTC instant (or the raw number when out of range).
fn instant(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms).map_or_else(|_| format!("{ms} ms"), |t| t.to_string())
}

/// An OAuth login: usable unless its access token expired with nothing to renew it.
fn oauth(
    what: &str,
    expires_ms: Option<i64>,
    refresh: bool,
    now_ms: i64,
) -> Result<String, String> {
    match expires_ms {
        Some(at) if at <= now_ms && !refresh => Err(format!(
            "{what}: access token expired at {} and no refresh token",
            instant(at)
        )),
        Some(at) if at <= now_ms => Ok(format!(
            "{what} (access token expired at {}; the harness renews it with its refresh token)",
            instant(at)
        )),
        Some(at) => Ok(format!("{what} (valid until {})", instant(at))),
        None => Ok(format!("{what} (expiry not recorded)")),
    }
}

fn codex(v: &Value, now_ms: i64) -> Result<String, String> {
    if text(v.get("OPENAI_API_KEY")).is_some() {
        return Ok("an API key (OPENAI_API_KEY field)".into());
    }
    let tokens = v.get("tokens").filter(|t| t.is_object());
    let Some(access) = tokens.and_then(|t| text(t.get("access_token"))) else {
        return Err("no API key and no ChatGPT login (tokens.access_token)".into());
    };
    let refresh = tokens.is_some_and(|t| text(t.get("refresh_token")).is_some());
    oauth("a ChatGPT login", jwt_exp_ms(access), refresh, now_ms)
}

fn claude(v: &Value, now_ms: i64) -> Result<String, String> {
    let Some(o) = v.get("claudeAiOauth").filter(|o| o.is_object()) else {
        return Err("no claudeAiOauth login".into());
    };
    if text(o.get("accessToken")).is_none() {
        return Err("claudeAiOauth has no accessToken".into());
    }
    let refresh = text(o.get("refreshToken")).is_some();
    oauth(
        "a Claude login",
        o.get("expiresAt").and_then(Value::as_i64),
        refresh,
        now_ms,
    )
}

fn provider_map(v: &Value, now_ms: i64) -> Result<String, String> {
    let Some(map) = v.as_object() else {
        return Err("not a provider map".into());
    };
    let mut problems = Vec::new();
    for (provider, entry) in map {
        // Provider names are the file's keys: shown only when they look like names.
        let name = if is_plain_name(provider) {
            provider.as_str()
        } else {
            "(odd name)"
        };
        let kind = entry
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let verdict = match kind {
            "api" | "api_key" if text(entry.get("key")).is_some() => {
                Ok(format!("`{name}`: an API key"))
            }
            "oauth"
                if text(entry.get("access")).is_some() || text(entry.get("refresh")).is_some() =>
            {
                oauth(
                    &format!("`{name}`: an OAuth login"),
                    entry.get("expires").and_then(Value::as_i64),
                    text(entry.get("refresh")).is_some(),
                    now_ms,
                )
            }
            _ => Err(format!("`{name}`: no key or login")),
        };
        match verdict {
            Ok(found) => return Ok(found),
            Err(why) => problems.push(why),
        }
    }
    Err(if problems.is_empty() {
        "no provider entries".into()
    } else {
        problems.join(", ")
    })
}

fn pi_models(v: &Value, env: &CallerEnv) -> Result<String, String> {
    let providers = v.get("providers").and_then(Value::as_object);
    let mut problems = Vec::new();
    for (provider, p) in providers.into_iter().flatten() {
        let name = if is_plain_name(provider) {
            provider.as_str()
        } else {
            "(odd name)"
        };
        let Some(key) = text(p.get("apiKey")) else {
            continue;
        };
        // pi resolves `apiKey` as a variable name first, else uses it literally;
        // `!cmd` runs a command, which a preflight never does.
        if key.starts_with('!') {
            return Ok(format!(
                "provider `{name}`: an apiKey command (checked by the probe)"
            ));
        }
        if is_env_name(key) {
            if env.var_os(key).is_some_and(|v| !v.is_empty()) {
                return Ok(format!("provider `{name}`: apiKey from ${key}"));
            }
            problems.push(format!(
                "provider `{name}`: apiKey names ${key}, which is unset"
            ));
        } else {
            return Ok(format!("provider `{name}`: a literal apiKey"));
        }
    }
    Err(if problems.is_empty() {
        "no provider with an apiKey".into()
    } else {
        problems.join(", ")
    })
}

/// `[A-Za-z0-9_.-]{1,64}`: safe to print as a provider name.
fn is_plain_name(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}

/// An environment-variable-shaped word (`[A-Z_][A-Z0-9_]*`), as pi's `apiKey` lookup
/// treats a name; anything else it sends as the key itself.
fn is_env_name(s: &str) -> bool {
    s.len() <= 128
        && s.bytes()
            .next()
            .is_some_and(|b| b.is_ascii_uppercase() || b == b'_')
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// A JWT's `exp` claim (seconds) in ms, or `None` when the token is not a readable JWT.
fn jwt_exp_ms(token: &str) -> Option<i64> {
    let payload = token.split('.').nth(1)?;
    let bytes = base64url(payload)?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    claims.get("exp")?.as_i64()?.checked_mul(1000)
}

/// Unpadded base64url (RFC 4648 §5) decoding; `None` on any other character.
fn base64url(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in s.trim_end_matches('=').bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from((acc >> bits) & 0xff).ok()?);
        }
    }
    Some(out)
}

#[cfg(test)]
#[path = "credential_files_tests.rs"]
mod tests;
