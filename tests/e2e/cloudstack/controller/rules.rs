//! Controller-mode rows that change a load-balancer rule: a new Service, a port added or
//! removed, the public and the private (node) port, the algorithm, the protocol (TCP, TCP
//! proxy, UDP, both on one port) and the Service's loadBalancerIP (see `super` for the frame).

use crate::cloudstack::controller::{
    config, firewall_cidrs, node_vms, row, rule, rule_id, with_cluster, HTTP, HTTP_HTTPS, SHOP,
};
use crate::cloudstack::support::{change, operations, reasons, text, Account};

#[test]
fn cs_ccm_a_new_service_touches_nothing_and_gets_a_rule_on_the_workers() {
    let (project, sim) = with_cluster();
    project.config_served(&sim.base_url, &config("", HTTP));
    let plan = project.plan(&[]);
    let shop = change(&plan, SHOP);
    assert_eq!(shop["action"], "create", "{shop:#}");
    assert_eq!(shop["impact"], "none", "{shop:#}");
    project.apply_converges();
    let account = Account::read_at(&sim.base_url);
    let http = rule(&account, "tcp-80").unwrap_or_else(|| panic!("{:#?}", account.rules));
    let name = text(http, "name");
    assert!(name.starts_with('a'), "the CCM's base name: {name}");
    assert_eq!(account.rules.len(), 1, "{:#?}", account.rules);
    let members = account.members_of(&name);
    assert_eq!(
        members.len(),
        3,
        "two workers and the control node: {members:?}"
    );
    assert_eq!(members, node_vms(&account));
    sim.terminate();
}

#[test]
fn cs_ccm_a_port_added_is_none_and_keeps_the_other_rule() {
    let row = row(("", HTTP), ("", HTTP_HTTPS));
    row.assert_class("none")
        .assert_attribute("ports.443", "none", "-tcp-443")
        .assert_predicts(&["create LB rule", "-tcp-443"])
        .assert_not_predicted("delete");
    let http = rule_id(&row.before, "tcp-80");
    let after = row.apply();
    assert_eq!(rule_id(&after, "tcp-80"), http, "rule of port 80 kept");
    let https = rule(&after, "tcp-443").expect("rule of port 443");
    assert_eq!(after.members_of(&text(https, "name")), node_vms(&after));
    row.sim.terminate();
}

#[test]
fn cs_ccm_a_port_removed_is_pool_recreate_and_its_rule_goes() {
    let row = row(("", HTTP_HTTPS), ("", HTTP));
    row.assert_class("pool-recreate")
        .assert_attribute("ports.443", "pool-recreate", "-tcp-443")
        .assert_predicts(&["delete LB rule", "-tcp-443"])
        .assert_not_predicted("-tcp-80");
    let http = rule_id(&row.before, "tcp-80");
    let after = row.apply();
    assert!(rule(&after, "tcp-443").is_none(), "{:#?}", after.rules);
    assert_eq!(rule_id(&after, "tcp-80"), http, "rule of port 80 kept");
    assert!(
        firewall_cidrs(&after, 443).is_empty(),
        "its firewall rule gone"
    );
    row.sim.terminate();
}

#[test]
fn cs_ccm_a_public_port_change_is_minimal_and_makes_a_new_rule() {
    let moved = "[[load-balancer.shop.ports]]\nport = 8080\n";
    let row = row(("", HTTP), ("", moved));
    row.assert_class("minimal")
        .assert_attribute("ports.80.port", "minimal", "-tcp-80.public-port")
        .assert_predicts(&["create LB rule", "-tcp-8080"])
        .assert_predicts(&["delete LB rule", "-tcp-80"]);
    let old = rule_id(&row.before, "tcp-80");
    let after = row.apply();
    assert!(rule(&after, "tcp-80").is_none(), "{:#?}", after.rules);
    assert_ne!(rule_id(&after, "tcp-8080"), old, "a new rule");
    assert!(
        firewall_cidrs(&after, 80).is_empty(),
        "old port's firewall rule gone"
    );
    assert_eq!(firewall_cidrs(&after, 8080), ["0.0.0.0/0"]);
    let new = text(rule(&after, "tcp-8080").unwrap(), "name");
    assert_eq!(after.members_of(&new), node_vms(&after));
    row.sim.terminate();
}

#[test]
fn cs_ccm_a_node_port_recreates_the_rule_on_it() {
    let fixed = "[[load-balancer.shop.ports]]\nport = 80\nnode-port = 31080\n";
    let row = row(("", HTTP), ("", fixed));
    row.assert_class("pool-recreate")
        .assert_attribute(
            "ports.80.node-port",
            "pool-recreate",
            "-tcp-80.private-port",
        )
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

#[test]
fn cs_ccm_the_algorithm_is_minimal_and_updates_the_rule_in_place() {
    let row = row(("", HTTP), ("algorithm = \"source\"", HTTP));
    row.assert_class("minimal")
        .assert_attribute("algorithm", "minimal", "-tcp-80.algorithm")
        .assert_predicts(&["update LB rule", "-tcp-80", "algorithm"])
        .assert_not_predicted("delete");
    let http = rule_id(&row.before, "tcp-80");
    assert_eq!(
        rule(&row.before, "tcp-80").unwrap()["algorithm"],
        "roundrobin"
    );
    let after = row.apply();
    assert_eq!(rule_id(&after, "tcp-80"), http, "rule kept");
    assert_eq!(rule(&after, "tcp-80").unwrap()["algorithm"], "source");
    row.sim.terminate();
}

#[test]
fn cs_ccm_tcp_to_tcp_proxy_is_forbidden_and_refused() {
    let proxy = "[[load-balancer.shop.ports]]\nport = 80\nprotocol = \"tcp-proxy\"\n";
    let row = row(("", HTTP), ("", proxy));
    row.assert_class("forbidden");
    let out = row.project.apply(&[]);
    assert_ne!(out.code, 0, "apply refuses: {out:?}");
    let after = Account::read_at(&row.sim.base_url);
    assert_eq!(
        after.rule_names(),
        row.before.rule_names(),
        "no rule changed"
    );
    assert_eq!(firewall_cidrs(&after, 80), firewall_cidrs(&row.before, 80));
    let http = rule(&after, "tcp-80").expect("rule of port 80 still there");
    assert_eq!(text(http, "id"), rule_id(&row.before, "tcp-80"));
    assert_eq!(
        text(http, "protocol"),
        text(rule(&row.before, "tcp-80").unwrap(), "protocol")
    );
    row.sim.terminate();
}

#[test]
fn cs_ccm_tcp_to_udp_is_forbidden_and_refused() {
    let udp = "[[load-balancer.shop.ports]]\nport = 80\nprotocol = \"udp\"\n";
    let row = row(("", HTTP), ("", udp));
    row.assert_class("forbidden").assert_attribute(
        "ports.80.protocol",
        "forbidden",
        "-tcp-80.protocol",
    );
    let http = rule_id(&row.before, "tcp-80");
    let out = row.project.run(&["apply", "--auto-approve"]);
    assert_ne!(out.code, 0, "apply refuses: {out:?}");
    let after = Account::read_at(&row.sim.base_url);
    assert_eq!(rule_id(&after, "tcp-80"), http, "the tcp rule stays");
    assert!(rule(&after, "udp-80").is_none(), "no udp rule");
    row.sim.terminate();
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
