//! `STUDYLOOP_ACC_CASSETTE` and `STUDYLOOP_ACC_CASSETTE_FILE`, parsed once into a
//! [`CassetteSetting`]: off (unset or blank), `record` (into the named file, else the
//! run directory's `cassette.jsonl`) or `replay` (from the named file, which it needs).

use std::path::PathBuf;

use super::CassetteError;
use crate::env::{EnvSource, setting};
pub use crate::env::{STUDYLOOP_ACC_CASSETTE, STUDYLOOP_ACC_CASSETTE_FILE};

/// What a cassette does with model traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CassetteMode {
    /// Every answered request is also appended to the cassette.
    Record,
    /// Requests are answered from the cassette only; nothing is sent.
    Replay,
}

impl CassetteMode {
    /// The word the variable and the evidence use.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Record => "record",
            Self::Replay => "replay",
        }
    }
}

/// The parsed cassette variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CassetteSetting {
    /// Record or replay.
    pub mode: CassetteMode,
    /// The cassette named by `STUDYLOOP_ACC_CASSETTE_FILE`; `None` (record only) means
    /// the caller's default, the run directory's `cassette.jsonl`.
    pub file: Option<PathBuf>,
}

impl CassetteSetting {
    /// Reads both variables: `Ok(None)` when cassettes are off.
    ///
    /// # Errors
    /// An unknown mode, a file without a mode, a relative file, or `replay` without a file.
    pub fn from_env(env: &(impl EnvSource + ?Sized)) -> Result<Option<Self>, CassetteError> {
        let file = setting(env, STUDYLOOP_ACC_CASSETTE_FILE)
            .map(|value| {
                let path = PathBuf::from(&value);
                if path.is_absolute() {
                    Ok(path)
                } else {
                    Err(CassetteError::RelativeFile { value })
                }
            })
            .transpose()?;
        let mode = match setting(env, STUDYLOOP_ACC_CASSETTE).as_deref() {
            None => {
                return match file {
                    // A file alone would silently do nothing: say so.
                    Some(file) => Err(CassetteError::FileWithoutMode { file }),
                    None => Ok(None),
                };
            }
            Some("record") => CassetteMode::Record,
            Some("replay") => CassetteMode::Replay,
            Some(other) => {
                return Err(CassetteError::UnknownMode {
                    value: other.to_owned(),
                });
            }
        };
        if mode == CassetteMode::Replay && file.is_none() {
            return Err(CassetteError::ReplayNeedsFile);
        }
        Ok(Some(Self { mode, file }))
    }
}

#[cfg(test)]
mod tests {
    use super::super::error::ACCEPTED;
    use super::*;

    type Env<'a> = &'a [(&'a str, &'a str)];

    fn parse(env: Env<'_>) -> Result<Option<CassetteSetting>, String> {
        CassetteSetting::from_env(env).map_err(|e| e.to_string())
    }

    #[test]
    fn unset_and_blank_are_off_and_the_two_modes_parse() {
        assert_eq!(parse(&[]), Ok(None));
        assert_eq!(parse(&[(STUDYLOOP_ACC_CASSETTE, "  ")]), Ok(None));
        assert_eq!(
            parse(&[(STUDYLOOP_ACC_CASSETTE, " record ")]),
            Ok(Some(CassetteSetting {
                mode: CassetteMode::Record,
                file: None
            }))
        );
        assert_eq!(
            parse(&[
                (STUDYLOOP_ACC_CASSETTE, "replay"),
                (STUDYLOOP_ACC_CASSETTE_FILE, "/x/c.jsonl")
            ]),
            Ok(Some(CassetteSetting {
                mode: CassetteMode::Replay,
                file: Some("/x/c.jsonl".into())
            }))
        );
    }

    #[test]
    fn bad_values_name_the_value_the_accepted_set_and_the_fix() {
        for bad in ["Record", "replay:/x", "on", "1", "rec"] {
            let err = parse(&[(STUDYLOOP_ACC_CASSETTE, bad)]).unwrap_err();
            assert!(
                err.contains(&format!("{bad:?}")) && err.contains(ACCEPTED),
                "{bad}: {err}"
            );
        }
        let err = parse(&[(STUDYLOOP_ACC_CASSETTE, "replay")]).unwrap_err();
        assert!(err.contains(STUDYLOOP_ACC_CASSETTE_FILE), "{err}");
        let err = parse(&[(STUDYLOOP_ACC_CASSETTE_FILE, "/x/c.jsonl")]).unwrap_err();
        assert!(err.contains("STUDYLOOP_ACC_CASSETTE=record"), "{err}");
        let err = parse(&[
            (STUDYLOOP_ACC_CASSETTE, "record"),
            (STUDYLOOP_ACC_CASSETTE_FILE, "rel/c.jsonl"),
        ])
        .unwrap_err();
        assert!(
            err.contains("\"rel/c.jsonl\"") && err.contains("absolute"),
            "{err}"
        );
    }
}
