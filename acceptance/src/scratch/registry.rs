//! Package-registry fetches a harness made from its scratch HOME: the URLs in npm's
//! request cache (`~/.npm/_cacache/index-v5`). A hermetic trial must make none, since
//! its only network peer is the stub provider. Why this check exists: opencode 1.18.33,
//! started in a fresh HOME, installs `@opencode-ai/plugin` into `~/.config/opencode` in
//! the background (even with `--pure`), and where the npm registry is reachable (CI
//! machines reach it) it fetched `registry.npmjs.org/@opencode-ai%2fplugin` and
//! `@opentui%2fcore` in every opencode trial; `npm_config_offline=true` in its stub
//! env stops it, and this check proves the stop holds.
//!
//! What a harness wrote is read as untrusted: no link is followed (a planted symlink
//! to an outside file is skipped, never read), each file through the one
//! regular-file reader with a size bound, and only the URL of a recognised cache key
//! is reported.

use std::path::Path;

/// The most bytes read from one index file (npm's are a few hundred bytes each).
const INDEX_FILE_LIMIT: u64 = 1 << 20;
/// The most URLs named (the finish step's message stays readable).
const NAMED: usize = 8;
/// npm's request-cache key prefix (make-fetch-happen, npm 7 to 11).
const KEY_PREFIX: &str = "make-fetch-happen:request-cache:";

/// The registry URLs `home`'s npm request cache holds, sorted, at most [`NAMED`]
/// (with a count of the rest); empty when there is no cache.
#[must_use]
pub fn registry_fetches(home: &Path) -> Vec<String> {
    let index = home.join(".npm/_cacache/index-v5");
    let mut urls = Vec::new();
    // index-v5/<2 hex>/<2 hex>/<hash>: exactly three levels of real directories.
    for a in real_entries(&index) {
        for b in real_entries(&a) {
            for file in real_entries(&b) {
                if let Ok(bytes) = studyloop_regular_file::read_regular(&file, INDEX_FILE_LIMIT) {
                    urls.extend(keys_in(&String::from_utf8_lossy(&bytes)));
                }
            }
        }
    }
    urls.sort();
    urls.dedup();
    if urls.len() > NAMED {
        let rest = urls.len() - NAMED;
        urls.truncate(NAMED);
        urls.push(format!("and {rest} more"));
    }
    urls
}

/// The entries of `dir` that are not symlinks (a symlinked directory is never entered;
/// files are opened no-follow by the reader anyway).
fn real_entries(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    read.filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_symlink()))
        .map(|e| e.path())
        .collect()
}

/// The URLs of the cache keys in one index file: lines of `<sha1>\t<json>`.
fn keys_in(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.split_once('\t'))
        .filter_map(|(_, json)| serde_json::from_str::<serde_json::Value>(json).ok())
        .filter_map(|v| {
            v.get("key")
                .and_then(|k| k.as_str())
                .and_then(|k| k.strip_prefix(KEY_PREFIX))
                .map(str::to_owned)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plant(home: &Path, rel: &str, url: &str) {
        let path = home.join(".npm/_cacache/index-v5").join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let json =
            serde_json::json!({"key": format!("{KEY_PREFIX}{url}"), "integrity": "sha512-x"});
        std::fs::write(&path, format!("\n3b8428bc\t{json}")).unwrap();
    }

    #[test]
    fn a_fetch_in_npms_request_cache_is_named_and_an_empty_home_has_none() {
        let home = tempfile::tempdir().unwrap();
        assert!(registry_fetches(home.path()).is_empty());
        plant(
            home.path(),
            "cd/ec/2dcc",
            "https://registry.npmjs.org/@opencode-ai%2fplugin",
        );
        plant(
            home.path(),
            "37/c8/a14a",
            "https://registry.npmjs.org/@opentui%2fcore",
        );
        assert_eq!(
            registry_fetches(home.path()),
            [
                "https://registry.npmjs.org/@opencode-ai%2fplugin",
                "https://registry.npmjs.org/@opentui%2fcore"
            ]
        );
    }

    #[test]
    fn a_planted_symlink_is_never_followed_and_a_fifo_never_blocks() {
        let home = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        plant(outside.path(), "aa/bb/cc", "https://outside.example/secret");
        let index = home.path().join(".npm/_cacache/index-v5");
        std::fs::create_dir_all(index.join("dd/ee")).unwrap();
        // A symlinked level and a symlinked index file, both to the outside tree.
        std::os::unix::fs::symlink(
            outside.path().join(".npm/_cacache/index-v5/aa"),
            index.join("aa"),
        )
        .unwrap();
        std::os::unix::fs::symlink(
            outside.path().join(".npm/_cacache/index-v5/aa/bb/cc"),
            index.join("dd/ee/ff"),
        )
        .unwrap();
        studyloop_regular_file::make_fifo_for_tests(&index.join("dd/ee/fifo"));
        assert!(registry_fetches(home.path()).is_empty());
    }

    #[test]
    fn many_fetches_are_counted_not_listed() {
        let home = tempfile::tempdir().unwrap();
        for i in 0..12 {
            // Each URL twice (two cache entries for one fetch): counted once.
            plant(
                home.path(),
                &format!("{i:02}/00/x"),
                &format!("https://r/{i:02}"),
            );
            plant(
                home.path(),
                &format!("{i:02}/01/y"),
                &format!("https://r/{i:02}"),
            );
        }
        let named = registry_fetches(home.path());
        assert_eq!(named.len(), NAMED + 1);
        assert_eq!(named.last().map(String::as_str), Some("and 4 more"));
    }
}
