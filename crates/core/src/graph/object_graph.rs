//! The object graph: each cloud object of each resource (`ObjectKey`: a resource's address,
//! a kind and a name) a node, each edge from what an object needs to what needs it, on petgraph;
//! rendered as DOT or Mermaid for `skyplan graph`.

use std::collections::{HashMap, VecDeque};
use std::fmt;

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::Direction;
use serde::{Deserialize, Serialize};

use crate::model::Address;

/// One object of a resource: e.g. address load-balancer.hello, kind "pool", name "tcp/http".
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ObjectKey {
    pub address: Address,
    pub kind: String,
    pub name: String,
}

impl ObjectKey {
    pub fn new(address: Address, kind: impl Into<String>, name: impl Into<String>) -> Self {
        ObjectKey {
            address,
            kind: kind.into(),
            name: name.into(),
        }
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.address, self.kind, self.name)
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GraphError {
    /// Each object depends on the next one; the last depends on the first.
    #[error("dependency cycle: {}", format_cycle(.0))]
    Cycle(Vec<ObjectKey>),
    #[error("`{0}` is not in the dependency graph")]
    UnknownObject(ObjectKey),
}

fn format_cycle(cycle: &[ObjectKey]) -> String {
    let mut names: Vec<String> = cycle.iter().map(ToString::to_string).collect();
    names.extend(cycle.first().map(ToString::to_string));
    names.join(" → ")
}

/// Objects and what they depend on. Edges run parent → child: the child depends on the
/// parent. The graph is kept acyclic: every edge that would close a cycle is refused.
#[derive(Debug, Default, Clone)]
pub struct ObjectGraph {
    graph: DiGraph<ObjectKey, ()>,
    index: HashMap<ObjectKey, NodeIndex>,
}

impl ObjectGraph {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `object` (once per key), and the edge from `depends_on` when given, adding that
    /// parent too if it is new. Meant for building trees top-down, where the object is new.
    ///
    /// # Panics
    /// When the edge would close a cycle, which needs `object` to exist already with
    /// `depends_on` among its dependents: tree building never does that. Use
    /// [`ObjectGraph::add_dependency`] for edges between existing objects.
    pub fn add(&mut self, object: ObjectKey, depends_on: Option<&ObjectKey>) {
        let child = self.node(object);
        if let Some(parent) = depends_on {
            let parent = self.node(parent.clone());
            if let Err(cycle) = self.connect(parent, child) {
                panic!("ObjectGraph::add: {cycle}");
            }
        }
    }

    /// Records that `object` depends on `depends_on`; both must already be in the graph.
    /// Refuses an edge that would close a cycle, naming the objects on it.
    pub fn add_dependency(
        &mut self,
        object: &ObjectKey,
        depends_on: &ObjectKey,
    ) -> Result<(), GraphError> {
        let child = self.existing(object)?;
        let parent = self.existing(depends_on)?;
        self.connect(parent, child)
    }

    pub(super) fn existing(&self, object: &ObjectKey) -> Result<NodeIndex, GraphError> {
        self.index
            .get(object)
            .copied()
            .ok_or_else(|| GraphError::UnknownObject(object.clone()))
    }

    pub(super) fn graph(&self) -> &DiGraph<ObjectKey, ()> {
        &self.graph
    }

    fn node(&mut self, object: ObjectKey) -> NodeIndex {
        if let Some(&node) = self.index.get(&object) {
            return node;
        }
        let node = self.graph.add_node(object.clone());
        self.index.insert(object, node);
        node
    }

    fn connect(&mut self, parent: NodeIndex, child: NodeIndex) -> Result<(), GraphError> {
        if let Some(cycle) = self.cycle_closed_by(parent, child) {
            let cycle = cycle.into_iter().map(|n| self.graph[n].clone()).collect();
            return Err(GraphError::Cycle(cycle));
        }
        self.graph.update_edge(parent, child, ());
        Ok(())
    }

    /// The cycle that an edge parent → child would close, in "depends on" order starting at
    /// the child: there is one when the parent is reachable from the child.
    fn cycle_closed_by(&self, parent: NodeIndex, child: NodeIndex) -> Option<Vec<NodeIndex>> {
        // Breadth-first from the child, so the cycle reported is a shortest one.
        let mut came_from = HashMap::new();
        let mut queue = VecDeque::from([child]);
        while let Some(node) = queue.pop_front() {
            if node == parent {
                let mut cycle = vec![child];
                let mut node = parent;
                while node != child {
                    cycle.push(node);
                    node = came_from[&node];
                }
                return Some(cycle);
            }
            for next in self.graph.neighbors_directed(node, Direction::Outgoing) {
                if next != child && !came_from.contains_key(&next) {
                    came_from.insert(next, node);
                    queue.push_back(next);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ResourceKind;

    fn key(kind: &str, name: &str) -> ObjectKey {
        ObjectKey::new(
            Address::new(ResourceKind::LoadBalancer, "hello"),
            kind,
            name,
        )
    }

    /// load-balancer ← pool ← member: the member depends on the pool, the pool on the LB.
    fn tree() -> (ObjectGraph, [ObjectKey; 3]) {
        let [lb, pool, member] = [key("lb", "hello"), key("pool", "p"), key("member", "m")];
        let mut graph = ObjectGraph::new();
        graph.add(lb.clone(), None);
        graph.add(pool.clone(), Some(&lb));
        graph.add(member.clone(), Some(&pool));
        (graph, [lb, pool, member])
    }

    #[test]
    fn adding_the_same_object_twice_keeps_one_node_and_one_edge() {
        let (mut graph, [_, pool, member]) = tree();
        graph.add(member.clone(), Some(&pool));
        graph.add(pool, None);
        assert_eq!(graph.graph.node_count(), 3);
        assert_eq!(graph.graph.edge_count(), 2);
    }

    #[test]
    fn add_creates_a_missing_parent() {
        let mut graph = ObjectGraph::new();
        graph.add(key("pool", "p"), Some(&key("lb", "hello")));
        assert!(graph.existing(&key("lb", "hello")).is_ok());
    }

    #[test]
    fn a_dependency_closing_a_cycle_is_refused_and_named() {
        let (mut graph, [lb, pool, member]) = tree();
        let error = graph.add_dependency(&lb, &member).unwrap_err();
        assert_eq!(
            error,
            GraphError::Cycle(vec![lb.clone(), member.clone(), pool.clone()])
        );
        assert_eq!(
            error.to_string(),
            "dependency cycle: load-balancer.hello lb hello → load-balancer.hello member m \
             → load-balancer.hello pool p → load-balancer.hello lb hello"
        );
        assert_eq!(graph.graph.edge_count(), 2, "the refused edge is not added");
    }

    #[test]
    fn an_object_cannot_depend_on_itself() {
        let (mut graph, [lb, ..]) = tree();
        let error = graph.add_dependency(&lb, &lb).unwrap_err();
        assert_eq!(error, GraphError::Cycle(vec![lb]));
    }

    #[test]
    fn a_dependency_between_unrelated_objects_is_added_once() {
        let (mut graph, [lb, _, member]) = tree();
        graph.add_dependency(&member, &lb).unwrap();
        graph.add_dependency(&member, &lb).unwrap();
        assert_eq!(graph.graph.edge_count(), 3);
    }

    #[test]
    fn a_dependency_on_an_unknown_object_is_refused() {
        let (mut graph, [lb, ..]) = tree();
        let unknown = key("listener", "l");
        assert_eq!(
            graph.add_dependency(&unknown, &lb),
            Err(GraphError::UnknownObject(unknown))
        );
    }

    #[test]
    #[should_panic(expected = "dependency cycle")]
    fn add_panics_rather_than_close_a_cycle() {
        let (mut graph, [lb, _, member]) = tree();
        graph.add(lb, Some(&member));
    }
}
