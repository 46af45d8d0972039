//! `/v1/servers`: enough of a server for Kubernetes nodes to be looked up and floating IPs to
//! be assigned: name, status, flavor, image, zone, volumes, interfaces with addresses
//! (`server_view` renders them). Servers start `running`; `server_actions` starts and stops
//! them.

use std::net::IpAddr;

use serde::Deserialize;
use serde_json::Value;
use uuid::Uuid;

use super::addresses;
use super::assign;
use super::collection::Collection;
use super::server_groups;
use super::server_view::{self, ROOT_VOLUME_GB};
use crate::cloudscale::address_book::UsedAddresses;
use crate::cloudscale::api::{ApiError, ApiResult};
use crate::cloudscale::catalog;
use crate::cloudscale::inventory::{self, ZONES};
use crate::cloudscale::state::Ctx;
use crate::cloudscale::world::{
    find, Interface, InterfaceAddress, Server, Tags, Volume, VolumeType, World,
};

pub struct Servers;

impl Collection for Servers {
    type Item = Server;
    type Create = CreateServer;
    type Patch = UpdateServer;

    const PATH: &'static str = "/v1/servers";
    const ITEM_PATH: &'static str = "/v1/servers/{uuid}";
    const CREATE_ONLY: &'static [&'static str] = &["zone", "image"];

    fn items(world: &World) -> &[Server] {
        &world.servers
    }

    fn items_mut(world: &mut World) -> &mut Vec<Server> {
        &mut world.servers
    }

    fn render(world: &World, ctx: &Ctx, server: &Server) -> Value {
        server_view::render(world, ctx, server)
    }

    fn build(world: &mut World, ctx: &Ctx, mut request: CreateServer) -> ApiResult<Server> {
        let zone = request.zone.take().unwrap_or_else(|| ZONES[0].to_owned());
        if !inventory::is_zone(&zone) {
            return Err(ApiError::unknown("zone", &zone));
        }
        known_flavor(&request.flavor)?;
        let volumes = requested_volumes(&request)?;
        let groups = server_groups::joined(world, &zone, &request.server_groups)?;
        let mut used = world.take_used_addresses();
        let interfaces = requested_interfaces(world, &mut request, &mut used)?;
        world.keep_used_addresses(used);
        Ok(Server {
            uuid: Uuid::new_v4(),
            name: request.name,
            status: "running".into(),
            flavor: request.flavor,
            image: Some(request.image),
            zone,
            interfaces,
            volumes,
            server_groups: groups,
            tags: request.tags,
            created_at: ctx.now,
        })
    }

    fn update(world: &mut World, _: &Ctx, index: usize, patch: UpdateServer) -> ApiResult<()> {
        check_atomic(&patch)?;
        let uuid = world.servers[index].uuid;
        let interfaces = match patch.interfaces {
            Some(requests) => Some(reconnect(world, uuid, requests)?),
            None => None,
        };
        let server = &mut world.servers[index];
        if let Some(flavor) = patch.flavor {
            known_flavor(&flavor)?;
            if server.status != "stopped" {
                return Err(ApiError::bad_request(
                    "flavor: the server must be stopped to change its flavor.",
                ));
            }
            server.flavor = flavor;
        }
        if interfaces.is_some() {
            // The addresses it held are free again.
            world.forget_used_addresses();
        }
        let server = &mut world.servers[index];
        assign(&mut server.interfaces, interfaces);
        assign(&mut server.name, patch.name);
        assign(&mut server.tags, patch.tags);
        Ok(())
    }

    /// Its floating IPs stay in the account, unassigned.
    fn removed(world: &mut World, _: &Ctx, server: &Server) {
        world.forget_used_addresses();
        for floating_ip in &mut world.floating_ips {
            if floating_ip.server == Some(server.uuid) {
                floating_ip.server = None;
            }
        }
    }
}

/// Fields the simulator has no use for (ssh_keys, use_ipv6, user_data…) are accepted and
/// ignored. Without `interfaces`, `use_public_network` (default true) decides the public one.
#[derive(Debug, Deserialize)]
pub struct CreateServer {
    name: String,
    flavor: String,
    image: String,
    zone: Option<String>,
    /// The root volume's size.
    volume_size_gb: Option<u32>,
    /// A bulk volume besides the root volume.
    bulk_volume_size_gb: Option<u32>,
    /// More volumes besides the root volume.
    #[serde(default)]
    volumes: Vec<VolumeRequest>,
    #[serde(default)]
    server_groups: Vec<Uuid>,
    interfaces: Option<Vec<InterfaceRequest>>,
    #[serde(default = "yes")]
    use_public_network: bool,
    #[serde(default)]
    use_private_network: bool,
    #[serde(default)]
    tags: Tags,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
pub struct VolumeRequest {
    size_gb: u32,
    #[serde(rename = "type", default = "ssd")]
    kind: VolumeType,
}

fn ssd() -> VolumeType {
    VolumeType::Ssd
}

/// Flavor and interfaces changes are whole operations on the machine; the real API takes
/// name and tags along with neither.
#[derive(Debug, Deserialize)]
pub struct UpdateServer {
    name: Option<String>,
    flavor: Option<String>,
    interfaces: Option<Vec<InterfaceRequest>>,
    tags: Option<Tags>,
}

/// `{"network": "public"}`, `{"network": "<uuid>"}` or `{"addresses": [{"subnet", "address"}]}`.
#[derive(Debug, Deserialize)]
pub struct InterfaceRequest {
    network: Option<String>,
    addresses: Option<Vec<AddressRequest>>,
}

#[derive(Debug, Deserialize)]
pub struct AddressRequest {
    subnet: Uuid,
    address: Option<IpAddr>,
}

/// The server's flavor must be one the cloud has: one the catalogue can read.
fn known_flavor(slug: &str) -> ApiResult<()> {
    match catalog::flavor(slug) {
        Some(_) => Ok(()),
        None => Err(ApiError::unknown("flavor", slug)),
    }
}

/// The root volume, then the bulk volume and the further volumes asked for.
fn requested_volumes(request: &CreateServer) -> ApiResult<Vec<Volume>> {
    let root = (
        VolumeType::Ssd,
        request.volume_size_gb.unwrap_or(ROOT_VOLUME_GB),
    );
    let bulk = request.bulk_volume_size_gb.map(|gb| (VolumeType::Bulk, gb));
    let more = request.volumes.iter().map(|v| (v.kind, v.size_gb));
    std::iter::once(root)
        .chain(bulk)
        .chain(more)
        .map(|(kind, size_gb)| match size_gb {
            0 => Err(ApiError::bad_request(
                "volumes: a volume needs a size of 1 GB or more.",
            )),
            size_gb => Ok(Volume {
                uuid: Uuid::new_v4(),
                kind,
                size_gb,
            }),
        })
        .collect()
}

fn build_interface(
    world: &World,
    request: InterfaceRequest,
    used: &mut UsedAddresses,
) -> ApiResult<Interface> {
    let field = "interfaces.addresses";
    match (request.network.as_deref(), request.addresses) {
        (Some("public"), None) => {
            let (address, subnet) = addresses::claim_public(used, field)?;
            Ok(Interface {
                network: None,
                addresses: vec![InterfaceAddress { address, subnet }],
            })
        }
        (Some(network), None) => {
            let network: Uuid = network
                .parse()
                .map_err(|_| ApiError::unknown("interfaces.network", network))?;
            let subnet = world
                .subnets
                .iter()
                .find(|subnet| subnet.network == network)
                .ok_or_else(|| ApiError::unknown("interfaces.network", network))?;
            let address = addresses::claim(subnet, None, used, field)?;
            Ok(Interface {
                network: Some(network),
                addresses: vec![InterfaceAddress {
                    address,
                    subnet: subnet.uuid,
                }],
            })
        }
        (None, Some(requests)) if !requests.is_empty() => {
            let mut claimed = Vec::with_capacity(requests.len());
            for request in requests {
                let subnet = find(&world.subnets, request.subnet).ok_or_else(|| {
                    ApiError::unknown("interfaces.addresses.subnet", request.subnet)
                })?;
                let address = addresses::claim(subnet, request.address, used, field)?;
                claimed.push((
                    subnet.network,
                    InterfaceAddress {
                        address,
                        subnet: subnet.uuid,
                    },
                ));
            }
            let network = claimed[0].0;
            Ok(Interface {
                network: Some(network),
                addresses: claimed.into_iter().map(|(_, a)| a).collect(),
            })
        }
        _ => Err(ApiError::bad_request(
            "interfaces: give either a network or a non-empty list of addresses.",
        )),
    }
}

/// The interfaces a create request asks for, addresses claimed from the free ones.
fn requested_interfaces(
    world: &World,
    request: &mut CreateServer,
    used: &mut UsedAddresses,
) -> ApiResult<Vec<Interface>> {
    if request.use_private_network {
        return Err(ApiError::bad_request(
            "use_private_network: not simulated; give interfaces with a network instead.",
        ));
    }
    let requests = request.interfaces.take().unwrap_or_else(|| {
        let public = InterfaceRequest {
            network: Some("public".into()),
            addresses: None,
        };
        request
            .use_public_network
            .then_some(public)
            .into_iter()
            .collect()
    });
    requests
        .into_iter()
        .map(|interface| build_interface(world, interface, used))
        .collect()
}

/// A flavor or interfaces change comes alone, as the real API demands.
fn check_atomic(patch: &UpdateServer) -> ApiResult<()> {
    let fields = [
        patch.name.is_some(),
        patch.flavor.is_some(),
        patch.interfaces.is_some(),
        patch.tags.is_some(),
    ];
    let given = fields.iter().filter(|given| **given).count();
    if given > 1 && (patch.flavor.is_some() || patch.interfaces.is_some()) {
        return Err(ApiError::bad_request(
            "To keep changes atomic, flavor and interfaces can only be changed on their own.",
        ));
    }
    Ok(())
}

/// The server's new interfaces; the addresses it holds now are free for it to keep.
fn reconnect(
    world: &World,
    server: Uuid,
    requests: Vec<InterfaceRequest>,
) -> ApiResult<Vec<Interface>> {
    let own: Vec<IpAddr> = find(&world.servers, server)
        .into_iter()
        .flat_map(|s| s.interfaces.iter())
        .flat_map(|i| i.addresses.iter().map(|a| a.address))
        .collect();
    let mut used = UsedAddresses::of(
        world
            .taken_addresses()
            .filter(|address| !own.contains(address)),
    );
    requests
        .into_iter()
        .map(|interface| build_interface(world, interface, &mut used))
        .collect()
}
