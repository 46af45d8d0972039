//! What a fresh account holds (a world file that does not exist yet): locations PHX and ASH,
//! each with a /20 of public IPv4 space for IP blocks (512 /29s; the upper half of the RFC 2544
//! benchmark range 198.18.0.0/15, away from the cloudscale simulator's 198.18.x addresses) and
//! a documentation range (RFC 5737) for servers' own public addresses; a public network in
//! each; three powered-on `s2.c1.medium` servers `node-1`..`node-3` in PHX.

use std::net::Ipv4Addr;

use ipnet::Ipv4Net;
use jiff::Timestamp;

use super::world::{Location, PublicNetwork, Server, World, WORLD_FORMAT};

/// The public network `k8s-public` in PHX (VLAN 10): the one a CCM's `kube-vip://<id>` names.
pub const DEFAULT_PUBLIC_NETWORK_ID: &str = "65a1f3c2e4b0a1d2c3e4f510";
/// The public network `ash-public` in ASH.
pub const ASH_PUBLIC_NETWORK_ID: &str = "65a1f3c2e4b0a1d2c3e4f520";
/// The hostnames of the fresh world's servers (in PHX), which name the embedded cluster's nodes.
pub const DEFAULT_SERVER_HOSTNAMES: [&str; 3] = ["node-1", "node-2", "node-3"];
/// The type of the fresh world's servers.
pub const DEFAULT_SERVER_TYPE: &str = "s2.c1.medium";

/// The first address of a range handed to a server: the ones below are the network's, the
/// gateway's and reserved.
const FIRST_SERVER_HOST: usize = 10;

pub fn default_world(now: Timestamp) -> World {
    let locations = vec![
        location("PHX", "198.19.0.0/20", "203.0.113.0/25", "10.0.0.0/24"),
        location("ASH", "198.19.16.0/20", "203.0.113.128/25", "10.1.0.0/24"),
    ];
    let mut world = World {
        format: WORLD_FORMAT,
        locations,
        tags: Vec::new(),
        ip_blocks: Vec::new(),
        public_networks: vec![
            network(DEFAULT_PUBLIC_NETWORK_ID, "k8s-public", "PHX", now),
            network(ASH_PUBLIC_NETWORK_ID, "ash-public", "ASH", now),
        ],
        servers: Vec::new(),
    };
    for (n, hostname) in DEFAULT_SERVER_HOSTNAMES.iter().enumerate() {
        let id = format!("65a1f3c2e4b0a1d2c3e4f60{}", n + 1);
        let server = new_server(&world, id, hostname, DEFAULT_SERVER_TYPE, "PHX", now);
        world.servers.push(server);
    }
    world
}

fn location(code: &str, pool: &str, public: &str, private: &str) -> Location {
    let net = |text: &str| text.parse::<Ipv4Net>().expect("a valid built-in range");
    Location {
        code: code.into(),
        ip_pools: vec![net(pool)],
        server_public_range: Some(net(public)),
        server_private_range: Some(net(private)),
    }
}

fn network(id: &str, name: &str, location: &str, now: Timestamp) -> PublicNetwork {
    PublicNetwork {
        id: id.into(),
        name: name.into(),
        location: location.into(),
        description: Some("Public network for LoadBalancer Services".into()),
        vlan_id: 10,
        memberships: Vec::new(),
        ra_enabled: false,
        created_on: now,
    }
}

/// A powered-on server with the next free public and private address of its location.
pub fn new_server(
    world: &World,
    id: String,
    hostname: &str,
    server_type: &str,
    location: &str,
    now: Timestamp,
) -> Server {
    let range = |pick: fn(&super::world::Location) -> Option<Ipv4Net>| {
        world.location(location).and_then(pick)
    };
    let public = range(|l| l.server_public_range)
        .and_then(|r| free_address(r, world.servers.iter().flat_map(|s| &s.public_ips)));
    let private = range(|l| l.server_private_range)
        .and_then(|r| free_address(r, world.servers.iter().flat_map(|s| &s.private_ips)));
    Server {
        id,
        hostname: hostname.into(),
        description: None,
        os: "ubuntu/jammy".into(),
        server_type: server_type.into(),
        location: location.into(),
        status: "powered-on".into(),
        public_ips: public.into_iter().collect(),
        private_ips: private.into_iter().collect(),
        tags: Vec::new(),
        provisioned_on: now,
    }
}

fn free_address<'a>(
    range: Ipv4Net,
    used: impl Iterator<Item = &'a Ipv4Addr> + Clone,
) -> Option<Ipv4Addr> {
    range
        .hosts()
        .skip(FIRST_SERVER_HOST - 1)
        .find(|candidate| !used.clone().any(|u| u == candidate))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_world_has_three_servers_with_distinct_addresses_and_two_networks() {
        let world = default_world(Timestamp::UNIX_EPOCH);
        assert_eq!(world.servers.len(), 3);
        let first = &world.servers[0];
        assert_eq!(
            first.public_ips,
            ["203.0.113.10".parse::<Ipv4Addr>().unwrap()]
        );
        assert_eq!(
            first.private_ips,
            ["10.0.0.10".parse::<Ipv4Addr>().unwrap()]
        );
        assert_eq!(world.servers[2].private_ips[0].to_string(), "10.0.0.12");
        assert!(world
            .servers
            .iter()
            .all(|s| s.id.len() == 24 && s.status == "powered-on"));
        let phx = world.network(DEFAULT_PUBLIC_NETWORK_ID).unwrap();
        assert_eq!(
            (phx.name.as_str(), phx.location.as_str(), phx.vlan_id),
            ("k8s-public", "PHX", 10)
        );
        assert_eq!(
            world.network(ASH_PUBLIC_NETWORK_ID).unwrap().location,
            "ASH"
        );
    }
}
