//! Controller-mode rows about a rule's members, the cluster's workers: the CCM reaches its
//! cluster without a node policy, follows a worker added or removed in the same apply, and a
//! node a policy excludes leaves the rule and comes back (see `super` for the frame).

use crate::cloudstack::controller::{
    config, node_vms, row, rule, rule_id, with_cluster, CLUSTER, HTTP, SHOP,
};
use crate::cloudstack::support::CsSimServer;
use crate::cloudstack::support::{change, operations, reasons, text, Account, CsProject};

#[test]
fn cs_ccm_reaches_its_cluster_without_a_node_policy() {
    let project = CsProject::new();
    let sim = CsSimServer::start(&project.project.path().join("cloudstack.json"));
    project.config_served(&sim.base_url, CLUSTER);
    project.apply_converges();
    let without_policy = format!(
        "{CLUSTER}[load-balancer.shop]\nprovider = \"cloudstack\"\ncluster = \"lab\"\n\
         service = \"default/shop\"\nmode = \"ccm\"\n\n{HTTP}"
    );
    project.config_served(&sim.base_url, &without_policy);
    let out = project.run(&["plan", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(change(&out.json(), SHOP)["impact"], "none", "{out:?}");
    sim.terminate();
}

/// `config` with the cluster at `workers` workers.
fn scaled(workers: u32) -> String {
    config("", HTTP).replace("workers = 2", &format!("workers = {workers}"))
}

/// Applies the cluster at 2 workers with the load balancer, then plans `workers`: the
/// cluster's and the load balancer's change, and the account before.
fn scale_row(
    workers: u32,
) -> (
    crate::cloudstack::support::CsProject,
    crate::cloudstack::support::CsSimServer,
    serde_json::Value,
    Account,
) {
    let (project, sim) = with_cluster();
    project.config_served(&sim.base_url, &scaled(2));
    project.apply_converges();
    let before = Account::read_at(&sim.base_url);
    project.config_served(&sim.base_url, &scaled(workers));
    let plan = project.plan(&[]);
    (project, sim, plan, before)
}

#[test]
fn cs_ccm_a_worker_added_in_the_same_apply_is_assigned_to_the_rule() {
    let (project, sim, plan, before) = scale_row(3);
    assert_eq!(
        change(&plan, "cluster.lab")["impact"],
        "minimal",
        "{plan:#}"
    );
    let shop = change(&plan, SHOP);
    assert_eq!(shop["action"], "update", "{shop:#}");
    assert_eq!(shop["impact"], "minimal", "{shop:#}");
    let ops = operations(shop);
    assert!(
        ops.iter()
            .any(|o| o.contains("controller: assign 1 new worker VM to LB rule")),
        "{ops:#?}"
    );
    assert!(reasons(shop).contains("scaled first"), "{shop:#}");
    let http = rule_id(&before, "tcp-80");
    assert_eq!(node_vms(&before).len(), 3);
    project.apply_converges();
    let after = Account::read_at(&sim.base_url);
    assert_eq!(node_vms(&after).len(), 4, "a third worker");
    assert_eq!(rule_id(&after, "tcp-80"), http, "rule kept");
    let name = text(rule(&after, "tcp-80").unwrap(), "name");
    assert_eq!(after.members_of(&name), node_vms(&after));
    sim.terminate();
}

#[test]
fn cs_ccm_a_worker_removed_in_the_same_apply_leaves_the_rule() {
    let (project, sim, plan, before) = scale_row(1);
    let shop = change(&plan, SHOP);
    assert_eq!(shop["impact"], "minimal", "{shop:#}");
    let ops = operations(shop);
    assert!(
        ops.iter()
            .any(|o| o.contains("controller: remove 1 worker VM (chosen by CKS) from LB rule")),
        "{ops:#?}"
    );
    let http = rule_id(&before, "tcp-80");
    project.apply_converges();
    let after = Account::read_at(&sim.base_url);
    assert_eq!(node_vms(&after).len(), 2, "one worker and the control node");
    assert_eq!(rule_id(&after, "tcp-80"), http, "rule kept");
    let name = text(rule(&after, "tcp-80").unwrap(), "name");
    assert_eq!(after.members_of(&name), node_vms(&after));
    sim.terminate();
}

/// Members added/removed the other way: a `[nodes.*]` policy in the same config puts the
/// exclude label on the control node. The plan shows the controller removing its VM from the
/// rule (minimal) beside the label; apply labels the node first, and the CCM (cloud-provider
/// v0.24's node predicate) updates the rule. Dropping the policy assigns the VM again.
#[test]
fn cs_ccm_a_node_a_policy_excludes_leaves_the_rule_and_comes_back() {
    let exclude = format!(
        "{HTTP}\n[nodes.edge]\ncluster = \"lab\"\nnames = [\"lab-control-*\"]\n\
         labels = {{ \"node.kubernetes.io/exclude-from-external-load-balancers\" = \"true\" }}\n"
    );
    let row = row(("", HTTP), ("", &exclude));
    row.assert_class("minimal")
        .assert_predicts(&["remove", "lab-control-", "from LB rule"])
        .assert_not_predicted("delete LB rule");
    let http = rule_id(&row.before, "tcp-80");
    let name = text(rule(&row.before, "tcp-80").unwrap(), "name");
    let all = node_vms(&row.before);
    let after = row.apply();
    assert_eq!(rule_id(&after, "tcp-80"), http, "rule kept");
    let workers: Vec<String> = all
        .iter()
        .filter(|vm| !vm.starts_with("lab-control-"))
        .cloned()
        .collect();
    assert_eq!(after.members_of(&name), workers);

    row.project
        .config_served(&row.sim.base_url, &config("", HTTP));
    let plan = row.project.plan(&[]);
    let shop = change(&plan, SHOP);
    assert_eq!(shop["impact"], "minimal", "{shop:#}");
    assert!(
        operations(shop)
            .iter()
            .any(|o| o.contains("assign") && o.contains("lab-control-")),
        "{shop:#}"
    );
    row.project.apply_converges();
    let back = Account::read_at(&row.sim.base_url);
    assert_eq!(rule_id(&back, "tcp-80"), http, "rule kept");
    assert_eq!(back.members_of(&name), all);
    row.sim.terminate();
}
