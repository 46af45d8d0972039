//! What the config asks of CloudStack, resolved: the provider's settings, a Kubernetes Service
//! (CKS) cluster and a set of load-balancer rules on one public IP. Names of catalog objects (zone, offering,
//! version, network, keypair) are kept as written; the provider resolves them against the live
//! catalog. Serialized into the state as the last-applied attributes.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Where the CloudStack API and its keys come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloudstackEndpoint {
    /// The built-in simulator, persisted under `<state-dir>/embedded/cloudstack.json`.
    Embedded,
    /// The INI file the CloudStack CCM and `cs` read (`[Global]` api-url, api-key, secret-key,
    /// project-id, zone, ssl-no-verify), resolved against the config root; `~` is the home.
    CloudConfig(PathBuf),
}

/// `[provider.cloudstack]`.
#[derive(Debug, Clone, PartialEq)]
pub struct CloudstackSettings {
    pub endpoint: CloudstackEndpoint,
}

skyplan_core::choices!(
    ClusterRunState => "cluster state",
    CsAlgorithm => "algorithm",
    CsProtocol => "protocol",
);

skyplan_core::wire_enum!(
    /// The state a CKS cluster should be in.
    ClusterRunState { Running => "running", Stopped => "stopped" }
);
skyplan_core::wire_enum!(
    /// A CKS node type, for per-type service offerings (`nodeofferings`, CloudStack ≥ 4.21).
    NodeType { Control => "control", Worker => "worker", Etcd => "etcd" }
);
skyplan_core::wire_enum!(
    /// A CloudStack LB rule's algorithm.
    CsAlgorithm { RoundRobin => "roundrobin", Source => "source", LeastConn => "leastconn" }
);
skyplan_core::wire_enum!(
    /// A CloudStack LB rule's protocol.
    CsProtocol { Tcp => "tcp", Udp => "udp", TcpProxy => "tcp-proxy" }
);

/// Cluster autoscaling bounds (the cluster autoscaler CKS deploys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Autoscaling {
    pub min: u32,
    pub max: u32,
}

/// `[cluster.NAME]` with `provider = "cloudstack"`: a CKS cluster skyplan creates and manages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloudstackClusterSpec {
    /// The cluster's name in CloudStack (default: the table key).
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Zone name or UUID.
    pub zone: String,
    /// A semantic version MAJOR.MINOR.PATCH of an enabled supported version.
    pub kubernetes_version: String,
    pub control_nodes: u32,
    pub etcd_nodes: u32,
    /// The worker count (`size` in the API).
    pub workers: u32,
    /// Offering name or UUID for every node type without its own.
    pub service_offering: String,
    /// Per node type offerings (name or UUID), CloudStack ≥ 4.21.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_offerings: BTreeMap<NodeType, String>,
    /// Network name or UUID; `None` lets CKS create one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keypair: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<Autoscaling>,
    pub state: ClusterRunState,
}

impl CloudstackClusterSpec {
    /// The offering (as written) that nodes of this type get.
    pub fn offering_for(&self, node: NodeType) -> &str {
        self.node_offerings
            .get(&node)
            .map_or(self.service_offering.as_str(), String::as_str)
    }
}

/// Where a CloudStack load balancer's public IP comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PublicIp {
    /// skyplan associates one (`associateIpAddress`) and releases it only when the load
    /// balancer is deleted.
    Auto,
    /// An existing address of the account.
    Address(String),
}

/// The backends of CloudStack LB rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CsMembers {
    /// Every worker VM of the `[cluster.NAME]` with this key.
    Cluster(String),
    /// VMs by name.
    Vms(Vec<String>),
}

/// One Service port → one LB rule `<name>-<protocol>-<port>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CsPort {
    /// The public port.
    pub port: u16,
    pub protocol: CsProtocol,
    /// The private port on each member.
    pub node_port: u16,
}

/// `[load-balancer.NAME]` with `provider = "cloudstack"`, direct mode: LB rules on one public IP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CloudstackLoadBalancerSpec {
    /// The base of the rule names (default: the table key).
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub public_ip: PublicIp,
    /// Network name or UUID; `None`: the cluster's network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    pub members: CsMembers,
    pub algorithm: CsAlgorithm,
    /// The rules' `cidrlist` (haproxy source ACL); empty allows everyone.
    pub allowed_cidrs: Vec<String>,
    /// Firewall rules on the public IP, one per port.
    pub firewall_cidrs: Vec<String>,
    pub ports: Vec<CsPort>,
    /// Controller mode (`mode = "ccm"`, `cluster`, `service`): skyplan writes this Service and
    /// the CloudStack CCM makes the rules. Absent in state written before controller mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<skyplan_kubernetes::spec::ServiceBinding>,
}

impl CloudstackLoadBalancerSpec {
    /// The CCM's rule name: `<base>-<tcp|udp|tcp-proxy>-<public port>`.
    pub fn rule_name(&self, port: &CsPort) -> String {
        format!("{}-{}-{}", self.name, port.protocol, port.port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_names_follow_the_ccm() {
        let spec = CloudstackLoadBalancerSpec {
            name: "edge".into(),
            description: None,
            public_ip: PublicIp::Auto,
            network: None,
            members: CsMembers::Vms(vec![]),
            algorithm: CsAlgorithm::RoundRobin,
            allowed_cidrs: vec![],
            firewall_cidrs: vec![],
            ports: vec![],
            binding: None,
        };
        let port = CsPort {
            port: 443,
            protocol: CsProtocol::TcpProxy,
            node_port: 30443,
        };
        assert_eq!(spec.rule_name(&port), "edge-tcp-proxy-443");
    }

    #[test]
    fn a_node_type_without_its_own_offering_uses_the_clusters() {
        let mut spec = CloudstackClusterSpec {
            name: "lab".into(),
            description: None,
            zone: "zone1".into(),
            kubernetes_version: "1.29.3".into(),
            control_nodes: 1,
            etcd_nodes: 0,
            workers: 3,
            service_offering: "Medium Instance".into(),
            node_offerings: BTreeMap::new(),
            network: None,
            keypair: None,
            autoscaling: None,
            state: ClusterRunState::Running,
        };
        spec.node_offerings
            .insert(NodeType::Worker, "Large Instance".into());
        assert_eq!(spec.offering_for(NodeType::Worker), "Large Instance");
        assert_eq!(spec.offering_for(NodeType::Control), "Medium Instance");
    }
}
