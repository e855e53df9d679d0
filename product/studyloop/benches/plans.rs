//! Study plans: save + index of 1000 plans through `PlanApp` (the layer all
//! three doors call), and `GET /api/now` over HTTP against `studyloop web`
//! with 10 active plans, median of N requests. Target for `now`: < 20 ms.

#[path = "../tests/it/common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{median, ms};
use studyloop::plans::{CreateRequest, PlanApp};

const PLANS: usize = 1000;
const NOW_RUNS: usize = 60;

fn get(addr: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).expect("connect");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("write");
    let mut out = String::new();
    s.read_to_string(&mut out).expect("read");
    out
}

fn main() {
    let w = common::World::new();
    let ctx = studyloop::context::Ctx {
        env: w.lib_env(),
        cwd: w.home.path().into(),
        exe: common::exe().into(),
    };
    let app = PlanApp::from_ctx(&ctx).expect("plan app");
    let answers =
        serde_json::json!({"why": "w", "success": ["s"], "milestones": ["one", "two", "three"]});
    let mut each = Vec::with_capacity(PLANS);
    let t0 = Instant::now();
    for i in 0..PLANS {
        let status = if i < 10 { "active" } else { "draft" };
        let t = Instant::now();
        app.create(&CreateRequest {
            title: format!("Plan {i}"),
            answers: answers.clone(),
            plan_id: Some(format!("p{i}")),
            status: Some(status.into()),
            request_id: None,
        })
        .expect("create");
        each.push(t.elapsed());
    }
    let total = t0.elapsed();
    println!(
        "plans: save + index of {PLANS} plans: {:.0} ms total, median {:.2} ms per plan",
        ms(total),
        ms(median(each))
    );
    let t = Instant::now();
    let (n, _) = app.reindex().expect("reindex");
    println!("plans: reindex of {n} plans: {:.0} ms", ms(t.elapsed()));

    let mut web = w.cmd(&["web", "--port", "0"]);
    web.stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = web.spawn().expect("studyloop web");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("listening line");
    let addr = line
        .trim()
        .rsplit("http://")
        .next()
        .expect("address")
        .to_owned();
    assert!(
        get(&addr, "/api/now").contains("study_plan:"),
        "now names a plan"
    );
    let mut v = Vec::with_capacity(NOW_RUNS);
    for _ in 0..NOW_RUNS {
        let t = Instant::now();
        get(&addr, "/api/now");
        v.push(t.elapsed());
    }
    let now = median(v);
    println!(
        "plans: GET /api/now over HTTP ({PLANS} plan documents, 10 active): median {:.2} ms (target < 20 ms)",
        ms(now)
    );
    let _ = child.kill();
    let _ = child.wait();
    assert!(now < Duration::from_secs(1));
}
