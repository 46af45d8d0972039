//! Every resource in the graph, and the edges between resources: the providers draw the cloud
//! objects they make; a resource with no cloud object of its own (a cluster skyplan only
//! connects to, a node policy) is drawn as itself, and each resource's top objects depend on
//! the top objects of the resources it depends on — so `graph` shows `cluster.prod` and
//! `nodes.web` with what hangs off them, not a forest of load balancers.

use std::collections::BTreeMap;

use super::{ObjectGraph, ObjectKey};
use crate::model::Address;

impl ObjectGraph {
    /// Draws each resource that has no object yet as one node, then links resources by
    /// `dependencies` (each resource with the addresses it depends on). An edge that would
    /// close a cycle is left out: the config refuses cyclic dependencies before this.
    pub fn link_resources<'a>(
        &mut self,
        dependencies: impl IntoIterator<Item = (&'a Address, &'a [Address])>,
    ) {
        let dependencies: Vec<(&Address, &[Address])> = dependencies.into_iter().collect();
        for (address, _) in &dependencies {
            if self.tops_of(address).is_empty() {
                self.add(own_node(address), None);
            }
        }
        let tops: BTreeMap<&Address, Vec<ObjectKey>> = dependencies
            .iter()
            .map(|(address, _)| (*address, self.tops_of(address)))
            .collect();
        for (address, needs) in &dependencies {
            for needed in needs.iter() {
                let Some(parents) = tops.get(needed) else {
                    continue;
                };
                for child in &tops[address] {
                    for parent in parents {
                        let _ = self.add_dependency(child, parent);
                    }
                }
            }
        }
    }

    /// A resource's objects that no other object of the same resource depends on.
    fn tops_of(&self, address: &Address) -> Vec<ObjectKey> {
        let graph = self.graph();
        graph
            .node_indices()
            .filter(|&node| graph[node].address == *address)
            .filter(|&node| {
                graph
                    .neighbors_directed(node, petgraph::Direction::Incoming)
                    .all(|parent| graph[parent].address != *address)
            })
            .map(|node| graph[node].clone())
            .collect()
    }
}

fn own_node(address: &Address) -> ObjectKey {
    ObjectKey::new(address.clone(), address.kind.as_str(), address.name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ResourceKind;

    #[test]
    fn a_resource_without_objects_is_drawn_and_linked_to_what_depends_on_it() {
        let cluster = Address::new(ResourceKind::Cluster, "prod");
        let nodes = Address::new(ResourceKind::Nodes, "web");
        let lb = Address::new(ResourceKind::LoadBalancer, "store");
        let mut graph = ObjectGraph::new();
        let lb_top = ObjectKey::new(lb.clone(), "load-balancer", "store");
        graph.add(lb_top.clone(), None);
        graph.add(ObjectKey::new(lb.clone(), "pool", "tcp/web"), Some(&lb_top));
        let on_cluster = [cluster.clone()];
        let on_both = [cluster.clone(), nodes.clone()];
        graph.link_resources([
            (&cluster, &[][..]),
            (&nodes, &on_cluster[..]),
            (&lb, &on_both[..]),
        ]);
        let dot = graph.to_dot();
        assert!(dot.contains("cluster.prod cluster prod"), "{dot}");
        assert!(dot.contains("nodes.web nodes web"), "{dot}");
        assert_eq!(graph.tops_of(&lb), vec![lb_top]);
        assert_eq!(
            graph.graph().edge_count(),
            4,
            "pool, nodes←cluster, lb←cluster, lb←nodes"
        );
    }
}
