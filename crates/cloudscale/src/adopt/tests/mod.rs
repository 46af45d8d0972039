//! Discovery and generation on surveys built in memory: load balancers as skyplan's own
//! mapping and the simulated API interpreter of `diff_props` make them (then changed as a
//! user or another tool would), Services as the CCM's clusters hold them.

mod ccm;
mod direct;
mod discover;
mod props;

use std::collections::BTreeMap;
use std::path::Path;

use k8s_openapi::api::core::v1::Service;
use serde_json::{json, Value};

use super::super::diff::props as made;
use super::super::indexed::IndexedSnapshot;
use super::super::live::Live;
use super::super::objects::{FloatingIpObject, LbObjects, Snapshot};
use super::generate;
use crate::config::CloudscaleConfig;
use crate::spec::{CloudscaleLoadBalancerSpec, PortProtocol, PortSpec};
use skyplan_core::model::{Address, ResourceKind};
use skyplan_core::provider::discover::{Adopting, Generated};
use skyplan_core::provider::Target;
use skyplan_core::state::ResourceState;

pub(super) const SUBNET: &str = made::SUBNET;

pub(super) fn lb_address(name: &str) -> Address {
    Address::new(ResourceKind::LoadBalancer, name)
}

pub(super) fn cluster() -> Address {
    Address::new(ResourceKind::Cluster, "prod")
}

/// A port as the config writes it.
pub(super) fn port(name: &str, number: u16, node_port: u16) -> PortSpec {
    PortSpec {
        name: name.into(),
        port: number,
        protocol: PortProtocol::Tcp,
        node_port,
    }
}

/// What the API shows once skyplan created `spec` (tagged as `load-balancer.web`), under
/// `uuid`.
pub(super) fn created(spec: &CloudscaleLoadBalancerSpec, uuid: &str) -> LbObjects {
    let change = made::plan(spec, None, None, false);
    let mut lb = made::apply_ops(None, &made::ops(&change))
        .expect("the API takes a creation")
        .expect("a load balancer");
    lb.lb.uuid = Some(uuid.into());
    lb
}

/// The same made by someone else: no tag on any object.
pub(super) fn untagged(mut lb: LbObjects) -> LbObjects {
    lb.lb.tags = Default::default();
    for set in lb.pools.values_mut() {
        set.pool.tags = Default::default();
        set.members
            .values_mut()
            .for_each(|m| m.tags = Default::default());
        set.monitor
            .iter_mut()
            .for_each(|m| m.tags = Default::default());
        set.listener
            .iter_mut()
            .for_each(|l| l.tags = Default::default());
    }
    lb
}

/// A survey of an account holding `lbs` (their floating IPs assigned to them) and of cluster
/// `prod` holding `services`.
pub(super) fn survey(lbs: Vec<LbObjects>, services: Vec<Service>) -> Live {
    let floating_ips = lbs
        .iter()
        .flat_map(|lb| {
            lb.floating_ips.iter().map(|network| FloatingIpObject {
                network: network.clone(),
                load_balancer: lb.lb.uuid.clone(),
                server: None,
                tags: Default::default(),
            })
        })
        .collect();
    let snapshot = Snapshot {
        load_balancers: lbs,
        floating_ips,
        subnets: made::subnets(),
        catalog: Default::default(),
    };
    Live {
        snapshot: IndexedSnapshot::new(snapshot),
        services: super::SurveyedServices::new(BTreeMap::from([(cluster(), services)])),
        ..Live::default()
    }
}

/// A Service `default/<name>` of type LoadBalancer with uid `uid`, `annotations` and `ports`
/// (name, port, node port), its targetPort its port.
pub(super) fn service(
    name: &str,
    uid: &str,
    annotations: &[(&str, &str)],
    ports: &[(&str, i32, i32)],
) -> Service {
    let annotations: BTreeMap<String, String> = annotations
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let ports: Vec<Value> = ports
        .iter()
        .map(|(name, port, node_port)| {
            json!({"name": name, "port": port, "targetPort": port, "protocol": "TCP", "nodePort": node_port})
        })
        .collect();
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default", "uid": uid, "resourceVersion": "7",
                     "annotations": annotations},
        "spec": {"type": "LoadBalancer", "ports": ports, "externalTrafficPolicy": "Cluster"}
    }))
    .expect("a Service")
}

/// The state entry an adoption starts from: the ID alone.
pub(super) fn claimed(uuid: &str) -> ResourceState {
    ResourceState {
        provider: "cloudscale".into(),
        id: uuid.into(),
        ids: Value::Null,
        attributes: Value::Null,
        depends_on: vec![],
    }
}

/// What `generate` writes for adopting `uuid` as `load-balancer.<name>`.
pub(super) fn generated(name: &str, uuid: &str, live: &Live) -> Generated {
    let address = lb_address(name);
    let entry = claimed(uuid);
    let target = Target {
        address: &address,
        resource: None,
        prior: Some(&entry),
    };
    generate(&target, live, &Adopting::default()).expect("generated")
}

/// The config text, or the refusal as a failure.
pub(super) fn config_of(generated: Generated) -> String {
    match generated {
        Generated::Config { text, .. } => text,
        refused => panic!("refused: {refused:?}"),
    }
}

/// The refusal's attribute and reason.
pub(super) fn refusal_of(generated: Generated) -> (String, String) {
    match generated {
        Generated::Refused { attribute, reason } => (attribute, reason),
        Generated::Config { text, .. } => panic!("generated:\n{text}"),
    }
}

/// The spec the config section reads from `text` (beside the provider's table and cluster
/// prod), as `skyplan plan` would.
pub(super) fn read(name: &str, text: &str) -> CloudscaleLoadBalancerSpec {
    let config = format!(
        "[provider.cloudscale]\n\n[cluster.prod]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\n\n{text}"
    );
    let loaded = skyplan_core::config::load_texts(
        Path::new("."),
        &[("adopted.toml", &config)],
        &[&skyplan_kubernetes::KubernetesConfig, &CloudscaleConfig],
    )
    .unwrap_or_else(|e| panic!("{}\n{text}", e.lines().join("\n")));
    let resource = loaded.resource(&lb_address(name)).expect("declared");
    resource
        .spec
        .get::<CloudscaleLoadBalancerSpec>()
        .unwrap()
        .clone()
}

/// The controller-mode plan of `spec` (also the applied one) against `live`, with the nodes
/// `node-<i>` (servers at 10.0.0.1<i>) and `service` as the cluster has them.
pub(super) fn ccm_plan(
    name: &str,
    spec: &CloudscaleLoadBalancerSpec,
    service: &Service,
    live: &Live,
    nodes: &[u8],
) -> skyplan_core::plan::ResourceChange {
    use crate::binding::test_support::{node, server};
    let view = crate::binding::ClusterView {
        nodes: nodes.iter().map(|i| node(*i, &[])).collect(),
        service: Some(service.clone()),
        node_set_changes: false,
        node_ports_held: Default::default(),
    };
    let servers: Vec<_> = nodes.iter().map(|i| server(*i)).collect();
    crate::ccm::plan::plan(&crate::ccm::plan::CcmInput {
        address: &lb_address(name),
        spec,
        prior: Some(spec),
        view: &view,
        servers: &servers,
        snapshot: &live.snapshot,
    })
    .expect("a controller-mode plan")
}
