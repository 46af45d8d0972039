//! Controller mode on the embedded default, one test per row that can be driven there: apply a
//! Service-bound load balancer (skyplan writes the Service, the simulated cloudscale CCM builds
//! the load balancer), change the config, check the predicted class and controller actions,
//! apply, and check that the simulated cloud shows exactly that effect — which UUIDs stayed,
//! which changed.

pub mod load_balancer;
pub mod ports;
pub mod removal;

use serde_json::Value;

use crate::support::{Project, World};

pub(crate) const HTTP: &str = "[[load-balancer.shop.ports]]\nname = \"http\"\nport = 80\n";

/// The config with `extra` keys on the load balancer (zone lpg1 unless `extra` sets one).
pub(crate) fn config(extra: &str, ports: &str) -> String {
    let zone = match extra.contains("zone =") {
        true => "",
        false => "zone = \"lpg1\"\n",
    };
    format!(
        "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
         [cluster.prod]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\n\n\
         [load-balancer.shop]\nprovider = \"cloudscale\"\n{zone}\
         cluster = \"prod\"\nservice = \"default/shop\"\nmode = \"ccm\"\n{extra}\n{ports}"
    )
}

/// The plan's entry for the load balancer.
pub(crate) fn shop(plan: &Value) -> Value {
    plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["address"] == "load-balancer.shop")
        .cloned()
        .unwrap_or_else(|| panic!("no load-balancer.shop in {plan:#}"))
}

pub(crate) fn operations(change: &Value) -> Vec<String> {
    change["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap().to_string())
        .collect()
}

pub(crate) struct Row {
    pub(crate) project: Project,
    pub(crate) change: Value,
    pub(crate) before: World,
}

pub(crate) fn row(before: (&str, &str), after: (&str, &str)) -> Row {
    let project = Project::new();
    project.config(&config(before.0, before.1));
    project.apply_ok();
    let first = shop(&project.plan(&[]));
    assert_eq!(
        first["action"], "no-op",
        "nothing to do after apply: {first:#}"
    );
    project.config(&config(after.0, after.1));
    let change = shop(&project.plan(&[]));
    Row {
        before: project.world(),
        project,
        change,
    }
}

impl Row {
    pub(crate) fn assert_class(&self, impact: &str) -> &Self {
        assert_eq!(self.change["impact"], impact, "{:#}", self.change);
        self
    }

    pub(crate) fn assert_predicts(&self, action: &str) -> &Self {
        let operations = operations(&self.change);
        assert!(
            operations
                .iter()
                .any(|o| o == &format!("controller: {action}")),
            "no `controller: {action}` in {operations:#?}"
        );
        self
    }

    pub(crate) fn assert_not_predicted(&self, word: &str) -> &Self {
        let operations = operations(&self.change);
        assert!(
            !operations
                .iter()
                .any(|o| o.starts_with("controller:") && o.contains(word)),
            "unexpected {word} in {operations:#?}"
        );
        self
    }

    /// Applies (inside any window: `--now` is not needed without [maintenance]); the next plan
    /// of the load balancer must be empty.
    pub(crate) fn apply(&self) -> World {
        let out = self.project.apply(&[]);
        assert_eq!(out.code, 0, "{out:?}");
        let again = shop(&self.project.plan(&[]));
        assert_eq!(
            again["action"], "no-op",
            "apply then plan is empty: {again:#}"
        );
        self.project.world()
    }
}

#[test]
fn a_port_name_change_recreates_the_pool() {
    let renamed = "[[load-balancer.shop.ports]]\nname = \"web\"\nport = 80\n";
    let row = row(("", HTTP), ("", renamed));
    row.assert_class("pool-recreate")
        .assert_predicts("delete pool tcp/http")
        .assert_predicts("create pool tcp/web");
    let lb = row.before.uuid("load_balancers", "shop");
    let pool = row.before.uuid("pools", "tcp/http");
    let after = row.apply();
    assert_eq!(
        after.uuid("load_balancers", "shop"),
        lb,
        "same load balancer"
    );
    assert!(after.named("pools", "tcp/http").is_none());
    assert_ne!(after.uuid("pools", "tcp/web"), pool, "a new pool");
}

#[test]
fn a_renumbered_port_keeps_its_node_port_and_pool_and_recreates_the_listener() {
    let renumbered = "[[load-balancer.shop.ports]]\nname = \"http\"\nport = 8080\n";
    let row = row(("", HTTP), ("", renumbered));
    row.assert_class("minimal")
        .assert_predicts("delete listener tcp/80")
        .assert_predicts("create listener tcp/8080")
        .assert_not_predicted("pool")
        .assert_not_predicted("member");
    let pool = row.before.uuid("pools", "tcp/http");
    let members = row.before.member_uuids();
    let after = row.apply();
    assert_eq!(after.uuid("pools", "tcp/http"), pool, "pool kept");
    assert_eq!(
        after.member_uuids(),
        members,
        "members kept: same node port"
    );
    assert!(after.named("listeners", "tcp/80").is_none());
    assert!(after.named("listeners", "tcp/8080").is_some());
}

#[test]
fn allowed_cidrs_are_minimal_and_keep_the_listener() {
    let row = row(("", HTTP), ("allowed-cidrs = [\"192.0.2.0/24\"]", HTTP));
    row.assert_class("minimal")
        .assert_predicts("update listener tcp/80")
        .assert_not_predicted("delete");
    let listener = row.before.uuid("listeners", "tcp/80");
    let after = row.apply();
    assert_eq!(after.uuid("listeners", "tcp/80"), listener);
    assert_eq!(
        after.named("listeners", "tcp/80").unwrap()["allowed_cidrs"],
        serde_json::json!(["192.0.2.0/24"])
    );
}

#[test]
fn local_traffic_policy_recreates_members_and_monitor_but_keeps_the_pool() {
    let row = row(("", HTTP), ("traffic-policy = \"Local\"", HTTP));
    row.assert_class("minimal")
        .assert_predicts("delete health monitor of pool tcp/http")
        .assert_not_predicted("delete pool");
    let reasons = row.change["attributes"].to_string();
    assert!(reasons.contains("README"), "{reasons}");
    let pool = row.before.uuid("pools", "tcp/http");
    let monitor = row.before.monitor_uuid();
    let members = row.before.member_uuids();
    let after = row.apply();
    assert_eq!(after.uuid("pools", "tcp/http"), pool, "pool kept");
    assert_ne!(after.monitor_uuid(), monitor, "monitor recreated");
    let monitor = &after.all("health_monitors")[0];
    assert_eq!(monitor["type"], "http");
    assert_eq!(monitor["http"]["url_path"], "/livez");
    let recreated = after.member_uuids();
    assert!(
        recreated.iter().all(|m| !members.contains(m)),
        "members recreated"
    );
}

#[test]
fn a_flavor_change_is_forbidden_and_refused() {
    let row = row(("", HTTP), ("flavor = \"lb-large\"", HTTP));
    row.assert_class("forbidden");
    let out = row.project.apply(&[]);
    assert_ne!(out.code, 0, "apply refuses: {out:?}");
    let after = row.project.world();
    let lb = after.named("load_balancers", "shop").unwrap();
    assert_eq!(
        lb["uuid"],
        row.before.uuid("load_balancers", "shop").as_str()
    );
    assert_eq!(
        lb["flavor"],
        row.before.named("load_balancers", "shop").unwrap()["flavor"]
    );
}
