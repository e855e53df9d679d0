//! `studyloop doctor` probes the prerequisites installed modules declare: one
//! present (its path and version), one missing (a warning naming the module and
//! how to install it), one whose `--version` hangs (in the foreground, or in a
//! background child that keeps stdout open), on a PATH the test controls. The
//! hung one must not stall doctor.

use std::time::{Duration, Instant};

use crate::common::World;

fn doctor_json(w: &World) -> (serde_json::Value, Duration) {
    let started = Instant::now();
    let out = w.run(&["doctor", "--json"]);
    let took = started.elapsed();
    let r = crate::common::json_result(&out, "doctor");
    (r, took)
}

fn prereq<'a>(r: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    r["prerequisites"]
        .as_array()
        .unwrap_or_else(|| panic!("no prerequisites list: {r}"))
        .iter()
        .find(|p| p["id"] == id)
        .unwrap_or_else(|| panic!("no prerequisite {id}: {r}"))
}

fn check<'a>(r: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {r}"))
}

#[test]
fn doctor_lists_each_declared_prerequisite_found_missing_or_hung() {
    let mut w = World::bare();
    assert_eq!(w.run(&["module", "new", "kube"]).code, 0);
    let manifest = w.home.path().join("kube/module.yaml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(text.contains("prerequisites: []"), "{text}");
    std::fs::write(
        &manifest,
        text.replace(
            "prerequisites: []",
            "prerequisites:\n  - id: docker\n  - id: kind\n  - id: kubectl",
        ),
    )
    .unwrap();
    let add = w.run(&["module", "add", "kube"]);
    assert_eq!(add.code, 0, "{add:?}");
    // Only the fake-bin dir: the host's own kubectl must not be found.
    w.set_env("PATH", &w.bin.display().to_string());
    let kind = w.fake_bin("kind", "echo 'kind v0.24.0 go1.22.6 linux/amd64'");
    let docker = w.fake_bin("docker", "exec /bin/sleep 30");

    let (r, took) = doctor_json(&w);
    assert!(
        took < Duration::from_secs(10),
        "a hung --version stalled doctor: {took:?}"
    );
    let k = prereq(&r, "kind");
    assert_eq!(
        (&k["module"], &k["status"], &k["path"], &k["version"]),
        (
            &serde_json::json!("kube"),
            &serde_json::json!("found"),
            &serde_json::json!(kind.display().to_string()),
            &serde_json::json!("kind v0.24.0 go1.22.6 linux/amd64")
        ),
        "{r}"
    );
    assert_eq!(check(&r, "module kube: kind")["status"], "ok");
    let d = prereq(&r, "docker");
    assert_eq!(d["status"], "found", "{r}");
    assert_eq!(d["path"], docker.display().to_string());
    assert!(d["version"].is_null(), "unknown version is null: {d}");
    assert!(
        d["note"].as_str().unwrap().contains("did not answer"),
        "{d}"
    );
    let m = prereq(&r, "kubectl");
    assert!(
        m["status"] == "missing" && m["path"].is_null() && m["version"].is_null(),
        "{m}"
    );
    let c = check(&r, "module kube: kubectl");
    assert_eq!(c["status"], "warn");
    assert!(
        c["detail"]
            .as_str()
            .unwrap()
            .contains("module kube needs it")
            && c["fix"].as_str().unwrap().contains("install kubectl"),
        "{c}"
    );

    // A version that answers but leaves a child holding stdout open.
    w.fake_bin("docker", "/bin/sleep 30 &\necho 'Docker version 27.0.1'");
    let (r, took) = doctor_json(&w);
    assert!(
        took < Duration::from_secs(10),
        "a child holding stdout stalled doctor: {took:?}"
    );
    assert_eq!(
        prereq(&r, "docker")["version"],
        "Docker version 27.0.1",
        "{r}"
    );

    let text = w.run(&["doctor"]).stdout;
    assert!(
        text.contains("module kube: kind")
            && text.contains("`kubectl` not on PATH; module kube needs it")
            && text.contains("fix: install kubectl"),
        "{text}"
    );
}
