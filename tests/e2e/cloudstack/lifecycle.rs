//! CloudStack beyond single rows: the README's example, what a refresh costs with more objects
//! than one page holds, and the dependency order of a whole lifecycle.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use crate::cloudstack::support::{change, text, CsProject};
use crate::support::Project;

/// A project holding a copy of the CloudStack example and its simulated account.
fn example_project() -> (Project, std::path::PathBuf) {
    let project = Project::new();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = project.path().join("examples/cloudstack");
    std::fs::create_dir_all(&example).unwrap();
    std::fs::copy(
        repo.join("examples/cloudstack/skyplan.toml"),
        example.join("skyplan.toml"),
    )
    .unwrap();
    // The account and its clusters' APIs (cloudstack.k8s/), as committed.
    let world = project.path().join("state/cloudstack/embedded");
    for file in ["cloudstack.json", "cloudstack.k8s"] {
        copy(
            &repo.join("state/cloudstack/embedded").join(file),
            &world.join(file),
        );
    }
    (project, example)
}

/// Copies a file, or a directory with everything in it.
fn copy(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            copy(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    }
}

/// The README's CloudStack command: the example's plan shows a cluster upgrade and a worker
/// scale-down (minimal), a control-node change (forbidden) and a rule protocol change
/// (pool-recreate), each with its reason.
#[test]
fn cs_example_plan_shows_upgrade_scale_down_forbidden_and_protocol_change() {
    let (project, example) = example_project();
    let out = crate::support::run(&mut project.command_with_config(&example, &["plan", "--json"]));
    assert_eq!(out.code, 0, "{out:?}");
    let plan = out.json();
    let class_of = |address: &str, path: &str| -> Value {
        let change = change(&plan, address);
        change["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| text(a, "path") == path)
            .map(|a| a["impact"].clone())
            .unwrap_or_else(|| panic!("{address} {path}: {change:#}"))
    };
    assert_eq!(class_of("cluster.lab", "kubernetes-version"), "minimal");
    assert_eq!(class_of("cluster.lab", "workers"), "minimal");
    assert_eq!(class_of("cluster.prod", "control-nodes"), "forbidden");
    assert_eq!(
        class_of("load-balancer.edge", "ports.443.protocol"),
        "pool-recreate"
    );
    assert_eq!(change(&plan, "load-balancer.web")["action"], "create");
    for change in plan["changes"].as_array().unwrap() {
        for attribute in change["attributes"].as_array().unwrap() {
            assert!(!text(attribute, "reason").is_empty(), "{attribute:#}");
        }
    }
}

/// What an operator reads: the example's plan as text, kept as a snapshot.
#[test]
fn cs_example_plan_text() {
    let (project, example) = example_project();
    let out = crate::support::run(&mut project.command_with_config(&example, &["plan"]));
    assert_eq!(out.code, 0, "{out:?}");
    insta::assert_snapshot!(out.stdout);
}

/// LB rules on the VMs web-1 and web-2: `rules` ports spread over load balancers of 100.
fn rules_config(rules: usize) -> String {
    let mut text = String::new();
    for lb in 0..rules.div_ceil(100) {
        write!(
            text,
            "[load-balancer.lb{lb}]\nprovider = \"cloudstack\"\nnetwork = \"k8s-net\"\n\
             members = [\"web-1\", \"web-2\"]\n"
        )
        .unwrap();
        for port in 0..(rules - lb * 100).min(100) {
            write!(
                text,
                "[[load-balancer.lb{lb}.ports]]\nport = {}\nnode-port = {}\n",
                10000 + port,
                30000 + port
            )
            .unwrap();
        }
    }
    text
}

/// The API requests of one plan, from skyplan's own count (logged with -v).
fn refresh_requests(project: &CsProject) -> u64 {
    let out = project.run(&["-v", "plan", "--detailed-exitcode"]);
    assert_eq!(out.code, 0, "nothing to do after apply: {out:?}");
    out.stderr
        .lines()
        .find(|l| l.contains("refresh and plan done"))
        .and_then(|l| l.split("requests=").nth(1))
        .and_then(|n| n.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no request count: {out:?}"))
}

/// A refresh costs one paged list per collection plus one membership read per rule of the
/// load balancers planned: 600 rules (and 600 firewall rules) take a second page each.
#[test]
fn cs_refresh_pages_through_more_than_500_rules() {
    let small = CsProject::new();
    small.config(&rules_config(1));
    small.apply_converges();
    let one = refresh_requests(&small);

    let large = CsProject::new();
    large.config(&rules_config(600));
    let out = large.apply(&["--parallelism", "6"]);
    assert_eq!(out.code, 0, "{out:?}");
    let six_hundred = refresh_requests(&large);
    assert_eq!(
        six_hundred - one,
        599 + 2,
        "599 more membership reads, a second page of rules and of firewall rules"
    );
    let account = large.account();
    assert_eq!(account.rules.len(), 600, "every page was read");
    println!("CloudStack refresh: {one} requests for 1 rule, {six_hundred} for 600");
}

/// A cluster and its load balancer are created in one apply (cluster first) and deleted in
/// one apply (load balancer first).
#[test]
fn cs_a_cluster_and_its_load_balancer_are_created_and_deleted_in_dependency_order() {
    let project = CsProject::new();
    let config = "[cluster.lab]\nprovider = \"cloudstack\"\nzone = \"zone1\"\n\
                  kubernetes-version = \"1.29.3\"\nworkers = 2\nservice-offering = \"Medium Instance\"\n\n\
                  [load-balancer.edge]\nprovider = \"cloudstack\"\ncluster = \"lab\"\n\n\
                  [[load-balancer.edge.ports]]\nport = 80\nnode-port = 30080\n";
    project.config(config);
    project.apply_converges();
    let account = project.account();
    let cluster = account.cluster("lab");
    assert_eq!(
        text(account.rule("edge-tcp-80"), "networkid"),
        text(cluster, "networkid"),
        "the rule is on the network CKS made for the cluster"
    );
    assert_eq!(account.members_of("edge-tcp-80").len(), 2);

    project.config("");
    let plan = project.plan(&[
        "--allow-delete",
        "cluster.lab",
        "--allow-delete",
        "load-balancer.edge",
    ]);
    assert_eq!(change(&plan, "cluster.lab")["action"], "delete", "{plan:#}");
    assert_eq!(change(&plan, "load-balancer.edge")["action"], "delete");
    let out = project.apply(&[
        "--allow-delete",
        "cluster.lab",
        "--allow-delete",
        "load-balancer.edge",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let log = format!("{}{}", out.stdout, out.stderr);
    let (edge, lab) = (
        log.find("load-balancer.edge: done"),
        log.find("cluster.lab: done"),
    );
    assert!(
        edge.is_some() && edge < lab,
        "the load balancer goes first: {log}"
    );
    let account = project.account();
    assert!(account.clusters.is_empty() && account.rules.is_empty());
    let owned = account
        .public_ips
        .iter()
        .filter(|ip| ip["tags"].to_string().contains("skyplan.address"))
        .count();
    assert_eq!(owned, 0, "the IP skyplan associated is released");
}

/// `state rm` lets a cluster and a load balancer go; `import` takes them back by ID (the
/// cluster) and by address (the public IP), and the plan then finds nothing to do.
#[test]
fn cs_state_rm_and_import_take_resources_back_under_management() {
    let project = CsProject::new();
    project.config(
        "[cluster.lab]\nprovider = \"cloudstack\"\nzone = \"zone1\"\nkubernetes-version = \"1.29.3\"\n\
         workers = 1\nservice-offering = \"Medium Instance\"\nnetwork = \"k8s-net\"\n\n\
         [load-balancer.web]\nprovider = \"cloudstack\"\nnetwork = \"k8s-net\"\n\
         members = [\"web-1\"]\n\n[[load-balancer.web.ports]]\nport = 80\nnode-port = 30080\n",
    );
    project.apply_converges();
    let account = project.account();
    let cluster_id = text(account.cluster("lab"), "id");
    let address = account
        .public_ips
        .iter()
        .find(|ip| ip["tags"].to_string().contains("load-balancer.web"))
        .map(|ip| text(ip, "ipaddress"))
        .expect("the load balancer's address");
    for resource in ["cluster.lab", "load-balancer.web"] {
        let out = project.run(&["state", "rm", resource]);
        assert_eq!(out.code, 0, "{out:?}");
    }
    for (resource, id) in [
        ("cluster.lab", &cluster_id),
        ("load-balancer.web", &address),
    ] {
        let out = project.run(&["import", resource, id]);
        assert_eq!(out.code, 0, "{out:?}");
    }
    let state = project.run(&["state", "show", "cluster.lab"]);
    assert!(state.stdout.contains(&cluster_id), "{state:?}");
    let again = project.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(again.code, 0, "nothing to do after import: {again:?}");
}
