//! Who may open the session WebSocket (reference §5.2): a page served from
//! loopback (`localhost`, `127.0.0.1`, `[::1]`, any port), an exact entry of
//! `STUDYLOOP_ALLOWED_ORIGINS`, or a page whose origin host equals the request's
//! `Host` header (the LAN case). Everything else is refused before the upgrade,
//! which is what stops another website from driving a learner's agent
//! (cross-site WebSocket hijacking).
//!
//! A request without an `Origin` header is allowed: browsers always send one on
//! WebSocket upgrades, so its absence means a non-browser client (such as the
//! acceptance lane), which cross-site attacks cannot use.

/// Whether a WS upgrade with this `Origin` (and `Host`) may proceed.
#[must_use]
pub fn allowed(origin: Option<&str>, host: Option<&str>, extra: &[String]) -> bool {
    let Some(origin) = origin.map(str::trim) else {
        return true;
    };
    if extra.iter().any(|o| o == origin) {
        return true;
    }
    let Some(authority) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .filter(|a| !a.contains('/') && !a.is_empty())
    else {
        return false;
    };
    if host.is_some_and(|h| h.eq_ignore_ascii_case(authority)) {
        return true;
    }
    let hostname = if let Some(rest) = authority.strip_prefix('[') {
        rest.split_once(']').map_or("", |(h, _)| h)
    } else {
        authority.split_once(':').map_or(authority, |(h, _)| h)
    };
    matches!(
        hostname.to_ascii_lowercase().as_str(),
        "localhost" | "127.0.0.1" | "::1"
    )
}

/// Parses `STUDYLOOP_ALLOWED_ORIGINS` (comma-separated exact origins).
#[must_use]
pub fn parse_allowed(value: Option<&str>) -> Vec<String> {
    value
        .unwrap_or_default()
        .split(',')
        .map(|s| s.trim().trim_end_matches('/').to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_pages_host_match_and_allow_list_pass() {
        let none: Vec<String> = Vec::new();
        assert!(allowed(
            Some("http://127.0.0.1:8567"),
            Some("127.0.0.1:8567"),
            &none
        ));
        assert!(allowed(
            Some("http://localhost:3000"),
            Some("127.0.0.1:8567"),
            &none
        ));
        assert!(allowed(Some("http://[::1]:8567"), None, &none));
        assert!(allowed(
            Some("http://192.168.1.9:8567"),
            Some("192.168.1.9:8567"),
            &none
        ));
        assert!(allowed(None, Some("127.0.0.1:8567"), &none));
        let extra = parse_allowed(Some(" https://study.example/ , "));
        assert!(allowed(
            Some("https://study.example"),
            Some("127.0.0.1:8567"),
            &extra
        ));
    }

    #[test]
    fn foreign_and_tricky_origins_are_refused() {
        let none: Vec<String> = Vec::new();
        let host = Some("127.0.0.1:8567");
        for bad in [
            "https://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1.evil.example:8567",
            "null",
            "file://",
            "http://evil.example/127.0.0.1:8567",
        ] {
            assert!(!allowed(Some(bad), host, &none), "{bad} must be refused");
        }
    }
}
