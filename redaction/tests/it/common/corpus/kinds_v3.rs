//! The kinds issue 34 found with no pattern or a leaking one (rules v3), generated like
//! the others in `secrets`: each assembled at run time from the seeded generator, so no
//! key-shaped literal sits in the repository.

use super::Rng;
use super::secrets::{B62, B64, B64URL, DIGITS, HEX, Secret, named, token};

const BECH32_UPPER: &str = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L";
const UPPER_DIGITS36: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// Standard base64 of `bytes` (padded), written here so the corpus needs no crate.
fn base64(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                let index = (n >> (18 - 6 * i)) & 63;
                out.push(char::from(B64.as_bytes()[index as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The self-identifying kinds: value alone names its vendor.
pub fn tokens(rng: &mut Rng, out: &mut Vec<Secret>) {
    let push =
        |out: &mut Vec<Secret>, kind, name, value: String| out.push(token(kind, name, value));
    push(
        out,
        "twilio-api-key-sid",
        "TWILIO_API_KEY",
        format!("{}{}", "SK", rng.draw(HEX, 32)),
    );
    push(
        out,
        "sendgrid-key",
        "SENDGRID_API_KEY",
        format!("{}.{}.{}", "SG", rng.draw(B64URL, 22), rng.draw(B64URL, 43)),
    );
    push(
        out,
        "databricks-token",
        "DATABRICKS_TOKEN",
        format!("{}{}", "dapi", rng.draw(HEX, 32)),
    );
    push(
        out,
        "digitalocean-pat",
        "DIGITALOCEAN_TOKEN",
        format!("{}_{}_{}", "dop", "v1", rng.draw(HEX, 64)),
    );
    let discord_id = format!("1{}", rng.draw(DIGITS, 18));
    let discord_head = base64(discord_id.as_bytes())
        .trim_end_matches('=')
        .to_owned();
    push(
        out,
        "discord-bot-token",
        "DISCORD_TOKEN",
        format!(
            "{discord_head}.{}.{}",
            rng.draw(B64URL, 6),
            rng.draw(B64URL, 38)
        ),
    );
    push(
        out,
        "telegram-bot-token",
        "TELEGRAM_BOT_TOKEN",
        format!("{}:{}{}", rng.draw(DIGITS, 10), "AA", rng.draw(B64URL, 33)),
    );
    push(
        out,
        "gitlab-pat",
        "GITLAB_TOKEN",
        format!("{}-{}", "glpat", rng.draw(B64URL, 20)),
    );
    push(
        out,
        "google-oauth-client-secret",
        "GOOGLE_CLIENT_SECRET",
        format!("{}-{}", "GOCSPX", rng.draw(B64URL, 28)),
    );
    push(
        out,
        "google-oauth-access-token",
        "GOOGLE_ACCESS_TOKEN",
        format!("{}.{}", "ya29", rng.draw(B64URL, 120)),
    );
    push(
        out,
        "age-secret-key",
        "SOPS_AGE_KEY",
        format!(
            "{}-{}-{}-1{}",
            "AGE",
            "SECRET",
            "KEY",
            rng.draw(BECH32_UPPER, 58)
        ),
    );
    push(
        out,
        "shopify-access-token",
        "SHOPIFY_ACCESS_TOKEN",
        format!("{}_{}", "shpat", rng.draw(HEX, 32)),
    );
    push(
        out,
        "mailgun-key",
        "MAILGUN_API_KEY",
        format!("{}-{}", "key", rng.draw(HEX, 32)),
    );
    push(
        out,
        "pypi-token",
        "PYPI_TOKEN",
        format!("{}-{}{}", "pypi", "AgEIcHlwaS5vcmc", rng.draw(B64URL, 70)),
    );
    push(
        out,
        "docker-hub-pat",
        "DOCKERHUB_TOKEN",
        format!("{}_{}_{}", "dckr", "pat", rng.draw(B64URL, 27)),
    );
    push(
        out,
        "grafana-service-account",
        "GRAFANA_TOKEN",
        format!("{}_{}_{}", "glsa", rng.draw(B62, 32), rng.draw(HEX, 8)),
    );
    push(
        out,
        "vault-token",
        "VAULT_TOKEN",
        format!("{}.{}", "hvs", rng.draw(B64URL, 90)),
    );
    push(
        out,
        "sentry-token",
        "SENTRY_AUTH_TOKEN",
        format!("{}_{}", "sntryu", rng.draw(HEX, 64)),
    );
    push(
        out,
        "postman-key",
        "POSTMAN_API_KEY",
        format!("{}-{}-{}", "PMAK", rng.draw(HEX, 24), rng.draw(HEX, 34)),
    );
    push(
        out,
        "doppler-token",
        "DOPPLER_TOKEN",
        format!("{}.{}.{}", "dp", "st", rng.draw(B62, 43)),
    );
    push(
        out,
        "linear-key",
        "LINEAR_API_KEY",
        format!("{}_{}_{}", "lin", "api", rng.draw(B62, 40)),
    );
    push(
        out,
        "new-relic-key",
        "NEW_RELIC_API_KEY",
        format!("{}-{}", "NRAK", rng.draw(UPPER_DIGITS36, 27)),
    );
    push(
        out,
        "dynatrace-token",
        "DT_API_TOKEN",
        format!(
            "{}.{}.{}",
            "dt0c01",
            rng.draw(UPPER_DIGITS36, 24),
            rng.draw(UPPER_DIGITS36, 64)
        ),
    );
    push(
        out,
        "supabase-token",
        "SUPABASE_ACCESS_TOKEN",
        format!("{}_{}", "sbp", rng.draw(HEX, 40)),
    );
    push(
        out,
        "groq-key",
        "GROQ_API_KEY",
        format!("{}_{}", "gsk", rng.draw(B62, 52)),
    );
    push(
        out,
        "xai-key",
        "XAI_API_KEY",
        format!("{}-{}", "xai", rng.draw(B62, 80)),
    );
    push(
        out,
        "replicate-token",
        "REPLICATE_API_TOKEN",
        format!("{}_{}", "r8", rng.draw(B62, 37)),
    );
    push(
        out,
        "perplexity-key",
        "PPLX_API_KEY",
        format!("{}-{}", "pplx", rng.draw(B62, 48)),
    );
    push(
        out,
        "stripe-webhook-secret",
        "STRIPE_WEBHOOK_SECRET",
        format!("{}_{}", "whsec", rng.draw(B62, 32)),
    );
    push(
        out,
        "tailscale-key",
        "TS_AUTHKEY",
        format!(
            "{}-{}-{}-{}",
            "tskey",
            "auth",
            rng.draw(B62, 17),
            rng.draw(B62, 33)
        ),
    );
    push(
        out,
        "azure-ad-client-secret",
        "AZURE_CLIENT_SECRET",
        format!(
            "{}{}{}~{}",
            rng.draw(B62, 3),
            rng.draw(DIGITS, 1),
            "Q",
            rng.draw(B64URL, 34)
        ),
    );
    push(
        out,
        "alibaba-access-key-id",
        "ALIBABA_CLOUD_ACCESS_KEY_ID",
        format!("{}{}", "LTAI", rng.draw(B62, 20)),
    );
    push(
        out,
        "square-token",
        "SQUARE_ACCESS_TOKEN",
        format!("{}-{}", "sq0atp", rng.draw(B64URL, 22)),
    );
    let openai = format!("sk-{}-{}", "proj", rng.draw(B64URL, 60));
    push(
        out,
        "openai-key-base64",
        "OPENAI_API_KEY",
        base64(openai.as_bytes()),
    );
    let slack_hook = format!(
        "https://hooks.slack.com/services/T{}/B{}/{}",
        rng.draw(UPPER_DIGITS36, 10),
        rng.draw(UPPER_DIGITS36, 10),
        rng.draw(B62, 24)
    );
    let mut hook = token("slack-webhook-url", "SLACK_WEBHOOK_URL", slack_hook.clone());
    hook.secret = slack_hook["https://hooks.slack.com/services/".len()..].to_owned();
    out.push(hook);
    let discord_hook = format!(
        "https://discord.com/api/webhooks/{}/{}",
        rng.draw(DIGITS, 18),
        rng.draw(B64URL, 68)
    );
    let mut hook = token(
        "discord-webhook-url",
        "DISCORD_WEBHOOK_URL",
        discord_hook.clone(),
    );
    hook.secret = discord_hook["https://discord.com/api/webhooks/".len()..].to_owned();
    out.push(hook);
    // A JWT whose header was serialised with a space: `{ "alg": ...` is base64 `eyAi`.
    let header = base64(b"{ \"alg\": \"HS256\", \"typ\": \"JWT\" }")
        .trim_end_matches('=')
        .replace('+', "-")
        .replace('/', "_");
    push(
        out,
        "jwt-spaced-header",
        "id_token",
        format!("{header}.{}.{}", rng.draw(B64URL, 80), rng.draw(B64URL, 43)),
    );
}

/// The kinds only their context identifies.
pub fn contextual(rng: &mut Rng, out: &mut Vec<Secret>) {
    let pw = rng.draw(B62, 18);
    let line = format!("db.internal:5432:study:app:{pw}");
    out.push(named(
        "pgpass-line",
        "PGPASSFILE_LINE",
        line.clone(),
        line,
        pw,
    ));
    let pw = rng.draw(B62, 16);
    let line = format!("machine api.example.test login learner password {pw}");
    out.push(named("netrc-line", "NETRC", line.clone(), line, pw));
    let pw = rng.draw(B62, 22);
    let url = format!("redis://:{pw}@cache.internal:6379/0");
    let mut redis = named(
        "redis-url-empty-user",
        "REDIS_URL",
        url.clone(),
        url.clone(),
        pw,
    );
    redis.url = format!("{url}?protocol=3");
    out.push(redis);
    let auth = base64(format!("learner:{}", rng.draw(B62, 20)).as_bytes());
    let config = format!("{{\"auths\": {{\"ghcr.io\": {{\"auth\": \"{auth}\"}}}}}}");
    out.push(named(
        "docker-config-auth",
        "auths",
        auth.clone(),
        config,
        auth,
    ));
    let body: Vec<String> = (0..5).map(|_| rng.draw(B64, 64)).collect();
    let body = body.join("\n");
    let block = format!(
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: OpenPGP.js v4.10.10\nComment: https://openpgpjs.org\n\n{body}\n={}\n-----END PGP PRIVATE KEY BLOCK-----",
        rng.draw(B64, 4)
    );
    out.push(named(
        "pgp-private-key-openpgpjs",
        "pgp_private_key",
        block.clone(),
        block,
        body,
    ));
}
