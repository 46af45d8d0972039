//! The order the cloudscale CCM performs its actions in (research/kubernetes.md §1.5,
//! `reconcileLbState`): the load balancer is created, then renamed; each pool to delete loses
//! its members one by one and then goes; new pools are created; then, pool by pool, its
//! members (deletes, then creates), its listener and its monitor (each delete before create);
//! then the in-place listener and monitor updates; floating IPs last. Within one step the CCM
//! walks Go maps, so its order is random there: such actions are listed by name, as a set.
//!
//! The CCM never deletes the listener or monitor of a pool it deletes (they go with the pool),
//! so those are not listed as its actions.

use std::collections::BTreeSet;

use super::super::ops::Op;

/// The controller's actions among `ops`, in its order.
pub fn controller_order(ops: &[Op]) -> Vec<&Op> {
    let deleted: BTreeSet<&str> = ops
        .iter()
        .filter_map(|op| match op {
            Op::DeletePool { pool } => Some(pool.as_str()),
            _ => None,
        })
        .collect();
    let mut ordered: Vec<(Step, String, &Op)> = ops
        .iter()
        .filter(|op| !goes_with_its_pool(op, &deleted))
        .map(|op| (step(op, &deleted), op.to_string(), op))
        .collect();
    ordered.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    ordered.into_iter().map(|(_, _, op)| op).collect()
}

/// A deleted pool's listener or monitor: the API removes them with the pool.
fn goes_with_its_pool(op: &Op, deleted: &BTreeSet<&str>) -> bool {
    match op {
        Op::DeleteListener { pool, .. } | Op::DeleteMonitor { pool } => {
            deleted.contains(pool.as_str())
        }
        _ => false,
    }
}

/// Where an action falls: the phase, the pool it belongs to, its place within that pool.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Step(u8, String, u8);

fn step(op: &Op, deleted: &BTreeSet<&str>) -> Step {
    let at = |phase: u8, pool: &str, place: u8| Step(phase, pool.to_string(), place);
    match op {
        Op::CreateLb { .. } | Op::DeleteLb { .. } => at(0, "", 0),
        Op::RenameLb { .. } => at(1, "", 0),
        Op::DeleteMember { pool, .. } if deleted.contains(pool.as_str()) => at(2, pool, 0),
        Op::DeletePool { pool } => at(2, pool, 1),
        Op::CreatePool { pool } => at(3, &pool.name, 0),
        Op::DeleteMember { pool, .. } => at(4, pool, 0),
        Op::CreateMember { pool, .. } => at(4, pool, 1),
        Op::DeleteListener { pool, .. } => at(4, pool, 2),
        Op::CreateListener { pool, .. } => at(4, pool, 3),
        Op::DeleteMonitor { pool } => at(4, pool, 4),
        Op::CreateMonitor { pool, .. } => at(4, pool, 5),
        Op::UpdateListener { pool, .. } => at(5, pool, 0),
        Op::UpdateMonitor { pool, .. } => at(6, pool, 0),
        Op::AssignFloatingIp { .. } => at(7, "", 0),
        // Not the controller's: never in a prediction.
        Op::TagLb { .. }
        | Op::WriteService { .. }
        | Op::DeleteService { .. }
        | Op::Controller { .. } => at(8, "", 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::{ListenerObject, MemberObject, MonitorObject, PoolObject};

    fn pool(name: &str) -> PoolObject {
        PoolObject {
            uuid: None,
            name: name.into(),
            algorithm: "round_robin".into(),
            protocol: "tcp".into(),
            tags: Default::default(),
        }
    }

    fn member(name: &str) -> MemberObject {
        serde_json::from_value(serde_json::json!({
            "name": name, "enabled": true, "protocol_port": 30000, "monitor_port": 30000,
            "address": "10.0.0.1", "subnet": "s", "tags": {}
        }))
        .expect("a member")
    }

    fn texts(ops: &[Op]) -> Vec<String> {
        controller_order(ops)
            .iter()
            .map(|o| o.to_string())
            .collect()
    }

    /// A port renamed: alphabetical order would create the new pool's objects before deleting
    /// the old pool; the CCM deletes the old pool's members and the pool first.
    #[test]
    fn a_recreated_pool_is_deleted_member_by_member_before_the_new_one_is_built() {
        let listener: ListenerObject = serde_json::from_value(serde_json::json!({
            "name": "tcp/80", "protocol": "tcp", "protocol_port": 80, "allowed_cidrs": [],
            "timeout_client_data_ms": 50000, "timeout_member_connect_ms": 5000,
            "timeout_member_data_ms": 50000, "tags": {}
        }))
        .expect("a listener");
        let monitor: MonitorObject = serde_json::from_value(serde_json::json!({
            "type": "tcp", "delay_s": 2, "timeout_s": 1, "up_threshold": 2, "down_threshold": 3, "tags": {}
        }))
        .expect("a monitor");
        let ops = vec![
            Op::CreateMonitor {
                pool: "tcp/web".into(),
                monitor,
            },
            Op::CreateListener {
                pool: "tcp/web".into(),
                listener,
            },
            Op::CreateMember {
                pool: "tcp/web".into(),
                member: member("10.0.0.1:31000"),
            },
            Op::CreatePool {
                pool: pool("tcp/web"),
            },
            Op::DeleteMonitor {
                pool: "tcp/http".into(),
            },
            Op::DeleteListener {
                pool: "tcp/http".into(),
                listener: "tcp/80".into(),
            },
            Op::DeleteMember {
                pool: "tcp/http".into(),
                member: "10.0.0.2:30000".into(),
            },
            Op::DeleteMember {
                pool: "tcp/http".into(),
                member: "10.0.0.1:30000".into(),
            },
            Op::DeletePool {
                pool: "tcp/http".into(),
            },
        ];
        assert_eq!(
            texts(&ops),
            [
                "delete member 10.0.0.1:30000",
                "delete member 10.0.0.2:30000",
                "delete pool tcp/http",
                "create pool tcp/web",
                "create member 10.0.0.1:31000",
                "create listener tcp/80",
                "create health monitor tcp of pool tcp/web",
            ]
        );
    }

    /// Traffic policy Local: in a kept pool the members go first (delete, then create), then
    /// the monitor; floating IPs come last, after in-place updates.
    #[test]
    fn in_a_kept_pool_members_precede_the_monitor_and_deletes_their_creates() {
        let monitor: MonitorObject = serde_json::from_value(serde_json::json!({
            "type": "http", "delay_s": 2, "timeout_s": 1, "up_threshold": 2, "down_threshold": 3, "tags": {}
        }))
        .expect("a monitor");
        let ops = vec![
            Op::AssignFloatingIp {
                network: "5.102.150.123/32".into(),
            },
            Op::CreateMonitor {
                pool: "tcp/http".into(),
                monitor: monitor.clone(),
            },
            Op::UpdateMonitor {
                pool: "tcp/http".into(),
                monitor,
            },
            Op::CreateMember {
                pool: "tcp/http".into(),
                member: member("10.0.0.1:30000"),
            },
            Op::DeleteMonitor {
                pool: "tcp/http".into(),
            },
            Op::DeleteMember {
                pool: "tcp/http".into(),
                member: "10.0.0.1:30000".into(),
            },
        ];
        assert_eq!(
            texts(&ops),
            [
                "delete member 10.0.0.1:30000",
                "create member 10.0.0.1:30000",
                "delete health monitor of pool tcp/http",
                "create health monitor http of pool tcp/http",
                "update health monitor of pool tcp/http",
                "assign floating IP 5.102.150.123/32",
            ]
        );
    }
}
