use super::*;

const NOW: i64 = 1_800_000_000_000;
const SECRET: &str = "sk-proj-PLANTEDsecretVALUE0123456789abcdefXYZ";

fn env(pairs: &[(&str, &str)]) -> CallerEnv {
    CallerEnv::from_pairs(pairs.iter().copied())
}

fn judge_text(text: &str, format: Format, e: &CallerEnv) -> CredentialFinding {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    std::fs::write(&path, text).unwrap();
    judge(&path, format, e, NOW)
}

/// A JWT whose payload carries `exp` (seconds); header and signature are filler.
fn jwt(exp_s: i64) -> String {
    let payload = format!("{{\"exp\":{exp_s},\"sub\":\"{SECRET}\"}}");
    let b64: String = base64url_encode(payload.as_bytes());
    format!("eyJhbGciOiJub25lIn0.{b64}.c2ln")
}

fn base64url_encode(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(A[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

fn text_of(v: &CredentialFinding) -> String {
    format!("{v:?}")
}

#[test]
fn codex_auth_json_key_login_and_expiry() {
    let e = env(&[]);
    let key = judge_text(
        &format!("{{\"OPENAI_API_KEY\":\"{SECRET}\"}}"),
        Format::CodexAuth,
        &e,
    );
    assert!(
        matches!(&key, CredentialFinding::Usable(w) if w.contains("API key")),
        "{key:?}"
    );
    let valid = format!(
        "{{\"OPENAI_API_KEY\":null,\"tokens\":{{\"access_token\":\"{}\",\"refresh_token\":\"\"}}}}",
        jwt(NOW / 1000 + 3600)
    );
    let v = judge_text(&valid, Format::CodexAuth, &e);
    assert!(
        matches!(&v, CredentialFinding::Usable(w) if w.contains("valid until 2027-01-15T09:00:00Z")),
        "{v:?}"
    );
    // Expired, nothing to renew it: a problem naming when.
    let expired = format!(
        "{{\"tokens\":{{\"access_token\":\"{}\"}}}}",
        jwt(NOW / 1000 - 60)
    );
    let v = judge_text(&expired, Format::CodexAuth, &e);
    assert!(
        matches!(&v, CredentialFinding::Unusable(w) if w.contains("expired at 2027-01-15T07:59:00Z") && w.contains("no refresh token")),
        "{v:?}"
    );
    // Expired but renewable: the harness refreshes it itself.
    let renewable = format!(
        "{{\"tokens\":{{\"access_token\":\"{}\",\"refresh_token\":\"{SECRET}\"}}}}",
        jwt(NOW / 1000 - 60)
    );
    let v = judge_text(&renewable, Format::CodexAuth, &e);
    assert!(
        matches!(&v, CredentialFinding::Usable(w) if w.contains("renews it")),
        "{v:?}"
    );
    let none = judge_text("{\"OPENAI_API_KEY\":null}", Format::CodexAuth, &e);
    assert!(
        matches!(&none, CredentialFinding::Unusable(w) if w.contains("no API key")),
        "{none:?}"
    );
    for v in [key, none] {
        assert!(!text_of(&v).contains(SECRET), "{v:?}");
    }
}

#[test]
fn claude_credentials_expires_at_decides() {
    let e = env(&[]);
    let at = |ms: i64, refresh: &str| {
        format!(
            "{{\"claudeAiOauth\":{{\"accessToken\":\"{SECRET}\",\"refreshToken\":\"{refresh}\",\"expiresAt\":{ms}}}}}"
        )
    };
    let v = judge_text(&at(NOW + 1, ""), Format::ClaudeCredentials, &e);
    assert!(
        matches!(&v, CredentialFinding::Usable(w) if w.contains("valid until")),
        "{v:?}"
    );
    let v = judge_text(&at(NOW - 1, ""), Format::ClaudeCredentials, &e);
    assert!(
        matches!(&v, CredentialFinding::Unusable(w) if w.contains("expired at")),
        "{v:?}"
    );
    assert!(!text_of(&v).contains(SECRET));
    let v = judge_text(&at(NOW - 1, SECRET), Format::ClaudeCredentials, &e);
    assert!(matches!(&v, CredentialFinding::Usable(_)), "{v:?}");
    let v = judge_text("{\"other\":1}", Format::ClaudeCredentials, &e);
    assert!(
        matches!(&v, CredentialFinding::Unusable(w) if w.contains("no claudeAiOauth")),
        "{v:?}"
    );
}

#[test]
fn provider_maps_and_pi_models() {
    let e = env(&[("LITELLM_API_KEY", SECRET)]);
    let v = judge_text(
        &format!("{{\"anthropic\":{{\"type\":\"api_key\",\"key\":\"{SECRET}\"}}}}"),
        Format::ProviderMap,
        &e,
    );
    assert!(
        matches!(&v, CredentialFinding::Usable(w) if w.contains("`anthropic`: an API key")),
        "{v:?}"
    );
    let oauth = format!(
        "{{\"openai\":{{\"type\":\"oauth\",\"access\":\"{SECRET}\",\"expires\":{}}}}}",
        NOW - 5
    );
    let v = judge_text(&oauth, Format::ProviderMap, &e);
    assert!(
        matches!(&v, CredentialFinding::Unusable(w) if w.contains("expired at")),
        "{v:?}"
    );
    let models = |key: &str| format!("{{\"providers\":{{\"litellm\":{{\"apiKey\":\"{key}\"}}}}}}");
    let v = judge_text(&models("LITELLM_API_KEY"), Format::PiModels, &e);
    assert!(
        matches!(&v, CredentialFinding::Usable(w) if w.contains("from $LITELLM_API_KEY")),
        "{v:?}"
    );
    let v = judge_text(&models("LITELLM_API_KEY"), Format::PiModels, &env(&[]));
    assert!(
        matches!(&v, CredentialFinding::Unusable(w) if w.contains("$LITELLM_API_KEY, which is unset")),
        "{v:?}"
    );
    let v = judge_text(&models(SECRET), Format::PiModels, &env(&[]));
    assert!(
        matches!(&v, CredentialFinding::Usable(w) if w.contains("literal")),
        "{v:?}"
    );
    assert!(!text_of(&v).contains(SECRET));
    // A command key is never run by the preflight.
    let v = judge_text(
        &models("!touch /tmp/never-run"),
        Format::PiModels,
        &env(&[]),
    );
    assert!(
        matches!(&v, CredentialFinding::Usable(w) if w.contains("command")),
        "{v:?}"
    );
    // A provider name carrying a secret-shaped or odd value is not printed.
    let odd = format!("{{\"{SECRET}\\n\":{{\"type\":\"api\",\"key\":\"x\"}}}}");
    let v = judge_text(&odd, Format::ProviderMap, &e);
    assert!(!text_of(&v).contains(SECRET), "{v:?}");
}

/// Hostile files: garbage, wrong shapes, huge, deep, a FIFO, a symlink. Each is a
/// named problem, at once, quoting no content.
#[test]
fn hostile_auth_files_are_named_problems_never_hangs_or_leaks() {
    let e = env(&[]);
    let garbage = format!("{{\"OPENAI_API_KEY\": \"{SECRET}\" garbage");
    let v = judge_text(&garbage, Format::CodexAuth, &e);
    assert!(
        matches!(&v, CredentialFinding::Unusable(w) if w.starts_with("not valid JSON (line 1")),
        "{v:?}"
    );
    assert!(!text_of(&v).contains(SECRET));
    for shape in [
        "[]",
        "null",
        "\"x\"",
        "{\"tokens\":\"x\"}",
        "{\"tokens\":{\"access_token\":7}}",
    ] {
        let v = judge_text(shape, Format::CodexAuth, &e);
        assert!(
            matches!(v, CredentialFinding::Unusable(_)),
            "{shape}: {v:?}"
        );
    }
    let deep = "[".repeat(100_000);
    let v = judge_text(&deep, Format::ProviderMap, &e);
    assert!(
        matches!(&v, CredentialFinding::Unusable(w) if w.contains("not valid JSON")),
        "{v:?}"
    );
    // A JWT whose payload is not base64 or not JSON: a login of unknown expiry.
    let v = judge_text(
        "{\"tokens\":{\"access_token\":\"a.%%%.b\"}}",
        Format::CodexAuth,
        &e,
    );
    assert!(
        matches!(&v, CredentialFinding::Usable(w) if w.contains("expiry not recorded")),
        "{v:?}"
    );

    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge.json");
    let f = std::fs::File::create(&huge).unwrap();
    f.set_len(MAX_AUTH_FILE_BYTES + 1).unwrap();
    let v = judge(&huge, Format::CodexAuth, &e, NOW);
    assert!(
        matches!(&v, CredentialFinding::Unusable(w) if w.starts_with("not read")),
        "{v:?}"
    );

    let fifo = dir.path().join("fifo.json");
    studyloop_regular_file::make_fifo_for_tests(&fifo);
    let t = std::time::Instant::now();
    let v = judge(&fifo, Format::CodexAuth, &e, NOW);
    assert!(
        matches!(&v, CredentialFinding::Unusable(w) if w.starts_with("not read")),
        "{v:?}"
    );
    assert!(
        t.elapsed() < std::time::Duration::from_secs(2),
        "a FIFO must not block"
    );

    let target = dir.path().join("real.json");
    std::fs::write(&target, format!("{{\"OPENAI_API_KEY\":\"{SECRET}\"}}")).unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let v = judge(&link, Format::CodexAuth, &e, NOW);
    assert!(
        matches!(&v, CredentialFinding::Unusable(w) if w.contains("symlink")),
        "{v:?}"
    );

    assert_eq!(
        judge(&dir.path().join("absent.json"), Format::CodexAuth, &e, NOW),
        CredentialFinding::Absent
    );
}

#[test]
fn base64url_decodes_with_and_without_padding() {
    assert_eq!(base64url("aGVsbG8").unwrap(), b"hello");
    assert_eq!(base64url("aGVsbG8=").unwrap(), b"hello");
    assert_eq!(
        base64url(&base64url_encode(b"\xff\xfe\x00abc")).unwrap(),
        b"\xff\xfe\x00abc"
    );
    assert!(base64url("a b").is_none());
}
