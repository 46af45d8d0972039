//! The kill test on CloudStack: apply is killed (SIGKILL at exact journal checkpoints) at
//! every step of creating a CKS cluster with a load balancer in front of its workers; the next
//! apply must converge with no second cluster, no second public IP and no duplicate rule. The
//! cloud is `skyplan sim serve`, a process of its own, so it survives the kill as a real cloud
//! would (an embedded simulator would die with skyplan and forget its last changes).

use crate::cloudstack::support::CsSimServer;
use crate::cloudstack::support::{text, Account, CsProject};

/// Async jobs that end at once: this test is about crashes, not waiting.
const FAST_JOBS: &[&str] = &["--job-ms", "5"];

const CONFIG: &str = "\
[cluster.lab]
provider = \"cloudstack\"
zone = \"zone1\"
kubernetes-version = \"1.29.3\"
workers = 2
service-offering = \"Medium Instance\"
network = \"k8s-net\"

[load-balancer.edge]
provider = \"cloudstack\"
cluster = \"lab\"

[[load-balancer.edge.ports]]
port = 80
node-port = 30080

[[load-balancer.edge.ports]]
port = 443
protocol = \"tcp-proxy\"
node-port = 30443
";

/// The account as sorted lines, one per object that skyplan's apply makes: equal for two
/// accounts holding the same objects; a duplicate shows as an extra line. VM names end in a
/// random suffix, so VMs are counted per cluster.
fn inventory(sim: &CsSimServer) -> Vec<String> {
    let account = Account::read_at(&sim.base_url);
    let mut lines = Vec::new();
    for cluster in &account.clusters {
        lines.push(format!(
            "cluster {} {} size {} vms {}",
            text(cluster, "name"),
            text(cluster, "state"),
            text(cluster, "size"),
            cluster["virtualmachines"].as_array().map_or(0, Vec::len)
        ));
    }
    for rule in &account.rules {
        let name = text(rule, "name");
        lines.push(format!(
            "rule {name} {}:{} {} members {}",
            text(rule, "publicport"),
            text(rule, "privateport"),
            text(rule, "protocol"),
            account.members_of(&name).len()
        ));
    }
    // Every address the account holds besides the source-NAT one: one skyplan associated and
    // then lost track of would show here, tagged or not.
    let extra_ips = account
        .public_ips
        .iter()
        .filter(|ip| ip["issourcenat"] != true)
        .count();
    lines.push(format!("public IPs besides source NAT {extra_ips}"));
    for rule in &account.firewall_rules {
        lines.push(format!(
            "firewall {} {}-{} {}",
            text(rule, "protocol"),
            text(rule, "startport"),
            text(rule, "endport"),
            text(rule, "cidrlist")
        ));
    }
    lines.sort();
    lines
}

/// Every checkpoint of every operation: before the call, after it returned, after it was
/// recorded. With jobs that end at once, all of them take seconds.
fn kill_points(operations: usize) -> Vec<String> {
    ["intent", "call", "done"]
        .iter()
        .flat_map(|phase| (1..=operations).map(move |n| format!("{phase}:{n}")))
        .collect()
}

fn operations(project: &CsProject) -> usize {
    project.plan(&[])["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| c["operations"].as_array().map_or(0, Vec::len))
        .sum()
}

#[test]
fn cs_kill_cluster_and_load_balancer_create_at_every_step_then_recover() {
    let reference = CsProject::new().with_env("SKYPLAN_CLOUDSTACK_JOB_POLL_MS", "10");
    let reference_sim =
        CsSimServer::start_with(&reference.project.path().join("world.json"), FAST_JOBS);
    reference.config_served(&reference_sim.base_url, CONFIG);
    let create_ops = operations(&reference);
    reference.apply_converges();
    let expected = inventory(&reference_sim);
    assert!(
        expected
            .iter()
            .any(|l| l.starts_with("cluster lab Running size 2")),
        "{expected:#?}"
    );

    let mut points = 0;
    for point in kill_points(create_ops) {
        let project = CsProject::new()
            .with_env("SKYPLAN_CLOUDSTACK_JOB_POLL_MS", "10")
            .with_env("SKYPLAN_TEST_KILL_AT", &point);
        let sim = CsSimServer::start_with(&project.project.path().join("world.json"), FAST_JOBS);
        project.config_served(&sim.base_url, CONFIG);
        let killed = project.apply(&[]);
        assert_eq!(
            killed.code, -1,
            "{point}: apply should have been killed: {killed:?}"
        );
        let recovering = project.without_env("SKYPLAN_TEST_KILL_AT");
        let recovered = recovering.apply(&[]);
        assert_eq!(recovered.code, 0, "{point}: recovery failed: {recovered:?}");
        assert!(
            recovered.stderr.contains("interrupted"),
            "{point}: the interruption is reported: {recovered:?}"
        );
        let again = recovering.run(&["plan", "--detailed-exitcode"]);
        assert_eq!(
            again.code, 0,
            "{point}: config and cloud converged: {again:?}"
        );
        assert_eq!(inventory(&sim), expected, "{point}: no duplicates");
        points += 1;
    }
    println!("CloudStack kill test: {points} kill points of {create_ops} create operations, 0 duplicates");
}
