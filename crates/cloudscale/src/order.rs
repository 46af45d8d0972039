//! Where each cloudscale object sits in the dependency graph, for `skyplan graph` and for the
//! order apply runs operations in: a pool after its load balancer, members, monitor and listener
//! after their pool; deletes the other way round.

use super::desired::{listener_name, member_name, pool_name};
use super::ops::Op;
use crate::spec::{CloudscaleLoadBalancerSpec, PortProtocol};
use skyplan_core::graph::{apply_order, Action, ObjectGraph, ObjectKey, Step};
use skyplan_core::model::Address;

struct Keys<'a>(&'a Address);

impl Keys<'_> {
    fn key(&self, kind: &str, name: impl Into<String>) -> ObjectKey {
        ObjectKey::new(self.0.clone(), kind, name)
    }
    fn lb(&self) -> ObjectKey {
        self.key("load-balancer", self.0.name.clone())
    }
    fn pool(&self, pool: &str) -> ObjectKey {
        self.key("pool", pool)
    }
    fn member(&self, pool: &str, member: &str) -> ObjectKey {
        self.key("member", format!("{pool} {member}"))
    }
    fn monitor(&self, pool: &str) -> ObjectKey {
        self.key("health-monitor", pool)
    }
    fn listener(&self, listener: &str) -> ObjectKey {
        self.key("listener", listener)
    }
    fn floating_ip(&self, network: &str) -> ObjectKey {
        self.key("floating-ip", network)
    }

    /// The object an operation acts on, what that object depends on, and how it acts.
    fn step(&self, op: &Op) -> (ObjectKey, Option<ObjectKey>, Action) {
        let lb = Some(self.lb());
        match op {
            Op::CreateLb { .. } => (self.lb(), None, Action::Create),
            Op::RenameLb { .. } => (self.lb(), None, Action::Update),
            Op::TagLb { .. } => (self.key("tags", self.0.name.clone()), lb, Action::Update),
            Op::DeleteLb { .. } => (self.lb(), None, Action::Delete),
            Op::CreatePool { pool } => (self.pool(&pool.name), lb, Action::Create),
            Op::DeletePool { pool } => (self.pool(pool), lb, Action::Delete),
            Op::CreateMember { pool, member } => (
                self.member(pool, &member.name),
                Some(self.pool(pool)),
                Action::Create,
            ),
            Op::DeleteMember { pool, member } => (
                self.member(pool, member),
                Some(self.pool(pool)),
                Action::Delete,
            ),
            Op::CreateMonitor { pool, .. } => {
                (self.monitor(pool), Some(self.pool(pool)), Action::Create)
            }
            Op::UpdateMonitor { pool, .. } => {
                (self.monitor(pool), Some(self.pool(pool)), Action::Update)
            }
            Op::DeleteMonitor { pool } => {
                (self.monitor(pool), Some(self.pool(pool)), Action::Delete)
            }
            Op::CreateListener { pool, listener } => (
                self.listener(&listener.name),
                Some(self.pool(pool)),
                Action::Create,
            ),
            Op::UpdateListener { pool, listener } => (
                self.listener(&listener.name),
                Some(self.pool(pool)),
                Action::Update,
            ),
            Op::DeleteListener { pool, listener } => (
                self.listener(listener),
                Some(self.pool(pool)),
                Action::Delete,
            ),
            Op::AssignFloatingIp { network } => (self.floating_ip(network), lb, Action::Update),
            // Controller-mode operations are listed as the plan gives them, never ordered here.
            Op::WriteService { name, .. } => {
                (self.key("service", name.clone()), None, Action::Update)
            }
            Op::DeleteService { name, .. } => {
                (self.key("service", name.clone()), None, Action::Delete)
            }
            Op::Controller { action } => {
                (self.key("controller", action.clone()), lb, Action::Update)
            }
        }
    }
}

/// Puts a load balancer's operations in dependency order (stable where unconstrained).
pub fn order_operations(address: &Address, ops: Vec<Op>) -> Vec<Op> {
    let keys = Keys(address);
    let mut graph = ObjectGraph::new();
    let steps: Vec<Step> = ops
        .iter()
        .map(|op| {
            let (object, parent, action) = keys.step(op);
            if let Some(parent) = &parent {
                graph.add(parent.clone(), None);
            }
            graph.add(object.clone(), parent.as_ref());
            Step { object, action }
        })
        .collect();
    let order = apply_order(&graph, &steps).expect("a load balancer's objects form a tree");
    let mut slots: Vec<Option<Op>> = ops.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// Adds the objects a load balancer spec asks for to the graph (`skyplan graph`).
pub fn add_to_graph(graph: &mut ObjectGraph, address: &Address, spec: &CloudscaleLoadBalancerSpec) {
    let keys = Keys(address);
    let lb = keys.lb();
    graph.add(lb.clone(), None);
    for port in &spec.ports {
        let pool = pool_name(port.protocol, &port.name);
        let pool_key = keys.pool(&pool);
        graph.add(pool_key.clone(), Some(&lb));
        for address in &spec.members {
            graph.add(
                keys.member(&pool, &member_name(address, port.node_port)),
                Some(&pool_key),
            );
        }
        graph.add(keys.monitor(&pool), Some(&pool_key));
        let protocol = match port.protocol {
            PortProtocol::Udp => "udp",
            PortProtocol::Tcp => spec.listener_protocol.as_str(),
        };
        graph.add(
            keys.listener(&listener_name(protocol, port.port)),
            Some(&pool_key),
        );
    }
    for network in &spec.floating_ips {
        graph.add(keys.floating_ip(network), Some(&lb));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skyplan_core::model::ResourceKind;

    #[test]
    fn creates_follow_their_parents_even_when_listed_first() {
        let address = Address::new(ResourceKind::LoadBalancer, "a");
        let ops = vec![
            Op::DeletePool { pool: "tcp".into() },
            Op::DeleteMember {
                pool: "tcp".into(),
                member: "10.0.0.1:1".into(),
            },
            Op::RenameLb { name: "x".into() },
        ];
        let ordered: Vec<String> = order_operations(&address, ops)
            .iter()
            .map(|o| o.to_string())
            .collect();
        assert_eq!(
            ordered,
            [
                "delete member 10.0.0.1:1",
                "delete pool tcp",
                "rename load balancer to x"
            ]
        );
    }
}
