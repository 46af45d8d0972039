//! Desired vs live for one PhoenixNAP load balancer: which row of the impact table each
//! difference is, and the operations that carry the change out (release in the CCM's order,
//! then create). Pure: refresh has read everything.

use serde_json::{json, Value};

use super::api::IpBlock;
use super::ccm::{self, Owner, TAG_NAMES};
use super::impact::{rule, Change};
use super::live::{AppliedBlock, ClusterFacts, Inventory};
use super::ops::{BlockRef, Op};
use skyplan_core::model::Address;

use crate::spec::PhoenixnapLoadBalancerSpec;
use skyplan_core::plan::{self, Action, AttributeChange, Placement, ResourceChange};
use skyplan_core::provider::DriftCheck;

pub const PROVIDER: &str = "phoenixnap";
const LOAD_BALANCER: &str = "LoadBalancer";
/// The most IPv4 blocks one public network takes ("max 10 IPv4 Blocks and 1 IPv6 Block" on
/// create; [UNVERIFIED] whether later attaches are capped the same way).
pub const MAX_BLOCKS_PER_NETWORK: usize = 10;

/// One load balancer to plan.
pub struct PlanInput<'a> {
    pub address: &'a Address,
    pub spec: Option<&'a PhoenixnapLoadBalancerSpec>,
    pub prior: Option<AppliedBlock>,
    /// The desired spec's cluster (None: not connected).
    pub cluster: Option<&'a ClusterFacts>,
    pub inventory: &'a Inventory,
    /// `--replace` or `--allow-delete` named it.
    pub requested: bool,
}

/// What the diff found, before it is turned into a plan entry.
struct Found {
    changes: Vec<(Change, String, Value, Value)>,
    ops: Vec<Op>,
}

impl Found {
    fn new() -> Self {
        Found {
            changes: vec![],
            ops: vec![],
        }
    }

    fn change(&mut self, change: Change, path: &str, before: Value, after: Value) {
        self.changes.push((change, path.to_owned(), before, after));
    }
}

/// Why a load balancer cannot be planned, and the config key that names the culprit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError {
    pub key: &'static str,
    pub message: String,
}

fn at(key: &'static str) -> impl Fn(String) -> PlanError {
    move |message| PlanError { key, message }
}

/// The change of one load balancer, placed where its block is (see [`placement`]).
pub fn plan(input: &PlanInput<'_>) -> Result<ResourceChange, PlanError> {
    let mut change = plan_change(input)?;
    let spec = input.spec.or(input.prior.as_ref().map(|p| &p.spec));
    change.placement = spec.map(placement);
    Ok(change)
}

/// Where a block is, for a rollout grouped by cluster or zone: the cluster of the Service it
/// serves, and its location as the zone.
pub fn placement(spec: &PhoenixnapLoadBalancerSpec) -> Placement {
    Placement {
        cluster: Some(spec.cluster.to_string()),
        zone: Some(spec.location.to_string()),
    }
}

fn plan_change(input: &PlanInput<'_>) -> Result<ResourceChange, PlanError> {
    let Some(spec) = input.spec else {
        return Ok(plan_removal(input));
    };
    let cluster = input.cluster.ok_or_else(|| {
        at("cluster")(format!(
            "{} is not connected: the Service's cluster must be reachable to plan its address",
            spec.cluster
        ))
    })?;
    if let (None, Some(why)) = (&cluster.service, &cluster.missing_namespace) {
        return Err(at("service")(why.clone()));
    }
    let service = cluster.service.as_ref().ok_or_else(|| {
        // Applied before: the Service was deleted since, and the CCM released its block —
        // what drift reports as `ServiceDeleted`, said here in the same words.
        let released = match &input.prior {
            Some(_) => {
                let row = rule(Change::ServiceDeleted);
                format!(
                    "; {}: {} ({})",
                    row.what.to_lowercase(),
                    row.happens,
                    row.impact
                )
            }
            None => String::new(),
        };
        at("service")(format!(
            "Service {} does not exist in {}: create it first (skyplan writes only its type and loadBalancerIP){released}",
            spec.service_ref(),
            spec.cluster
        ))
    })?;
    if let Some(class) = &service.load_balancer_class {
        return Err(at("service")(format!(
            "Service {} has loadBalancerClass `{class}`: the CCM ignores it, and the class cannot change once set",
            spec.service_ref()
        )));
    }
    let owner = Owner {
        cluster_uid: &cluster.uid,
        namespace: &spec.namespace,
        name: &spec.name,
    };
    if let Some(bad) = owner.invalid_tag_value() {
        return Err(at("service")(format!(
            "`{bad}` is not a valid PhoenixNAP tag value ([A-zÀ-ú0-9_-], 1-100 characters)"
        )));
    }
    let network = input
        .inventory
        .network(&spec.public_network)
        .map_err(at("public-network"))?;
    let tagged: Vec<&IpBlock> = input
        .inventory
        .blocks
        .iter()
        .filter(|b| owner.owns(b))
        .collect();
    if tagged.len() > 1 {
        let ids: Vec<&str> = tagged.iter().map(|b| b.id.as_str()).collect();
        return Err(at("service")(format!(
            "more than one active block carries Service {}'s tags ({}): the CCM errors on every sync; release all but one",
            spec.service_ref(),
            ids.join(", ")
        )));
    }
    let ours = input
        .prior
        .as_ref()
        .and_then(|p| input.inventory.block(&p.block));
    let context = Context {
        input,
        spec,
        owner: &owner,
        network_id: &network.id,
        network_name: &network.name,
        service_type: &service.service_type,
        address: service.load_balancer_ip.as_deref(),
    };
    let mut found = Found::new();
    match (tagged.first().copied(), ours) {
        (Some(current), Some(old)) if old.id != current.id => {
            context.superseded(&mut found, old, current)
        }
        (Some(current), None) if input.prior.is_some() => {
            context.replaced_after_deletion(&mut found, current)
        }
        (Some(current), _) => context.existing(&mut found, current, None),
        (None, Some(old)) => context.lost(&mut found, old),
        (None, None) => match &input.prior {
            Some(prior) => {
                found.change(
                    Change::BlockDeleted,
                    "block",
                    json!(prior.cidr),
                    Value::Null,
                );
                if input.requested {
                    context.create(&mut found);
                }
            }
            None => {
                context.check_room(network)?;
                found.change(
                    Change::ServiceAdded,
                    "",
                    Value::Null,
                    json!(spec.service_ref()),
                );
                context.create(&mut found);
            }
        },
    }
    Ok(finish(input, found, spec))
}

/// What every branch of an existing load balancer needs.
struct Context<'a> {
    input: &'a PlanInput<'a>,
    spec: &'a PhoenixnapLoadBalancerSpec,
    owner: &'a Owner<'a>,
    network_id: &'a str,
    network_name: &'a str,
    service_type: &'a str,
    address: Option<&'a str>,
}

impl Context<'_> {
    fn check_room(&self, network: &super::api::PublicNetwork) -> Result<(), PlanError> {
        if network.location != self.spec.location.as_str() {
            return Err(at("location")(format!(
                "public network {} is in {}, but the block would be made in {}: the API refuses to attach a block of another location",
                network.name, network.location, self.spec.location
            )));
        }
        if network.ip_blocks.len() >= MAX_BLOCKS_PER_NETWORK {
            return Err(at("public-network")(format!(
                "public network {} already holds {} IP blocks, the most one network takes",
                network.name,
                network.ip_blocks.len()
            )));
        }
        Ok(())
    }

    /// Another block than skyplan's carries the Service's tags: the CCM made it, because skyplan's
    /// was released (delete tag) or re-tagged by hand. The Service still has the old block's
    /// address, which the new block's replaces.
    fn superseded(&self, found: &mut Found, old: &IpBlock, current: &IpBlock) {
        let stale = self.input.prior.as_ref().map(|p| p.address.as_str());
        if ccm::is_active(old) {
            found.change(
                Change::BlockRetagged,
                "block.tags",
                json!(old.id),
                json!(tag_pairs(old)),
            );
            if self.input.requested {
                release_block(found, old);
                self.existing(found, current, stale);
            }
            return;
        }
        found.change(
            Change::ReleasedByController,
            "block",
            json!(old.cidr),
            json!(current.cidr),
        );
        release_remaining(found, old);
        self.existing(found, current, stale);
    }

    /// skyplan's block is gone and the CCM made another for the Service. Its reaper deleting a
    /// released block leaves the Service on the new block's address (pool-recreate, already
    /// happened: adopted); a block deleted by hand leaves the old address, which the CCM then
    /// errors on forever (forbidden).
    fn replaced_after_deletion(&self, found: &mut Found, current: &IpBlock) {
        let prior = self.input.prior.as_ref().expect("checked by the caller");
        let third = ccm::service_address(&current.cidr).map(|a| a.to_string());
        if self.address.is_some() && self.address == third.as_deref() {
            found.change(
                Change::ReleasedByController,
                "block",
                json!(prior.cidr),
                json!(current.cidr),
            );
            self.existing(found, current, None);
            return;
        }
        found.change(
            Change::BlockDeleted,
            "block",
            json!(prior.cidr),
            json!(current.cidr),
        );
        if self.input.requested {
            self.existing(found, current, Some(&prior.address));
        }
    }

    /// The block with the Service's four tags: adopted, and checked against the config.
    /// `stale` is an address of skyplan's earlier block, replaced without a row of its own.
    fn existing(&self, found: &mut Found, block: &IpBlock, stale: Option<&str>) {
        let first_seen = self.input.prior.is_none();
        if first_seen {
            found.change(
                Change::BlockAdopted,
                "block",
                Value::Null,
                json!(block.cidr),
            );
        }
        let forbidden_before = found.changes.len();
        if block.location != self.spec.location.as_str() {
            found.change(
                Change::LocationChanged,
                "location",
                json!(block.location),
                json!(self.spec.location),
            );
        }
        let mut needs_attach = false;
        match block.public_network() {
            Some(network) if network != self.network_id => found.change(
                Change::NetworkChanged,
                "public-network",
                json!(network),
                json!(self.network_id),
            ),
            // An adopted block still settling (an apply stopped after the attach call): the
            // attach step waits for it, so the Service is written once the block is assigned.
            Some(_) => needs_attach = first_seen && block.status != "assigned",
            None if block.status == "assigning" => needs_attach = first_seen,
            None if !first_seen => found.change(
                Change::BlockDetached,
                "block.public-network",
                json!(self.network_id),
                Value::Null,
            ),
            None => needs_attach = true,
        }
        let wanted = ccm::service_address(&block.cidr).map(|a| a.to_string());
        let mut needs_write = self.service_type != LOAD_BALANCER && first_seen;
        match self.address {
            Some(set) if Some(set) == stale && Some(set) != wanted.as_deref() => needs_write = true,
            Some(set) if Some(set) != wanted.as_deref() => found.change(
                Change::AddressSetByHand,
                "service.loadBalancerIP",
                json!(set),
                json!(wanted),
            ),
            Some(_) => {}
            None if first_seen => needs_write = true,
            None => {
                found.change(
                    Change::AddressCleared,
                    "service.loadBalancerIP",
                    Value::Null,
                    json!(wanted),
                );
                needs_write = true;
            }
        }
        if self.service_type != LOAD_BALANCER && !first_seen {
            found.change(
                Change::ServiceTypeChanged,
                "service.type",
                json!(self.service_type),
                json!(LOAD_BALANCER),
            );
            self.replace(found, block);
            return;
        }
        let forbidden = found.changes.len() > forbidden_before
            && found.changes[forbidden_before..]
                .iter()
                .any(|(c, ..)| rule(*c).impact == skyplan_core::model::Impact::Forbidden);
        if forbidden {
            if self.input.requested {
                self.replace(found, block);
            }
            return;
        }
        if needs_attach {
            found.ops.push(self.attach(BlockRef::Id(block.id.clone())));
        }
        if needs_write {
            found
                .ops
                .push(self.write(BlockRef::Id(block.id.clone()), wanted));
        }
    }

    /// The block skyplan made no longer carries the Service's tags.
    fn lost(&self, found: &mut Found, old: &IpBlock) {
        let prior = self
            .input
            .prior
            .as_ref()
            .expect("a block of ours has a record");
        let prior_owner = Owner {
            cluster_uid: &prior.cluster_uid,
            namespace: &prior.spec.namespace,
            name: &prior.spec.name,
        };
        if !ccm::is_active(old) {
            found.change(
                Change::ReleasedByController,
                "block",
                json!(old.cidr),
                Value::Null,
            );
            release_remaining(found, old);
            self.create(found);
        } else if !prior_owner.owns(old) {
            found.change(
                Change::BlockRetagged,
                "block.tags",
                json!(prior_owner.tags()),
                json!(tag_pairs(old)),
            );
            if self.input.requested {
                self.replace(found, old);
            }
        } else if prior.cluster_uid != self.owner.cluster_uid {
            found.change(
                Change::ClusterRebuilt,
                "cluster",
                json!(prior.cluster_uid),
                json!(self.owner.cluster_uid),
            );
            release_block(found, old);
            self.create(found);
        } else {
            found.change(
                Change::ServiceRenamed,
                "service",
                json!(prior.spec.service_ref()),
                json!(self.spec.service_ref()),
            );
            found.ops.push(clear_service(prior));
            release_block(found, old);
            self.create(found);
        }
    }

    /// Releases `block` (clearing the Service first, so the CCM does not take it back) and
    /// makes a new one.
    fn replace(&self, found: &mut Found, block: &IpBlock) {
        found.ops.push(Op::ClearService {
            namespace: self.spec.namespace.clone(),
            name: self.spec.name.clone(),
            service_type: "ClusterIP".into(),
        });
        release_block(found, block);
        self.create(found);
    }

    fn create(&self, found: &mut Found) {
        let missing: Vec<String> = TAG_NAMES
            .iter()
            .filter(|n| !self.input.inventory.tag_names.contains(**n))
            .map(|n| n.to_string())
            .collect();
        if !missing.is_empty() {
            found.ops.push(Op::CreateTagNames { names: missing });
        }
        found.ops.push(Op::CreateBlock {
            location: self.spec.location.to_string(),
            description: super::api::skyplan_description(self.input.address),
            tags: self.owner.tags(),
        });
        found.ops.push(self.attach(BlockRef::New));
        found.ops.push(self.write(BlockRef::New, None));
    }

    fn attach(&self, block: BlockRef) -> Op {
        Op::Attach {
            network: self.network_id.to_owned(),
            network_name: self.network_name.to_owned(),
            block,
        }
    }

    fn write(&self, block: BlockRef, address: Option<String>) -> Op {
        Op::WriteService {
            namespace: self.spec.namespace.clone(),
            name: self.spec.name.clone(),
            block,
            address,
        }
    }
}

fn tag_pairs(block: &IpBlock) -> Value {
    block
        .tags
        .iter()
        .map(|t| json!({"name": t.name, "value": t.value}))
        .collect()
}

fn clear_service(prior: &AppliedBlock) -> Op {
    Op::ClearService {
        namespace: prior.spec.namespace.clone(),
        name: prior.spec.name.clone(),
        service_type: match prior.service_type_before.as_str() {
            LOAD_BALANCER | "" => "ClusterIP".into(),
            before => before.into(),
        },
    }
}

/// The CCM's release after the Service let go: tagged delete=true, detached, deleted.
fn release_block(found: &mut Found, block: &IpBlock) {
    found.ops.push(Op::MarkReleased {
        block: block.id.clone(),
    });
    release_remaining(found, block);
}

/// What is left of a release once the block is tagged: detach while it is on a network, then
/// delete. (The CCM's reaper does the same every 30 s; both tolerate the other.)
fn release_remaining(found: &mut Found, block: &IpBlock) {
    if block.assigned_resource_id.is_some() || block.status != "unassigned" {
        found.ops.push(Op::Detach {
            network: block.assigned_resource_id.clone().unwrap_or_default(),
            block: block.id.clone(),
        });
    }
    found.ops.push(Op::DeleteBlock {
        block: block.id.clone(),
    });
}

/// Drift: the plan of the applied spec (`input.spec`, the record's, with `input.prior` the
/// record) on the live state — one reading of each difference, classified exactly as `plan`
/// restores it (`drift_tests.rs` holds every row to it). One difference `plan` cannot restore:
/// the Service gone from the cluster (skyplan never creates it, so the plan stops with "create
/// it first" and names the release); drift reports that row, `ServiceDeleted`, the class
/// impact.md gives a Service removed (pool-recreate: the address changes).
pub fn drift(input: &PlanInput<'_>) -> Result<DriftCheck, PlanError> {
    let Some(prior) = &input.prior else {
        return Ok(DriftCheck::NotApplied);
    };
    if input.cluster.is_some_and(|c| c.service.is_none()) {
        return Ok(DriftCheck::Compared(vec![service_deleted(prior)]));
    }
    plan(input).map(|change| DriftCheck::Compared(change.attributes))
}

/// Drift: the Service skyplan gave the address to no longer exists; the CCM released the block.
pub fn service_deleted(prior: &AppliedBlock) -> AttributeChange {
    let row = rule(Change::ServiceDeleted);
    AttributeChange {
        path: "service".into(),
        before: json!(prior.spec.service_ref()),
        after: Value::Null,
        impact: row.impact,
        reason: format!("{}: {}", row.what, row.happens),
        downtime: row.downtime,
        group: "block".into(),
        effects: Vec::new(),
    }
}

/// The load balancer is gone from the config. Its address would be lost for good, so, as
/// impact.md's deletion rule says, it is refused unless named with --allow-delete; then it is
/// released in the CCM's order.
fn plan_removal(input: &PlanInput<'_>) -> ResourceChange {
    let address = input.address.clone();
    let Some(prior) = &input.prior else {
        return ResourceChange::no_op(address, PROVIDER, None);
    };
    let mut found = Found::new();
    let row = match input.requested {
        true => Change::ServiceReleased,
        false => Change::ServiceRemoved,
    };
    found.change(row, "", json!(prior.address), Value::Null);
    let block = input.inventory.block(&prior.block);
    if let (Some(block), true) = (block, input.requested) {
        found.ops.push(clear_service(prior));
        match ccm::is_active(block) {
            true => release_block(&mut found, block),
            false => release_remaining(&mut found, block),
        }
    }
    let mut change = to_change(input, found, None);
    change.action = Action::Delete;
    let flag = format!("--allow-delete {address}");
    for attribute in &mut change.attributes {
        attribute.reason = attribute.reason.replace("--allow-delete ADDR", &flag);
    }
    change
}

fn finish(
    input: &PlanInput<'_>,
    found: Found,
    spec: &PhoenixnapLoadBalancerSpec,
) -> ResourceChange {
    to_change(input, found, Some(plan::Record::of(spec)))
}

fn to_change(input: &PlanInput<'_>, found: Found, record: Option<plan::Record>) -> ResourceChange {
    let creates = found
        .ops
        .iter()
        .any(|op| matches!(op, Op::CreateBlock { .. }));
    let releases = found
        .ops
        .iter()
        .any(|op| matches!(op, Op::DeleteBlock { .. }));
    let action = match (
        input.prior.is_some(),
        creates,
        releases,
        found.changes.is_empty(),
    ) {
        (_, _, _, true) => Action::NoOp,
        (false, true, _, _) => Action::Create,
        (_, true, true, _) => Action::Replace,
        _ => Action::Update,
    };
    let attributes = found
        .changes
        .into_iter()
        .map(|(change, path, before, after)| {
            let row = rule(change);
            AttributeChange {
                path,
                before,
                after,
                impact: row.impact,
                reason: format!("{}: {}", row.what, row.happens),
                downtime: row.downtime,
                group: "block".into(),
                effects: Vec::new(),
            }
        })
        .collect();
    ResourceChange {
        address: input.address.clone(),
        provider: PROVIDER.into(),
        action,
        attributes,
        operations: found.ops.into_iter().map(crate::ops::planned).collect(),
        record,
        requested: input.requested,
        moved_from: None,
        placement: None,
    }
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "drift_tests.rs"]
mod drift_tests;
