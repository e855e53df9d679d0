//! The model itself: its pinned files, loading and checking them, and
//! embedding a text (token lookup + mean); `Availability` says whether search
//! may use it and, when not, why.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest as _, Sha256};

/// The model's identity, stored beside every vector: a vector made by another
/// model (or another version) is treated as missing, never compared.
pub const MODEL_ID: &str = "wordllama-0.4.0.post1/l2_supercat_256";

/// Where `just deps-embed` installs the model, relative to the repository root
/// (tests and the UAT journeys find it there; the product only through
/// `STUDYLOOP_EMBED_MODEL`).
pub const INSTALL_DIR: &str = ".deps/embed-model/wordllama-0.4.0.post1";

/// The two files the model directory holds, with their pinned sha256.
const FILES: [(&str, &str); 2] = [
    (
        WEIGHTS_FILE,
        "64b47a2dc493cb8e85944076601189739852d7b64e0e1eedcb1937a251cd9fd5",
    ),
    (
        TOKENIZER_FILE,
        "93248f2a9ec36c7b35f700a033d5f36228aae48db61aee31007fa49062cdeb68",
    ),
];
const WEIGHTS_FILE: &str = "l2_supercat_256.safetensors";
const TOKENIZER_FILE: &str = "l2_supercat_tokenizer_config.json";
/// Far above either file (16.4 MB, 1.8 MB); bounds a hostile or sparse file.
const READ_LIMIT: u64 = 64 << 20;
/// Texts are embedded from their first this-many characters (the lexical side
/// still sees all of it); bounds the work a huge query or line can cause.
pub const MAX_EMBED_CHARS: usize = 4096;

/// The model could not be used; each names the file, the reason and the fix.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// A file could not be read (missing, a symlink, a FIFO, too large, …).
    #[error(
        "cannot read the embedding model file {path}: {source}; run `just deps-embed` or point STUDYLOOP_EMBED_MODEL at the directory it installs"
    )]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error (names a symlink or FIFO as such).
        source: std::io::Error,
    },
    /// A file is not the pinned one.
    #[error(
        "the embedding model file {path} has sha256 {found}, expected {expected} ({MODEL_ID}); it is corrupt, truncated or another model: run `just deps-embed` to reinstall it"
    )]
    Hash {
        /// The file.
        path: PathBuf,
        /// Its sha256.
        found: String,
        /// The pinned sha256.
        expected: &'static str,
    },
    /// The pinned files do not parse (only a build whose parser is wrong meets this).
    #[error("the embedding model file {path} is unusable: {reason}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// A loaded model.
pub struct Embedder {
    tokenizer: super::bpe::Tokenizer,
    table: super::weights::Table,
}

/// The model's identity and shape only: the derived form would print 8 million
/// floats wherever a `Store` or an `Availability` is debug-printed.
impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("model", &MODEL_ID)
            .field("rows", &self.table.rows)
            .field("dim", &self.table.dim)
            .finish_non_exhaustive()
    }
}

impl Embedder {
    /// Load and verify the model in `dir`.
    ///
    /// # Errors
    /// [`EmbedError`] naming the file, what is wrong and the fix.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let [weights, tokenizer] = FILES.map(|(name, expected)| {
            let path = dir.join(name);
            let bytes =
                studyloop_regular_file::read_regular(&path, READ_LIMIT).map_err(|source| {
                    EmbedError::Read {
                        path: path.clone(),
                        source,
                    }
                })?;
            let found = crate::ids::hex(&Sha256::digest(&bytes));
            if found != expected {
                return Err(EmbedError::Hash {
                    path,
                    found,
                    expected,
                });
            }
            Ok((path, bytes))
        });
        let ((wpath, wbytes), (tpath, tbytes)) = (weights?, tokenizer?);
        let table = super::weights::Table::from_safetensors(&wbytes).map_err(|reason| {
            EmbedError::Format {
                path: wpath,
                reason,
            }
        })?;
        let tokenizer =
            super::bpe::Tokenizer::from_json(&tbytes).map_err(|reason| EmbedError::Format {
                path: tpath.clone(),
                reason,
            })?;
        if usize::try_from(tokenizer.max_id()).unwrap_or(usize::MAX) >= table.rows {
            return Err(EmbedError::Format {
                path: tpath,
                reason: format!(
                    "token ids reach {} but the table has {} rows",
                    tokenizer.max_id(),
                    table.rows
                ),
            });
        }
        Ok(Self { tokenizer, table })
    }

    /// The vector width.
    pub fn dim(&self) -> usize {
        self.table.dim
    }

    /// The unit-length mean of `text`'s token vectors (its first
    /// [`MAX_EMBED_CHARS`] characters); `None` when it has no tokens.
    pub fn embed(&self, text: &str) -> Option<Vec<f32>> {
        let cut = text
            .char_indices()
            .nth(MAX_EMBED_CHARS)
            .map_or(text, |(at, _)| &text[..at]);
        let ids = self.tokenizer.encode(cut);
        if ids.is_empty() {
            return None;
        }
        let mut sum = vec![0f32; self.table.dim];
        for id in &ids {
            for (s, v) in sum.iter_mut().zip(self.table.row(*id)) {
                *s += v;
            }
        }
        // The mean's direction is the sum's: normalizing makes it unit length.
        let norm = sum.iter().map(|v| v * v).sum::<f32>().sqrt();
        (norm.is_finite() && norm > 0.0).then(|| sum.iter().map(|v| v / norm).collect())
    }

    /// Token ids (no special tokens added), for the tokenizer's cross-check.
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text)
    }
}

/// Cosine similarity of two unit vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// What hybrid search can use right now: a model, or the reason it cannot.
#[derive(Debug, Clone)]
pub enum Availability {
    /// The model loaded and verified.
    Ready(Arc<Embedder>),
    /// No model: lexical only, with the reason shown to the user.
    Lexical(String),
}

impl Availability {
    /// Load the model the setting names (`None`: not configured).
    pub fn from_setting(dir: Option<&Path>) -> Self {
        match dir {
            None => Self::Lexical(format!(
                "{} is not set; run `just deps-embed` and set it to the directory it prints",
                crate::env::STUDYLOOP_EMBED_MODEL
            )),
            Some(d) => match Embedder::load(d) {
                Ok(e) => Self::Ready(Arc::new(e)),
                Err(e) => Self::Lexical(e.to_string()),
            },
        }
    }

    /// Load the model `STUDYLOOP_EMBED_MODEL` names.
    ///
    /// # Errors
    /// The variable holds a relative path.
    pub fn from_env(env: &crate::env::Env) -> Result<Self, crate::settings::SettingsError> {
        Ok(Self::from_setting(
            crate::settings::embed_model_dir(env)?.as_deref(),
        ))
    }

    /// The model, when ready.
    pub fn embedder(&self) -> Option<&Embedder> {
        match self {
            Self::Ready(e) => Some(e),
            Self::Lexical(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lexical_reason(a: &Availability) -> &str {
        match a {
            Availability::Lexical(r) => r,
            Availability::Ready(_) => panic!("expected lexical"),
        }
    }

    #[test]
    fn unset_missing_corrupt_symlinked_and_fifo_models_fall_back_with_the_reason() {
        let unset = Availability::from_setting(None);
        assert!(lexical_reason(&unset).contains("STUDYLOOP_EMBED_MODEL is not set"));
        let dir = tempfile::tempdir().unwrap();
        let missing = Availability::from_setting(Some(dir.path()));
        let r = lexical_reason(&missing);
        assert!(
            r.contains(WEIGHTS_FILE) && r.contains("just deps-embed"),
            "{r}"
        );
        // A truncated (or any other) weights file: refused by its hash.
        std::fs::write(dir.path().join(WEIGHTS_FILE), b"\x10\0\0\0\0\0\0\0{}").unwrap();
        let r = lexical_reason(&Availability::from_setting(Some(dir.path()))).to_owned();
        assert!(
            r.contains("sha256") && r.contains(FILES[0].1) && r.contains("corrupt"),
            "{r}"
        );
        // A symlink and a FIFO in place of the file: named, never followed or blocked on.
        std::fs::remove_file(dir.path().join(WEIGHTS_FILE)).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join(WEIGHTS_FILE)).unwrap();
        let r = lexical_reason(&Availability::from_setting(Some(dir.path()))).to_owned();
        assert!(r.contains("symlink"), "{r}");
        std::fs::remove_file(dir.path().join(WEIGHTS_FILE)).unwrap();
        studyloop_regular_file::make_fifo_for_tests(&dir.path().join(WEIGHTS_FILE));
        let r = lexical_reason(&Availability::from_setting(Some(dir.path()))).to_owned();
        assert!(r.contains("FIFO") || r.contains("fifo"), "{r}");
    }
}
