//! The sign-off rubric: `rubric_v1.md` (YAML frontmatter with criteria, scales,
//! anchors, cited evidence and `reject_if`), pinned by sha256 in `registry.json`,
//! and the loader that refuses an unregistered or tampered rubric by name.
