//! One test per row of impact.md's CloudStack load-balancer table (direct mode): apply LB
//! rules on the VMs web-1 and web-2, change the config, check the class the plan gives, then
//! apply and check which rules the simulated CloudStack kept and which it made anew.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::cloudstack::support::{change, paths, reasons, text, Account, CsProject};

const WEB: &str = "load-balancer.web";

/// `[load-balancer.web]` on web-1 and web-2 with `overrides`, then its ports.
fn lb(overrides: &[(&str, &str)], ports: &[(u16, &str, u16)]) -> String {
    let mut keys: BTreeMap<&str, &str> = [
        ("provider", "\"cloudstack\""),
        ("network", "\"k8s-net\""),
        ("members", "[\"web-1\", \"web-2\"]"),
    ]
    .into_iter()
    .collect();
    keys.extend(overrides.iter().copied());
    let mut text = String::from("[load-balancer.web]\n");
    for (key, value) in keys {
        text += &format!("{key} = {value}\n");
    }
    for (port, protocol, node_port) in ports {
        text += &format!(
            "\n[[load-balancer.web.ports]]\nport = {port}\nprotocol = \"{protocol}\"\nnode-port = {node_port}\n"
        );
    }
    text
}

const HTTP: (u16, &str, u16) = (80, "tcp", 30080);

struct Row {
    project: CsProject,
    plan: Value,
    before: Account,
}

fn row_in(project: CsProject, before: &str, after: &str) -> Row {
    project.config(before);
    project.apply_converges();
    let before = project.account();
    project.config(after);
    let plan = project.plan(&[]);
    Row {
        project,
        plan,
        before,
    }
}

fn row(before: &str, after: &str) -> Row {
    row_in(CsProject::new(), before, after)
}

impl Row {
    fn change(&self) -> &Value {
        change(&self.plan, WEB)
    }

    fn assert_class(&self, impact: &str, path: &str) -> &Self {
        let change = self.change();
        assert_eq!(change["impact"], impact, "{:#}", self.plan);
        assert!(
            paths(change).iter().any(|p| p.contains(path)),
            "an attribute at {path}: {:#}",
            self.plan
        );
        self
    }

    fn apply(&self) -> Account {
        self.project.apply_converges();
        self.project.account()
    }

    fn id_before(&self, rule: &str) -> String {
        text(self.before.rule(rule), "id")
    }
}

#[test]
fn cs_rule_description_is_none() {
    let row = row(
        &lb(&[], &[HTTP]),
        &lb(&[("description", "\"the shop\"")], &[HTTP]),
    );
    row.assert_class("none", "description");
    let after = row.apply();
    let rule = after.rule("web-tcp-80");
    assert_eq!(
        text(rule, "id"),
        row.id_before("web-tcp-80"),
        "updated in place"
    );
    assert_eq!(text(rule, "description"), "the shop");
}

#[test]
fn cs_port_added_is_none_and_touches_no_other_rule() {
    let row = row(&lb(&[], &[HTTP]), &lb(&[], &[HTTP, (443, "tcp", 30443)]));
    row.assert_class("none", "443");
    let after = row.apply();
    assert_eq!(
        text(after.rule("web-tcp-80"), "id"),
        row.id_before("web-tcp-80")
    );
    assert_eq!(after.members_of("web-tcp-443"), ["web-1", "web-2"]);
}

#[test]
fn cs_port_removed_is_pool_recreate_for_that_port() {
    let row = row(&lb(&[], &[HTTP, (443, "tcp", 30443)]), &lb(&[], &[HTTP]));
    row.assert_class("pool-recreate", "443");
    let after = row.apply();
    assert_eq!(after.rule_names(), ["web-tcp-80"]);
    assert!(
        !after
            .firewall_rules
            .iter()
            .any(|f| text(f, "startport") == "443"),
        "its firewall rule is gone too"
    );
}

#[test]
fn cs_algorithm_is_updated_in_place() {
    let row = row(
        &lb(&[], &[HTTP]),
        &lb(&[("algorithm", "\"source\"")], &[HTTP]),
    );
    row.assert_class("minimal", "algorithm");
    let after = row.apply();
    let rule = after.rule("web-tcp-80");
    assert_eq!(text(rule, "id"), row.id_before("web-tcp-80"));
    assert_eq!(text(rule, "algorithm"), "source");
}

#[test]
fn cs_allowed_cidrs_on_4_22_are_updated_in_place() {
    let row = row(
        &lb(&[], &[HTTP]),
        &lb(
            &[("allowed-cidrs", "[\"10.0.0.0/8\", \"192.0.2.0/24\"]")],
            &[HTTP],
        ),
    );
    row.assert_class("minimal", "allowed-cidrs");
    let after = row.apply();
    let rule = after.rule("web-tcp-80");
    assert_eq!(text(rule, "id"), row.id_before("web-tcp-80"));
    assert!(text(rule, "cidrlist").contains("192.0.2.0/24"), "{rule:#}");
}

#[test]
fn cs_allowed_cidrs_before_4_22_recreate_the_rule() {
    let project = CsProject::new().with_env("SKYPLAN_SIM_CLOUDSTACK_VERSION", "4.20.1.0");
    let row = row_in(
        project,
        &lb(&[], &[HTTP]),
        &lb(&[("allowed-cidrs", "[\"10.0.0.0/8\"]")], &[HTTP]),
    );
    row.assert_class("pool-recreate", "allowed-cidrs");
    assert!(reasons(row.change()).contains("4.22"), "{:#}", row.plan);
    let after = row.apply();
    let rule = after.rule("web-tcp-80");
    assert_ne!(
        text(rule, "id"),
        row.id_before("web-tcp-80"),
        "deleted and created"
    );
    assert!(text(rule, "cidrlist").contains("10.0.0.0/8"));
}

#[test]
fn cs_protocol_tcp_to_tcp_proxy_recreates_the_rule() {
    let row = row(&lb(&[], &[HTTP]), &lb(&[], &[(80, "tcp-proxy", 30080)]));
    row.assert_class("pool-recreate", "protocol");
    let after = row.apply();
    assert_eq!(after.rule_names(), ["web-tcp-proxy-80"]);
    assert_eq!(after.members_of("web-tcp-proxy-80"), ["web-1", "web-2"]);
}

#[test]
fn cs_udp_on_a_virtual_router_network_is_a_plan_error() {
    let project = CsProject::new();
    project.config(&lb(&[], &[HTTP]));
    project.apply_converges();
    project.config(&lb(&[], &[(80, "udp", 30080)]));
    let out = project.run(&["plan"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("cannot support"), "{out:?}");
    assert_eq!(
        project.account().rule_names(),
        ["web-tcp-80"],
        "nothing changed"
    );
}

#[test]
fn cs_public_port_is_created_before_the_old_rule_goes() {
    let row = row(&lb(&[], &[HTTP]), &lb(&[], &[(8080, "tcp", 30080)]));
    row.assert_class("minimal", "port");
    let ops = crate::cloudstack::support::operations(row.change());
    let position = |wanted: &str| ops.iter().position(|op| op == wanted);
    let create = position("create LB rule web-tcp-8080 (tcp 8080 → 30080)");
    let delete = position("delete LB rule web-tcp-80");
    assert!(
        create.is_some() && create < delete,
        "create, then delete: {ops:?}"
    );
    let after = row.apply();
    assert_eq!(after.rule_names(), ["web-tcp-8080"]);
}

#[test]
fn cs_node_port_recreates_the_rule() {
    let row = row(&lb(&[], &[HTTP]), &lb(&[], &[(80, "tcp", 31080)]));
    row.assert_class("pool-recreate", "node-port");
    let after = row.apply();
    let rule = after.rule("web-tcp-80");
    assert_ne!(text(rule, "id"), row.id_before("web-tcp-80"));
    assert_eq!(text(rule, "privateport"), "31080");
}

#[test]
fn cs_members_are_assigned_and_removed_in_place() {
    let row = row(
        &lb(&[], &[HTTP]),
        &lb(&[("members", "[\"web-1\"]")], &[HTTP]),
    );
    row.assert_class("minimal", "members");
    let after = row.apply();
    assert_eq!(
        text(after.rule("web-tcp-80"), "id"),
        row.id_before("web-tcp-80")
    );
    assert_eq!(after.members_of("web-tcp-80"), ["web-1"]);
}

#[test]
fn cs_another_public_ip_is_forbidden() {
    let project = CsProject::new();
    project.config(&lb(&[], &[HTTP]));
    project.apply_converges();
    let other = project
        .account()
        .public_ips
        .iter()
        .find(|ip| ip["tags"].as_array().is_none_or(Vec::is_empty))
        .map(|ip| text(ip, "ipaddress"))
        .expect("another address of the account");
    let quoted = format!("\"{other}\"");
    project.config(&lb(&[("public-ip", &quoted)], &[HTTP]));
    let plan = project.plan(&[]);
    let web = change(&plan, WEB);
    assert_eq!(web["impact"], "forbidden", "{plan:#}");
    assert!(paths(web).iter().any(|p| p.contains("public-ip")));
    assert_eq!(project.apply(&[]).code, 1);
}

#[test]
fn cs_firewall_cidrs_replace_the_firewall_rules() {
    let row = row(
        &lb(&[], &[HTTP]),
        &lb(&[("firewall-cidrs", "[\"192.0.2.0/24\"]")], &[HTTP]),
    );
    row.assert_class("minimal", "firewall-cidrs");
    let after = row.apply();
    assert_eq!(
        text(after.rule("web-tcp-80"), "id"),
        row.id_before("web-tcp-80")
    );
    let cidrs: Vec<String> = after
        .firewall_rules
        .iter()
        .map(|f| text(f, "cidrlist"))
        .collect();
    assert_eq!(cidrs, ["192.0.2.0/24"]);
}

#[test]
fn cs_tcp_and_udp_on_one_port_is_a_config_error() {
    let project = CsProject::new();
    project.config(&lb(&[], &[HTTP, (80, "udp", 30081)]));
    let out = project.run(&["validate"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("public port 80"), "{out:?}");
}

#[test]
fn cs_members_follow_the_cluster_when_it_is_scaled_in_the_same_apply() {
    let cluster = |workers: u32| {
        format!(
            "[cluster.lab]\nprovider = \"cloudstack\"\nzone = \"zone1\"\nkubernetes-version = \"1.29.3\"\n\
             workers = {workers}\nservice-offering = \"Medium Instance\"\nnetwork = \"k8s-net\"\n\n\
             [load-balancer.edge]\nprovider = \"cloudstack\"\ncluster = \"lab\"\n\n\
             [[load-balancer.edge.ports]]\nport = 80\nnode-port = 30080\n"
        )
    };
    let project = CsProject::new();
    project.config(&cluster(2));
    project.apply_converges();
    assert_eq!(project.account().members_of("edge-tcp-80").len(), 2);
    project.config(&cluster(3));
    let plan = project.plan(&[]);
    assert_eq!(change(&plan, "cluster.lab")["impact"], "minimal");
    assert_eq!(
        change(&plan, "load-balancer.edge")["impact"],
        "minimal",
        "{plan:#}"
    );
    project.apply_converges();
    let account = project.account();
    let members = account.members_of("edge-tcp-80");
    assert_eq!(members.len(), 3, "{members:?}");
    assert!(
        members.iter().all(|m| m.starts_with("lab-node-")),
        "{members:?}"
    );
}

#[test]
fn cs_a_lost_state_adopts_the_tagged_ip_and_rules() {
    let project = CsProject::new();
    project.config(&lb(&[], &[HTTP]));
    project.apply_converges();
    let before = project.account();
    std::fs::remove_file(project.project.path().join("state/skyplan.state.json")).unwrap();
    project.apply_converges();
    let after = project.account();
    assert_eq!(after.rule_names(), before.rule_names());
    assert_eq!(
        text(after.rule("web-tcp-80"), "id"),
        text(before.rule("web-tcp-80"), "id")
    );
    let owned = |a: &Account| {
        a.public_ips
            .iter()
            .filter(|ip| ip["tags"].to_string().contains("skyplan.address"))
            .count()
    };
    assert_eq!(owned(&after), 1, "no second public IP");
}

#[test]
fn cs_rule_name_is_renamed_in_place() {
    let row = row(&lb(&[], &[HTTP]), &lb(&[("name", "\"shop\"")], &[HTTP]));
    row.assert_class("none", "name");
    let after = row.apply();
    assert_eq!(after.rule_names(), ["shop-tcp-80"]);
    assert_eq!(
        text(after.rule("shop-tcp-80"), "id"),
        row.id_before("web-tcp-80")
    );
}

#[test]
fn cs_replace_deletes_everything_and_creates_it_on_a_new_address() {
    let project = CsProject::new();
    project.config(&lb(&[], &[HTTP]));
    project.apply_converges();
    let before = project.account();
    let plan = project.plan(&["--replace", WEB]);
    let web = change(&plan, WEB);
    assert_eq!(web["action"], "replace", "{plan:#}");
    assert_eq!(web["impact"], "forbidden", "{plan:#}");
    let out = project.apply(&["--replace", WEB]);
    assert_eq!(out.code, 0, "{out:?}");
    let after = project.account();
    assert_ne!(
        text(after.rule("web-tcp-80"), "id"),
        text(before.rule("web-tcp-80"), "id")
    );
    let owned = after
        .public_ips
        .iter()
        .filter(|ip| ip["tags"].to_string().contains("skyplan.address"))
        .count();
    assert_eq!(owned, 1, "the old address was released");
    assert_eq!(project.run(&["plan", "--detailed-exitcode"]).code, 0);
}
