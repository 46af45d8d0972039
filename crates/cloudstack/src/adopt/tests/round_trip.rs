//! Generated, read by the config section, imported and planned against the same account as
//! the next run would: nothing to do.

use std::path::Path;

use super::*;
use crate::config::CloudstackConfig;
use crate::live::PlanInput;
use crate::spec::CloudstackLoadBalancerSpec;
use skyplan_core::config::Config;
use skyplan_core::plan::Action;
use skyplan_core::provider::discover::Generated;
use skyplan_core::provider::DriftCheck;

/// The generated texts, with the provider table, as the config stage reads them.
fn load(texts: &[String]) -> Config {
    let mut files = vec![(
        "skyplan.toml".to_string(),
        "[provider.cloudstack]\nendpoint = \"embedded\"\n".to_string(),
    )];
    files.extend(
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("adopted-{i}.toml"), t.clone())),
    );
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    skyplan_core::config::load_texts(
        Path::new("cfg"),
        &files,
        &[&skyplan_kubernetes::KubernetesConfig, &CloudstackConfig],
    )
    .unwrap_or_else(|e| panic!("{e}\n{texts:#?}"))
}

fn text(generated: Generated) -> String {
    match generated {
        Generated::Config { text, .. } => text,
        refused => panic!("{refused:?}"),
    }
}

fn lb_spec<'a>(config: &'a Config, at: &str) -> &'a CloudstackLoadBalancerSpec {
    let resource = config.resource(&address(at)).expect("declared");
    resource.spec.get().expect("a CloudStack load balancer")
}

fn cluster_spec<'a>(config: &'a Config, at: &str) -> &'a CloudstackClusterSpec {
    let resource = config.resource(&address(at)).expect("declared");
    resource.spec.get().expect("a CKS cluster")
}

/// The next run's refresh: the account, with the adopted cluster as a target imported by ID.
fn next_run(inventory: Inventory, cluster: Option<&CloudstackClusterSpec>) -> Live {
    let mut live = Live {
        inventory,
        ..Live::default()
    };
    if let Some(spec) = cluster {
        live.clusters.insert(
            address("cluster.lab"),
            KnownCluster {
                spec: Some(spec.clone()),
                prior_id: Some("c1".into()),
            },
        );
    }
    live
}

fn plan_lb(live: &Live, at: &str, spec: &CloudstackLoadBalancerSpec, id: &str) {
    let address = address(at);
    let entry = claimed(id);
    let input = PlanInput {
        address: &address,
        desired: Some(spec),
        prior: Some(&entry),
        live: &live.inventory,
        replace: false,
        allow_delete: false,
    };
    let imported = crate::lb::import(&input).unwrap();
    let cluster = address_of_members(spec);
    let cluster_ref = cluster.as_ref().and_then(|c| live.cluster_ref(spec, c));
    let input = PlanInput {
        prior: Some(&imported),
        ..input
    };
    let change = crate::lb::plan(&input, cluster_ref).unwrap();
    assert_eq!(change.action, Action::NoOp, "{:#?}", change.attributes);
    assert!(change.operations.is_empty(), "{:#?}", change.operations);
    let drift = crate::lb::drift(&input, cluster_ref).unwrap();
    assert_eq!(drift, DriftCheck::Compared(vec![]));
}

fn address_of_members(spec: &CloudstackLoadBalancerSpec) -> Option<Address> {
    match &spec.members {
        crate::spec::CsMembers::Cluster(key) => Some(Address::new(ResourceKind::Cluster, key)),
        crate::spec::CsMembers::Vms(_) => None,
    }
}

#[test]
fn a_generated_cluster_imports_and_plans_nothing() {
    let live = surveyed();
    let generated = text(generate(&live, "cluster.lab", "c1", &adopting(&[])));
    let config = load(&[generated]);
    let spec = cluster_spec(&config, "cluster.lab");
    let address = address("cluster.lab");
    let entry = claimed("c1");
    let imported =
        crate::provider::import_cluster(&address, spec, Some(&entry), &live.inventory).unwrap();
    let change = crate::cluster::plan(&PlanInput {
        address: &address,
        desired: Some(spec),
        prior: Some(&imported),
        live: &live.inventory,
        replace: false,
        allow_delete: false,
    })
    .unwrap();
    assert_eq!(change.action, Action::NoOp, "{:#?}", change.attributes);
}

#[test]
fn generated_hand_made_rules_import_and_plan_nothing() {
    let live = surveyed();
    let generated = text(generate(
        &live,
        "load-balancer.web",
        "ip-web",
        &adopting(&[]),
    ));
    let config = load(&[generated]);
    let next = next_run(account(), None);
    plan_lb(
        &next,
        "load-balancer.web",
        lb_spec(&config, "load-balancer.web"),
        "ip-web",
    );
}

#[test]
fn rules_adopted_with_their_cluster_plan_nothing_with_it() {
    let live = surveyed();
    let both = adopting(&[("c1", "cluster.lab"), ("ip-edge", "load-balancer.edge")]);
    let cluster = text(generate(&live, "cluster.lab", "c1", &both));
    let edge = text(generate(&live, "load-balancer.edge", "ip-edge", &both));
    let config = load(&[cluster, edge]);
    let lab = cluster_spec(&config, "cluster.lab");
    let spec = lb_spec(&config, "load-balancer.edge");
    let resource = config.resource(&address("load-balancer.edge")).unwrap();
    assert_eq!(resource.depends_on, [address("cluster.lab")]);
    let next = next_run(account(), Some(lab));
    plan_lb(&next, "load-balancer.edge", spec, "ip-edge");
}

#[test]
fn generated_ccm_rules_import_and_the_service_is_not_written() {
    let live = surveyed();
    let both = adopting(&[("c1", "cluster.lab"), ("ip-shop", "load-balancer.shop")]);
    let cluster = text(generate(&live, "cluster.lab", "c1", &both));
    let shop = text(generate(&live, "load-balancer.shop", "ip-shop", &both));
    let config = load(&[cluster, shop]);
    let spec = lb_spec(&config, "load-balancer.shop");
    let address = address("load-balancer.shop");
    let entry = claimed("ip-shop");
    crate::lb::import(&PlanInput {
        address: &address,
        desired: Some(spec),
        prior: Some(&entry),
        live: &live.inventory,
        replace: false,
        allow_delete: false,
    })
    .unwrap();
    let service = shop_service();
    let nodes = nodes();
    let change = crate::lb::ccm::plan::plan(&crate::lb::ccm::plan::CcmPlanInput {
        address: &address,
        spec,
        service: Some(&service),
        nodes: &nodes,
        live: &live.inventory,
        scaled_workers: 0,
    });
    assert_eq!(change.action, Action::NoOp, "{:#?}", change.attributes);
    assert!(change.operations.is_empty(), "{:#?}", change.operations);
}

#[test]
fn every_spec_written_reads_back_the_same() {
    // Keys the generators write, each away from its default.
    let live = surveyed();
    let both = adopting(&[("c1", "cluster.lab"), ("ip-shop", "load-balancer.shop")]);
    let shop_text = text(generate(&live, "load-balancer.shop", "ip-shop", &both));
    let shop = load(&[text(generate(&live, "cluster.lab", "c1", &both)), shop_text]);
    let mut spec = lb_spec(&shop, "load-balancer.shop").clone();
    spec.name = "shop-lb".into();
    spec.description = Some("a \"quoted\" description".into());
    spec.allowed_cidrs = vec!["10.0.0.0/8".into()];
    spec.algorithm = crate::spec::CsAlgorithm::Source;
    spec.ports.push(crate::spec::CsPort {
        port: 53,
        protocol: crate::spec::CsProtocol::Udp,
        node_port: 30053,
    });
    let written = crate::adopt::lb_toml(&address("load-balancer.shop"), &spec);
    let cluster = text(generate(&live, "cluster.lab", "c1", &both));
    let read = load(&[cluster, written.clone()]);
    assert_eq!(*lb_spec(&read, "load-balancer.shop"), spec, "{written}");

    let mut direct = spec.clone();
    direct.binding = None;
    direct.members = crate::spec::CsMembers::Vms(vec!["web-1".into()]);
    direct.network = Some("k8s-net".into());
    direct.public_ip = crate::spec::PublicIp::Address("203.0.113.10".into());
    direct.ports[0].node_port = 30080;
    direct.firewall_cidrs = vec!["0.0.0.0/0".into()];
    let written = crate::adopt::lb_toml(&address("load-balancer.x"), &direct);
    assert_eq!(
        *lb_spec(&load(std::slice::from_ref(&written)), "load-balancer.x"),
        direct,
        "{written}"
    );
}
