//! `ignore-changes` on a CloudStack load-balancer rule: the config's new CIDRs are left out of
//! the plan, and apply — which changes the algorithm — writes the rule's cidrlist as the cloud
//! had it, not the config's; the drift check stays quiet about it.

use crate::cloudstack::support::{change, paths, text, CsProject};

fn lb(extra: &str) -> String {
    format!(
        "[load-balancer.web]\nprovider = \"cloudstack\"\nnetwork = \"k8s-net\"\n\
         members = [\"web-1\", \"web-2\"]\n{extra}\n\
         [[load-balancer.web.ports]]\nport = 80\nprotocol = \"tcp\"\nnode-port = 30080\n"
    )
}

#[test]
fn a_rule_keeps_its_cidrs_while_its_algorithm_changes() {
    let project = CsProject::new();
    project.config(&lb("allowed-cidrs = [\"10.0.0.0/8\"]\n"));
    project.apply_converges();
    project.config(&lb(
        "allowed-cidrs = [\"192.0.2.0/24\"]\nalgorithm = \"source\"\nignore-changes = [\"allowed-cidrs\"]\n",
    ));

    let plan = project.plan(&[]);
    let web = change(&plan, "load-balancer.web");
    assert_eq!(paths(web), ["algorithm"], "{plan:#}");
    assert_eq!(web["ignored"][0]["path"], "allowed-cidrs", "{plan:#}");

    project.apply_converges();
    let account = project.account();
    let rule = account.rule("web-tcp-80");
    assert_eq!(text(rule, "algorithm"), "source");
    assert!(text(rule, "cidrlist").contains("10.0.0.0/8"), "{rule:#}");
    assert!(!text(rule, "cidrlist").contains("192.0.2.0/24"), "{rule:#}");

    let again = project.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(again.code, 0, "{again:?}");
    let drift = project.run(&["drift"]);
    assert_eq!(drift.code, 0, "{drift:?}");
}
