//! The terminal player a cell page uses for its pane recordings: the pinned
//! `asciinema-player` bundle (vendored from npm by `uat/report-player/vendor.sh`,
//! which checks the tarball against `package-lock.json`'s sha512 integrity)
//! and our `init.js`, embedded here and written into every report under
//! `assets/player/`, so a report opens offline with nothing fetched.

/// Where the player's files go in a report.
pub(crate) const DIR: &str = "assets/player";

/// (file name, bytes) of every player file a report holds.
pub(crate) const FILES: [(&str, &[u8]); 4] = [
    (
        "asciinema-player.min.js",
        include_bytes!("../../report-player/vendor/asciinema-player.min.js"),
    ),
    (
        "asciinema-player.css",
        include_bytes!("../../report-player/vendor/asciinema-player.css"),
    ),
    (
        "LICENSE-asciinema-player",
        include_bytes!("../../report-player/vendor/LICENSE"),
    ),
    ("init.js", include_bytes!("../../report-player/init.js")),
];

/// The most bytes of one gzipped cast embedded in a page (larger ones are
/// linked): the bundle's budget for a 30-minute session.
pub(crate) const MAX_EMBEDDED: u64 = studyloop_acceptance::pane::cast::CAST_GZ_BUDGET;

/// The tags a page with recordings ends with (relative to `cells/`).
pub(crate) fn tags() -> String {
    format!(
        "<link rel=\"stylesheet\" href=\"../{DIR}/asciinema-player.css\">\n<script src=\"../{DIR}/asciinema-player.min.js\"></script>\n<script src=\"../{DIR}/init.js\"></script>\n"
    )
}
