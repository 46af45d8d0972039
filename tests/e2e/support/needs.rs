//! What a test needs from outside Rust: a PostgreSQL server, a real kube-apiserver, kubectl, a
//! Python with a vendor's client. Such a test is `#[ignore = "needs …"]`, so a plain
//! `cargo test` lists it as ignored with its need; `cargo test -- --include-ignored` (what
//! `.ci/run` runs, with every need installed and started) runs it. Run without its need, it
//! fails saying what to set or install: it never passes having checked nothing.

use std::process::{Command, Stdio};

/// The value of `var`, which names `what` the test needs. Never printed (a URL may hold a
/// password).
pub fn env(var: &str, what: &str) -> String {
    match std::env::var(var) {
        Ok(value) if !value.is_empty() => value,
        _ => panic!("{var} is not set: this test needs {what} (.ci/run provides it)"),
    }
}

/// Requires `program` on PATH, answering `args` (e.g. `--version`) with success.
pub fn program(program: &str, args: &[&str]) {
    let answered = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output();
    match answered {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "`{program} {}` failed ({}): this test needs a working {program} on PATH",
            args.join(" "),
            out.status
        ),
        Err(error) => panic!(
            "{program} is not on PATH ({error}): this test needs it; install it \
             (.ci/run does)"
        ),
    }
}

/// The URL of the PostgreSQL server the `pipeline::postgres` tests share (`.ci/postgres.sh` starts one).
pub fn pg_url() -> String {
    env("SKYPLAN_TEST_PG_URL", "a PostgreSQL server's URL")
}

/// The kubeconfig of the real kube-apiserver the `kubernetes::real_apiserver` tests share (`.ci/kube-apiserver.sh`
/// starts one).
pub fn real_kubeconfig() -> String {
    env(
        "SKYPLAN_TEST_KUBECONFIG",
        "a kubeconfig reaching a real kube-apiserver (v1.37.2, built from Go modules by .ci/kube-apiserver.sh)",
    )
}

pub fn kubectl() {
    program("kubectl", &["version", "--client"]);
}

/// Debian's Chromium, to render the HTML plan in a real browser (`.ci/run` installs it).
pub fn chromium() -> &'static str {
    program("chromium", &["--version"]);
    "chromium"
}
