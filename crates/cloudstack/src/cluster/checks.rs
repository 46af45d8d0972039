//! Plan-time constraints of CKS (research/cloudstack.md §3): what CloudStack would refuse in
//! a failed async job is found here first, so apply never discovers it. These are limits of the
//! config against the catalog (an error naming the limit); what depends on the live cluster's
//! state is classified by the diff instead (a `forbidden` change).

use std::fmt;

use super::desired::Resolved;
use crate::api::{KubernetesVersion, ServiceOffering};
use crate::live::Inventory;
use crate::spec::{CloudstackClusterSpec, NodeType};

/// `MIN_KUBERNETES_CLUSTER_NODE_CPU` / `_RAM_SIZE` (KubernetesClusterService).
pub const MIN_NODE_CPU: u32 = 2;
pub const MIN_NODE_RAM_MB: u32 = 2048;
/// `nodeofferings` and `etcdnodes` came with CloudStack 4.21.0.
pub const NODE_OFFERINGS_SINCE: (u32, u32, u32) = (4, 21, 0);
/// HA (control nodes > 1) needs Kubernetes 1.16.0; autoscaling 1.15.0.
pub const HA_SINCE: KubeVersion = KubeVersion::new(1, 16, 0);
pub const AUTOSCALING_SINCE: KubeVersion = KubeVersion::new(1, 15, 0);

/// A Kubernetes semantic version, MAJOR.MINOR.PATCH as CloudStack demands it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct KubeVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl KubeVersion {
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        KubeVersion {
            major,
            minor,
            patch,
        }
    }

    /// Exactly three dot-separated numbers, else CloudStack's "Invalid version format".
    pub fn parse(text: &str) -> Result<KubeVersion, String> {
        let parts: Vec<Option<u32>> = text
            .split('.')
            .map(|p| {
                (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| p.parse().ok())
                    .flatten()
            })
            .collect();
        match parts.as_slice() {
            [Some(major), Some(minor), Some(patch)] => Ok(KubeVersion::new(*major, *minor, *patch)),
            _ => Err(format!(
                "Kubernetes version `{text}` is not in MAJOR.MINOR.PATCH format, as CloudStack requires"
            )),
        }
    }
}

impl fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// How a version change relates to the running one (`canUpgradeKubernetesVersion`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionStep {
    Same,
    /// A patch release of the same minor, or the next minor.
    Upgrade,
    SkipsMinor,
    Downgrade,
    OtherMajor,
}

pub fn version_step(from: KubeVersion, to: KubeVersion) -> VersionStep {
    if to == from {
        VersionStep::Same
    } else if to < from {
        VersionStep::Downgrade
    } else if to.major != from.major {
        VersionStep::OtherMajor
    } else if to.minor > from.minor + 1 {
        VersionStep::SkipsMinor
    } else {
        VersionStep::Upgrade
    }
}

/// Whether CloudStack's autoscaling check passes. It compares version strings with Java's
/// `String.compareTo` (lexicographic), so both that and the semantic order must allow it.
pub fn supports_autoscaling(version: &str) -> bool {
    let semantic = KubeVersion::parse(version).is_ok_and(|v| v >= AUTOSCALING_SINCE);
    semantic && version >= AUTOSCALING_SINCE.to_string().as_str()
}

/// The version must be usable for a create or an upgrade: Enabled, its ISO Ready in the zone.
pub fn check_version_usable(version: &KubernetesVersion, zone: &str) -> Result<(), String> {
    if !version.state.eq_ignore_ascii_case("Enabled") {
        return Err(format!(
            "kubernetes-version {} is {}: only an Enabled version can be deployed",
            version.semanticversion,
            if version.state.is_empty() {
                "not enabled"
            } else {
                &version.state
            }
        ));
    }
    if !version.isostate.is_empty() && !version.isostate.eq_ignore_ascii_case("Ready") {
        return Err(format!(
            "the ISO of kubernetes-version {} is not Ready in zone {zone} ({})",
            version.semanticversion, version.isostate
        ));
    }
    KubeVersion::parse(&version.semanticversion).map(|_| ())
}

/// An offering a node type gets: ≥ 2 vCPU and 2048 MB, not custom, ≥ the version's minimums.
pub fn check_offering(
    offering: &ServiceOffering,
    node: Option<NodeType>,
    version: &KubernetesVersion,
) -> Result<(), String> {
    let what = match node {
        Some(node) => format!("node-offerings.{node} `{}`", offering.name),
        None => format!("service-offering `{}`", offering.name),
    };
    if offering.iscustomized {
        return Err(format!(
            "{what} is a custom offering: CKS does not support custom offerings"
        ));
    }
    if offering.cpunumber < MIN_NODE_CPU || offering.memory < MIN_NODE_RAM_MB {
        return Err(format!(
            "{what} has {} vCPU and {} MB: CKS nodes need at least {MIN_NODE_CPU} vCPU and {MIN_NODE_RAM_MB} MB",
            offering.cpunumber, offering.memory
        ));
    }
    if offering.cpunumber < version.mincpunumber || offering.memory < version.minmemory {
        return Err(format!(
            "{what} has {} vCPU and {} MB: Kubernetes {} needs at least {} vCPU and {} MB",
            offering.cpunumber,
            offering.memory,
            version.semanticversion,
            version.mincpunumber,
            version.minmemory
        ));
    }
    Ok(())
}

/// Constraints on the spec's counts that hold for every plan: size, the account's maximum
/// cluster size, HA and autoscaling bounds.
pub fn check_counts(
    spec: &CloudstackClusterSpec,
    version: KubeVersion,
    inventory: &Inventory,
) -> Result<(), String> {
    let max = inventory.max_cluster_size;
    if spec.workers < 1 {
        return Err("workers must be at least 1".into());
    }
    if spec.control_nodes < 1 {
        return Err("control-nodes must be at least 1".into());
    }
    if spec.workers + spec.control_nodes > max {
        return Err(format!(
            "workers + control-nodes = {} exceeds the account's maximum cluster size {max} (cloud.kubernetes.cluster.max.size; etcd nodes do not count)",
            spec.workers + spec.control_nodes
        ));
    }
    if spec.control_nodes > 1 && version < HA_SINCE {
        return Err(format!(
            "control-nodes > 1 (HA) needs Kubernetes {HA_SINCE} or above; kubernetes-version is {version}"
        ));
    }
    if let Some(autoscaling) = spec.autoscaling {
        if autoscaling.min < 1 {
            return Err("autoscaling.min must be at least 1".into());
        }
        if autoscaling.max <= autoscaling.min {
            return Err(format!(
                "autoscaling.max ({}) must be greater than autoscaling.min ({})",
                autoscaling.max, autoscaling.min
            ));
        }
        if autoscaling.max + spec.control_nodes > max {
            return Err(format!(
                "autoscaling.max + control-nodes = {} exceeds the account's maximum cluster size {max} (cloud.kubernetes.cluster.max.size)",
                autoscaling.max + spec.control_nodes
            ));
        }
        if !supports_autoscaling(&version.to_string()) {
            return Err(format!(
                "autoscaling needs Kubernetes {AUTOSCALING_SINCE} or above; kubernetes-version is {version}"
            ));
        }
    }
    Ok(())
}

/// Per-type offerings and etcd nodes need CloudStack 4.21.
pub fn check_server_features(
    spec: &CloudstackClusterSpec,
    inventory: &Inventory,
) -> Result<(), String> {
    let server = inventory.server_version();
    if server >= NODE_OFFERINGS_SINCE {
        return Ok(());
    }
    let (major, minor, patch) = server;
    if !spec.node_offerings.is_empty() {
        return Err(format!(
            "node-offerings need CloudStack 4.21 or above; this server is {major}.{minor}.{patch}"
        ));
    }
    if spec.etcd_nodes > 0 {
        return Err(format!(
            "etcd-nodes need CloudStack 4.21 or above; this server is {major}.{minor}.{patch}"
        ));
    }
    Ok(())
}

/// Everything a new cluster must satisfy (`validateManagedKubernetesClusterCreateParameters`).
pub fn check_create(want: &Resolved, inventory: &Inventory) -> Result<(), String> {
    let spec = want.spec;
    check_server_features(spec, inventory)?;
    check_version_usable(want.version, &want.zone.name)?;
    let version = KubeVersion::parse(&want.version.semanticversion)?;
    check_counts(spec, version, inventory)?;
    check_offering(want.offering, None, want.version)?;
    for (node, offering) in &want.node_offerings {
        check_offering(offering, Some(*node), want.version)?;
    }
    if let Some(network) = want.network {
        if !network.zoneid.is_empty() && network.zoneid != want.zone.id {
            return Err(format!(
                "network `{}` is not in zone {}",
                network.name, want.zone.name
            ));
        }
        let shared_or_routed = ["Shared", "Routed"]
            .iter()
            .any(|kind| network.kind.eq_ignore_ascii_case(kind));
        if spec.control_nodes > 1 && shared_or_routed {
            return Err(format!(
                "control-nodes > 1 on the {} network `{}` needs an external load-balancer address, which skyplan does not set: use an isolated network or one control node",
                network.kind, network.name
            ));
        }
    }
    Ok(())
}

/// Whether `new` offers less than `old` by CloudStack's test: less RAM, or less vCPU × MHz.
pub fn is_smaller(new: &ServiceOffering, old: &ServiceOffering) -> bool {
    let power = |o: &ServiceOffering| u64::from(o.cpunumber) * u64::from(o.cpuspeed);
    new.memory < old.memory || power(new) < power(old)
}

/// CloudStack scales Running VMs in place only on these hypervisors.
pub fn scales_running_vms(hypervisor: &str) -> bool {
    ["XenServer", "VMware", "Simulator"]
        .iter()
        .any(|h| hypervisor.eq_ignore_ascii_case(h))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::tests::{inventory, offering, spec};

    fn v(text: &str) -> KubeVersion {
        KubeVersion::parse(text).unwrap()
    }

    #[test]
    fn versions_must_have_three_numbers() {
        assert_eq!(v("1.29.3"), KubeVersion::new(1, 29, 3));
        for bad in ["1.29", "1.29.3.1", "v1.29.3", "1.29.x", "1..3", ""] {
            let error = KubeVersion::parse(bad).unwrap_err();
            assert!(error.contains("MAJOR.MINOR.PATCH"), "{bad}: {error}");
        }
    }

    #[test]
    fn only_a_patch_or_the_next_minor_is_an_upgrade() {
        use VersionStep::*;
        assert_eq!(version_step(v("1.29.3"), v("1.29.3")), Same);
        assert_eq!(version_step(v("1.29.3"), v("1.29.5")), Upgrade);
        assert_eq!(version_step(v("1.29.3"), v("1.30.0")), Upgrade);
        assert_eq!(version_step(v("1.29.3"), v("1.31.0")), SkipsMinor);
        assert_eq!(version_step(v("1.29.3"), v("1.28.9")), Downgrade);
        assert_eq!(version_step(v("1.29.3"), v("1.29.1")), Downgrade);
        assert_eq!(version_step(v("1.29.3"), v("2.0.0")), OtherMajor);
    }

    #[test]
    fn autoscaling_needs_1_15_by_both_orders() {
        assert!(supports_autoscaling("1.15.0"));
        assert!(supports_autoscaling("1.29.3"));
        assert!(!supports_autoscaling("1.14.9"));
        // Lexicographically "1.9.0" > "1.15.0", semantically not: refused.
        assert!(!supports_autoscaling("1.9.0"));
    }

    #[test]
    fn offerings_need_two_vcpus_2048_mb_no_custom_and_the_versions_minimums() {
        let inventory = inventory();
        let version = inventory.version("1.29.3", None).unwrap();
        assert!(check_offering(&offering("o", 2, 2048), None, version).is_ok());
        let error = check_offering(&offering("Tiny", 1, 4096), None, version).unwrap_err();
        assert!(error.contains("at least 2 vCPU and 2048 MB"), "{error}");
        let error = check_offering(&offering("Thin", 4, 1024), Some(NodeType::Worker), version)
            .unwrap_err();
        assert!(error.starts_with("node-offerings.worker `Thin`"), "{error}");
        let mut custom = offering("Custom", 4, 4096);
        custom.iscustomized = true;
        assert!(check_offering(&custom, None, version)
            .unwrap_err()
            .contains("custom"));
        let mut demanding = version.clone();
        demanding.mincpunumber = 4;
        let error = check_offering(&offering("Small", 2, 2048), None, &demanding).unwrap_err();
        assert!(
            error.contains("Kubernetes 1.29.3 needs at least 4 vCPU"),
            "{error}"
        );
    }

    #[test]
    fn counts_respect_the_accounts_maximum_without_etcd() {
        let inventory = inventory();
        let version = v("1.29.3");
        let mut spec = spec();
        spec.workers = 9;
        spec.etcd_nodes = 3;
        assert!(check_counts(&spec, version, &inventory).is_ok());
        spec.workers = 10;
        let error = check_counts(&spec, version, &inventory).unwrap_err();
        assert!(error.contains("maximum cluster size 10"), "{error}");
        spec.workers = 0;
        assert!(check_counts(&spec, version, &inventory)
            .unwrap_err()
            .contains("at least 1"));
    }

    #[test]
    fn ha_needs_1_16() {
        let inventory = inventory();
        let mut spec = spec();
        spec.control_nodes = 3;
        assert!(check_counts(&spec, v("1.16.0"), &inventory).is_ok());
        let error = check_counts(&spec, v("1.15.9"), &inventory).unwrap_err();
        assert!(error.contains("HA") && error.contains("1.16.0"), "{error}");
    }

    #[test]
    fn autoscaling_bounds() {
        use crate::spec::Autoscaling;
        let inventory = inventory();
        let version = v("1.29.3");
        let mut spec = spec();
        for (min, max, expected) in [
            (0, 3, "autoscaling.min must be at least 1"),
            (3, 3, "must be greater than autoscaling.min"),
            (2, 10, "autoscaling.max + control-nodes = 11"),
        ] {
            spec.autoscaling = Some(Autoscaling { min, max });
            let error = check_counts(&spec, version, &inventory).unwrap_err();
            assert!(error.contains(expected), "{min}-{max}: {error}");
        }
        spec.autoscaling = Some(Autoscaling { min: 2, max: 9 });
        assert!(check_counts(&spec, version, &inventory).is_ok());
        let error = check_counts(&spec, v("1.14.0"), &inventory).unwrap_err();
        assert!(
            error.contains("autoscaling needs Kubernetes 1.15.0"),
            "{error}"
        );
    }

    #[test]
    fn smaller_means_less_ram_or_less_cpu_times_speed() {
        let mut fast = offering("Fast", 2, 4096);
        fast.cpuspeed = 3000;
        let mut wide = offering("Wide", 4, 4096);
        wide.cpuspeed = 1000;
        // Fewer vCPUs at a higher clock pass, as in CloudStack's comparison.
        assert!(!is_smaller(&fast, &wide));
        assert!(is_smaller(&wide, &fast));
        assert!(is_smaller(&offering("a", 4, 2048), &offering("b", 4, 4096)));
    }

    #[test]
    fn only_three_hypervisors_scale_running_vms() {
        assert!(scales_running_vms("XenServer"));
        assert!(scales_running_vms("vmware"));
        assert!(scales_running_vms("Simulator"));
        assert!(!scales_running_vms("KVM"));
        assert!(!scales_running_vms(""));
    }
}
