//! The network of a phase (docs/drills.md#network-of-a-phase): a drill with no
//! network prerequisite runs in a network namespace of its own, so a TCP
//! service on the machine's loopback (a running `studyloop web`, the stub
//! provider, LiteLLM) and an abstract Unix socket opened outside are out of
//! its reach, while its own loopback works; a drill declaring a prerequisite
//! (docker, kind, kubectl) shares the machine's network and reaches both.
//! As root, and again as uid 65534 (re-executed through `setpriv`).

use std::os::linux::net::SocketAddrExt as _;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::contain_tests::again_as_nobody;
use super::runner;
use super::runner_tests::plan_for;
use super::sandbox::Network;

/// Answers every connection with a tiny HTTP response and counts them.
fn serve<S: std::io::Read + std::io::Write>(
    mut accept: impl FnMut() -> Option<S> + Send + 'static,
) -> Arc<AtomicUsize> {
    let hits = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&hits);
    std::thread::spawn(move || {
        while let Some(mut s) = accept() {
            count.fetch_add(1, Ordering::Relaxed);
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
            let _ = s.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok");
        }
    });
    hits
}

/// What a phase reached: (outside TCP, outside abstract socket, its own
/// loopback), from its output, and the connections the outside saw.
fn reach(prerequisites: Vec<(String, PathBuf)>) -> (String, usize) {
    assert!(
        std::path::Path::new("/usr/bin/curl").is_file()
            && std::path::Path::new("/usr/bin/perl").is_file(),
        "this test needs /usr/bin/curl and /usr/bin/perl"
    );
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = tcp.local_addr().unwrap().port();
    let name = format!("studyloop-net-test-{}", crate::ids::random_hex(6));
    let unix = UnixListener::bind_addr(&SocketAddr::from_abstract_name(&name).unwrap()).unwrap();
    let tcp_hits = serve(move || tcp.accept().ok().map(|(s, _)| s));
    let unix_hits = serve(move || unix.accept().ok().map(|(s, _)| s));
    let script = format!(
        "#!/bin/sh\n\
         curl -s --max-time 3 http://127.0.0.1:{port}/ && echo REACHED-TCP\n\
         curl -s --max-time 3 --abstract-unix-socket {name} http://x/ && echo REACHED-ABSTRACT\n\
         perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(Listen => 1, LocalAddr => \"127.0.0.1:0\") or die; IO::Socket::INET->new(PeerAddr => \"127.0.0.1:\" . $s->sockport) or die; print \"OWN-LOOPBACK\\n\"'\n\
         exit 0\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let mut plan = plan_for(dir.path(), "check", &script, 20);
    plan.prerequisites = prerequisites;
    let a = runner::attempt(dir.path(), &plan).unwrap();
    let o = runner::run(&plan, &a).unwrap();
    assert_eq!(o.code, Some(0), "{}", o.output);
    let hits = tcp_hits.load(Ordering::Relaxed) + unix_hits.load(Ordering::Relaxed);
    (o.output, hits)
}

fn offline_and_online() {
    // Before (and still, for a drill that declares a network prerequisite):
    // both services outside are reached.
    let curl = PathBuf::from("/usr/bin/curl");
    let (out, hits) = reach(vec![("kubectl".into(), curl)]);
    assert!(
        out.contains("REACHED-TCP") && out.contains("REACHED-ABSTRACT") && hits == 2,
        "{hits} connections: {out}"
    );
    // An offline drill: neither, and nothing arrived outside; its own
    // loopback works.
    let (out, hits) = reach(Vec::new());
    assert!(!out.contains("REACHED"), "{out}");
    assert_eq!(hits, 0, "connections arrived outside: {out}");
    assert!(out.contains("OWN-LOOPBACK"), "{out}");
}

#[test]
fn an_offline_drill_reaches_no_service_of_the_machine() {
    offline_and_online();
}

#[test]
fn an_offline_drill_reaches_no_service_for_an_unprivileged_user_too() {
    again_as_nobody(module_path!(), "network_as_the_reexecuted_user", "network");
}

#[test]
#[ignore = "run by an_offline_drill_reaches_no_service_for_an_unprivileged_user_too as uid 65534"]
fn network_as_the_reexecuted_user() {
    assert!(!rustix::process::geteuid().is_root());
    offline_and_online();
}

#[test]
fn only_a_network_prerequisite_or_a_cluster_target_shares_the_network() {
    let dir = tempfile::tempdir().unwrap();
    let mut plan = plan_for(dir.path(), "check", "#!/bin/sh\n", 5);
    assert_eq!(runner::network(&plan), Network::LoopbackOnly);
    plan.target = "kubeconfig-context".into();
    assert_eq!(runner::network(&plan), Network::Shared);
    plan.target = "workdir".into();
    for p in ["docker", "kind", "kubectl"] {
        plan.prerequisites = vec![(p.into(), PathBuf::from("/usr/bin/true"))];
        assert_eq!(runner::network(&plan), Network::Shared, "{p}");
    }
}
