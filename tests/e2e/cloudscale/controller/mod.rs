//! Controller mode on the embedded default: skyplan writes a Service-bound load balancer's
//! Service, the simulated cloudscale CCM builds the load balancer. One test per row of
//! impact.md's cloudscale table (controller column) that can be driven there, sorted by what
//! the row changes: the ports, their listeners and pools (`ports`); the members and the health
//! monitor (`members_and_monitors`); the load balancer itself, its name, zone, flavor and
//! addresses (`load_balancer`); and its removal (`removal`). Each applies a config, changes it,
//! checks the predicted class and controller actions, applies, and checks that the simulated
//! cloud shows exactly that effect — which UUIDs stayed, which changed. This module is their
//! frame.

pub mod drift;
pub mod load_balancer;
pub mod members_and_monitors;
pub mod ports;
pub mod removal;
pub mod user_change;

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
