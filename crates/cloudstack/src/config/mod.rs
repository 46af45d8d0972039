//! CloudStack's config section: `[provider.cloudstack]`, `[cluster.NAME]` and
//! `[load-balancer.NAME]` with provider "cloudstack" → [`CloudstackSettings`],
//! [`CloudstackClusterSpec`] and [`CloudstackLoadBalancerSpec`]. Each bad value is reported at
//! its position and replaced by its default, so one run reports everything.

mod raw;

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use schemars::SchemaGenerator;
use serde_spanned::Spanned;
use skyplan_core::config::section::{
    self as values, once, Checker, ConfigSection, Declared, Invalid, KeyLocations, Opaque, Problem,
    Problems, Raw, Resolving, Resource, ResourceSpec, SectionSchema, SourceFile, Table,
};
use skyplan_core::model::{Address, ResourceKind};
use skyplan_kubernetes::config::service_ref;
use skyplan_kubernetes::spec::{LbMode, ServiceBinding};
use toml::de::ValueDeserializer;

use crate::spec::{
    Autoscaling, CloudstackClusterSpec, CloudstackEndpoint, CloudstackLoadBalancerSpec,
    CloudstackSettings, ClusterRunState, CsAlgorithm, CsMembers, CsPort, CsProtocol, NodeType,
    PublicIp,
};
use raw::{RawAutoscaling, RawCloudstack, RawCluster, RawCsLoadBalancer, RawCsPort};

/// The section the registry lists.
pub struct CloudstackConfig;

impl ConfigSection for CloudstackConfig {
    fn provider(&self) -> &'static str {
        crate::PROVIDER
    }

    fn secret_keys(&self) -> &'static [(&'static str, &'static str)] {
        const INI: &str = "the cloud-config INI file ([Global] api-key and secret-key)";
        &[("api-key", INI), ("secret-key", INI)]
    }

    fn kinds(&self) -> &'static [ResourceKind] {
        &[ResourceKind::Cluster, ResourceKind::LoadBalancer]
    }

    fn describe(&self, kind: ResourceKind) -> Option<&'static str> {
        (kind == ResourceKind::Cluster).then_some("a cluster skyplan creates")
    }

    fn parse_settings(&self, table: ValueDeserializer<'_>) -> Result<Raw, toml::de::Error> {
        values::raw::<RawCloudstack>(table)
    }

    fn parse_resource(
        &self,
        kind: ResourceKind,
        table: ValueDeserializer<'_>,
    ) -> Result<Raw, toml::de::Error> {
        match kind {
            ResourceKind::Cluster => values::raw::<RawCluster>(table),
            _ => values::raw::<RawCsLoadBalancer>(table),
        }
    }

    fn settings(&self, table: &Table<'_>, problems: &mut Problems) -> Opaque {
        Opaque::new(provider(table, problems))
    }

    fn resource(
        &self,
        kind: ResourceKind,
        key: &str,
        table: &Table<'_>,
        _context: &Resolving<'_>,
        problems: &mut Problems,
    ) -> Resource {
        match kind {
            ResourceKind::Cluster => cluster(key, table, problems),
            _ => load_balancer(key, table, problems),
        }
    }

    fn validate(&self, declared: &Declared<'_, '_>, problems: &mut Problems) {
        validate(declared, problems)
    }

    fn embedded_at(&self, settings: &Table<'_>) -> Option<Range<usize>> {
        let table: &RawCloudstack = settings.get();
        // Embedded unless an endpoint or a cloud-config says otherwise (contract.md).
        let embedded = match &table.endpoint {
            Some(endpoint) => endpoint.get_ref() == "embedded",
            None => table.cloud_config.is_none(),
        };
        let span = table
            .endpoint
            .as_ref()
            .map_or_else(|| settings.span(), |e| e.span());
        embedded.then_some(span)
    }

    fn controller_mode<'t>(&self, table: &'t Table<'_>) -> Option<(Range<usize>, &'t str)> {
        let lb = table.try_get::<RawCsLoadBalancer>()?;
        let mode = lb.mode.as_ref().filter(|m| m.get_ref() == "ccm")?;
        Some((mode.span(), lb.cluster.as_ref()?.get_ref()))
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> SectionSchema {
        SectionSchema {
            settings: Some(generator.subschema_for::<RawCloudstack>()),
            resources: vec![
                (
                    ResourceKind::Cluster,
                    generator.subschema_for::<RawCluster>(),
                ),
                (
                    ResourceKind::LoadBalancer,
                    generator.subschema_for::<RawCsLoadBalancer>(),
                ),
            ],
        }
    }
}

/// The firewall rules a load balancer gets unless it says otherwise: open to everyone, as the
/// CCM does for a Service without loadBalancerSourceRanges.
const DEFAULT_FIREWALL_CIDRS: [&str; 1] = ["0.0.0.0/0"];

fn provider(raw: &Table<'_>, problems: &mut Problems) -> CloudstackSettings {
    let mut check = Checker::new(raw.file, problems);
    let section: &RawCloudstack = raw.get();
    for key in [&section.api_key, &section.secret_key]
        .into_iter()
        .flatten()
    {
        let message = "CloudStack keys do not belong in config files";
        let help = "remove the key and name the cloud-config INI file that holds it: cloud-config = \"~/.cloud-config\"";
        // The snippet would show the key's line.
        let problem = Problem::at(raw.file, key.span(), message).without_snippet();
        check.push(problem.with_help(help));
    }
    let endpoint = match (&section.endpoint, &section.cloud_config) {
        (Some(endpoint), Some(_)) => {
            let invalid = Invalid::new("endpoint and cloud-config exclude each other")
                .help("the API URL is the cloud-config file's api-url; keep one of the two");
            check.report(endpoint.span(), invalid);
            CloudstackEndpoint::Embedded
        }
        (Some(endpoint), None) => {
            if endpoint.get_ref() != "embedded" {
                let invalid = Invalid::new(format!("`{}` is not an endpoint", endpoint.get_ref()))
                    .help("write \"embedded\", or name the INI file with cloud-config = \"~/.cloud-config\"");
                check.report(endpoint.span(), invalid);
            }
            CloudstackEndpoint::Embedded
        }
        (None, Some(path)) => CloudstackEndpoint::CloudConfig(raw.file.path_value(path)),
        (None, None) => CloudstackEndpoint::Embedded,
    };
    CloudstackSettings { endpoint }
}

fn cluster(key: &str, raw: &Table<'_>, problems: &mut Problems) -> Resource {
    let mut check = Checker::new(raw.file, problems);
    let section: &RawCluster = raw.get();
    Resource {
        address: Address::new(ResourceKind::Cluster, key),
        provider: section.provider.get_ref().clone(),
        location: raw.location(),
        keys: cluster_keys(section, raw.file),
        spec: ResourceSpec::new(cluster_spec(key, section, &mut check)),
        depends_on: vec![],
        origin: Default::default(),
    }
}

/// Where the names a cluster takes from the catalog are written, for plan errors about an
/// unknown one.
fn cluster_keys(raw: &RawCluster, file: &SourceFile) -> KeyLocations {
    let mut keys = KeyLocations::default();
    let named = [
        ("zone", Some(&raw.zone)),
        ("kubernetes-version", Some(&raw.kubernetes_version)),
        ("service-offering", Some(&raw.service_offering)),
        ("network", raw.network.as_ref()),
        ("keypair", raw.keypair.as_ref()),
    ];
    for (path, value) in named {
        if let Some(value) = value {
            keys.insert(path, file.key_location(&value.span()));
        }
    }
    keys
}

fn cluster_spec(key: &str, raw: &RawCluster, check: &mut Checker<'_, '_>) -> CloudstackClusterSpec {
    let control_nodes = count(check, &raw.control_nodes, 1, 1, "control-nodes");
    let kubernetes_version = check
        .text(&raw.kubernetes_version, semantic_version)
        .unwrap_or_default();
    let offerings = [
        (NodeType::Control, &raw.node_offerings.control),
        (NodeType::Worker, &raw.node_offerings.worker),
        (NodeType::Etcd, &raw.node_offerings.etcd),
    ];
    CloudstackClusterSpec {
        name: raw.name.clone().unwrap_or_else(|| key.to_string()),
        description: raw.description.clone(),
        zone: raw.zone.get_ref().clone(),
        kubernetes_version,
        control_nodes,
        etcd_nodes: count(check, &raw.etcd_nodes, 0, 0, "etcd-nodes"),
        workers: count(check, &raw.workers, 1, 1, "workers"),
        service_offering: raw.service_offering.get_ref().clone(),
        node_offerings: offerings
            .into_iter()
            .filter_map(|(node, offering)| offering.clone().map(|o| (node, o)))
            .collect::<BTreeMap<_, _>>(),
        network: raw.network.as_ref().map(|n| n.get_ref().clone()),
        keypair: raw.keypair.as_ref().map(|k| k.get_ref().clone()),
        autoscaling: raw.autoscaling.as_ref().and_then(|a| autoscaling(a, check)),
        state: check.choice(&raw.state, ClusterRunState::Running),
    }
}

/// A node count: `default` when absent, at least `min`.
fn count(
    check: &mut Checker<'_, '_>,
    raw: &Option<Spanned<i64>>,
    default: u32,
    min: u32,
    what: &str,
) -> u32 {
    let Some(raw) = raw else { return default };
    match u32::try_from(*raw.get_ref()).ok().filter(|n| *n >= min) {
        Some(n) => n,
        None => {
            let invalid = Invalid::new(format!("{what} must be at least {min}"))
                .help("CloudStack refuses a smaller count");
            check.report(raw.span(), invalid);
            default
        }
    }
}

/// CKS accepts only MAJOR.MINOR.PATCH ("Invalid version format … Semantic version should be
/// specified in MAJOR.MINOR.PATCH format").
fn semantic_version(text: &str) -> Result<String, Invalid> {
    semver::Version::parse(text)
        .ok()
        .filter(|v| v.pre.is_empty() && v.build.is_empty())
        .map(|v| v.to_string())
        .ok_or_else(|| {
            Invalid::new(format!("`{text}` is not a Kubernetes version"))
                .help("write MAJOR.MINOR.PATCH, e.g. \"1.29.3\", as CloudStack requires")
        })
}

fn autoscaling(raw: &Spanned<RawAutoscaling>, check: &mut Checker<'_, '_>) -> Option<Autoscaling> {
    let bounds = raw.get_ref();
    let invalid = if bounds.min < 1 {
        Invalid::new("autoscaling.min must be at least 1")
    } else if bounds.max <= bounds.min {
        Invalid::new(format!(
            "autoscaling.max ({}) must be greater than autoscaling.min ({})",
            bounds.max, bounds.min
        ))
    } else {
        return Some(Autoscaling {
            min: bounds.min,
            max: bounds.max,
        });
    };
    check.report(raw.span(), invalid.help("CloudStack refuses these bounds"));
    None
}

/// Where a load balancer names what it takes from the account: its network, public IP and
/// members, for plan errors about them.
fn lb_keys(raw: &RawCsLoadBalancer, file: &SourceFile) -> KeyLocations {
    let mut keys = KeyLocations::default();
    let spans = [
        ("network", raw.network.as_ref().map(|n| n.span())),
        ("public-ip", raw.public_ip.as_ref().map(|p| p.span())),
        ("members", raw.members.as_ref().map(|m| m.span())),
        ("cluster", raw.cluster.as_ref().map(|c| c.span())),
        ("service", raw.service.as_ref().map(|s| s.span())),
    ];
    for (path, span) in spans {
        if let Some(span) = span {
            keys.insert(path, file.key_location(&span));
        }
    }
    keys
}

fn load_balancer(key: &str, raw: &Table<'_>, problems: &mut Problems) -> Resource {
    let mut check = Checker::new(raw.file, problems);
    let section: &RawCsLoadBalancer = raw.get();
    let depends_on = section
        .cluster
        .iter()
        .map(|c| Address::new(ResourceKind::Cluster, c.get_ref()))
        .collect();
    Resource {
        address: Address::new(ResourceKind::LoadBalancer, key),
        provider: section.provider.get_ref().clone(),
        location: raw.location(),
        keys: lb_keys(section, raw.file),
        spec: ResourceSpec::new(lb_spec(key, section, &mut check)),
        depends_on,
        origin: Default::default(),
    }
}

fn lb_spec(
    key: &str,
    raw: &RawCsLoadBalancer,
    check: &mut Checker<'_, '_>,
) -> CloudstackLoadBalancerSpec {
    let cidr_text = |text: &str| values::cidr(text).map(|net| net.to_string());
    let firewall_cidrs = match &raw.firewall_cidrs {
        Some(cidrs) => check.texts(cidrs, cidr_text),
        None => DEFAULT_FIREWALL_CIDRS.map(String::from).to_vec(),
    };
    CloudstackLoadBalancerSpec {
        name: raw.name.clone().unwrap_or_else(|| key.to_string()),
        description: raw.description.clone(),
        public_ip: raw
            .public_ip
            .as_ref()
            .and_then(|ip| check.text(ip, public_ip))
            .unwrap_or(PublicIp::Auto),
        network: raw.network.as_ref().map(|n| n.get_ref().clone()),
        members: match (&raw.cluster, &raw.members) {
            (Some(cluster), _) => CsMembers::Cluster(cluster.get_ref().clone()),
            (None, Some(vms)) => CsMembers::Vms(vms.get_ref().clone()),
            (None, None) => CsMembers::Vms(vec![]),
        },
        algorithm: check.choice(&raw.algorithm, CsAlgorithm::RoundRobin),
        allowed_cidrs: check.texts(&raw.allowed_cidrs, cidr_text),
        firewall_cidrs,
        ports: raw
            .ports
            .get_ref()
            .iter()
            .filter_map(|port| cs_port(port.get_ref(), check))
            .collect(),
        binding: ccm_binding(raw, check),
    }
}

/// The Service a controller-mode load balancer writes; `None` in direct mode.
fn ccm_binding(raw: &RawCsLoadBalancer, check: &mut Checker<'_, '_>) -> Option<ServiceBinding> {
    if !is_ccm(raw) {
        return None;
    }
    let (cluster, service) = (raw.cluster.as_ref()?, raw.service.as_ref()?);
    let (namespace, name) = check.text(service, service_ref)?;
    Some(ServiceBinding {
        cluster: Address::new(ResourceKind::Cluster, cluster.get_ref()),
        namespace,
        name,
        mode: LbMode::Ccm,
    })
}

fn is_ccm(raw: &RawCsLoadBalancer) -> bool {
    raw.mode.as_ref().is_some_and(|m| m.get_ref() == "ccm")
}

fn public_ip(text: &str) -> Result<PublicIp, Invalid> {
    if text == "auto" {
        return Ok(PublicIp::Auto);
    }
    values::ip_address(text)
        .map(|ip| PublicIp::Address(ip.to_string()))
        .map_err(|invalid| {
            invalid.help("write \"auto\" or an address of the account, e.g. 203.0.113.10")
        })
}

fn cs_port(raw: &RawCsPort, check: &mut Checker<'_, '_>) -> Option<CsPort> {
    let port = check.port(&raw.port);
    // Controller mode without node-port: the apiserver allocates it (0 until the Service is
    // read); with one, it is written as the Service port's nodePort.
    let node_port = match &raw.node_port {
        Some(node_port) => check.port(node_port),
        None => Some(0),
    };
    let protocol = check.choice(&raw.protocol, CsProtocol::Tcp);
    Some(CsPort {
        port: port?,
        protocol,
        node_port: node_port?,
    })
}

/// Rules that need the whole config: the members' cluster, the ports.
fn validate(declared: &Declared<'_, '_>, problems: &mut Problems) {
    for (_, lb) in declared.tables(ResourceKind::LoadBalancer) {
        let mut check = Checker::new(lb.file, problems);
        let section: &RawCsLoadBalancer = lb.get();
        members_have_one_source(section, &mut check);
        cluster_is_declared(section, declared, &mut check);
        match is_ccm(section) {
            true => ccm_keys(section, &mut check),
            false => {
                mode_is_direct(section, &mut check);
                direct_keys(section, &mut check);
                ports_do_not_conflict(section, &mut check);
            }
        }
    }
}

fn members_have_one_source(lb: &RawCsLoadBalancer, check: &mut Checker<'_, '_>) {
    if let (Some(cluster), Some(_)) = (&lb.cluster, &lb.members) {
        let invalid = Invalid::new("cluster and members exclude each other")
            .help("the members are the cluster's workers, or the VMs listed in members");
        check.report(cluster.span(), invalid);
    }
    if let Some(members) = &lb.members {
        let mut seen = HashMap::new();
        for name in members.get_ref() {
            if seen.insert(name.as_str(), ()).is_some() {
                let invalid = Invalid::new(format!("member `{name}` is listed twice"));
                check.report(members.span(), invalid.help("list each VM once"));
            }
        }
    }
}

fn cluster_is_declared(lb: &RawCsLoadBalancer, declared: &Declared, check: &mut Checker<'_, '_>) {
    let Some(cluster) = &lb.cluster else { return };
    // Controller mode only needs to reach the cluster's apiserver: a CKS cluster or an
    // existing one (provider "kubernetes") both do.
    let found = match declared.cluster_provider(cluster.get_ref()) {
        Some(crate::PROVIDER) => true,
        Some(skyplan_kubernetes::PROVIDER) => is_ccm(lb),
        _ => false,
    };
    if !found {
        let names: Vec<&str> = declared
            .tables(ResourceKind::Cluster)
            .map(|(key, _)| key)
            .collect();
        let invalid = Invalid::new(format!(
            "cluster `{}` is not a [cluster.NAME] with provider \"cloudstack\" in this config",
            cluster.get_ref()
        ))
        .help(match names.is_empty() {
            true => "declare the cluster, or list the member VMs in members".to_string(),
            false => format!("declared clusters: {}", names.join(", ")),
        });
        check.report(cluster.span(), invalid);
    }
}

fn mode_is_direct(lb: &RawCsLoadBalancer, check: &mut Checker<'_, '_>) {
    let Some(mode) = &lb.mode else { return };
    if mode.get_ref() != "direct" {
        let invalid = Invalid::new(format!("`{}` is not a mode", mode.get_ref()))
            .help("expected \"direct\" or \"ccm\"");
        check.report(mode.span(), invalid);
    }
}

/// Direct mode: skyplan makes the rules, so it needs every private port; a Service is only
/// written in controller mode.
fn direct_keys(lb: &RawCsLoadBalancer, check: &mut Checker<'_, '_>) {
    if let Some(service) = &lb.service {
        let invalid = Invalid::new("`service` is only for controller mode")
            .help("add mode = \"ccm\" to let the CloudStack CCM serve this Service");
        check.report(service.span(), invalid);
    }
    for port in lb.ports.get_ref() {
        if port.get_ref().node_port.is_none() {
            let invalid = Invalid::new(format!(
                "port {} needs a node-port",
                port.get_ref().port.get_ref()
            ))
            .help("set node-port, the port on each member");
            check.report(port.span(), invalid);
        }
    }
}

/// Controller mode: what the CloudStack CCM v1.2.0 can express (research §1.3-1.5).
fn ccm_keys(lb: &RawCsLoadBalancer, check: &mut Checker<'_, '_>) {
    let mode = lb.mode.as_ref().expect("controller mode is written");
    if lb.cluster.is_none() || lb.service.is_none() {
        let invalid = Invalid::new("mode = \"ccm\" needs `cluster` and `service`").help(
            "in controller mode skyplan writes the Service: name its cluster and namespace/name",
        );
        check.report(mode.span(), invalid);
    }
    if let Some(algorithm) = lb.algorithm.as_ref().filter(|a| a.get_ref() == "leastconn") {
        let invalid = Invalid::new("the CloudStack CCM cannot express leastconn").help(
            "it maps sessionAffinity None to roundrobin and ClientIP to source: use one of those",
        );
        check.report(algorithm.span(), invalid);
    }
    let ports = lb.ports.get_ref();
    if ports.is_empty() {
        let invalid = Invalid::new("a load balancer needs at least one port")
            .help("add a [[load-balancer.NAME.ports]] table with port");
        check.report(lb.ports.span(), invalid);
    }
    let protocols: Vec<Option<&str>> = ports
        .iter()
        .map(|p| p.get_ref().protocol.as_ref().map(|p| p.get_ref().as_str()))
        .collect();
    let proxy = protocols.contains(&Some("tcp-proxy"));
    let plain_tcp = protocols.iter().any(|p| matches!(p, None | Some("tcp")));
    if proxy && plain_tcp {
        let invalid = Invalid::new("tcp and tcp-proxy ports in one Service")
            .help("the CCM's proxy-protocol annotation turns every TCP port into tcp-proxy: make them all tcp-proxy or all tcp");
        check.report(lb.ports.span(), invalid);
    }
    for port in ports {
        if let Some(node_port) = &port.get_ref().node_port {
            node_port_in_range(node_port, check);
        }
    }
}

/// kube-apiserver's default `--service-node-port-range`: a `nodePort` outside it is refused
/// when the Service is written.
const NODE_PORT_RANGE: std::ops::RangeInclusive<i64> = 30000..=32767;

/// Controller mode: `node-port` becomes the Service port's `nodePort`, which the apiserver
/// accepts only inside its node-port range.
fn node_port_in_range(node_port: &Spanned<i64>, check: &mut Checker<'_, '_>) {
    let number = *node_port.get_ref();
    if !NODE_PORT_RANGE.contains(&number) {
        let invalid = Invalid::new(format!(
            "node-port {number} is outside the apiserver's node-port range {}-{}",
            NODE_PORT_RANGE.start(),
            NODE_PORT_RANGE.end()
        ))
        .help("pick a node port in 30000-32767, or leave node-port out and let the apiserver allocate one");
        check.report(node_port.span(), invalid);
    }
}

/// Two rules on one public IP and port conflict whatever their protocols (CloudStack answers
/// 537), so a TCP and a UDP port with one number cannot both exist.
fn ports_do_not_conflict(lb: &RawCsLoadBalancer, check: &mut Checker<'_, '_>) {
    let ports = lb.ports.get_ref();
    if ports.is_empty() {
        let invalid = Invalid::new("a load balancer needs at least one port")
            .help("add a [[load-balancer.NAME.ports]] table with port and node-port");
        check.report(lb.ports.span(), invalid);
    }
    let mut numbers = HashMap::new();
    for port in ports {
        let number = *port.get_ref().port.get_ref();
        let what = format!("public port {number} (CloudStack rules on one IP and port conflict, 537, whatever their protocol)");
        once(
            &mut numbers,
            number,
            port.get_ref().port.span(),
            &what,
            check,
        );
    }
}

#[cfg(test)]
mod tests;
