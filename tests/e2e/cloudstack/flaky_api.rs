//! A flaky CloudStack: throttling, server errors, dropped connections, calls carried out whose
//! answer was lost, and async jobs that fail. Apply may stop at a failed job (it is a real
//! failure the operator sees), but running it again converges, and nothing is made twice.

use crate::cloudstack::support::{text, CsProject};

/// About 13% of calls go wrong; each run gets its own seed, so a failed job is not simply
/// failed again the same way by the next run.
const FAULTS: &str = "429=0.03,5xx=0.03,drop=0.02,after-commit=0.02,job-fail=0.03";

/// Applies until an apply succeeds (at most `tries`); returns how many runs it took and how
/// many calls the client retried.
fn apply_until_done(project: &CsProject, tries: usize) -> (usize, usize) {
    let mut retries = 0;
    let mut failures = Vec::new();
    for run in 1..=tries {
        let faults = format!("{FAULTS},seed={run}");
        let args = ["apply", "--auto-approve"];
        let out = project.run_with(&args, &[("SKYPLAN_SIM_FAULTS", &faults)]);
        retries += out.stderr.matches("retrying").count();
        let secret = skyplan_sim::cloudstack::DEFAULT_SECRET_KEY;
        assert!(
            !out.stderr.contains(secret),
            "the secret key is never printed"
        );
        if out.code == 0 {
            return (run, retries);
        }
        let last_lines: Vec<&str> = out.stderr.lines().rev().take(6).collect();
        failures.push(last_lines.join("\n"));
    }
    panic!("apply did not converge in {tries} runs: {failures:#?}");
}

#[test]
fn cs_apply_converges_under_injected_faults_without_duplicates() {
    let project = CsProject::new().with_env("SKYPLAN_LOG", "skyplan=debug");
    let mut config = String::from(
        "[cluster.lab]\nprovider = \"cloudstack\"\nzone = \"zone1\"\nkubernetes-version = \"1.29.3\"\n\
         workers = 2\nservice-offering = \"Medium Instance\"\nnetwork = \"k8s-net\"\n\n",
    );
    for i in 0..4 {
        config += &format!(
            "[load-balancer.lb{i}]\nprovider = \"cloudstack\"\ncluster = \"lab\"\n\n\
             [[load-balancer.lb{i}.ports]]\nport = 80\nnode-port = 30080\n\n\
             [[load-balancer.lb{i}.ports]]\nport = 443\nnode-port = 30443\n\n"
        );
    }
    project.config(&config);
    let (runs, retries) = apply_until_done(&project, 6);
    assert!(
        runs > 1 || retries > 0,
        "faults were injected: {runs} runs, {retries} retries"
    );

    let calm = project;
    let again = calm.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(again.code, 0, "the final plan is empty: {again:?}");
    let account = calm.account();
    assert_eq!(account.clusters.len(), 1, "one cluster");
    assert_eq!(text(&account.clusters[0], "state"), "Running");
    assert_eq!(account.rules.len(), 8, "{:?}", account.rule_names());
    let owned: Vec<String> = account
        .public_ips
        .iter()
        .filter(|ip| ip["tags"].to_string().contains("skyplan.address"))
        .map(|ip| text(ip, "id"))
        .collect();
    assert_eq!(owned.len(), 4, "one public IP per load balancer");
    let firewall = account
        .firewall_rules
        .iter()
        .filter(|f| owned.contains(&text(f, "ipaddressid")))
        .count();
    assert_eq!(firewall, 8, "one firewall rule per port");
    for (rule, members) in &account.rule_members {
        assert_eq!(members.len(), 2, "{rule}: {members:?}");
    }
    println!(
        "CloudStack faults: converged in {runs} apply runs, {retries} retried calls, no duplicates"
    );
}
