//! The pin check: a file's declared version, its exact bytes (CRLF normalised to LF) and
//! the sha256 its registry pins for that version. A registry that names a version twice
//! is refused by key: the second entry would silently replace a released digest.

use std::collections::BTreeMap;

use sha2::{Digest as _, Sha256};

/// Why a pinned file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PinError {
    /// The registry itself is not a JSON object of `"<version>": "<64 lowercase hex>"`.
    #[error(
        "`{registry}` is not a valid pin registry: {detail}; expected a JSON object mapping \
         each version (a decimal string such as \"1\") to the 64-hex sha256 of that file"
    )]
    Registry {
        /// The registry file's name.
        registry: String,
        /// What was wrong with it.
        detail: String,
    },
    /// The registry names one version twice; a JSON reader would keep the last entry,
    /// so the second could silently replace a released digest.
    #[error(
        "`{registry}` registers version `{key}` twice; each version maps to exactly one \
         sha256: keep the released entry and remove the other"
    )]
    DuplicateVersion {
        /// The registry file's name.
        registry: String,
        /// The repeated key, as written.
        key: String,
    },
    /// The file declares a version the registry has no entry for.
    #[error(
        "`{file}` declares version {version}, which `{registry}` does not register \
         (registered: {registered}); add `\"{version}\": \"{actual}\"` to `{registry}` \
         when you introduce a new version"
    )]
    Unregistered {
        /// The pinned file's name.
        file: String,
        /// The version the file declares.
        version: u32,
        /// The registry file's name.
        registry: String,
        /// The versions the registry does hold, comma-separated (or `none`).
        registered: String,
        /// The file's actual digest, so the fix can be pasted.
        actual: String,
    },
    /// The file's bytes no longer match the digest pinned for its version.
    #[error(
        "`{file}` version {version} is tampered: `{registry}` pins sha256 {expected} but the \
         file hashes to {actual}; an edit requires a version bump (a new file) and a new \
         registry entry, never an in-place change"
    )]
    Tampered {
        /// The pinned file's name.
        file: String,
        /// The version the file declares.
        version: u32,
        /// The registry file's name.
        registry: String,
        /// The pinned digest.
        expected: String,
        /// The digest of the file as found.
        actual: String,
    },
}

/// The lowercase-hex sha256 of `bytes` with every CRLF normalised to LF.
///
/// Normalising first means a checkout with `core.autocrlf` hashes the same as the
/// committed bytes; nothing else is normalised, so any visible edit changes the digest.
#[must_use]
pub fn digest(bytes: &[u8]) -> String {
    let mut hasher = Sha256::new();
    let mut rest = bytes;
    while let Some(at) = rest.windows(2).position(|w| w == b"\r\n") {
        hasher.update(&rest[..at]);
        hasher.update(b"\n");
        rest = &rest[at + 2..];
    }
    hasher.update(rest);
    hex(&hasher.finalize())
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    out
}

/// A pinned file as read: its name (for messages), declared version and bytes, plus its
/// registry's name and bytes.
#[derive(Debug, Clone, Copy)]
pub struct PinnedFile<'a> {
    /// The file name shown in errors, e.g. `rules_v1.yaml`.
    pub file: &'a str,
    /// The version the file declares.
    pub version: u32,
    /// The file's exact bytes.
    pub bytes: &'a [u8],
    /// The registry name shown in errors, e.g. `redaction/registry.json`.
    pub registry: &'a str,
    /// The registry's bytes.
    pub registry_bytes: &'a [u8],
}

impl PinnedFile<'_> {
    /// Checks the file against its registry and returns its digest.
    ///
    /// # Errors
    /// [`PinError::Registry`] for a malformed registry, [`PinError::Unregistered`] for an
    /// unknown version, [`PinError::Tampered`] when the bytes do not match the pin.
    pub fn verify(&self) -> Result<String, PinError> {
        let pins = parse_registry(self.registry, self.registry_bytes)?;
        let actual = digest(self.bytes);
        match pins.get(&self.version) {
            None => Err(PinError::Unregistered {
                file: self.file.to_owned(),
                version: self.version,
                registry: self.registry.to_owned(),
                registered: if pins.is_empty() {
                    "none".to_owned()
                } else {
                    pins.keys()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                },
                actual,
            }),
            Some(expected) if *expected != actual => Err(PinError::Tampered {
                file: self.file.to_owned(),
                version: self.version,
                registry: self.registry.to_owned(),
                expected: expected.clone(),
                actual,
            }),
            Some(_) => Ok(actual),
        }
    }
}

fn parse_registry(name: &str, bytes: &[u8]) -> Result<BTreeMap<u32, String>, PinError> {
    let bad = |detail: String| PinError::Registry {
        registry: name.to_owned(),
        detail,
    };
    let Entries(raw) = serde_json::from_slice(bytes).map_err(|e| bad(e.to_string()))?;
    let mut pins = BTreeMap::new();
    for (key, value) in raw {
        let version = key
            .parse::<u32>()
            .ok()
            .filter(|v| v.to_string() == key)
            .ok_or_else(|| bad(format!("key `{key}` is not a decimal version number")))?;
        let is_hex = value.len() == 64
            && value
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !is_hex {
            return Err(bad(format!(
                "version {key} maps to `{value}`, which is not 64 lowercase hex digits"
            )));
        }
        if pins.insert(version, value).is_some() {
            return Err(PinError::DuplicateVersion {
                registry: name.to_owned(),
                key,
            });
        }
    }
    Ok(pins)
}

/// A JSON object's entries in file order, repeats included, so a repeated key can be
/// refused instead of silently keeping the last value (what a map would do).
struct Entries(Vec<(String, String)>);

impl<'de> serde::Deserialize<'de> for Entries {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;
        impl<'de> serde::de::Visitor<'de> for EntriesVisitor {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object of version strings to sha256 strings")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Entries, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, String>()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(EntriesVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file<'a>(bytes: &'a [u8], registry: &'a [u8]) -> PinnedFile<'a> {
        PinnedFile {
            file: "thing_v1.yaml",
            version: 1,
            bytes,
            registry: "registry.json",
            registry_bytes: registry,
        }
    }

    #[test]
    fn digest_is_sha256_hex_of_lf_normalised_bytes() {
        // sha256("abc"), a published test vector.
        assert_eq!(
            digest(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(digest(b"a\r\nb\r\n"), digest(b"a\nb\n"));
        // A lone CR is content, not a line ending.
        assert_ne!(digest(b"a\rb"), digest(b"a\nb"));
    }

    #[test]
    fn verify_accepts_the_pinned_bytes_and_returns_the_digest() {
        let registry = format!("{{\"1\": \"{}\"}}", digest(b"v: 1\n"));
        assert_eq!(
            file(b"v: 1\r\n", registry.as_bytes()).verify(),
            Ok(digest(b"v: 1\n"))
        );
    }

    #[test]
    fn verify_names_expected_and_actual_hash_when_tampered() {
        let registry = format!("{{\"1\": \"{}\"}}", digest(b"v: 1\n"));
        let err = file(b"v: 1 # edited\n", registry.as_bytes())
            .verify()
            .unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, PinError::Tampered { .. }), "{msg}");
        assert!(msg.contains("thing_v1.yaml"), "{msg}");
        assert!(msg.contains(&digest(b"v: 1\n")), "{msg}");
        assert!(msg.contains(&digest(b"v: 1 # edited\n")), "{msg}");
        assert!(msg.contains("version bump"), "{msg}");
    }

    #[test]
    fn verify_names_registered_versions_when_unregistered() {
        let registry = format!("{{\"2\": \"{}\"}}", digest(b"x"));
        let err = file(b"v", registry.as_bytes()).verify().unwrap_err();
        assert!(
            matches!(&err, PinError::Unregistered { registered, .. } if registered == "2"),
            "{err}"
        );
    }

    #[test]
    fn a_version_registered_twice_is_refused_by_key_and_file() {
        // Last-wins would let the second line replace the released digest in place.
        let released = digest(b"v: 1\n");
        let registry = format!(
            "{{\"1\": \"{released}\", \"1\": \"{}\"}}",
            digest(b"v: 1 # edited\n")
        );
        let err = file(b"v: 1 # edited\n", registry.as_bytes())
            .verify()
            .unwrap_err();
        assert!(
            matches!(&err, PinError::DuplicateVersion { key, .. } if key == "1"),
            "{err}"
        );
        assert!(err.to_string().contains("registry.json"), "{err}");
        assert!(err.to_string().contains("`1` twice"), "{err}");
        // Also when the repeat reads the same digest: one entry per version, always.
        let same = format!("{{\"1\": \"{released}\", \"1\": \"{released}\"}}");
        assert!(matches!(
            file(b"v: 1\n", same.as_bytes()).verify(),
            Err(PinError::DuplicateVersion { .. })
        ));
    }

    #[test]
    fn malformed_registries_are_refused_by_name() {
        for bad in [
            &b"[]"[..],
            b"{\"one\": \"00\"}",
            b"{\"01\": \"00\"}",
            b"{\"1\": \"ABC\"}",
        ] {
            let err = file(b"v", bad).verify().unwrap_err();
            assert!(matches!(err, PinError::Registry { .. }), "{err}");
            assert!(err.to_string().contains("registry.json"), "{err}");
        }
    }
}
