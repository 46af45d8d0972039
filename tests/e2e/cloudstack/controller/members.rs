//! CloudStack controller mode, the rest of impact.md's CloudStack table (controller column):
//! a private (node) port, members when the CKS cluster is scaled in the same apply (up and
//! down), the rule cidrlist on a server older than 4.22, a changed loadBalancerIP the CCM
//! ignores, and TCP and UDP on one port. Built on `cs_ccm_rows`' served cluster and rows.

use crate::cloudstack::controller::{
    config, firewall_cidrs, node_vms, row, row_on, rule, rule_id, with_cluster, HTTP, SHOP,
};
use crate::cloudstack::support::{change, operations, reasons, text, Account};

/// `config` with the cluster at `workers` workers.
fn scaled(workers: u32) -> String {
    config("", HTTP).replace("workers = 2", &format!("workers = {workers}"))
}

#[test]
fn cs_ccm_a_node_port_recreates_the_rule_on_it() {
    let fixed = "[[load-balancer.shop.ports]]\nport = 80\nnode-port = 31080\n";
    let row = row(("", HTTP), ("", fixed));
    row.assert_class("pool-recreate")
        .assert_predicts(&["delete LB rule", "-tcp-80"])
        .assert_predicts(&["create LB rule", "-tcp-80"]);
    assert!(
        operations(&row.change).contains(&"patch service default/shop".to_string()),
        "{:#}",
        row.change
    );
    let old = rule_id(&row.before, "tcp-80");
    assert_ne!(
        text(rule(&row.before, "tcp-80").unwrap(), "privateport"),
        "31080"
    );
    let after = row.apply();
    let http = rule(&after, "tcp-80").expect("the rule again");
    assert_ne!(text(http, "id"), old, "deleted and created");
    assert_eq!(text(http, "privateport"), "31080");
    assert_eq!(after.members_of(&text(http, "name")), node_vms(&after));
    assert_eq!(firewall_cidrs(&after, 80), ["0.0.0.0/0"]);
    row.sim.terminate();
}

/// Applies the cluster at 2 workers with the load balancer, then plans `workers`: the
/// cluster's and the load balancer's change, and the account before.
fn scale_row(
    workers: u32,
) -> (
    crate::cloudstack::support::CsProject,
    crate::cloudstack::simulator_clients::CsSimServer,
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

#[test]
fn cs_ccm_the_rule_cidrlist_before_4_22_recreates_the_rule() {
    let row = row_on(
        &["--server-version", "4.20.1.0"],
        ("", HTTP),
        ("allowed-cidrs = [\"10.0.0.0/8\"]", HTTP),
    );
    row.assert_class("pool-recreate")
        .assert_predicts(&["delete LB rule", "-tcp-80"])
        .assert_predicts(&["create LB rule", "-tcp-80"]);
    assert!(
        reasons(&row.change).contains("creates it again"),
        "{:#}",
        row.change
    );
    let old = rule_id(&row.before, "tcp-80");
    let after = row.apply();
    let http = rule(&after, "tcp-80").expect("the rule again");
    assert_ne!(text(http, "id"), old, "deleted and created");
    assert_eq!(text(http, "cidrlist").trim(), "10.0.0.0/8");
    assert_eq!(after.members_of(&text(http, "name")), node_vms(&after));
    row.sim.terminate();
}

#[test]
fn cs_ccm_a_changed_load_balancer_ip_is_written_but_the_rules_stay() {
    let (project, sim) = with_cluster();
    project.config_served(&sim.base_url, &config("", HTTP));
    project.apply_converges();
    let before = Account::read_at(&sim.base_url);
    let old_ip = text(rule(&before, "tcp-80").unwrap(), "publicip");
    let other = before
        .public_ips
        .iter()
        .map(|ip| text(ip, "ipaddress"))
        .find(|ip| *ip != old_ip)
        .unwrap_or_else(|| "203.0.113.77".to_string());
    let moved = format!("public-ip = \"{other}\"");
    project.config_served(&sim.base_url, &config(&moved, HTTP));
    let plan = project.plan(&[]);
    let shop = change(&plan, SHOP);
    assert_eq!(shop["impact"], "none", "{shop:#}");
    assert!(
        reasons(shop).contains("ignores a changed loadBalancerIP"),
        "the plan warns: {shop:#}"
    );
    assert!(operations(shop).contains(&"patch service default/shop".to_string()));
    assert!(
        !operations(shop)
            .iter()
            .any(|o| o.starts_with("controller:")),
        "{shop:#}"
    );
    project.apply_converges();
    let after = Account::read_at(&sim.base_url);
    let http = rule(&after, "tcp-80").unwrap();
    assert_eq!(
        text(http, "publicip"),
        old_ip,
        "the rules stay on the old IP"
    );
    assert_eq!(text(http, "id"), rule_id(&before, "tcp-80"));
    // Still said after the write, though there is nothing left to do.
    let again = project.plan(&[]);
    let shop = change(&again, SHOP);
    assert_eq!(shop["action"], "no-op", "{shop:#}");
    assert!(
        reasons(shop).contains("ignores a changed loadBalancerIP"),
        "{shop:#}"
    );
    sim.terminate();
}

#[test]
fn cs_ccm_tcp_and_udp_on_one_port_are_forbidden_and_refused() {
    let both = format!("{HTTP}\n[[load-balancer.shop.ports]]\nport = 80\nprotocol = \"udp\"\n");
    let row = row(("", HTTP), ("", &both));
    row.assert_class("forbidden");
    assert!(reasons(&row.change).contains("537"), "{:#}", row.change);
    let out = row.project.run(&["apply", "--auto-approve"]);
    assert_ne!(out.code, 0, "apply refuses: {out:?}");
    let after = Account::read_at(&row.sim.base_url);
    assert_eq!(
        after.rule_names(),
        row.before.rule_names(),
        "no rule changed"
    );
    assert_eq!(rule_id(&after, "tcp-80"), rule_id(&row.before, "tcp-80"));
    assert!(rule(&after, "udp-80").is_none(), "no udp rule");
    assert_eq!(firewall_cidrs(&after, 80), firewall_cidrs(&row.before, 80));
    row.sim.terminate();
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
