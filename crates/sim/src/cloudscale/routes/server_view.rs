//! A server as the API answers it: every field of the cloudscale Go SDK's `Server`, with
//! values that follow from what the world holds — the flavor's and image's details from their
//! slugs (`catalog`), the volumes it was created with, its server groups, an SSH host key of
//! its own, each address's gateway and reverse pointer.

use std::net::IpAddr;

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::server_groups;
use crate::cloudscale::catalog;
use crate::cloudscale::inventory;
use crate::cloudscale::refs;
use crate::cloudscale::state::Ctx;
use crate::cloudscale::world::{find, InterfaceAddress, Server, Volume, VolumeType, World};

/// The root volume every server has (10 GB, the API's default).
pub const ROOT_VOLUME_GB: u32 = 10;

pub fn render(world: &World, ctx: &Ctx, server: &Server) -> Value {
    let (fingerprint, host_key) = ssh_host_key(server);
    let (server_groups, anti_affinity_with) = server_groups::of_server(world, ctx, server);
    json!({
        "href": ctx.href(format!("servers/{}", server.uuid)),
        "uuid": server.uuid,
        "name": server.name,
        "status": server.status,
        "flavor": flavor(&server.flavor),
        "image": server.image.as_deref().map(image),
        "zone": {"slug": server.zone},
        "volumes": volumes(server),
        "interfaces": interfaces(world, ctx, server),
        "ssh_fingerprints": [fingerprint],
        "ssh_host_keys": [host_key],
        "anti_affinity_with": anti_affinity_with,
        "server_groups": server_groups,
        "tags": server.tags,
        "created_at": server.created_at.to_string(),
    })
}

/// A slug the catalogue cannot read (only in worlds written before flavors were checked)
/// shows its numbers as null.
fn flavor(slug: &str) -> Value {
    match catalog::flavor(slug) {
        Some(flavor) => json!({
            "slug": slug, "name": flavor.name,
            "vcpu_count": flavor.vcpu_count, "memory_gb": flavor.memory_gb,
        }),
        None => json!({"slug": slug, "name": slug, "vcpu_count": null, "memory_gb": null}),
    }
}

fn image(slug: &str) -> Value {
    let image = catalog::image(slug);
    json!({
        "slug": slug, "name": image.name, "operating_system": image.operating_system,
        "default_username": image.default_username,
    })
}

/// The server's volumes, `/dev/vda` first.
fn volumes(server: &Server) -> Vec<Value> {
    let volumes = match server.volumes.is_empty() {
        true => vec![unrecorded_root(server)],
        false => server.volumes.clone(),
    };
    volumes
        .iter()
        .enumerate()
        .map(|(i, volume)| {
            let device = format!("/dev/vd{}", char::from(b'a' + (i % 26) as u8));
            json!({"type": volume.kind, "device_path": device, "size_gb": volume.size_gb, "uuid": volume.uuid})
        })
        .collect()
}

/// A world written before volumes were kept has none recorded: its servers show the root
/// volume they were made with, under a UUID derived from theirs so that every read agrees.
fn unrecorded_root(server: &Server) -> Volume {
    Volume {
        uuid: Uuid::from_u128(server.uuid.as_u128() ^ 0x0f0f),
        kind: VolumeType::Ssd,
        size_gb: ROOT_VOLUME_GB,
    }
}

/// An Ed25519 host key of the server's own, the same on every read (its public half derived
/// from the UUID), and its SHA256 fingerprint as `ssh-keygen -l` prints it.
fn ssh_host_key(server: &Server) -> (String, String) {
    let public = Sha256::digest(server.uuid.as_bytes());
    let mut blob = Vec::with_capacity(51);
    for part in [&b"ssh-ed25519"[..], &public[..]] {
        blob.extend_from_slice(&(part.len() as u32).to_be_bytes());
        blob.extend_from_slice(part);
    }
    let fingerprint = STANDARD_NO_PAD.encode(Sha256::digest(&blob));
    (
        format!("ssh-ed25519 SHA256:{fingerprint}"),
        format!("ssh-ed25519 {}", STANDARD.encode(&blob)),
    )
}

fn interfaces(world: &World, ctx: &Ctx, server: &Server) -> Vec<Value> {
    server
        .interfaces
        .iter()
        .map(|interface| {
            let addresses: Vec<Value> = interface
                .addresses
                .iter()
                .map(|a| address(world, ctx, a))
                .collect();
            json!({
                "type": if interface.network.is_some() { "private" } else { "public" },
                "network": refs::optional(interface.network, |n| refs::network(world, ctx, n)),
                "addresses": addresses,
            })
        })
        .collect()
}

fn address(world: &World, ctx: &Ctx, address: &InterfaceAddress) -> Value {
    let subnet = refs::subnet(world, ctx, address.subnet);
    let prefix_length = subnet["cidr"]
        .as_str()
        .and_then(|cidr| cidr.split_once('/'))
        .and_then(|(_, length)| length.parse::<u8>().ok());
    json!({
        "version": if address.address.is_ipv4() { 4 } else { 6 },
        "address": address.address,
        "prefix_length": prefix_length,
        "gateway": gateway(world, address.subnet),
        "reverse_ptr": reverse_ptr(address.address, address.subnet),
        "subnet": subnet,
    })
}

/// A private subnet's own gateway (none unless it was given one), else the public one's.
fn gateway(world: &World, subnet: Uuid) -> Option<IpAddr> {
    match find(&world.subnets, subnet) {
        Some(private) => private.gateway_address,
        None => inventory::public_gateway(subnet),
    }
}

/// Public addresses resolve as cloudscale names them (`5-102-144-1.cust.cloudscale.ch`, the
/// name the CCM's `force-hostname` examples use); private ones have no public DNS.
fn reverse_ptr(address: IpAddr, subnet: Uuid) -> Option<String> {
    match (address, inventory::public_subnet_cidr(subnet)) {
        (IpAddr::V4(v4), Some(_)) => {
            let dashed = v4.to_string().replace('.', "-");
            Some(format!("{dashed}.cust.cloudscale.ch"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_key_is_well_formed_and_its_fingerprint_matches_it() {
        let server_uuid = Uuid::from_u128(7);
        let server = Server {
            uuid: server_uuid,
            name: "n".into(),
            status: "running".into(),
            flavor: "flex-4-2".into(),
            image: None,
            zone: "lpg1".into(),
            interfaces: vec![],
            volumes: vec![],
            server_groups: vec![],
            tags: Default::default(),
            created_at: Default::default(),
        };
        let (fingerprint, key) = ssh_host_key(&server);
        let blob = STANDARD
            .decode(key.strip_prefix("ssh-ed25519 ").unwrap())
            .unwrap();
        assert_eq!(blob.len(), 4 + 11 + 4 + 32);
        let expected = STANDARD_NO_PAD.encode(Sha256::digest(&blob));
        assert_eq!(fingerprint, format!("ssh-ed25519 SHA256:{expected}"));
        assert_eq!(
            ssh_host_key(&server),
            (fingerprint, key),
            "the same on every read"
        );
        let root = volumes(&server);
        assert_eq!(root[0]["device_path"], "/dev/vda");
        assert_eq!(root[0]["size_gb"], ROOT_VOLUME_GB);
        assert_eq!(root[0]["uuid"], volumes(&server)[0]["uuid"]);
    }

    #[test]
    fn public_addresses_have_a_gateway_and_a_cust_name() {
        let world = inventory::default_world(Default::default());
        let public = inventory::PUBLIC_SUBNET_UUID;
        let address: IpAddr = "5.102.144.7".parse().unwrap();
        assert_eq!(
            reverse_ptr(address, public).as_deref(),
            Some("5-102-144-7.cust.cloudscale.ch")
        );
        assert_eq!(gateway(&world, public), inventory::public_gateway(public));
        let private = inventory::DEFAULT_SUBNET_UUID;
        assert_eq!(reverse_ptr("10.0.0.5".parse().unwrap(), private), None);
        assert_eq!(
            gateway(&world, private),
            None,
            "the default subnet has no gateway"
        );
    }
}
