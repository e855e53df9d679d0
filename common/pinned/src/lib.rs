//! Pinned data files: the one loader behind every versioned data file in the workspace
//! (the redaction rules, the rubric, the council roster and the sign-off definition), and
//! [`yaml`], the one door to YAML they are parsed through. A leaf: it knows nothing of
//! what the files mean (validating the parsed content is the owning crate's job), so
//! `redaction`, `rubrics` and `uat` share it without depending on each other.
//!
//! A pinned file carries an integer `version`; a sibling `registry.json` maps each
//! registered version (a decimal string key) to the sha256 of that file's exact bytes,
//! after CRLF is normalised to LF so a Windows checkout hashes like a Unix one. Editing a
//! registered version in place is refused as tampered: a change needs a new version and a
//! new registry entry, so a run's manifest can name the exact text it was judged by.
//!
//! [`load_yaml`] is the one loading order every pinned YAML document follows: refuse a
//! repeated key, probe the declared `version`, verify the pin over the exact bytes, and
//! only then parse strictly, so an edited file is reported as tampered rather than as
//! whatever the edit broke.
//!
//! Nothing here is last-wins: a registry that names a version twice and a YAML document
//! that writes a key twice (in any spelling) are refused by key and file, because the
//! second entry would silently replace the first, a released digest or a rubric line.

mod load;
mod pin;
pub mod yaml;

pub use load::{LoadError, Loaded, load_yaml, load_yaml_file, utf8};
pub use pin::{PinError, PinnedFile, digest};
