//! The index's filters and search (`filter.js`, written next to `index.html`): progressive enhancement. Without scripts the trials
//! table is whole and readable; with them, a status, harness and surface
//! selector and a text search hide the rows that do not match, as
//! Playwright's HTML report does. One file, no inline script, so the page's
//! CSP stays `script-src 'self'` and it works from `file://`.

/// Where the index loads it from (relative to `index.html`).
pub(crate) const PATH: &str = "filter.js";

/// The script.
pub(crate) const JS: &str = include_str!("filter.js");
