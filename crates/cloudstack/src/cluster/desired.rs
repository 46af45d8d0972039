//! The config's names (or UUIDs) of zone, version, offerings, network and keypair → the live
//! catalog's objects. An unknown name is a plan error that lists what exists, so a typo is
//! fixed from the message alone.

use std::collections::BTreeMap;

use crate::api::{KubernetesVersion, Network, ServiceOffering, Zone};
use crate::live::Inventory;
use crate::spec::{CloudstackClusterSpec, NodeType};

/// A cluster spec with every catalog reference resolved.
#[derive(Debug, Clone)]
pub struct Resolved<'a> {
    pub spec: &'a CloudstackClusterSpec,
    pub zone: &'a Zone,
    pub version: &'a KubernetesVersion,
    /// The cluster's global offering (`service-offering`).
    pub offering: &'a ServiceOffering,
    /// The offering each node type gets: its own if the config names one, else the global one.
    pub node_offerings: BTreeMap<NodeType, &'a ServiceOffering>,
    pub network: Option<&'a Network>,
    pub keypair: Option<&'a str>,
}

impl Resolved<'_> {
    /// The node types the cluster has: etcd nodes only when asked for.
    pub fn node_types(&self) -> Vec<NodeType> {
        node_types(self.spec.etcd_nodes)
    }

    /// The offering nodes of this type get.
    pub fn offering_of(&self, node: NodeType) -> &ServiceOffering {
        self.node_offerings
            .get(&node)
            .copied()
            .unwrap_or(self.offering)
    }
}

/// Control and worker nodes always; etcd nodes when the cluster has some.
pub fn node_types(etcd_nodes: u32) -> Vec<NodeType> {
    let mut types = vec![NodeType::Control, NodeType::Worker];
    if etcd_nodes > 0 {
        types.push(NodeType::Etcd);
    }
    types
}

/// "zone `zz9` does not exist; zones: zone1, zone2".
fn unknown(what: &str, plural: &str, wanted: &str, existing: Vec<&str>) -> String {
    let listed = if existing.is_empty() {
        "none".to_string()
    } else {
        existing.join(", ")
    };
    format!("{what} `{wanted}` does not exist; {plural}: {listed}")
}

/// The config key an unknown-name error of [`resolve`] is about (`zone`, `service-offering`),
/// so the plan error can point at it; `None` for another error, or a per-node offering (whose
/// table position stands in).
pub fn unknown_name_key(message: &str, spec: &CloudstackClusterSpec) -> Option<&'static str> {
    if !message.contains("` does not exist; ") {
        return None;
    }
    let service_offering = format!("service offering `{}`", spec.service_offering);
    let keys = [
        ("zone `", "zone"),
        ("kubernetes-version `", "kubernetes-version"),
        (service_offering.as_str(), "service-offering"),
        ("network `", "network"),
        ("keypair `", "keypair"),
    ];
    keys.iter()
        .find(|(prefix, _)| message.starts_with(prefix))
        .map(|(_, key)| *key)
}

pub fn resolve<'a>(
    spec: &'a CloudstackClusterSpec,
    inventory: &'a Inventory,
) -> Result<Resolved<'a>, String> {
    let zone = inventory.zone(&spec.zone).ok_or_else(|| {
        unknown(
            "zone",
            "zones",
            &spec.zone,
            inventory.zones.iter().map(|z| z.name.as_str()).collect(),
        )
    })?;
    let version = inventory
        .version(&spec.kubernetes_version, Some(&zone.id))
        .ok_or_else(|| {
            let in_zone = inventory
                .versions
                .iter()
                .filter(|v| v.zoneid.as_deref().is_none_or(|z| z == zone.id))
                .map(|v| v.semanticversion.as_str())
                .collect();
            unknown(
                "kubernetes-version",
                &format!("versions in zone {}", zone.name),
                &spec.kubernetes_version,
                in_zone,
            )
        })?;
    let offering = find_offering(inventory, &spec.service_offering)?;
    let mut node_offerings = BTreeMap::new();
    for (node, wanted) in &spec.node_offerings {
        node_offerings.insert(*node, find_offering(inventory, wanted)?);
    }
    let network = spec
        .network
        .as_deref()
        .map(|wanted| {
            inventory.network(wanted).ok_or_else(|| {
                unknown(
                    "network",
                    "networks",
                    wanted,
                    inventory.networks.iter().map(|n| n.name.as_str()).collect(),
                )
            })
        })
        .transpose()?;
    let keypair = spec
        .keypair
        .as_deref()
        .map(|wanted| {
            inventory
                .keypair(wanted)
                .map(|k| k.name.as_str())
                .ok_or_else(|| {
                    unknown(
                        "keypair",
                        "keypairs",
                        wanted,
                        inventory.keypairs.iter().map(|k| k.name.as_str()).collect(),
                    )
                })
        })
        .transpose()?;
    Ok(Resolved {
        spec,
        zone,
        version,
        offering,
        node_offerings,
        network,
        keypair,
    })
}

fn find_offering<'a>(
    inventory: &'a Inventory,
    wanted: &str,
) -> Result<&'a ServiceOffering, String> {
    inventory.offering(wanted).ok_or_else(|| {
        unknown(
            "service offering",
            "service offerings",
            wanted,
            inventory
                .offerings
                .iter()
                .map(|o| o.name.as_str())
                .collect(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::tests::{inventory, spec};

    #[test]
    fn names_and_uuids_resolve() {
        let inventory = inventory();
        let mut spec = spec();
        spec.service_offering = "o-medium".into();
        spec.network = Some("k8s-net".into());
        spec.keypair = Some("ops".into());
        spec.node_offerings
            .insert(NodeType::Worker, "Large Instance".into());
        let resolved = resolve(&spec, &inventory).unwrap();
        assert_eq!(resolved.zone.id, "z1");
        assert_eq!(resolved.version.id, "v1293");
        assert_eq!(resolved.offering.name, "Medium Instance");
        assert_eq!(
            resolved.offering_of(NodeType::Worker).name,
            "Large Instance"
        );
        assert_eq!(
            resolved.offering_of(NodeType::Control).name,
            "Medium Instance"
        );
        assert_eq!(resolved.network.unwrap().id, "n1");
        assert_eq!(resolved.keypair, Some("ops"));
    }

    #[test]
    fn an_unknown_name_names_its_key() {
        let inventory = inventory();
        let mut zone = spec();
        zone.zone = "zz9".into();
        let error = resolve(&zone, &inventory).unwrap_err();
        assert_eq!(unknown_name_key(&error, &zone), Some("zone"));
        let mut offering = spec();
        offering.service_offering = "Huge".into();
        let error = resolve(&offering, &inventory).unwrap_err();
        assert_eq!(
            unknown_name_key(&error, &offering),
            Some("service-offering")
        );
        assert_eq!(unknown_name_key("something else", &offering), None);
    }

    #[test]
    fn an_unknown_name_lists_what_exists() {
        let inventory = inventory();
        let mut spec = spec();
        spec.zone = "zz9".into();
        assert_eq!(
            resolve(&spec, &inventory).unwrap_err(),
            "zone `zz9` does not exist; zones: zone1"
        );
        let mut spec = self::spec();
        spec.kubernetes_version = "1.99.0".into();
        let error = resolve(&spec, &inventory).unwrap_err();
        assert!(
            error.starts_with("kubernetes-version `1.99.0` does not exist"),
            "{error}"
        );
        assert!(error.contains("1.29.3"), "{error}");
        let mut spec = self::spec();
        spec.service_offering = "Huge".into();
        let error = resolve(&spec, &inventory).unwrap_err();
        assert!(
            error.contains("`Huge`") && error.contains("Medium Instance"),
            "{error}"
        );
        let mut spec = self::spec();
        spec.keypair = Some("nobody".into());
        assert_eq!(
            resolve(&spec, &inventory).unwrap_err(),
            "keypair `nobody` does not exist; keypairs: ops"
        );
        let mut spec = self::spec();
        spec.network = Some("other".into());
        assert!(resolve(&spec, &inventory)
            .unwrap_err()
            .contains("networks: k8s-net"));
    }
}
