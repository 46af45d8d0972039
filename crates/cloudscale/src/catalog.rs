//! The account's catalog — zones, load-balancer flavors, subnets, floating IPs — and the
//! plan-time checks of every name a load balancer takes from it, so that `apply` never meets
//! the API's 400 for something `plan` could have known.
//!
//! Subnets and floating IPs are read by every refresh anyway. Zones (`GET /regions`) and
//! flavors (`GET /load-balancers/flavors`) cost one extra GET each, made only when a target
//! names a zone or flavor that no load balancer of the account already uses: a zone in use
//! exists, so a plan of unchanged load balancers reads nothing more.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::api;
use super::client::{CloudscaleClient, Error};
use super::objects::Snapshot;
use crate::spec::CloudscaleLoadBalancerSpec;
use skyplan_core::config::Resource;
use skyplan_core::model::Address;
use skyplan_core::provider::{ErrorKind, ProviderError};

/// What refresh read of the catalog; `None` where nothing needed reading.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Catalog {
    pub zones: Option<Vec<String>>,
    pub flavors: Option<Vec<String>>,
}

/// The zones and flavors the targets name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CatalogWants {
    pub zones: BTreeSet<String>,
    pub flavors: BTreeSet<String>,
}

impl CatalogWants {
    pub fn of<'a>(specs: impl IntoIterator<Item = &'a CloudscaleLoadBalancerSpec>) -> CatalogWants {
        let mut wants = CatalogWants::default();
        for spec in specs {
            wants.zones.insert(spec.zone.clone());
            wants.flavors.insert(spec.flavor.clone());
        }
        wants
    }

    /// What is left to prove once the account's load balancers are known: a zone or flavor
    /// one of them uses exists.
    pub fn unproven(&self, live: &[api::LoadBalancer]) -> CatalogWants {
        let mut left = self.clone();
        for lb in live {
            left.zones.remove(&lb.zone.slug);
            left.flavors.remove(&lb.flavor.slug);
        }
        left
    }
}

/// One GET per collection still to prove, concurrently.
pub async fn read_catalog(
    client: &CloudscaleClient,
    wants: &CatalogWants,
) -> Result<Catalog, Error> {
    let zones = async {
        if wants.zones.is_empty() {
            return Ok(None);
        }
        let regions: Vec<api::Region> = client.get("/regions").await?;
        let zones = regions.into_iter().flat_map(|r| r.zones);
        Ok::<_, Error>(Some(zones.map(|z| z.slug).collect()))
    };
    let flavors = async {
        if wants.flavors.is_empty() {
            return Ok(None);
        }
        let flavors: Vec<api::SlugRef> = client.get("/load-balancers/flavors").await?;
        Ok::<_, Error>(Some(flavors.into_iter().map(|f| f.slug).collect()))
    };
    let (zones, flavors) = tokio::try_join!(zones, flavors)?;
    Ok(Catalog { zones, flavors })
}

/// A plan-time problem with a value the config names: the key's path and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unusable {
    pub path: String,
    pub message: String,
}

impl Unusable {
    fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Unusable {
            path: path.into(),
            message: message.into(),
        }
    }

    /// The provider error, at the key's position in the config (the resource's table when
    /// the key was not recorded, e.g. a member chosen from a cluster's nodes).
    pub fn into_error(self, address: &Address, resource: Option<&Resource>) -> ProviderError {
        let error = ProviderError::new(address, self.message).kind(ErrorKind::Config);
        match resource {
            Some(resource) => error.at(resource.location_of(&self.path)),
            None => error,
        }
    }
}

/// "zone `zz9` does not exist; zones: lpg1, rma1".
fn unknown(what: &str, plural: &str, wanted: &str, existing: &[String]) -> String {
    let listed = match existing {
        [] => "none".to_string(),
        _ => existing.join(", "),
    };
    format!("{what} `{wanted}` does not exist; {plural}: {listed}")
}

/// The first name the spec takes from the catalog that the account does not have, in the
/// order the config lists them: zone, flavor, the VIP addresses' subnets. Floating IPs are
/// checked by [`check_floating_ips`], members' subnets where the desired objects are built.
pub fn check_names(spec: &CloudscaleLoadBalancerSpec, snapshot: &Snapshot) -> Result<(), Unusable> {
    let catalog = &snapshot.catalog;
    if let Some(zones) = &catalog.zones {
        if !zones.contains(&spec.zone) {
            return Err(Unusable::new(
                "zone",
                unknown("zone", "zones", &spec.zone, zones),
            ));
        }
    }
    if let Some(flavors) = &catalog.flavors {
        if !flavors.contains(&spec.flavor) {
            return Err(Unusable::new(
                "flavor",
                unknown("flavor", "flavors", &spec.flavor, flavors),
            ));
        }
    }
    let subnets: Vec<String> = snapshot
        .subnets
        .iter()
        .map(|s| format!("{} ({})", s.uuid, s.cidr))
        .collect();
    let exists = |uuid: &str| snapshot.subnets.iter().any(|s| s.uuid == uuid);
    for (i, vip) in spec.vip_addresses.iter().enumerate() {
        if !exists(&vip.subnet) {
            let message = unknown("subnet", "subnets", &vip.subnet, &subnets);
            return Err(Unusable::new(format!("vip-addresses[{i}].subnet"), message));
        }
    }
    // `allowed-subnets` only filters members, as the CCM's annotation does: a UUID of no
    // subnet filters out every member, which the plan shows, and the API never sees it.
    Ok(())
}

/// A fixed VIP address must lie in its subnet and must not be another load balancer's VIP:
/// the API refuses both ("is not in subnet", "is already in use"). Addresses servers hold are
/// not read at plan time (the servers are listed only for bound load balancers).
pub fn check_vip_addresses(
    spec: &CloudscaleLoadBalancerSpec,
    snapshot: &Snapshot,
    own: Option<&str>,
) -> Result<(), Unusable> {
    for (i, vip) in spec.vip_addresses.iter().enumerate() {
        let Some(address) = &vip.address else {
            continue;
        };
        let path = format!("vip-addresses[{i}].address");
        let cidr = snapshot
            .subnets
            .iter()
            .find(|s| s.uuid == vip.subnet)
            .map(|s| s.cidr.as_str());
        let inside = cidr
            .and_then(|c| c.parse::<ipnet::IpNet>().ok())
            .zip(address.parse::<std::net::IpAddr>().ok());
        if let (Some(cidr), Some((net, ip))) = (cidr, inside) {
            if !net.contains(&ip) {
                let message = format!("address {address} is not in subnet {} ({cidr})", vip.subnet);
                return Err(Unusable::new(path, message));
            }
        }
        let holder = snapshot.load_balancers.iter().find(|lb| {
            lb.lb.uuid.as_deref() != own
                && lb
                    .lb
                    .vip_addresses
                    .iter()
                    .any(|v| v.address.as_deref() == Some(address))
        });
        if let Some(holder) = holder {
            let message = format!(
                "address {address} is already the VIP of load balancer {} ({})",
                holder.lb.name,
                holder.lb.uuid.as_deref().unwrap_or_default()
            );
            return Err(Unusable::new(path, message));
        }
    }
    Ok(())
}

/// A floating IP to assign must exist in the account and must serve nothing else: moving it
/// would take the address away from that load balancer or server (and the CCM refuses to move
/// one between load balancers, to avoid flapping). `own` is the live load balancer's UUID.
pub fn check_floating_ips(
    spec: &CloudscaleLoadBalancerSpec,
    snapshot: &Snapshot,
    own: Option<&str>,
) -> Result<(), Unusable> {
    let free: Vec<String> = snapshot
        .floating_ips
        .iter()
        .filter(|ip| {
            ip.server.is_none()
                && (ip.load_balancer.is_none() || ip.load_balancer.as_deref() == own)
        })
        .map(|ip| ip.network.clone())
        .collect();
    let free_list = match free.as_slice() {
        [] => "none".to_string(),
        _ => free.join(", "),
    };
    for (i, network) in spec.floating_ips.iter().enumerate() {
        let path = format!("floating-ips[{i}]");
        let Some(ip) = snapshot.floating_ips.iter().find(|f| &f.network == network) else {
            let all: Vec<String> = snapshot
                .floating_ips
                .iter()
                .map(|f| f.network.clone())
                .collect();
            return Err(Unusable::new(
                path,
                unknown("floating IP", "floating IPs", network, &all),
            ));
        };
        let holder = match (&ip.load_balancer, &ip.server) {
            (Some(lb), _) if Some(lb.as_str()) != own => Some(format!(
                "another load balancer ({lb}); the CCM refuses to move it, to avoid flapping"
            )),
            (_, Some(server)) => Some(format!(
                "server {server}; moving it would take the address from that server"
            )),
            _ => None,
        };
        if let Some(holder) = holder {
            return Err(Unusable::new(
                path,
                format!(
                    "floating IP {network} is assigned to {holder}; free floating IPs: {free_list}"
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::{FloatingIpObject, SubnetObject};

    fn snapshot() -> Snapshot {
        let ip = |network: &str, lb: Option<&str>, server: Option<&str>| FloatingIpObject {
            network: network.into(),
            load_balancer: lb.map(Into::into),
            server: server.map(Into::into),
            tags: Default::default(),
        };
        Snapshot {
            floating_ips: vec![
                ip("5.102.150.123/32", None, None),
                ip("5.102.150.124/32", Some("lb-other"), None),
                ip("5.102.150.125/32", None, Some("srv-1")),
                ip("5.102.150.126/32", Some("lb-own"), None),
            ],
            subnets: vec![SubnetObject {
                uuid: "sub-1".into(),
                cidr: "10.0.0.0/24".into(),
            }],
            catalog: Catalog {
                zones: Some(vec!["lpg1".into(), "rma1".into()]),
                flavors: Some(vec!["lb-standard".into(), "lb-large".into()]),
            },
            ..Snapshot::default()
        }
    }

    fn spec() -> CloudscaleLoadBalancerSpec {
        CloudscaleLoadBalancerSpec::with_defaults("web", "lpg1")
    }

    fn problem(spec: &CloudscaleLoadBalancerSpec) -> Unusable {
        check_names(spec, &snapshot())
            .and_then(|()| check_floating_ips(spec, &snapshot(), Some("lb-own")))
            .unwrap_err()
    }

    #[test]
    fn known_names_pass() {
        let mut spec = spec();
        spec.floating_ips = vec!["5.102.150.123/32".into(), "5.102.150.126/32".into()];
        spec.allowed_subnets = vec!["sub-1".into()];
        assert_eq!(check_names(&spec, &snapshot()), Ok(()));
        assert_eq!(
            check_floating_ips(&spec, &snapshot(), Some("lb-own")),
            Ok(())
        );
    }

    #[test]
    fn an_unknown_zone_or_flavor_lists_what_exists() {
        let mut zone = spec();
        zone.zone = "zz9".into();
        assert_eq!(
            problem(&zone),
            Unusable::new("zone", "zone `zz9` does not exist; zones: lpg1, rma1")
        );
        let mut flavor = spec();
        flavor.flavor = "lb-huge".into();
        assert_eq!(
            problem(&flavor),
            Unusable::new(
                "flavor",
                "flavor `lb-huge` does not exist; flavors: lb-standard, lb-large"
            )
        );
    }

    #[test]
    fn names_not_read_are_not_judged() {
        let mut spec = spec();
        spec.zone = "zz9".into();
        let mut snapshot = snapshot();
        snapshot.catalog = Catalog::default();
        assert_eq!(check_names(&spec, &snapshot), Ok(()));
    }

    #[test]
    fn unknown_subnets_point_at_their_key() {
        let mut vip = spec();
        vip.vip_addresses = vec![crate::spec::VipAddress {
            subnet: "nope".into(),
            address: None,
        }];
        let found = problem(&vip);
        assert_eq!(found.path, "vip-addresses[0].subnet");
        assert_eq!(
            found.message,
            "subnet `nope` does not exist; subnets: sub-1 (10.0.0.0/24)"
        );
    }

    #[test]
    fn a_fixed_vip_address_must_be_in_its_subnet_and_free() {
        use crate::objects::{LbObject, LbObjects};
        let vip = |address: &str| crate::spec::VipAddress {
            subnet: "sub-1".into(),
            address: Some(address.into()),
        };
        let mut snapshot = snapshot();
        snapshot.load_balancers.push(LbObjects {
            lb: LbObject {
                uuid: Some("lb-other".into()),
                name: "other".into(),
                flavor: "lb-standard".into(),
                zone: "lpg1".into(),
                vip_addresses: vec![vip("10.0.0.7")],
                tags: Default::default(),
                status: None,
            },
            pools: Default::default(),
            floating_ips: Default::default(),
        });
        let mut spec = spec();
        spec.vip_addresses = vec![vip("10.0.0.5")];
        assert_eq!(check_vip_addresses(&spec, &snapshot, None), Ok(()));
        spec.vip_addresses = vec![vip("10.9.0.5")];
        let outside = check_vip_addresses(&spec, &snapshot, None).unwrap_err();
        assert_eq!(outside.path, "vip-addresses[0].address");
        assert_eq!(
            outside.message,
            "address 10.9.0.5 is not in subnet sub-1 (10.0.0.0/24)"
        );
        spec.vip_addresses = vec![vip("10.0.0.7")];
        let taken = check_vip_addresses(&spec, &snapshot, None).unwrap_err();
        assert!(
            taken
                .message
                .contains("already the VIP of load balancer other"),
            "{taken:?}"
        );
        assert_eq!(
            check_vip_addresses(&spec, &snapshot, Some("lb-other")),
            Ok(()),
            "its own VIP"
        );
    }

    #[test]
    fn floating_ips_must_exist_and_be_free() {
        let mut missing = spec();
        missing.floating_ips = vec!["5.102.150.1/32".into()];
        let found = problem(&missing);
        assert_eq!(found.path, "floating-ips[0]");
        assert!(
            found.message.starts_with(
                "floating IP `5.102.150.1/32` does not exist; floating IPs: 5.102.150.123/32, "
            ),
            "{found:?}"
        );
        for (taken, holder) in [
            ("5.102.150.124/32", "another load balancer (lb-other)"),
            ("5.102.150.125/32", "server srv-1"),
        ] {
            let mut spec = spec();
            spec.floating_ips = vec!["5.102.150.123/32".into(), taken.into()];
            let found = problem(&spec);
            assert_eq!(found.path, "floating-ips[1]");
            assert!(found.message.contains(holder), "{found:?}");
            assert!(
                found
                    .message
                    .ends_with("free floating IPs: 5.102.150.123/32, 5.102.150.126/32"),
                "{found:?}"
            );
        }
    }
}
