//! A cloudscale load balancer bound to a Kubernetes Service: `cluster`, `service`, `mode` and
//! `node-selector`. With a cluster the members are the cluster's nodes (so `members` is an
//! error) and the node ports come from the Service (so `node-port` becomes optional).

use std::collections::HashMap;

use skyplan_core::config::section::{once, Checker, Invalid, Problems};
use skyplan_core::model::{Address, ResourceKind};
use skyplan_kubernetes::config::service_ref;
use skyplan_kubernetes::spec::{LbMode, ServiceBinding};

use super::raw::RawLoadBalancer;
use super::Lb;

/// The binding the table asks for; each inconsistency is reported at its key.
pub(super) fn binding(
    raw: &RawLoadBalancer,
    check: &mut Checker<'_, '_>,
) -> Option<ServiceBinding> {
    let mode = check.choice(&raw.mode, LbMode::Direct);
    match (&raw.cluster, &raw.service) {
        (Some(cluster), Some(service)) => {
            let (namespace, name) = check.text(service, service_ref)?;
            Some(ServiceBinding {
                cluster: Address::new(ResourceKind::Cluster, cluster.get_ref()),
                namespace,
                name,
                mode,
            })
        }
        (Some(cluster), None) => {
            let invalid = Invalid::new("a load balancer bound to a cluster needs `service`")
                .help("name the Service it serves: service = \"namespace/name\"");
            check.report(cluster.span(), invalid);
            None
        }
        (None, Some(service)) => {
            let invalid = Invalid::new("`service` needs `cluster`")
                .help("name the [cluster.NAME] the Service runs in: cluster = \"NAME\"");
            check.report(service.span(), invalid);
            None
        }
        (None, None) => {
            if let (Some(raw_mode), LbMode::Ccm) = (&raw.mode, mode) {
                let invalid = Invalid::new("mode = \"ccm\" needs `cluster` and `service`")
                    .help("in controller mode skyplan writes the Service: name its cluster and namespace/name");
                check.report(raw_mode.span(), invalid);
            }
            None
        }
    }
}

/// Rules about a bound load balancer's other keys: members come from the cluster, node ports
/// from the Service, and node-selector only means something with nodes to select.
pub(super) fn check_keys(raw: &RawLoadBalancer, check: &mut Checker<'_, '_>) {
    if raw.cluster.is_some() {
        if let Some(first) = raw.members.first() {
            let invalid = Invalid::new("`cluster` and `members` exclude each other")
                .help("with a cluster the members are its nodes; remove `members`");
            check.report(first.span(), invalid);
        }
        if raw.mode.as_ref().is_some_and(|m| m.get_ref() == "ccm") {
            node_ports_in_apiserver_range(raw, check);
        } else {
            node_ports_come_from_the_service(raw, check);
        }
    } else {
        if let Some(selector) = &raw.node_selector {
            let invalid = Invalid::new("`node-selector` selects nodes of a cluster")
                .help("bind the load balancer to a Service with cluster and service, or remove node-selector");
            check.report(selector.span(), invalid);
        }
        for port in raw.ports.get_ref() {
            if port.get_ref().node_port.is_none() {
                let invalid = Invalid::new(format!(
                    "port {} needs a node-port",
                    port.get_ref().port.get_ref()
                ))
                .help("set node-port, the port on each member (only a load balancer bound to a Service takes it from the Service)");
                check.report(port.span(), invalid);
            }
        }
    }
}

/// In direct mode the members listen on the Service's node ports: a configured one would be
/// silently overruled, so it is refused.
fn node_ports_come_from_the_service(raw: &RawLoadBalancer, check: &mut Checker<'_, '_>) {
    for port in raw.ports.get_ref() {
        if let Some(node_port) = &port.get_ref().node_port {
            let invalid = Invalid::new(
                "a load balancer bound to a Service in direct mode takes its node ports from the Service",
            )
            .help("remove node-port, or use mode = \"ccm\" to have skyplan write it to the Service");
            check.report(node_port.span(), invalid);
        }
    }
}

/// The apiserver's default node-port range (`--service-node-port-range`).
const NODE_PORT_RANGE: std::ops::RangeInclusive<i64> = 30000..=32767;

/// In controller mode a configured node-port is written to the Service's `nodePort`, which
/// the apiserver refuses outside its range (422 Invalid): caught here, before any write.
/// Two ports of one Service with one node port (and protocol) are the apiserver's "Duplicate
/// value".
fn node_ports_in_apiserver_range(raw: &RawLoadBalancer, check: &mut Checker<'_, '_>) {
    let mut seen = HashMap::new();
    for port in raw.ports.get_ref() {
        let Some(node_port) = &port.get_ref().node_port else {
            continue;
        };
        let protocol = port
            .get_ref()
            .protocol
            .as_ref()
            .map_or("tcp", |p| p.get_ref());
        let what = format!("node-port {}/{protocol}", node_port.get_ref());
        once(
            &mut seen,
            (*node_port.get_ref(), protocol.to_string()),
            node_port.span(),
            &what,
            check,
        );
        if !NODE_PORT_RANGE.contains(node_port.get_ref()) {
            let invalid = Invalid::new(format!(
                "node-port {} is outside the apiserver's node-port range {}-{}",
                node_port.get_ref(),
                NODE_PORT_RANGE.start(),
                NODE_PORT_RANGE.end()
            ))
            .help("pick a node port in 30000-32767, or remove node-port to let the apiserver allocate one");
            check.report(node_port.span(), invalid);
        }
    }
}

/// Controller-mode load balancers of one cluster asking for one node port: the apiserver
/// would refuse the second Service written (422, provided port is already allocated).
fn node_ports_once_per_cluster(lbs: &[Lb<'_>], problems: &mut Problems) {
    let mut first: HashMap<(String, i64), &str> = HashMap::new();
    for lb in lbs {
        let (key, table) = (lb.key, lb.raw);
        let ccm = table.mode.as_ref().is_some_and(|m| m.get_ref() == "ccm");
        let (Some(cluster), true) = (&table.cluster, ccm) else {
            continue;
        };
        let mut check = Checker::new(lb.file, problems);
        for port in table.ports.get_ref() {
            let Some(node_port) = &port.get_ref().node_port else {
                continue;
            };
            let slot = (cluster.get_ref().clone(), *node_port.get_ref());
            match first.get(&slot) {
                Some(other) if *other != key => {
                    let invalid = Invalid::new(format!(
                        "node-port {} is also asked for by load-balancer.{other} in cluster {}",
                        node_port.get_ref(),
                        cluster.get_ref()
                    ))
                    .help("node ports are unique across a cluster's Services: pick another one");
                    check.report(node_port.span(), invalid);
                }
                Some(_) => {}
                None => {
                    first.insert(slot, key);
                }
            }
        }
    }
}

/// The cluster a load balancer names is declared in this config, and no two controller-mode
/// load balancers of a cluster ask for one node port.
pub(super) fn validate(lbs: &[Lb<'_>], clusters: &[&str], problems: &mut Problems) {
    node_ports_once_per_cluster(lbs, problems);
    for lb in lbs {
        let Some(cluster) = &lb.raw.cluster else {
            continue;
        };
        let mut names = clusters.to_vec();
        if names.contains(&cluster.get_ref().as_str()) {
            continue;
        }
        let mut check = Checker::new(lb.file, problems);
        names.sort();
        let help = match names.is_empty() {
            true => "declare it: [cluster.NAME] with provider = \"kubernetes\"".to_string(),
            false => format!("declared clusters: {}", names.join(", ")),
        };
        let invalid = Invalid::new(format!(
            "cluster `{}` is not a [cluster.NAME] in this config",
            cluster.get_ref()
        ))
        .help(help);
        check.report(cluster.span(), invalid);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{errors, load_str};
    use super::*;
    use crate::spec::CloudscaleLoadBalancerSpec;

    /// A cluster to bind to.
    const CLUSTER: &str =
        "[cluster.prod]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\n\n\n\n\n";

    /// A cloudscale load balancer `shop` with `extra` keys and one port `port_extra`.
    fn shop(extra: &str, port_extra: &str) -> String {
        format!(
            "[provider.cloudscale]\nendpoint = \"embedded\"\n{CLUSTER}\
             [load-balancer.shop]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\n{extra}\n\
             [[load-balancer.shop.ports]]\nname = \"http\"\nport = 80\n{port_extra}\n"
        )
    }

    fn lb_spec(text: &str) -> (CloudscaleLoadBalancerSpec, Vec<Address>) {
        let config = load_str(text).unwrap();
        let lb = config
            .resources
            .iter()
            .find(|r| r.address.to_string() == "load-balancer.shop")
            .unwrap();
        let spec: &CloudscaleLoadBalancerSpec = lb.spec.get().expect("a cloudscale load balancer");
        (spec.clone(), lb.depends_on.clone())
    }

    #[test]
    fn a_bound_load_balancer_depends_on_its_cluster_and_takes_node_ports_from_the_service() {
        let (spec, depends_on) = lb_spec(&shop(
            "cluster = \"prod\"\nservice = \"default/shop\"\nmode = \"ccm\"\nnode-selector = \"tier=web\"",
            "",
        ));
        let binding = spec.binding.unwrap();
        assert_eq!(binding.cluster.to_string(), "cluster.prod");
        assert_eq!(binding.service_ref(), "default/shop");
        assert_eq!(binding.mode, LbMode::Ccm);
        assert_eq!(spec.ports[0].node_port, 0);
        assert_eq!(spec.node_selector.as_deref(), Some("tier=web"));
        assert_eq!(depends_on, [binding.cluster]);
    }

    #[test]
    fn direct_is_the_default_mode_and_takes_the_services_node_ports() {
        let bound = "cluster = \"prod\"\nservice = \"default/shop\"";
        let (spec, _) = lb_spec(&shop(bound, ""));
        assert_eq!(spec.binding.unwrap().mode, LbMode::Direct);
        assert_eq!(
            errors(&shop(bound, "node-port = 30080")),
            ["a.toml:18:13: a load balancer bound to a Service in direct mode takes its node ports from the Service"]
        );
    }

    #[test]
    fn inconsistent_bindings_are_errors_at_their_key() {
        let lines = errors(&shop(
            "cluster = \"prod\"\nservice = \"default/shop\"\nmembers = [\"10.0.0.1\"]",
            "",
        ));
        assert!(
            lines.iter().any(|l| l.contains("a.toml:15:")
                && l.contains("`cluster` and `members` exclude each other")),
            "{lines:?}"
        );
        let lines = errors(&shop("cluster = \"nope\"\nservice = \"default/shop\"", ""));
        assert!(
            lines
                .iter()
                .any(|l| l.contains("a.toml:13:11") && l.contains("cluster `nope` is not")),
            "{lines:?}"
        );
        let lines = errors(&shop("mode = \"ccm\"", "node-port = 30080"));
        assert!(
            lines
                .iter()
                .any(|l| l.contains("needs `cluster` and `service`")),
            "{lines:?}"
        );
        let lines = errors(&shop("service = \"shop\"", "node-port = 30080"));
        assert!(
            lines
                .iter()
                .any(|l| l.contains("`service` needs `cluster`")),
            "{lines:?}"
        );
        let lines = errors(&shop("cluster = \"prod\"\nservice = \"shop\"", ""));
        assert!(
            lines.iter().any(|l| l.contains("is not namespace/name")),
            "{lines:?}"
        );
    }

    #[test]
    fn node_port_stays_required_without_a_binding() {
        let lines = errors(&shop("members = [\"10.0.0.1\"]", ""));
        assert!(
            lines
                .iter()
                .any(|l| l.contains("port 80 needs a node-port")),
            "{lines:?}"
        );
    }

    #[test]
    fn a_controller_mode_node_port_must_be_in_the_apiservers_range() {
        let ccm = "cluster = \"prod\"\nservice = \"default/shop\"\nmode = \"ccm\"";
        let (spec, _) = lb_spec(&shop(ccm, "node-port = 30080"));
        assert_eq!(spec.ports[0].node_port, 30080);
        assert_eq!(
            errors(&shop(ccm, "node-port = 8080")),
            ["a.toml:19:13: node-port 8080 is outside the apiserver's node-port range 30000-32767"]
        );
        assert!(load_str(&shop(ccm, "node-port = 32768")).is_err());
        assert!(load_str(&shop(ccm, "node-port = 32767")).is_ok());
    }

    #[test]
    fn node_ports_are_unique_in_a_service_and_across_a_clusters_load_balancers() {
        let ccm = "cluster = \"prod\"\nservice = \"default/shop\"\nmode = \"ccm\"";
        let second_port =
            "node-port = 30080\n[[load-balancer.shop.ports]]\nname = \"b\"\nport = 81\nnode-port = 30080";
        let lines = errors(&shop(ccm, second_port));
        assert!(
            lines
                .iter()
                .any(|l| l.contains("node-port 30080/tcp is used twice")),
            "{lines:?}"
        );
        let cart = "\n[load-balancer.cart]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\n\
                    cluster = \"prod\"\nservice = \"default/cart\"\nmode = \"ccm\"\n\
                    [[load-balancer.cart.ports]]\nport = 81\nnode-port = 30080\n";
        let lines = errors(&(shop(ccm, "node-port = 30080") + cart));
        assert!(
            lines
                .iter()
                .any(|l| l.contains("also asked for by load-balancer.")),
            "{lines:?}"
        );
        assert!(load_str(&(shop(ccm, "node-port = 30081") + cart)).is_ok());
    }
}
