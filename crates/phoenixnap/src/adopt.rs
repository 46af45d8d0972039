//! Taking over PhoenixNAP blocks no resource manages (`skyplan discover`, `import
//! --generate-config`). [`discover`] lists every block of the account that no target manages —
//! by the ID a state holds, by skyplan's description mark naming a target, or by the CCM's tags
//! naming a Service a target is bound to — with who made it and the Service it serves;
//! [`generate`] writes the `[load-balancer.NAME]` that adopts one so that its plan after import
//! is empty, or refuses what the config cannot say; [`adopted_facts`] gives a block being
//! adopted the cluster facts `import` reads, from the survey's listing. Pure: the survey
//! (`refresh::whole_inventory`, `refresh::surveyed_clusters`) read everything.

use k8s_openapi::api::core::v1::Service;
use skyplan_core::model::{Address, ResourceKind};
use skyplan_core::provider::discover::{Discovered, Generated, Maker, ServiceRef, Unmanaged};
use skyplan_core::provider::{ProviderError, Target};

use crate::api::IpBlock;
use crate::ccm::{self, Owner, CLUSTER_TAG, DELETE_TAG, NAMESPACE_TAG, NAME_TAG, USAGE_TAG};
use crate::diff::PROVIDER;
use crate::live::{ClusterFacts, Inventory, Live, SurveyedCluster};
use crate::refresh::service_facts;
use crate::spec::{PhoenixnapLoadBalancerSpec, PnapLocation};

/// The controller that makes blocks for Services, as a user knows it.
pub const CONTROLLER: &str = "PhoenixNAP CCM";
/// The only block size skyplan makes and manages: the CCM's `/29`.
const BLOCK_PREFIX: u8 = 29;
const LOAD_BALANCER: &str = "LoadBalancer";

/// What a block's CCM tags say: the usage tag, the cluster's kube-system UID (matched to a
/// connected cluster when one has it) and, on an active block, the Service.
struct Tie<'a> {
    uid: &'a str,
    cluster: Option<&'a SurveyedCluster>,
    service: Option<(&'a str, &'a str)>,
}

impl Tie<'_> {
    /// The Service as `discover` names it: only in a connected cluster.
    fn service_ref(&self) -> Option<ServiceRef> {
        let (cluster, (namespace, name)) = (self.cluster?, self.service?);
        Some(ServiceRef {
            cluster: cluster.address.clone(),
            service: format!("{namespace}/{name}"),
        })
    }

    fn cluster_words(&self) -> String {
        match self.cluster {
            Some(cluster) => cluster.address.to_string(),
            None => format!(
                "cluster {} (no connected cluster has this kube-system UID)",
                self.uid
            ),
        }
    }
}

/// The CCM's tags on `block`, if it carries its usage tag and a cluster.
fn tie<'a>(block: &'a IpBlock, clusters: &'a [SurveyedCluster]) -> Option<Tie<'a>> {
    if block.tag(USAGE_TAG) != Some(ccm::USAGE_VALUE) {
        return None;
    }
    let uid = block.tag(CLUSTER_TAG).filter(|uid| !uid.is_empty())?;
    let service = match (block.tag(NAMESPACE_TAG), block.tag(NAME_TAG)) {
        (Some(namespace), Some(name)) if !namespace.is_empty() && !name.is_empty() => {
            Some((namespace, name))
        }
        _ => None,
    };
    Some(Tie {
        uid,
        cluster: clusters.iter().find(|c| c.uid == uid),
        service,
    })
}

/// Being released: the CCM (or skyplan, as it does) tagged it `delete=true`; the CCM's reaper
/// detaches and deletes it.
/// Why a block being released is listed not importable.
const RELEASED: &str =
    "being released (tagged delete=true): the CCM's reaper detaches and deletes it";

fn released(block: &IpBlock) -> bool {
    !ccm::is_active(block)
}

/// A target being adopted in this run: no config yet, its prior only the object's ID.
pub fn adopting(target: &Target<'_>) -> bool {
    target.resource.is_none() && target.prior.is_some_and(|p| p.attributes.is_null())
}

/// Every block of the survey that no target manages, and the Services the targets are bound
/// to. `specs` are the targets' specs (the config's, or the state's for one removed from it).
pub fn discover(
    targets: &[Target<'_>],
    specs: &[(&Address, PhoenixnapLoadBalancerSpec)],
    live: &Live,
) -> Discovered {
    let clusters = live.survey.as_deref().unwrap_or_default();
    let bound: Vec<ServiceRef> = specs
        .iter()
        .map(|(_, spec)| ServiceRef {
            cluster: spec.cluster.clone(),
            service: spec.service_ref(),
        })
        .collect();
    let unmanaged = live
        .inventory
        .blocks
        .iter()
        .filter(|block| !managed(block, targets, &bound, clusters))
        .map(|block| unmanaged(block, targets, &live.inventory, clusters))
        .collect();
    Discovered { unmanaged, bound }
}

/// A target manages the block: a state names its ID, skyplan's mark names the target, or its
/// CCM tags name the Service a target is bound to (whose plan adopts it).
fn managed(
    block: &IpBlock,
    targets: &[Target<'_>],
    bound: &[ServiceRef],
    clusters: &[SurveyedCluster],
) -> bool {
    let by_id = targets
        .iter()
        .filter_map(|t| t.prior)
        .any(|p| p.provider == PROVIDER && p.id == block.id);
    let marked = block.skyplan_address();
    let by_mark = marked.is_some_and(|a| targets.iter().any(|t| *t.address == a));
    let by_service = !released(block)
        && tie(block, clusters)
            .and_then(|t| t.service_ref())
            .is_some_and(|s| bound.contains(&s));
    by_id || by_mark || by_service
}

fn unmanaged(
    block: &IpBlock,
    targets: &[Target<'_>],
    inventory: &Inventory,
    clusters: &[SurveyedCluster],
) -> Unmanaged {
    let tie = tie(block, clusters);
    let marked = block
        .skyplan_address()
        .filter(|a| !targets.iter().any(|t| t.address == a));
    let made_by = match (&marked, &tie) {
        (Some(address), _) => Maker::Skyplan(address.clone()),
        (None, Some(_)) => Maker::Controller(CONTROLLER.into()),
        (None, None) => Maker::Unknown,
    };
    let proposed = match (&marked, &tie) {
        (Some(address), _) => address.name.clone(),
        (
            None,
            Some(Tie {
                service: Some((_, name)),
                ..
            }),
        ) => name.to_string(),
        _ => match block.description.as_deref().map(str::trim) {
            Some(description) if !description.is_empty() => description.to_string(),
            _ => format!("block-{}", block.cidr),
        },
    };
    Unmanaged {
        provider: PROVIDER.into(),
        kind: ResourceKind::LoadBalancer,
        id: block.id.clone(),
        name: block.cidr.clone(),
        made_by,
        cluster: tie
            .as_ref()
            .and_then(|t| t.cluster)
            .map(|c| c.address.clone()),
        service: tie.as_ref().and_then(Tie::service_ref),
        address: Address::new(ResourceKind::LoadBalancer, proposed),
        summary: summary(block, tie.as_ref(), inventory),
        importable: !released(block),
        why_not_importable: released(block).then(|| RELEASED.to_string()),
    }
}

/// One line a user recognises the block by: CIDR, location, status and network; the Service
/// its tags name and the address that Service has; a release under way.
fn summary(block: &IpBlock, tie: Option<&Tie<'_>>, inventory: &Inventory) -> String {
    let mut parts = Vec::new();
    let mut placed = format!("{} in {}, {}", block.cidr, block.location, block.status);
    match block.public_network() {
        Some(id) => {
            let network = inventory.networks.iter().find(|n| n.id == id);
            let name = network.map_or(id, |n| n.name.as_str());
            placed.push_str(&format!(" to public network {name}"));
        }
        None => {
            if let Some(kind) = &block.assigned_resource_type {
                placed.push_str(&format!(" to a {kind}"));
            }
        }
    }
    parts.push(placed);
    match tie {
        Some(tie) if released(block) => parts.push(format!(
            "released by the {CONTROLLER} for {} (tagged delete=true): its reaper detaches and deletes it, so it cannot be imported",
            tie.cluster_words()
        )),
        Some(tie) => match tie.service {
            Some((namespace, name)) => {
                parts.push(format!(
                    "{CONTROLLER}'s tags: Service {namespace}/{name} of {}",
                    tie.cluster_words()
                ));
                if let Some(cluster) = tie.cluster {
                    parts.push(match cluster.service(namespace, name) {
                        Some(service) => service_words(service),
                        None => format!("Service {namespace}/{name} does not exist"),
                    });
                }
            }
            None => parts.push(format!(
                "{CONTROLLER}'s tags for {}, but no Service's",
                tie.cluster_words()
            )),
        },
        None if released(block) => parts.push(
            "tagged delete=true: being released, so it cannot be imported".to_string(),
        ),
        None => parts.push("no Service's tags".to_string()),
    }
    parts.join("; ")
}

/// The Service's address as a user sees it: `loadBalancerIP`, else its ingress.
fn service_words(service: &Service) -> String {
    let ip = service
        .spec
        .as_ref()
        .and_then(|s| s.load_balancer_ip.clone())
        .filter(|ip| !ip.is_empty());
    let ingress = service
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref())
        .and_then(|i| i.first())
        .and_then(|i| i.ip.clone().or_else(|| i.hostname.clone()));
    match ip.or(ingress) {
        Some(address) => format!("Service address {address}"),
        None => "the Service has no address yet".to_string(),
    }
}

/// The cluster facts `import` reads for a block being adopted (and its Service, whole), from
/// the survey's listing: the cluster and Service its CCM tags name. `None` when they name none
/// that is connected (generate refuses it, so it is never imported).
pub fn adopted_facts(
    block_id: &str,
    inventory: &Inventory,
    clusters: &[SurveyedCluster],
) -> Option<(ClusterFacts, Option<Service>)> {
    let block = inventory.block(block_id)?;
    let tie = tie(block, clusters)?;
    let cluster = tie.cluster?;
    let (namespace, name) = tie.service?;
    let service = cluster.service(namespace, name).cloned();
    let facts = ClusterFacts {
        uid: cluster.uid.clone(),
        service: service.as_ref().map(service_facts),
        missing_namespace: None,
    };
    Some((facts, service))
}

/// The config that adopts the block `target.prior` names as `target.address`, written so that
/// its plan after import is empty; `default_location` is the provider's (a block there needs
/// no `location`). Whatever the config cannot say, or would plan as a change, is refused.
pub fn generate(
    target: &Target<'_>,
    live: &Live,
    default_location: &str,
) -> Result<Generated, ProviderError> {
    let id = target.prior.map(|p| p.id.as_str()).unwrap_or_default();
    let block = live.inventory.block(id).ok_or_else(|| {
        ProviderError::new(target.address, format!("no IP block {id} in the account"))
    })?;
    let clusters = live.survey.as_deref().unwrap_or_default();
    Ok(
        match adoption(block, &live.inventory, clusters, default_location) {
            Ok(adopted) => Generated::Config {
                text: adopted.toml(target.address),
                spec: None,
            },
            Err(refused) => refused,
        },
    )
}

fn refused(attribute: &str, reason: impl Into<String>) -> Generated {
    Generated::Refused {
        attribute: attribute.into(),
        reason: reason.into(),
    }
}

/// What the config of an adopted block says.
struct Adopted<'a> {
    cluster: &'a Address,
    namespace: &'a str,
    name: &'a str,
    /// By name when no other public network has it, else by id.
    public_network: &'a str,
    /// `None`: the provider's.
    location: Option<PnapLocation>,
}

impl Adopted<'_> {
    /// The table, headed by `address` (the command that writes it says in a comment what the
    /// block is).
    fn toml(&self, address: &Address) -> String {
        let text = |value: &str| toml::Value::String(value.to_owned()).to_string();
        let mut out = format!("[{address}]\n");
        out.push_str(&format!("provider = {}\n", text(PROVIDER)));
        out.push_str(&format!("cluster = {}\n", text(&self.cluster.name)));
        out.push_str(&format!(
            "service = {}\n",
            text(&format!("{}/{}", self.namespace, self.name))
        ));
        out.push_str(&format!("public-network = {}\n", text(self.public_network)));
        if let Some(location) = self.location {
            out.push_str(&format!("location = {}\n", text(location.as_str())));
        }
        out
    }
}

/// The block as a config says it, or the refusal naming what it cannot say. Each check is a
/// difference the plan after import would show (or an error it would stop at).
fn adoption<'a>(
    block: &'a IpBlock,
    inventory: &'a Inventory,
    clusters: &'a [SurveyedCluster],
    default_location: &str,
) -> Result<Adopted<'a>, Generated> {
    if released(block) {
        return Err(refused(
            DELETE_TAG,
            format!("the block is being released (tagged delete=true): the {CONTROLLER}'s reaper detaches and deletes it"),
        ));
    }
    if block.prefix_len() != Some(BLOCK_PREFIX) {
        return Err(refused(
            "cidr-block-size",
            format!(
                "the block is a /{}: a load balancer is a /29, the only size the {CONTROLLER} makes and skyplan manages",
                block.prefix_len().map_or("?".to_string(), |p| p.to_string())
            ),
        ));
    }
    let Some(tie) = tie(block, clusters) else {
        return Err(refused(
            "service",
            format!("the block is tied to no Service: it lacks the {CONTROLLER}'s tags (usage={}, cluster, serviceNamespace, serviceName), and a load balancer is a Service's block", ccm::USAGE_VALUE),
        ));
    };
    let Some((namespace, name)) = tie.service else {
        return Err(refused(
            "service",
            "the block carries the CCM's usage and cluster tags but no serviceNamespace and serviceName: it is tied to no Service",
        ));
    };
    let Some(cluster) = tie.cluster else {
        return Err(refused(
            "cluster",
            format!("the block is tagged for cluster {}, the kube-system UID of no connected cluster: declare that cluster ([cluster.NAME] with provider = \"kubernetes\") first", tie.uid),
        ));
    };
    let service_ref = format!("{namespace}/{name}");
    let Some(service) = cluster.service(namespace, name) else {
        return Err(refused(
            "service",
            format!("its tags name Service {service_ref}, which {} does not have: the CCM would release the block if it saw the Service go", cluster.address),
        ));
    };
    let facts = service_facts(service);
    if let Some(class) = &facts.load_balancer_class {
        return Err(refused(
            "service",
            format!("Service {service_ref} has loadBalancerClass `{class}`: the {CONTROLLER} ignores it"),
        ));
    }
    if facts.service_type != LOAD_BALANCER {
        return Err(refused(
            "service.type",
            format!("Service {service_ref} is of type {}, not LoadBalancer: its tags contradict the Service, and the plan would make it LoadBalancer again", facts.service_type),
        ));
    }
    let owner = Owner {
        cluster_uid: &cluster.uid,
        namespace,
        name,
    };
    let others: Vec<&str> = inventory
        .blocks
        .iter()
        .filter(|b| b.id != block.id && owner.owns(b))
        .map(|b| b.id.as_str())
        .collect();
    if !others.is_empty() {
        return Err(refused(
            "service",
            format!("more blocks than this one carry Service {service_ref}'s tags ({}): the {CONTROLLER} errors on every sync; release all but one", others.join(", ")),
        ));
    }
    let third = ccm::service_address(&block.cidr).map(|a| a.to_string());
    match facts.load_balancer_ip.as_deref() {
        Some(ip) if Some(ip) == third.as_deref() => {}
        Some(ip) => {
            return Err(refused(
                "service.loadBalancerIP",
                format!("Service {service_ref}'s loadBalancerIP is {ip}, not the block's third address {}: its tags contradict the Service", third.unwrap_or_default()),
            ))
        }
        None => {
            return Err(refused(
                "service.loadBalancerIP",
                format!("Service {service_ref} has no loadBalancerIP yet: the {CONTROLLER} has not written the block's address; adopt the block once it has"),
            ))
        }
    }
    let network_id = match (block.public_network(), &block.assigned_resource_type) {
        (Some(id), _) => id,
        (None, Some(kind)) => {
            return Err(refused(
                "public-network",
                format!("the block is assigned to a {kind}, not to a public network"),
            ))
        }
        // Attached a moment ago, not yet shown on the block: the network lists it.
        (None, None) => match inventory
            .networks
            .iter()
            .find(|n| n.ip_blocks.iter().any(|b| b.id == block.id))
        {
            Some(network) if block.status == "assigning" => network.id.as_str(),
            _ => {
                return Err(refused(
                    "public-network",
                    "the block is attached to no public network: kube-vip cannot announce its address, and a load balancer's block is attached",
                ))
            }
        },
    };
    let Some(network) = inventory.networks.iter().find(|n| n.id == network_id) else {
        return Err(refused(
            "public-network",
            format!("the block is assigned to public network {network_id}, which the account does not list"),
        ));
    };
    let named_once = inventory
        .networks
        .iter()
        .filter(|n| n.name == network.name || n.id == network.name)
        .count()
        == 1;
    let public_network = match named_once {
        true => network.name.as_str(),
        false => network.id.as_str(),
    };
    let Some(location) = PnapLocation::parse(&block.location) else {
        return Err(refused(
            "location",
            format!(
                "the block is in {}, a location skyplan does not know",
                block.location
            ),
        ));
    };
    Ok(Adopted {
        cluster: &cluster.address,
        namespace,
        name,
        public_network,
        location: (location.as_str() != default_location).then_some(location),
    })
}

#[cfg(test)]
#[path = "adopt_tests.rs"]
mod tests;
