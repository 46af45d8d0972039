//! CloudStack controller mode: a CKS cluster served by `skyplan sim serve --provider
//! cloudstack` (its Kubernetes API and simulated CCM v1.2.0 outlive skyplan's runs), a
//! Service-bound load balancer (skyplan writes the Service, the simulated CCM makes the LB
//! rules). One test per row of impact.md's CloudStack table (controller column) that can be
//! driven end to end, sorted by what the row changes: the rule's ports, protocol, algorithm and
//! address (`rules`); the source CIDRs, by firewall and by the rule's cidrlist (`source_cidrs`);
//! the rule's members, the cluster's workers (`members`); and its removal (`removal`). Each
//! makes a config change, checks the predicted class and `controller: …` operations, then
//! applies and checks which rule IDs the simulated cloud kept or made anew. This module is
//! their frame.

pub mod members;
pub mod removal;
pub mod rules;
pub mod source_cidrs;

use serde_json::Value;

use crate::cloudstack::support::CsSimServer;
use crate::cloudstack::support::{change, operations, text, Account, CsProject};

pub const SHOP: &str = "load-balancer.shop";

pub const HTTP: &str = "[[load-balancer.shop.ports]]\nport = 80\n";

pub const HTTP_HTTPS: &str =
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

    /// The plan's attribute is the config key the user changed, its class `impact`, with an
    /// effect of the CCM's whose path ends with `effect` (the rule or firewall rule it acts on).
    pub fn assert_attribute(&self, key: &str, impact: &str, effect: &str) -> &Self {
        let attributes = self.change["attributes"].as_array().expect("attributes");
        let attribute = attributes
            .iter()
            .find(|a| a["path"] == key)
            .unwrap_or_else(|| panic!("no attribute {key}: {:#}", self.change));
        assert_eq!(attribute["impact"], impact, "{attribute:#}");
        let effects = attribute["effects"].as_array().expect("effects");
        assert!(
            effects.iter().any(|e| text(e, "path").ends_with(effect)),
            "no effect *{effect} under {key}: {attribute:#}"
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
