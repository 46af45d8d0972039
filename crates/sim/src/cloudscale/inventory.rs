//! What a fresh account offers: zones, load-balancer flavors, a private network with a subnet,
//! a few unassigned floating IPs; and the address ranges the simulator hands out from.

use std::net::IpAddr;

use ipnet::IpNet;
use jiff::Timestamp;
use uuid::{uuid, Uuid};

use super::world::{FloatingIp, FloatingIpType, Network, Subnet, World, WORLD_FORMAT};

pub const ZONES: &[&str] = &["lpg1", "rma1"];

/// Load-balancer flavors as (slug, name).
pub const LB_FLAVORS: &[(&str, &str)] = &[("lb-standard", "LB-Standard"), ("lb-large", "LB-Large")];

/// The private network and subnet every fresh world starts with.
pub const DEFAULT_NETWORK_UUID: Uuid = uuid!("2db69ba3-1864-4608-853a-0771b6885a3a");
pub const DEFAULT_SUBNET_UUID: Uuid = uuid!("70d282ab-2a01-4abb-a03e-5c1d0ba29ef2");
pub const DEFAULT_SUBNET_CIDR: &str = "10.0.0.0/24";

/// The provider's public subnets. Like on the real cloud they are not listed under `/subnets`,
/// but public VIPs and server addresses reference them. Addresses are handed out from the
/// first, as every world so far has had them, then from the second, a /15 of the benchmarking
/// range (RFC 2544), so that one account holds as many load balancers as a large real one.
pub const PUBLIC_SUBNET_UUID: Uuid = uuid!("c0ffee00-4e3d-4b1a-9f2b-5f0e1a2b3c4d");
pub const PUBLIC_SUBNET_CIDR: &str = "5.102.144.0/22";
pub const PUBLIC_SUBNET_2_UUID: Uuid = uuid!("c0ffee00-4e3d-4b1a-9f2b-5f0e1a2b3c4e");
pub const PUBLIC_SUBNET_2_CIDR: &str = "198.18.0.0/15";
const PUBLIC_SUBNETS: [(Uuid, &str); 2] = [
    (PUBLIC_SUBNET_UUID, PUBLIC_SUBNET_CIDR),
    (PUBLIC_SUBNET_2_UUID, PUBLIC_SUBNET_2_CIDR),
];
/// Where new single-address floating IPs are taken from; IPv6 `/56` networks are taken from
/// `2a06:c01:N::/56`, outside this range.
const FLOATING_V4_HOSTS: &str = "5.102.150.0/24";
const FLOATING_V6_HOSTS: &str = "2a06:c01::/64";

const DEFAULT_FLOATING_IPS: &[&str] = &["5.102.150.123/32", "5.102.150.124/32", "5.102.150.125/32"];

pub fn is_zone(slug: &str) -> bool {
    ZONES.contains(&slug)
}

pub fn lb_flavor_name(slug: &str) -> Option<&'static str> {
    LB_FLAVORS
        .iter()
        .find(|(s, _)| *s == slug)
        .map(|(_, name)| *name)
}

/// `rma1` → `rma`: a region is its zones' name without the trailing digits.
pub fn region_of(zone: &str) -> &str {
    zone.trim_end_matches(|c: char| c.is_ascii_digit())
}

pub fn is_region(slug: &str) -> bool {
    ZONES.iter().any(|zone| region_of(zone) == slug)
}

/// The CIDR of a public subnet, `None` for any other UUID.
pub fn public_subnet_cidr(uuid: Uuid) -> Option<IpNet> {
    PUBLIC_SUBNETS
        .iter()
        .find(|(public, _)| *public == uuid)
        .map(|(_, cidr)| cidr.parse().expect("constant CIDR"))
}

/// The public subnet holding `address` (the first one for an address outside all of them).
pub fn public_subnet_of(address: IpAddr) -> Uuid {
    PUBLIC_SUBNETS
        .iter()
        .find(|(_, cidr)| {
            cidr.parse::<IpNet>()
                .expect("constant CIDR")
                .contains(&address)
        })
        .map_or(PUBLIC_SUBNET_UUID, |(uuid, _)| *uuid)
}

/// The gateway of a public subnet: its last host, which is never handed out. (The first
/// host, where the real cloud has it, went to the first load balancer in every world so far.)
pub fn public_gateway(subnet: Uuid) -> Option<IpAddr> {
    let IpNet::V4(net) = public_subnet_cidr(subnet)? else {
        return None;
    };
    Some(IpAddr::V4((u32::from(net.broadcast()) - 1).into()))
}

/// Host number `n` of the public subnets taken one after the other (network, gateway and
/// broadcast addresses left out); `None` past the last. Constant time, so allocation can keep
/// a cursor.
pub fn public_host(n: u32) -> Option<IpAddr> {
    let mut n = n;
    for (_, cidr) in PUBLIC_SUBNETS {
        let IpNet::V4(net) = cidr.parse::<IpNet>().expect("constant CIDR") else {
            continue;
        };
        let hosts = (1u32 << (32 - net.prefix_len())) - 3;
        if n < hosts {
            return Some(IpAddr::V4((u32::from(net.network()) + 1 + n).into()));
        }
        n -= hosts;
    }
    None
}

/// The first host of `range` that is neither taken nor the gateway; deterministic so that
/// example worlds and tests see the same addresses every time.
pub fn free_host(
    range: IpNet,
    gateway: Option<IpAddr>,
    taken: impl Fn(&IpAddr) -> bool,
) -> Option<IpAddr> {
    range
        .hosts()
        .find(|host| Some(*host) != gateway && !taken(host))
}

/// A free floating network of the given prefix length: a single address (`/32`, `/128`) or an
/// IPv6 `/56` network, overlapping none of `taken`.
pub fn free_floating_network(prefix_length: u8, taken: &[IpNet]) -> Option<IpNet> {
    let free = |net: &IpNet| {
        !taken
            .iter()
            .any(|t| t.contains(&net.network()) || net.contains(&t.network()))
    };
    match prefix_length {
        32 => single_addresses(FLOATING_V4_HOSTS).find(free),
        128 => single_addresses(FLOATING_V6_HOSTS).find(free),
        _ => (1u16..=u16::MAX)
            .map(|n| {
                format!("2a06:c01:{n:x}::/56")
                    .parse::<IpNet>()
                    .expect("valid CIDR")
            })
            .find(free),
    }
}

/// Every host of `range` as a network of one address, the range's own network address excluded.
fn single_addresses(range: &str) -> impl Iterator<Item = IpNet> {
    let range: IpNet = range.parse().expect("constant CIDR");
    range
        .hosts()
        .filter(move |host| *host != range.network())
        .map(|host| IpNet::new(host, if host.is_ipv4() { 32 } else { 128 }).expect("full length"))
}

pub fn default_world(now: Timestamp) -> World {
    let network = Network {
        uuid: DEFAULT_NETWORK_UUID,
        name: "default".into(),
        zone: ZONES[0].into(),
        mtu: 9000,
        tags: Default::default(),
        created_at: now,
    };
    let subnet = Subnet {
        uuid: DEFAULT_SUBNET_UUID,
        network: DEFAULT_NETWORK_UUID,
        cidr: DEFAULT_SUBNET_CIDR.parse().expect("constant CIDR"),
        gateway_address: None,
        dns_servers: vec![[5, 102, 144, 101].into(), [5, 102, 144, 102].into()],
        tags: Default::default(),
        created_at: now,
    };
    let floating_ips = DEFAULT_FLOATING_IPS
        .iter()
        .map(|network| FloatingIp {
            network: network.parse().expect("constant CIDR"),
            kind: FloatingIpType::Regional,
            region: Some(region_of(ZONES[0]).into()),
            load_balancer: None,
            server: None,
            reverse_ptr: None,
            tags: Default::default(),
            created_at: now,
        })
        .collect();
    World {
        format: WORLD_FORMAT,
        load_balancers: vec![],
        pools: vec![],
        members: vec![],
        listeners: vec![],
        health_monitors: vec![],
        floating_ips,
        servers: vec![],
        networks: vec![network],
        subnets: vec![subnet],
        server_groups: vec![],
        index: Default::default(),
        used_addresses: None,
        unhealthy_pools: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_drops_the_zone_number() {
        assert_eq!(region_of("rma1"), "rma");
        assert!(is_region("lpg"));
        assert!(!is_region("lpg1"));
    }

    #[test]
    fn free_host_skips_gateway_and_taken_addresses() {
        let range: IpNet = "10.0.0.0/29".parse().unwrap();
        let gateway = Some("10.0.0.1".parse().unwrap());
        let used = ["10.0.0.2".parse().unwrap()];
        assert_eq!(
            free_host(range, gateway, |host| used.contains(host)),
            Some("10.0.0.3".parse().unwrap())
        );
    }

    #[test]
    fn public_hosts_run_through_both_public_subnets() {
        assert_eq!(public_host(0), Some("5.102.144.1".parse().unwrap()));
        assert_eq!(public_host(1020), Some("5.102.147.253".parse().unwrap()));
        assert_eq!(public_host(1021), Some("198.18.0.1".parse().unwrap()));
        assert_eq!(
            public_host(1021 + 131_068),
            Some("198.19.255.253".parse().unwrap())
        );
        assert_eq!(public_host(1021 + 131_069), None);
        let second = public_host(5000).unwrap();
        assert_eq!(public_subnet_of(second), PUBLIC_SUBNET_2_UUID);
        assert!(public_subnet_cidr(PUBLIC_SUBNET_2_UUID)
            .unwrap()
            .contains(&second));
        assert_eq!(
            public_subnet_of(public_host(7).unwrap()),
            PUBLIC_SUBNET_UUID
        );
    }

    #[test]
    fn a_public_gateway_is_the_last_host_and_never_handed_out() {
        let gateway = public_gateway(PUBLIC_SUBNET_UUID).unwrap();
        assert_eq!(gateway, "5.102.147.254".parse::<IpAddr>().unwrap());
        assert_eq!(
            public_gateway(PUBLIC_SUBNET_2_UUID),
            Some("198.19.255.254".parse().unwrap())
        );
        assert!((0..1021 + 131_069).all(|n| {
            let host = public_host(n).unwrap();
            host != gateway && Some(host) != public_gateway(PUBLIC_SUBNET_2_UUID)
        }));
        assert_eq!(public_gateway(DEFAULT_SUBNET_UUID), None);
    }

    #[test]
    fn floating_networks_do_not_repeat() {
        let first = free_floating_network(32, &[]).unwrap();
        assert_eq!(first.to_string(), "5.102.150.1/32");
        let second = free_floating_network(32, &[first]).unwrap();
        assert_eq!(second.to_string(), "5.102.150.2/32");
    }

    #[test]
    fn ipv6_floating_ips_are_single_addresses_or_56_networks_that_do_not_overlap() {
        let single = free_floating_network(128, &[]).unwrap();
        assert_eq!(single.to_string(), "2a06:c01::1/128");
        assert_eq!(
            free_floating_network(128, &[single]).unwrap().to_string(),
            "2a06:c01::2/128"
        );
        let inside: IpNet = "2a06:c01:1::5/128".parse().unwrap();
        let network = free_floating_network(56, &[single, inside]).unwrap();
        assert_eq!(network.to_string(), "2a06:c01:2::/56");
    }
}
