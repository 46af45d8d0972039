//! The PhoenixNAP operations a plan lists, one API call (or one Service write) each, in apply
//! order. A block made in this apply is not known by id when the plan is made: `BlockRef::New`
//! names it.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::api::TagRequest;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BlockRef {
    /// The block `CreateBlock` makes earlier in the same change.
    New,
    Id(String),
}

impl fmt::Display for BlockRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlockRef::New => f.write_str("the new block"),
            BlockRef::Id(id) => write!(f, "block {id}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Op {
    /// `POST /tags` for each tag name the CCM needs that the account lacks.
    CreateTagNames { names: Vec<String> },
    /// `POST /ip-blocks`: a /29 with the CCM's tags.
    CreateBlock {
        location: String,
        description: String,
        tags: Vec<TagRequest>,
    },
    /// `POST /public-networks/{id}/ip-blocks`, then wait until the block is `assigned`.
    Attach {
        network: String,
        network_name: String,
        block: BlockRef,
    },
    /// The Service's type LoadBalancer and `spec.loadBalancerIP` = the block's third address.
    WriteService {
        namespace: String,
        name: String,
        block: BlockRef,
        address: Option<String>,
    },
    /// The Service's `loadBalancerIP` cleared and its type set to `service_type`, so the CCM
    /// lets the block go without a new Ensure.
    ClearService {
        namespace: String,
        name: String,
        service_type: String,
    },
    /// `PUT /ip-blocks/{id}/tags`: the Service's tags replaced by `delete=true`, as the CCM does.
    MarkReleased { block: String },
    /// `DELETE /public-networks/{id}/ip-blocks/{block}`, then wait until `unassigned`.
    Detach { network: String, block: String },
    /// `DELETE /ip-blocks/{id}`.
    DeleteBlock { block: String },
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::CreateTagNames { names } => write!(f, "create tag names {}", names.join(", ")),
            Op::CreateBlock { location, tags, .. } => {
                let tags: Vec<String> = tags.iter().map(|t| format!("{}={}", t.name, t.value)).collect();
                write!(f, "create /29 IP block in {location} tagged {}", tags.join(", "))
            }
            Op::Attach {
                network_name,
                block,
                ..
            } => write!(f, "attach {block} to public network {network_name}"),
            Op::WriteService {
                namespace,
                name,
                block,
                address,
            } => match address {
                Some(address) => write!(
                    f,
                    "set Service {namespace}/{name} type LoadBalancer, loadBalancerIP {address}"
                ),
                None => write!(
                    f,
                    "set Service {namespace}/{name} type LoadBalancer, loadBalancerIP = the third address of {block}"
                ),
            },
            Op::ClearService {
                namespace,
                name,
                service_type,
            } => write!(
                f,
                "clear Service {namespace}/{name} loadBalancerIP, type {service_type}"
            ),
            Op::MarkReleased { block } => write!(f, "tag block {block} delete=true"),
            Op::Detach { block, .. } => write!(f, "detach block {block} from its public network"),
            Op::DeleteBlock { block } => write!(f, "delete block {block}"),
        }
    }
}

/// The operation as a plan carries it.
pub fn planned(op: Op) -> skyplan_core::plan::Operation {
    skyplan_core::plan::Operation::new(super::diff::PROVIDER, &op)
}

impl Op {
    /// This provider's operation in a plan's `operation` (`None` for another's).
    pub fn of(operation: &skyplan_core::plan::Operation) -> Option<Op> {
        operation.read(super::diff::PROVIDER)
    }
}
