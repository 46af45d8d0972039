//! Snapshots of the rendered plan: the human text and the JSON, from one plan of every class.

use super::*;
use crate::model::{Address, Algorithm, LoadBalancerSpec, PortProtocol, PortSpec, ResourceKind};
use crate::plan::Plan;
use crate::provider::cloudscale::desired::desired_objects;
use crate::provider::cloudscale::diff::{diff, DiffInput};
use crate::provider::cloudscale::objects::SubnetObject;

fn spec(name: &str) -> LoadBalancerSpec {
    let mut spec = LoadBalancerSpec::with_defaults(name, "lpg1");
    spec.members = vec!["10.0.0.11".into(), "10.0.0.12".into()];
    spec.ports = vec![PortSpec {
        name: "http".into(),
        port: 80,
        protocol: PortProtocol::Tcp,
        node_port: 30080,
    }];
    spec
}

/// Plans `after` against a load balancer built from `before` (none: a new one).
fn change(
    name: &str,
    before: Option<LoadBalancerSpec>,
    after: LoadBalancerSpec,
) -> crate::plan::ResourceChange {
    let subnets = [SubnetObject {
        uuid: "6d0d7d4c-0000-4000-8000-000000000001".into(),
        cidr: "10.0.0.0/24".into(),
    }];
    let address = Address::new(ResourceKind::LoadBalancer, name);
    let live = before.map(|b| desired_objects(&address, &b, &subnets).unwrap());
    let desired = desired_objects(&address, &after, &subnets).unwrap();
    diff(&DiffInput {
        address: &address,
        desired: Some((&after, &desired)),
        prior: None,
        live: live.as_ref(),
        replace: false,
        allow_delete: false,
    })
}

fn plan() -> Plan {
    let mut algorithm = spec("web");
    algorithm.algorithm = Algorithm::SourceIp;
    algorithm.allowed_cidrs = vec![
        "192.0.2.0/24".into(),
        "198.51.100.0/24".into(),
        "203.0.113.0/24".into(),
    ];
    let mut flavor = spec("shop");
    flavor.flavor = "lb-large".into();
    Plan {
        changes: vec![
            change("api", None, spec("api")),
            change("docs", Some(spec("docs")), spec("docs")),
            change("shop", Some(spec("shop")), flavor),
            change("web", Some(spec("web")), algorithm),
        ],
    }
}

#[test]
fn human_plan() {
    insta::assert_snapshot!(render_text(&PlanView::new(&plan()), Style::Plain));
}

#[test]
fn json_plan() {
    insta::assert_json_snapshot!(PlanView::new(&plan()), {
        ".skyplan_version" => "[version]",
    });
}

#[test]
fn colour_is_only_added_when_asked() {
    let view = PlanView::new(&plan());
    assert!(!render_text(&view, Style::Plain).contains('\u{1b}'));
    assert!(render_text(&view, Style::Colour).contains('\u{1b}'));
}
