//! Controller-mode rows that change where traffic may come from: the firewall rules' CIDRs,
//! and the rule's own cidrlist, updated in place from CloudStack 4.22 and recreated before it
//! (see `super` for the frame).

use crate::cloudstack::controller::{firewall_cidrs, node_vms, row, row_on, rule, rule_id, HTTP};
use crate::cloudstack::support::{reasons, text};

#[test]
fn cs_ccm_firewall_cidrs_are_minimal_and_keep_the_rule() {
    let row = row(("", HTTP), ("firewall-cidrs = [\"192.0.2.0/24\"]", HTTP));
    row.assert_class("minimal")
        .assert_attribute("firewall-cidrs", "minimal", "firewall.80.cidrlist")
        .assert_predicts(&["create firewall rule", "192.0.2.0/24"])
        .assert_not_predicted("LB rule");
    assert_eq!(firewall_cidrs(&row.before, 80), ["0.0.0.0/0"]);
    let http = rule_id(&row.before, "tcp-80");
    let after = row.apply();
    assert_eq!(rule_id(&after, "tcp-80"), http, "rule kept");
    assert_eq!(firewall_cidrs(&after, 80), ["192.0.2.0/24"]);
    row.sim.terminate();
}

#[test]
fn cs_ccm_the_rule_cidrlist_is_minimal_on_4_22_and_updated_in_place() {
    let row = row(("", HTTP), ("allowed-cidrs = [\"10.0.0.0/8\"]", HTTP));
    row.assert_class("minimal")
        .assert_attribute("allowed-cidrs", "minimal", "-tcp-80.cidrlist")
        .assert_not_predicted("delete LB rule");
    let http = rule_id(&row.before, "tcp-80");
    let after = row.apply();
    assert_eq!(rule_id(&after, "tcp-80"), http, "rule kept");
    let cidrs = text(rule(&after, "tcp-80").unwrap(), "cidrlist");
    assert_eq!(cidrs.trim(), "10.0.0.0/8");
    row.sim.terminate();
}

#[test]
fn cs_ccm_the_rule_cidrlist_before_4_22_recreates_the_rule() {
    let row = row_on(
        &["--server-version", "4.20.1.0"],
        ("", HTTP),
        ("allowed-cidrs = [\"10.0.0.0/8\"]", HTTP),
    );
    row.assert_class("pool-recreate")
        .assert_attribute("allowed-cidrs", "pool-recreate", "-tcp-80.cidrlist")
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
