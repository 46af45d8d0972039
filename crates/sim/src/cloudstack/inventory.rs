//! What a fresh account holds (contract.md, "The embedded default"): one zone, the usual
//! service offerings and a custom one, Kubernetes versions, an isolated network `k8s-net` with
//! its source-NAT address, a /24 of free public addresses, two standalone VMs, an SSH key pair.
//! Catalog ids are fixed, so two fresh worlds name the same offerings.

use std::net::Ipv4Addr;

use jiff::Timestamp;

use super::world::{
    KeyPair, KubernetesVersion, Network, Offering, PublicIp, Settings, Vm, World, Zone,
    WORLD_FORMAT,
};

pub const ZONE_NAME: &str = "zone1";
pub const NETWORK_NAME: &str = "k8s-net";
/// The pool free public addresses are taken from; more are minted past it when it runs out.
const PUBLIC_POOL: [u8; 3] = [198, 51, 100];
const SOURCE_NAT_HOST: u8 = 10;
const NETWORK_PREFIX: &str = "10.1.1";

/// A stable id: `kind` tells the object kinds apart, `n` the objects.
pub fn fixed_id(kind: u16, n: u16) -> String {
    format!("c5000000-{kind:04x}-4000-8000-{n:012x}")
}

pub fn zone_id() -> String {
    fixed_id(1, 1)
}

pub fn network_id() -> String {
    fixed_id(4, 1)
}

/// (name, vCPU, MB, custom).
const OFFERINGS: [(&str, u32, u32, bool); 5] = [
    ("Small Instance", 2, 2048, false),
    ("Medium Instance", 4, 4096, false),
    ("Large Instance", 8, 8192, false),
    ("Tiny Instance", 1, 512, false),
    ("Custom Instance", 0, 0, true),
];

/// (semantic version, enabled).
const VERSIONS: [(&str, bool); 5] = [
    ("1.28.15", true),
    ("1.29.3", true),
    ("1.29.10", true),
    ("1.30.5", true),
    ("1.31.1", false),
];

pub fn fresh_account(now: Timestamp) -> World {
    let zone = zone_id();
    let offerings = OFFERINGS
        .iter()
        .zip(1..)
        .map(|(&(name, cpus, memory, custom), n)| Offering {
            id: fixed_id(2, n),
            name: name.into(),
            cpunumber: cpus,
            memory,
            cpuspeed: 2000,
            iscustomized: custom,
            created: now,
        })
        .collect();
    let versions = VERSIONS
        .iter()
        .zip(1..)
        .map(|(&(semver, enabled), n)| KubernetesVersion {
            id: fixed_id(3, n),
            name: format!("v{semver}"),
            semanticversion: semver.into(),
            state: if enabled { "Enabled" } else { "Disabled" }.into(),
            mincpunumber: 2,
            minmemory: 2048,
            isostate: "Ready".into(),
            zoneid: zone.clone(),
        })
        .collect();
    let network = Network {
        id: network_id(),
        name: NETWORK_NAME.into(),
        zoneid: zone.clone(),
        cidr: format!("{NETWORK_PREFIX}.0/24"),
        created_for_cluster: false,
        created: now,
    };
    let vms = ["web-1", "web-2"]
        .iter()
        .zip(1..)
        .map(|(name, n)| Vm {
            id: fixed_id(5, n),
            name: (*name).into(),
            state: "Running".into(),
            zoneid: zone.clone(),
            serviceofferingid: fixed_id(2, 1),
            networkid: network.id.clone(),
            nic_id: fixed_id(6, n),
            ipaddress: format!("{NETWORK_PREFIX}.{}", 10 + n),
            hypervisor: super::state::DEFAULT_HYPERVISOR.into(),
            created: now,
        })
        .collect();
    World {
        format: WORLD_FORMAT,
        settings: Settings {
            version: None,
            hypervisor: None,
            max_cluster_size: super::state::DEFAULT_MAX_CLUSTER_SIZE,
        },
        zones: vec![Zone {
            id: zone.clone(),
            name: ZONE_NAME.into(),
        }],
        offerings,
        versions,
        public_ips: public_pool(&zone, &network.id, now),
        next_public_ip: u32::from(Ipv4Addr::new(
            PUBLIC_POOL[0],
            PUBLIC_POOL[1],
            PUBLIC_POOL[2] + 1,
            1,
        )),
        networks: vec![network],
        vms,
        keypairs: vec![KeyPair {
            name: "ops".into(),
            fingerprint: "5e:3b:9a:1c:0d:77:42:aa:19:c4:8e:60:f2:0b:d3:51".into(),
        }],
        ..World::default()
    }
}

/// The source-NAT address of `k8s-net` and the free rest of the /24.
fn public_pool(zone: &str, network: &str, now: Timestamp) -> Vec<PublicIp> {
    (2..=254u8)
        .map(|host| {
            let source_nat = host == SOURCE_NAT_HOST;
            let [a, b, c] = PUBLIC_POOL;
            PublicIp {
                id: fixed_id(7, host.into()),
                ipaddress: Ipv4Addr::new(a, b, c, host).to_string(),
                state: if source_nat { "Allocated" } else { "Free" }.into(),
                associatednetworkid: source_nat.then(|| network.to_owned()),
                issourcenat: source_nat,
                zoneid: zone.to_owned(),
                allocated: source_nat.then_some(now),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_account_has_the_documented_inventory() {
        let world = fresh_account(Timestamp::UNIX_EPOCH);
        assert_eq!(world.zones[0].name, "zone1");
        let small = world
            .offerings
            .iter()
            .find(|o| o.name == "Small Instance")
            .unwrap();
        assert_eq!(
            (small.cpunumber, small.memory, small.cpuspeed),
            (2, 2048, 2000)
        );
        assert_eq!(world.offerings.iter().filter(|o| o.iscustomized).count(), 1);
        let enabled = world
            .versions
            .iter()
            .filter(|v| v.state == "Enabled")
            .count();
        assert_eq!(enabled, 4);
        let nat: Vec<_> = world
            .public_ips
            .iter()
            .filter(|ip| ip.issourcenat)
            .collect();
        assert_eq!(nat.len(), 1);
        assert_eq!(
            nat[0].associatednetworkid.as_deref(),
            Some(network_id().as_str())
        );
        assert_eq!(
            world
                .public_ips
                .iter()
                .filter(|ip| ip.state == "Free")
                .count(),
            252
        );
        assert_eq!(world.vms.len(), 2);
        assert_eq!(world.keypairs[0].name, "ops");
    }
}
