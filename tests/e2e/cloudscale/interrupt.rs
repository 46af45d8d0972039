//! Ctrl-C during apply, against `skyplan sim serve` slowed by its latency fault: the first
//! SIGINT (or SIGTERM) starts no new change and lets the one in flight finish — its pool is
//! never left without members —, records the state, says what was done and what was not and
//! exits 1; a second one stops at once, leaving the journal for the next run to recover from.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::support::{Output, Project, SimServer, SIM_TOKEN};

/// Every API call takes this long, so that a change is still running when the signal comes.
const LATENCY: &str = "latency=250-250ms";
/// Load balancers apply changes one at a time (`--parallelism 1`): one in flight, the rest
/// waiting when the signal comes.
const NAMES: [&str; 4] = ["lb0", "lb1", "lb2", "lb3"];
const OLD: &str = "10.0.0.11";
const NEW: &str = "10.0.0.21";
/// What apply prints once it has taken the first signal; the test sends the second after it.
const FIRST_NOTICE: &str = "again to stop at once";
/// Generous: the whole apply takes a few seconds.
const PATIENCE: Duration = Duration::from_secs(120);

struct SlowCloud {
    project: Project,
    sim: SimServer,
}

impl SlowCloud {
    /// Four load balancers with one member each (`OLD`), applied, on a slow cloud.
    fn applied() -> SlowCloud {
        let project = Project::new();
        let sim = SimServer::start_with(&project.path().join("world.json"), 0, LATENCY);
        let cloud = SlowCloud { project, sim };
        cloud.configure(OLD);
        let out = cloud.skyplan(&["apply", "--auto-approve"]);
        assert_eq!(out.code, 0, "{out:?}");
        cloud
    }

    /// Each load balancer with the one member `member`: swapping it is a delete and a create
    /// in the same pool.
    fn configure(&self, member: &str) {
        let mut text = format!(
            "[provider.cloudscale]\nendpoint = \"{}\"\n\n",
            self.sim.base_url
        );
        for (i, name) in NAMES.iter().enumerate() {
            text += &format!(
                "[load-balancer.{name}]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"{member}\"]\n\n\
                 [[load-balancer.{name}.ports]]\nname = \"http\"\nport = 80\nnode-port = {}\n\n",
                30080 + i
            );
        }
        self.project.config(&text);
    }

    fn skyplan(&self, args: &[&str]) -> Output {
        crate::support::run(
            self.project
                .command(args)
                .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN),
        )
    }

    /// `apply --parallelism 1`, sent `signals[0]` once a line of its progress is `trigger`,
    /// and each further signal once apply said it took the one before. Returns the outcome
    /// and the line that triggered the first signal.
    fn apply_signalled(
        &self,
        trigger: &dyn Fn(&str) -> bool,
        signals: &[libc::c_int],
    ) -> (Output, String) {
        let mut child = self
            .project
            .command(&["apply", "--auto-approve", "--parallelism", "1"])
            .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start apply");
        let stdout = read_all(child.stdout.take().unwrap());
        let (lines, stderr) = read_lines(child.stderr.take().unwrap());
        let mut seen = Vec::new();
        let triggered = wait_for(&lines, &mut seen, trigger)
            .unwrap_or_else(|| panic!("apply ended before the trigger:\n{}", seen.join("\n")));
        let notice = |line: &str| line.contains(FIRST_NOTICE);
        for (i, &signal) in signals.iter().enumerate() {
            if i > 0 && wait_for(&lines, &mut seen, &notice).is_none() {
                break; // apply ended (or died) before it took the signal before.
            }
            send(&child, signal);
        }
        let code = wait_with_patience(&mut child);
        drop(lines);
        let out = Output {
            code,
            stdout: stdout.join().unwrap(),
            stderr: stderr.join().unwrap(),
        };
        (out, triggered)
    }

    /// Each pool's members, by the name of its load balancer.
    fn members(&self) -> Vec<(String, Vec<String>)> {
        let mut found = Vec::new();
        for lb in self.sim.list("/load-balancers") {
            let pools = self.sim.list("/load-balancers/pools");
            for pool in pools
                .iter()
                .filter(|p| p["load_balancer"]["uuid"] == lb["uuid"])
            {
                let path = format!(
                    "/load-balancers/pools/{}/members",
                    pool["uuid"].as_str().unwrap()
                );
                let mut names: Vec<String> = (self.sim.list(&path).iter())
                    .map(|m| m["address"].as_str().unwrap().to_string())
                    .collect();
                names.sort();
                found.push((lb["name"].as_str().unwrap().to_string(), names));
            }
        }
        found.sort();
        found
    }

    fn journal(&self) -> std::path::PathBuf {
        self.project.path().join("state/skyplan.journal")
    }

    /// The addresses the next plan would change.
    fn planned_changes(&self) -> Vec<String> {
        let plan = self.skyplan(&["plan", "--json"]);
        assert_eq!(plan.code, 0, "{plan:?}");
        let plan = plan.json();
        (plan["changes"].as_array().unwrap().iter())
            .filter(|c| c["action"] != "no-op")
            .map(|c| c["address"].as_str().unwrap().to_string())
            .collect()
    }
}

fn read_all(mut from: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = from.read_to_string(&mut text);
        text
    })
}

/// Each line as it comes, and all of them once the stream ends.
fn read_lines(
    from: impl Read + Send + 'static,
) -> (Receiver<String>, std::thread::JoinHandle<String>) {
    let (send, lines) = mpsc::channel();
    let all = std::thread::spawn(move || {
        let mut text = String::new();
        for line in BufReader::new(from).lines().map_while(Result::ok) {
            text += &line;
            text.push('\n');
            let _ = send.send(line);
        }
        text
    });
    (lines, all)
}

/// The next line that is `wanted`; `None` when the stream ended first.
fn wait_for(
    lines: &Receiver<String>,
    seen: &mut Vec<String>,
    wanted: &dyn Fn(&str) -> bool,
) -> Option<String> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => {
                seen.push(line.clone());
                if wanted(&line) {
                    return Some(line);
                }
            }
            Err(RecvTimeoutError::Disconnected) => return None,
            Err(RecvTimeoutError::Timeout) => {
                panic!(
                    "not the line waited for in {PATIENCE:?}:\n{}",
                    seen.join("\n")
                )
            }
        }
    }
}

fn send(child: &Child, signal: libc::c_int) {
    let pid = libc::pid_t::try_from(child.id()).expect("a process id");
    // SAFETY: kill(2) on the id of a child not yet waited for (so not reused) only signals it.
    let sent = unsafe { libc::kill(pid, signal) };
    assert_eq!(sent, 0, "signal {signal} to {pid}");
}

/// The exit code (-1 for a death by signal).
fn wait_with_patience(child: &mut Child) -> i32 {
    let deadline = Instant::now() + PATIENCE;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().expect("wait for apply") {
            return status.code().unwrap_or(-1);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    panic!("apply did not end within {PATIENCE:?} of the signal");
}

/// The address of the load balancer a progress line is about (`… load-balancer.lb1: …`).
fn address_in(line: &str) -> String {
    let at = line.find("load-balancer.").expect("an address");
    line[at..].split(':').next().unwrap().to_string()
}

/// The first signal (`signal`) while one load balancer's member is swapped: that change
/// finishes, the others do not start, and apply says so and exits 1.
fn first_signal_finishes_the_change_in_flight(signal: libc::c_int) {
    let cloud = SlowCloud::applied();
    cloud.configure(NEW);
    // Its old member is gone (the delete finished, with its time): stopped here, its pool
    // would be empty.
    let deleted = format!("delete member {OLD}:");
    let trigger = |line: &str| line.contains(&deleted) && !line.ends_with(" started");
    let (out, line) = cloud.apply_signalled(&trigger, &[signal]);
    let in_flight = address_in(&line);
    // The change in flight finished; no pool was left without its member.
    for (lb, members) in cloud.members() {
        let expected = match format!("load-balancer.{lb}") == in_flight {
            true => NEW,
            false => OLD,
        };
        assert_eq!(members, [expected], "{lb}'s pool: {out:?}");
    }
    assert_eq!(out.code, 1, "an interrupted apply exits 1: {out:?}");
    assert!(
        out.stderr.contains(&format!(
            "Interrupted: 1 resource applied ({in_flight}), 3 not started"
        )),
        "apply says what it did: {out:?}"
    );
    let others: Vec<String> = (NAMES.iter())
        .map(|n| format!("load-balancer.{n}"))
        .filter(|a| *a != in_flight)
        .collect();
    for other in &others {
        assert!(
            out.stderr.contains(&format!(
                "not started: {other}: apply was interrupted before it"
            )),
            "apply names what it did not start: {out:?}"
        );
    }
    // The state recorded the finished change and the run ended: no journal to recover, and
    // the next plan is the changes not started.
    assert!(
        !cloud.journal().exists(),
        "the journal was finished: {out:?}"
    );
    assert_eq!(cloud.planned_changes(), others, "{out:?}");
    let again = cloud.skyplan(&["apply", "--auto-approve"]);
    assert_eq!(again.code, 0, "{again:?}");
    assert!(!again.stderr.contains("interrupted"), "{again:?}");
}

#[test]
fn a_first_ctrl_c_lets_the_change_in_flight_finish_and_starts_no_other() {
    first_signal_finishes_the_change_in_flight(libc::SIGINT);
}

#[test]
fn sigterm_stops_apply_as_a_first_ctrl_c_does() {
    first_signal_finishes_the_change_in_flight(libc::SIGTERM);
}

#[test]
fn a_second_ctrl_c_stops_at_once_and_the_next_apply_recovers_from_the_journal() {
    let cloud = SlowCloud::applied();
    cloud.configure(NEW);
    let deleting = format!("delete member {OLD}:30080 started");
    let trigger = |line: &str| line.ends_with(&deleting);
    let (out, _) = cloud.apply_signalled(&trigger, &[libc::SIGINT, libc::SIGINT]);
    assert_eq!(out.code, 1, "stopped at once, apply exits 1: {out:?}");
    assert!(
        out.stderr.contains("Stopped at once"),
        "apply says it stopped without waiting: {out:?}"
    );
    let journal = std::fs::read_to_string(cloud.journal()).unwrap_or_default();
    assert!(
        journal.contains(&format!("delete member {OLD}:30080")),
        "the journal holds the operation in flight: {journal:?} {out:?}"
    );
    let recovered = cloud.skyplan(&["apply", "--auto-approve"]);
    assert_eq!(recovered.code, 0, "{recovered:?}");
    assert!(
        recovered
            .stderr
            .contains("an earlier apply was interrupted"),
        "the next apply recovers from the journal: {recovered:?}"
    );
    let again = cloud.skyplan(&["plan", "--detailed-exitcode"]);
    assert_eq!(again.code, 0, "converged: {again:?}");
    for (lb, members) in cloud.members() {
        assert_eq!(members, [NEW], "{lb}: one member, the new one");
    }
}
