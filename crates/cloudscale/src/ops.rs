//! The cloud operations an apply performs on one load balancer, in the order the plan lists
//! them. They name objects the way the CCM does (pool by name, member by name within its
//! pool), so a saved plan stays meaningful; UUIDs are resolved when the operation runs.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::objects::{LbObject, ListenerObject, MemberObject, MonitorObject, PoolObject};
use skyplan_core::model::Address;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Op {
    /// POST /load-balancers, then wait until it is `running`.
    CreateLb {
        lb: LbObject,
    },
    /// PATCH /load-balancers/<uuid> {name}.
    RenameLb {
        name: String,
    },
    /// PATCH /load-balancers/<uuid> {tags}: the live tags with [`OWNER_TAG`] added (the API
    /// replaces the whole map).
    ///
    /// [`OWNER_TAG`]: super::objects::OWNER_TAG
    TagLb {
        tags: super::objects::Tags,
    },
    /// DELETE /load-balancers/<uuid> (the API removes everything under it).
    DeleteLb {
        name: String,
    },
    CreatePool {
        pool: PoolObject,
    },
    DeletePool {
        pool: String,
    },
    CreateMember {
        pool: String,
        member: MemberObject,
    },
    DeleteMember {
        pool: String,
        member: String,
    },
    CreateMonitor {
        pool: String,
        monitor: MonitorObject,
    },
    /// PATCH the monitor's in-place fields to these values.
    UpdateMonitor {
        pool: String,
        monitor: MonitorObject,
    },
    DeleteMonitor {
        pool: String,
    },
    CreateListener {
        pool: String,
        listener: ListenerObject,
    },
    /// PATCH the listener's in-place fields (name, allowed_cidrs, timeouts) to these values.
    UpdateListener {
        pool: String,
        listener: ListenerObject,
    },
    DeleteListener {
        pool: String,
        listener: String,
    },
    /// PATCH /floating-ips/<ip> {load_balancer}.
    AssignFloatingIp {
        network: String,
    },
    /// Controller mode: write the Service — a merge patch carrying the resourceVersion read at
    /// refresh (a concurrent change is a 409, never overwritten), or a create when it does not
    /// exist yet.
    WriteService {
        namespace: String,
        name: String,
        body: serde_json::Value,
        /// `None`: the Service does not exist and is created.
        resource_version: Option<String>,
    },
    /// Controller mode, `--allow-delete`: delete the Service skyplan wrote in `cluster`; the
    /// CCM then deletes the load balancer.
    DeleteService {
        cluster: Address,
        namespace: String,
        name: String,
    },
    /// Controller mode: what the cloudscale CCM is predicted to do once the Service is
    /// written. skyplan never performs it; apply waits for it and checks it.
    Controller {
        action: String,
    },
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::CreateLb { lb } => write!(f, "create load balancer {}", lb.name),
            Op::RenameLb { name } => write!(f, "rename load balancer to {name}"),
            Op::TagLb { tags } => {
                let owner = tags
                    .get(super::objects::OWNER_TAG)
                    .map_or("", String::as_str);
                write!(f, "tag load balancer {}={owner}", super::objects::OWNER_TAG)
            }
            Op::DeleteLb { name } => write!(f, "delete load balancer {name}"),
            Op::CreatePool { pool } => write!(f, "create pool {}", pool.name),
            Op::DeletePool { pool } => write!(f, "delete pool {pool}"),
            Op::CreateMember { member, .. } => write!(f, "create member {}", member.name),
            Op::DeleteMember { member, .. } => write!(f, "delete member {member}"),
            Op::CreateMonitor { pool, monitor } => {
                write!(f, "create health monitor {} of pool {pool}", monitor.kind)
            }
            Op::UpdateMonitor { pool, .. } => write!(f, "update health monitor of pool {pool}"),
            Op::DeleteMonitor { pool } => write!(f, "delete health monitor of pool {pool}"),
            Op::CreateListener { listener, .. } => write!(f, "create listener {}", listener.name),
            Op::UpdateListener { listener, .. } => write!(f, "update listener {}", listener.name),
            Op::DeleteListener { listener, .. } => write!(f, "delete listener {listener}"),
            Op::AssignFloatingIp { network } => write!(f, "assign floating IP {network}"),
            Op::WriteService {
                namespace,
                name,
                resource_version,
                ..
            } => match resource_version {
                Some(_) => write!(f, "patch service {namespace}/{name}"),
                None => write!(f, "create service {namespace}/{name}"),
            },
            Op::DeleteService {
                namespace, name, ..
            } => write!(f, "delete service {namespace}/{name}"),
            Op::Controller { action } => write!(f, "controller: {action}"),
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
