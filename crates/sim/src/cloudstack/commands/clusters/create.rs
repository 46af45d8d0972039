//! createKubernetesCluster: ids that name nothing are refused at once (431); every other
//! refusal fails the job (530). The cluster is `Created` at once, `Starting` half-way through
//! the job (its VMs provisioned), `Running` when the job ends. Without `networkid` CKS makes a
//! network `<name>-network` with a source-NAT address, deleted with the cluster.

use serde_json::{json, Value};

use super::{add_node, cmd, render, semver, Role, INSTANCE_TYPE};
use crate::cloudstack::api::{ApiError, ApiResult};
use crate::cloudstack::commands::{ips, new_id, Reply};
use crate::cloudstack::jobs::{Action, Start};
use crate::cloudstack::params::Params;
use crate::cloudstack::state::Ctx;
use crate::cloudstack::world::{Cluster, KubernetesVersion, Network, Offering, World};

/// `MIN_KUBERNETES_CLUSTER_NODE_CPU` / `_RAM_SIZE`.
pub const MIN_CPU: u32 = 2;
pub const MIN_RAM: u32 = 2048;
/// HA (more than one control node) needs at least this Kubernetes version.
const HA_MIN_VERSION: (u64, u64, u64) = (1, 16, 0);

/// What the request asks for, its ids resolved.
struct Request {
    name: String,
    zone: String,
    version: String,
    offering: String,
    /// Per-role offerings from `nodeofferings`.
    role_offerings: Vec<(Role, String)>,
    size: i64,
    control: i64,
    etcd: i64,
    network: Option<String>,
    keypair: Option<String>,
    description: Option<String>,
}

pub fn create(world: &mut World, cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let request = parse(world, p)?;
    if let Err(error) = validate(world, cx, &request) {
        return Ok(Reply::Job(Start {
            cmd: cmd("create"),
            instance_type: INSTANCE_TYPE,
            instance_id: None,
            id: None,
            action: Action::fail(error),
        }));
    }
    let id = insert(world, cx, request);
    Ok(Reply::Job(Start {
        cmd: cmd("create"),
        instance_type: INSTANCE_TYPE,
        instance_id: Some(id.clone()),
        id: Some(id.clone()),
        action: Action::ClusterCreate { id },
    }))
}

/// The synchronous part: required parameters, numbers, ids that must name something.
fn parse(world: &World, p: &Params) -> ApiResult<Request> {
    let name = p.required("name")?.to_owned();
    let zone = p.id("zoneid", |id| world.zone(id).is_some())?;
    let version = p.id("kubernetesversionid", |id| world.version(id).is_some())?;
    let offering = p.id("serviceofferingid", |id| world.offering(id).is_some())?;
    let network = p.optional_id("networkid", |id| world.network(id).is_some())?;
    let role_offerings = node_offerings(world, p).map_err(ApiError::param)?;
    Ok(Request {
        name,
        zone,
        version,
        offering,
        role_offerings,
        size: p.optional_int("size")?.unwrap_or(1),
        control: p
            .optional_int("controlnodes")?
            .or(p.optional_int("masternodes")?)
            .unwrap_or(1),
        etcd: p.optional_int("etcdnodes")?.unwrap_or(0),
        network,
        keypair: p.text("keypair").map(str::to_owned),
        description: p.text("description").map(str::to_owned),
    })
}

/// `nodeofferings[i].node` / `.offering`, checked as `KubernetesServiceHelperImpl` does.
pub fn node_offerings(world: &World, p: &Params) -> Result<Vec<(Role, String)>, String> {
    p.map("nodeofferings")
        .into_iter()
        .map(|entry| {
            let node = entry.get("node").cloned().unwrap_or_default();
            let offering = entry.get("offering").cloned().unwrap_or_default();
            if node.is_empty() || offering.is_empty() {
                return Err(format!(
                    "Incomplete Node Type to Service Offering ID mapping: '{node}' -> '{offering}'"
                ));
            }
            let role = Role::parse(&node)
                .ok_or_else(|| format!("The provided value '{node}' for Node Type is invalid"))?;
            if world.offering(&offering).is_none() {
                return Err(format!("Cannot find a service offering with ID {offering}"));
            }
            Ok((role, offering))
        })
        .collect()
}

/// The refusals `validateManagedKubernetesClusterCreateParameters` makes, in its order. The
/// texts of the size checks are not verified against the server (research §3.5 gives the
/// rules, not their words).
fn validate(world: &World, cx: &Ctx, r: &Request) -> ApiResult<()> {
    let fail = |text: String| Err(ApiError::internal(text));
    let version = world.version(&r.version).expect("parsed");
    if version.state != "Enabled" {
        return fail(format!(
            "Kubernetes version ID: {} is in {} state",
            version.id, version.state
        ));
    }
    if r.control < 1 {
        return fail(format!(
            "Invalid cluster control nodes count: {}",
            r.control
        ));
    }
    if r.size < 1 {
        return fail(format!("Invalid cluster size: {}", r.size));
    }
    if r.etcd < 0 {
        return fail(format!("Invalid etcd nodes count: {}", r.etcd));
    }
    if r.control + r.size > i64::from(cx.max_cluster_size) {
        return fail(format!(
            "Maximum cluster size can not exceed {}. Please contact your administrator",
            cx.max_cluster_size
        ));
    }
    if r.control > 1 && semver(&version.semanticversion) < HA_MIN_VERSION {
        return fail(format!(
            "HA support is available only for Kubernetes version 1.16.0 and above. Given \
             version ID: {} is {}",
            version.id, version.semanticversion
        ));
    }
    let offerings = std::iter::once(&r.offering).chain(r.role_offerings.iter().map(|(_, o)| o));
    for offering in offerings {
        check_offering(r, world.offering(offering).expect("parsed"), version)?;
    }
    if let Some(keypair) = &r.keypair {
        if !world.keypairs.iter().any(|k| &k.name == keypair) {
            return fail(format!(
                "Given SSH key pair with name: {keypair} was not found for the account"
            ));
        }
    }
    // Sim choice: a second cluster with the same name in the account is refused; the server
    // code for this check was not read (research §3 does not cover it).
    if world.clusters.iter().any(|c| c.name == r.name) {
        return fail(format!(
            "Kubernetes cluster with name: {} already exists",
            r.name
        ));
    }
    Ok(())
}

fn check_offering(r: &Request, o: &Offering, version: &KubernetesVersion) -> ApiResult<()> {
    if o.iscustomized {
        return Err(ApiError::internal(format!(
            "Custom service offerings are not supported for creating clusters, Kubernetes \
             cluster : {}, service offering : {}",
            r.name, o.name
        )));
    }
    if o.cpunumber < MIN_CPU || o.memory < MIN_RAM {
        return Err(ApiError::internal(format!(
            "Kubernetes cluster cannot be created with service offering ID: {}, Kubernetes \
             cluster template needs minimum {MIN_CPU} vCPUs and {MIN_RAM} MB RAM",
            o.id
        )));
    }
    if o.cpunumber < version.mincpunumber || o.memory < version.minmemory {
        return Err(ApiError::internal(format!(
            "Kubernetes cluster cannot be created with service offering ID: {}, associated \
             Kubernetes version : {} needs minimum {} vCPUs and {} MB RAM",
            o.id, version.name, version.mincpunumber, version.minmemory
        )));
    }
    Ok(())
}

/// The cluster in `Created`, and its network when CKS makes one.
fn insert(world: &mut World, cx: &Ctx, r: Request) -> String {
    let (network, cleanup) = match r.network {
        Some(network) => (network, false),
        None => (create_network(world, cx, &r.name, &r.zone), true),
    };
    let role = |role| {
        r.role_offerings
            .iter()
            .find(|(rl, _)| *rl == role)
            .map(|(_, o)| o.clone())
    };
    let id = new_id();
    let cluster = Cluster {
        id: id.clone(),
        db_id: world.next_db_id(),
        name: r.name.clone(),
        description: r.description.clone(),
        zoneid: r.zone.clone(),
        kubernetesversionid: r.version.clone(),
        serviceofferingid: r.offering.clone(),
        workerofferingid: role(Role::Worker).unwrap_or(r.offering.clone()),
        controlofferingid: role(Role::Control).unwrap_or(r.offering.clone()),
        etcdofferingid: (r.etcd > 0).then(|| role(Role::Etcd).unwrap_or(r.offering.clone())),
        networkid: network,
        keypair: r.keypair.clone(),
        size: r.size as u32,
        controlnodes: r.control as u32,
        etcdnodes: r.etcd as u32,
        state: "Created".into(),
        autoscalingenabled: false,
        minsize: None,
        maxsize: None,
        control_vm_ids: vec![],
        etcd_vm_ids: vec![],
        worker_vm_ids: vec![],
        network_cleanup: cleanup,
        created: cx.now,
    };
    world.clusters.push(cluster);
    id
}

/// `<name>-network`, an isolated network with its own source-NAT address.
fn create_network(world: &mut World, cx: &Ctx, name: &str, zone: &str) -> String {
    let third = (2..=254)
        .find(|n| {
            let cidr = format!("10.1.{n}.0/24");
            !world.networks.iter().any(|net| net.cidr == cidr)
        })
        .unwrap_or(254);
    let id = new_id();
    world.networks.push(Network {
        id: id.clone(),
        name: format!("{name}-network"),
        zoneid: zone.into(),
        cidr: format!("10.1.{third}.0/24"),
        created_for_cluster: true,
        created: cx.now,
    });
    let index = ips::take_free(world, zone, cx);
    let ip = &mut world.public_ips[index];
    ip.state = "Allocated".into();
    ip.issourcenat = true;
    ip.associatednetworkid = Some(id.clone());
    ip.allocated = Some(cx.now);
    id
}

/// Half-way: `Starting`, the VMs provisioned and booting.
pub fn midway(world: &mut World, cx: &Ctx, id: &str) {
    let Some(cluster) = world.cluster(id) else {
        return;
    };
    if cluster.state != "Created" {
        return;
    }
    let counts = [
        (Role::Control, cluster.controlnodes),
        (Role::Etcd, cluster.etcdnodes),
        (Role::Worker, cluster.size),
    ];
    for (role, count) in counts {
        for _ in 0..count {
            add_node(world, cx, id, role, "Starting");
        }
    }
    super::set_state(world, id, "Starting");
}

pub fn finish(world: &mut World, cx: &Ctx, id: &str) -> ApiResult<Value> {
    midway(world, cx, id);
    let cluster = world.cluster(id);
    let cluster = cluster.ok_or_else(|| ApiError::internal("The cluster was deleted meanwhile"))?;
    if cluster.state != "Starting" {
        return Err(ApiError::internal(format!(
            "Failed to start Kubernetes cluster : {} in usable state",
            cluster.name
        )));
    }
    super::set_vm_states(world, id, "Running");
    super::set_state(world, id, "Running");
    let cluster = world.cluster(id).expect("found above");
    Ok(json!({ "kubernetescluster": render(world, cluster) }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloudstack::inventory::{fixed_id, fresh_account, network_id, zone_id};
    use crate::cloudstack::params::Params;

    fn ctx() -> Ctx {
        Ctx {
            now: jiff::Timestamp::UNIX_EPOCH,
            job_time: std::time::Duration::ZERO,
            page_size: 500,
            version: "4.22.0.0".into(),
            hypervisor: "KVM".into(),
            max_cluster_size: 10,
            cluster_apis: Default::default(),
            unhealthy: None,
        }
    }

    #[test]
    fn ha_needs_kubernetes_1_16() {
        let mut world = fresh_account(jiff::Timestamp::UNIX_EPOCH);
        let mut old = world.versions[0].clone();
        old.id = fixed_id(3, 99);
        old.semanticversion = "1.15.12".into();
        world.versions.push(old);
        let params = |control: &str| {
            Params::new(
                [
                    ("command", "createKubernetesCluster"),
                    ("name", "ha"),
                    ("zoneid", &zone_id()),
                    ("kubernetesversionid", &fixed_id(3, 99)),
                    ("serviceofferingid", &fixed_id(2, 1)),
                    ("networkid", &network_id()),
                    ("controlnodes", control),
                ]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            )
        };
        let Ok(Reply::Job(start)) = create(&mut world, &ctx(), &params("3")) else {
            panic!("an async job")
        };
        let Action::Fail { code, text, .. } = start.action else {
            panic!("a refusal")
        };
        assert_eq!(code, 530);
        assert!(text.starts_with("HA support is available only for Kubernetes version 1.16.0"));
        assert!(world.clusters.is_empty());
        let Ok(Reply::Job(start)) = create(&mut world, &ctx(), &params("1")) else {
            panic!("an async job")
        };
        assert!(matches!(start.action, Action::ClusterCreate { .. }));
    }
}
