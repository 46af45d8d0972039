//! CloudStack controller mode, one test per row of impact.md's CloudStack table (controller
//! column) that can be driven end to end: a CKS cluster served by `skyplan sim serve --provider
//! cloudstack` (its Kubernetes API and simulated CCM v1.2.0 outlive skyplan's runs), a
//! Service-bound load balancer (skyplan writes the Service, the simulated CCM makes the LB
//! rules), a config change, the predicted class and `controller: …` operations, then apply and
//! which rule IDs the simulated cloud kept or made anew.

pub mod members;

use serde_json::Value;

use crate::cloudstack::simulator_clients::CsSimServer;
use crate::cloudstack::support::{change, operations, text, Account, CsProject};

pub const SHOP: &str = "load-balancer.shop";
pub const HTTP: &str = "[[load-balancer.shop.ports]]\nport = 80\n";
const HTTP_HTTPS: &str =
    "[[load-balancer.shop.ports]]\nport = 80\n\n[[load-balancer.shop.ports]]\nport = 443\n";

pub const CLUSTER: &str = "[cluster.lab]\nprovider = \"cloudstack\"\nzone = \"zone1\"\n\
    kubernetes-version = \"1.30.5\"\nworkers = 2\nservice-offering = \"Medium Instance\"\n\
    network = \"k8s-net\"\n\n";

/// The cluster plus `[load-balancer.shop]` in controller mode with `extra` keys and `ports`.
pub fn config(extra: &str, ports: &str) -> String {
    format!(
        "{CLUSTER}[load-balancer.shop]\nprovider = \"cloudstack\"\ncluster = \"lab\"\n\
         service = \"default/shop\"\nmode = \"ccm\"\n{extra}\n\n{ports}"
    )
}

/// The CCM's rule for `<protocol>-<port>`: its name is the Service's base name (from the UID,
/// unknown to the test) followed by `-<protocol>-<port>`.
pub fn rule<'a>(account: &'a Account, suffix: &str) -> Option<&'a Value> {
    account
        .rules
        .iter()
        .find(|r| text(r, "name").ends_with(&format!("-{suffix}")))
}

pub fn rule_id(account: &Account, suffix: &str) -> String {
    let found =
        rule(account, suffix).unwrap_or_else(|| panic!("no rule *-{suffix}: {:#?}", account.rules));
    text(found, "id")
}

/// The VMs behind the cluster's Nodes, by name: the CCM (v1.2.0 on Kubernetes 1.30, like the
/// service controller it runs in) balances on every Node not labelled
/// exclude-from-external-load-balancers, so the control node too, not only the workers.
pub fn node_vms(account: &Account) -> Vec<String> {
    let mut names: Vec<String> = account
        .vms
        .iter()
        .map(|vm| text(vm, "name"))
        .filter(|n| n.starts_with("lab-node-") || n.starts_with("lab-control-"))
        .collect();
    names.sort();
    names
}

/// The firewall CIDRs of public port `port`.
pub fn firewall_cidrs(account: &Account, port: u16) -> Vec<String> {
    let mut cidrs: Vec<String> = account
        .firewall_rules
        .iter()
        .filter(|f| text(f, "startport") == port.to_string())
        .map(|f| text(f, "cidrlist"))
        .collect();
    cidrs.sort();
    cidrs
}

pub struct Row {
    pub project: CsProject,
    pub sim: CsSimServer,
    pub change: Value,
    pub before: Account,
}

/// A project on a served CloudStack whose cluster exists.
pub fn with_cluster() -> (CsProject, CsSimServer) {
    with_cluster_on(&[])
}

/// The same on a `sim serve` started with more `options` (e.g. `--server-version`).
pub fn with_cluster_on(options: &[&str]) -> (CsProject, CsSimServer) {
    let project = CsProject::new();
    let world = project.project.path().join("cloudstack.json");
    let sim = CsSimServer::start_with(&world, options);
    project.config_served(&sim.base_url, CLUSTER);
    project.apply_converges();
    (project, sim)
}

/// Applies `before` (converged: the next plan is empty), then plans `after`.
pub fn row(before: (&str, &str), after: (&str, &str)) -> Row {
    row_on(&[], before, after)
}

/// [`row`] on a `sim serve` started with more `options`.
pub fn row_on(options: &[&str], before: (&str, &str), after: (&str, &str)) -> Row {
    let (project, sim) = with_cluster_on(options);
    project.config_served(&sim.base_url, &config(before.0, before.1));
    project.apply_converges();
    let before = Account::read_at(&sim.base_url);
    project.config_served(&sim.base_url, &config(after.0, after.1));
    let plan = project.plan(&[]);
    Row {
        change: change(&plan, SHOP).clone(),
        project,
        sim,
        before,
    }
}

impl Row {
    pub fn assert_class(&self, impact: &str) -> &Self {
        assert_eq!(self.change["impact"], impact, "{:#}", self.change);
        self
    }

    pub fn controller(&self) -> Vec<String> {
        operations(&self.change)
            .into_iter()
            .filter(|o| o.starts_with("controller:"))
            .collect()
    }

    /// Some predicted controller action contains every one of `words`.
    pub fn assert_predicts(&self, words: &[&str]) -> &Self {
        let ops = self.controller();
        assert!(
            ops.iter().any(|o| words.iter().all(|w| o.contains(w))),
            "no controller action with {words:?} in {ops:#?}"
        );
        self
    }

    pub fn assert_not_predicted(&self, word: &str) -> &Self {
        let ops = self.controller();
        assert!(
            !ops.iter().any(|o| o.contains(word)),
            "unexpected {word} in {ops:#?}"
        );
        self
    }

    /// Applies (skyplan waits for the controller); planning again finds nothing to do.
    pub fn apply(&self) -> Account {
        self.project.apply_converges();
        Account::read_at(&self.sim.base_url)
    }
}

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
fn cs_ccm_the_algorithm_is_minimal_and_updates_the_rule_in_place() {
    let row = row(("", HTTP), ("algorithm = \"source\"", HTTP));
    row.assert_class("minimal")
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
fn cs_ccm_a_port_removed_is_pool_recreate_and_its_rule_goes() {
    let row = row(("", HTTP_HTTPS), ("", HTTP));
    row.assert_class("pool-recreate")
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
fn cs_ccm_firewall_cidrs_are_minimal_and_keep_the_rule() {
    let row = row(("", HTTP), ("firewall-cidrs = [\"192.0.2.0/24\"]", HTTP));
    row.assert_class("minimal")
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

#[test]
fn cs_ccm_the_rule_cidrlist_is_minimal_on_4_22_and_updated_in_place() {
    let row = row(("", HTTP), ("allowed-cidrs = [\"10.0.0.0/8\"]", HTTP));
    row.assert_class("minimal")
        .assert_not_predicted("delete LB rule");
    let http = rule_id(&row.before, "tcp-80");
    let after = row.apply();
    assert_eq!(rule_id(&after, "tcp-80"), http, "rule kept");
    let cidrs = text(rule(&after, "tcp-80").unwrap(), "cidrlist");
    assert_eq!(cidrs.trim(), "10.0.0.0/8");
    row.sim.terminate();
}

#[test]
fn cs_ccm_tcp_to_udp_is_forbidden_and_refused() {
    let udp = "[[load-balancer.shop.ports]]\nport = 80\nprotocol = \"udp\"\n";
    let row = row(("", HTTP), ("", udp));
    row.assert_class("forbidden");
    let http = rule_id(&row.before, "tcp-80");
    let out = row.project.run(&["apply", "--auto-approve"]);
    assert_ne!(out.code, 0, "apply refuses: {out:?}");
    let after = Account::read_at(&row.sim.base_url);
    assert_eq!(rule_id(&after, "tcp-80"), http, "the tcp rule stays");
    assert!(rule(&after, "udp-80").is_none(), "no udp rule");
    row.sim.terminate();
}
