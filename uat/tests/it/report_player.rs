//! Issue 17: the terminal player vendored into every report is the one the
//! lock pins: `package-lock.json` names asciinema-player with a sha512
//! integrity (what `vendor.sh`'s `npm ci` checked the tarball against), and the
//! committed bundle files still hash to what `vendor.sh` recorded.

use std::path::Path;

fn player_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("report-player")
}

#[test]
fn the_vendored_player_is_the_locked_one_and_unedited() {
    let dir = player_dir();
    let lock: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("package-lock.json")).unwrap())
            .unwrap();
    let pkg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("package.json")).unwrap()).unwrap();
    let wanted = pkg["dependencies"]["asciinema-player"].as_str().unwrap();
    let locked = &lock["packages"]["node_modules/asciinema-player"];
    assert_eq!(
        locked["version"], wanted,
        "package.json and the lock disagree"
    );
    assert!(
        locked["integrity"]
            .as_str()
            .is_some_and(|i| i.starts_with("sha512-")),
        "{locked}"
    );
    let sums = std::fs::read_to_string(dir.join("vendor/SHA256SUMS")).unwrap();
    let mut checked = 0;
    for line in sums.lines() {
        let (sum, name) = line.split_once("  ").unwrap();
        let bytes = std::fs::read(dir.join("vendor").join(name)).unwrap();
        assert_eq!(
            studyloop_acceptance::evidence::hash_bytes(&bytes),
            sum,
            "vendor/{name} was edited; re-run uat/report-player/vendor.sh"
        );
        checked += 1;
    }
    assert_eq!(checked, 2, "the player's script and style sheet");
}
