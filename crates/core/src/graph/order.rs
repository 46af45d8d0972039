//! `apply_order`: the order apply runs a resource's steps in — creates and updates after what
//! they depend on, deletes before it, and each object's delete before its create — stable
//! where the graph leaves the order free.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use petgraph::graph::NodeIndex;
use petgraph::Direction;

use super::object_graph::{GraphError, ObjectGraph, ObjectKey};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    Create,
    Update,
    Delete,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub object: ObjectKey,
    pub action: Action,
}

/// The order in which to run steps, as indices into `steps`: a create or update runs after
/// the creates of everything its object depends on, and after a delete of the same object
/// (recreate = delete then create); a delete runs after the deletes of everything that
/// depends on its object. Otherwise the input order is kept (stable topological sort, Kahn
/// with a min-heap on input index). Every step's object must be in the graph.
pub fn apply_order(graph: &ObjectGraph, steps: &[Step]) -> Result<Vec<usize>, GraphError> {
    let nodes = steps
        .iter()
        .map(|step| graph.existing(&step.object))
        .collect::<Result<Vec<_>, _>>()?;
    let runs_before = constraints(graph, steps, &nodes);
    Ok(stable_topological_order(&runs_before))
}

/// For each step, the steps that must wait for it.
fn constraints(graph: &ObjectGraph, steps: &[Step], nodes: &[NodeIndex]) -> Vec<Vec<usize>> {
    let mut steps_on: HashMap<(NodeIndex, Action), Vec<usize>> = HashMap::new();
    for (i, step) in steps.iter().enumerate() {
        steps_on.entry((nodes[i], step.action)).or_default().push(i);
    }
    let steps_on = |node, action| steps_on.get(&(node, action)).into_iter().flatten().copied();

    let mut runs_before = vec![Vec::new(); steps.len()];
    for (i, step) in steps.iter().enumerate() {
        let node = nodes[i];
        let prerequisites: Vec<usize> = match step.action {
            Action::Create | Action::Update => reachable(graph, node, Direction::Incoming)
                .into_iter()
                .flat_map(|dependency| steps_on(dependency, Action::Create))
                .chain(steps_on(node, Action::Delete))
                .collect(),
            Action::Delete => reachable(graph, node, Direction::Outgoing)
                .into_iter()
                .flat_map(|dependent| steps_on(dependent, Action::Delete))
                .collect(),
        };
        for before in prerequisites {
            runs_before[before].push(i);
        }
    }
    runs_before
}

/// The nodes reachable from `start` following edges in `direction`, `start` excluded:
/// everything it depends on (incoming) or everything that depends on it (outgoing).
fn reachable(graph: &ObjectGraph, start: NodeIndex, direction: Direction) -> HashSet<NodeIndex> {
    let mut seen = HashSet::new();
    let mut pending = vec![start];
    while let Some(node) = pending.pop() {
        for next in graph.graph().neighbors_directed(node, direction) {
            if seen.insert(next) {
                pending.push(next);
            }
        }
    }
    seen
}

/// Kahn's algorithm taking, among the ready steps, always the earliest in input order.
/// The constraints only ever point from dependencies to dependents (creates) or the other
/// way round (deletes), and deletes never wait for creates, so over an acyclic object graph
/// they are acyclic and every step is emitted.
fn stable_topological_order(runs_before: &[Vec<usize>]) -> Vec<usize> {
    let mut waiting_on = vec![0usize; runs_before.len()];
    for &after in runs_before.iter().flatten() {
        waiting_on[after] += 1;
    }
    let mut ready: BinaryHeap<Reverse<usize>> = (0..runs_before.len())
        .filter(|&i| waiting_on[i] == 0)
        .map(Reverse)
        .collect();
    let mut order = Vec::with_capacity(runs_before.len());
    while let Some(Reverse(step)) = ready.pop() {
        order.push(step);
        for &after in &runs_before[step] {
            waiting_on[after] -= 1;
            if waiting_on[after] == 0 {
                ready.push(Reverse(after));
            }
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use proptest::sample::Index;

    use super::*;
    use crate::model::{Address, ResourceKind};

    fn key(kind: &str, name: &str) -> ObjectKey {
        ObjectKey::new(
            Address::new(ResourceKind::LoadBalancer, "hello"),
            kind,
            name,
        )
    }

    fn step(action: Action, object: &ObjectKey) -> Step {
        Step {
            object: object.clone(),
            action,
        }
    }

    /// lb ← pool ← {member a, member b, listener}; other is unrelated.
    fn graph() -> ObjectGraph {
        let mut graph = ObjectGraph::new();
        graph.add(key("pool", "p"), Some(&key("lb", "hello")));
        for (kind, name) in [("member", "a"), ("member", "b"), ("listener", "l")] {
            graph.add(key(kind, name), Some(&key("pool", "p")));
        }
        graph.add(key("other", "o"), None);
        graph
    }

    fn order(steps: &[Step]) -> Vec<usize> {
        apply_order(&graph(), steps).unwrap()
    }

    #[test]
    fn creates_run_after_the_creates_of_what_they_depend_on() {
        use Action::Create;
        let steps = [
            step(Create, &key("member", "a")),
            step(Create, &key("pool", "p")),
            step(Create, &key("member", "b")),
            step(Create, &key("lb", "hello")),
        ];
        assert_eq!(order(&steps), [3, 1, 0, 2]);
    }

    #[test]
    fn an_update_waits_for_the_create_of_a_dependency() {
        let steps = [
            step(Action::Update, &key("listener", "l")),
            step(Action::Create, &key("pool", "p")),
        ];
        assert_eq!(order(&steps), [1, 0]);
    }

    #[test]
    fn deletes_run_after_the_deletes_of_their_dependents() {
        let steps = [
            step(Action::Delete, &key("lb", "hello")),
            step(Action::Delete, &key("pool", "p")),
            step(Action::Delete, &key("listener", "l")),
        ];
        assert_eq!(order(&steps), [2, 1, 0]);
    }

    #[test]
    fn a_recreate_deletes_before_it_creates() {
        use Action::{Create, Delete};
        let (pool, member) = (key("pool", "p"), key("member", "a"));
        let steps = [
            step(Create, &pool),
            step(Create, &member),
            step(Delete, &pool),
            step(Delete, &member),
        ];
        assert_eq!(order(&steps), [3, 2, 0, 1]);
    }

    #[test]
    fn unconstrained_steps_keep_their_input_order() {
        let steps = [
            step(Action::Update, &key("member", "b")),
            step(Action::Delete, &key("other", "o")),
            step(Action::Create, &key("member", "a")),
            step(Action::Update, &key("lb", "hello")),
        ];
        assert_eq!(order(&steps), [0, 1, 2, 3]);
    }

    #[test]
    fn a_step_on_an_unknown_object_is_an_error() {
        let unknown = key("pool", "nope");
        assert_eq!(
            apply_order(&graph(), &[step(Action::Create, &unknown)]),
            Err(GraphError::UnknownObject(unknown))
        );
    }

    /// Objects 0..n where each may have a parent with a lower number, so the graph is a forest.
    fn forest() -> impl Strategy<Value = Vec<Option<usize>>> {
        prop::collection::vec((any::<bool>(), any::<Index>()), 1..10).prop_map(|nodes| {
            nodes
                .iter()
                .enumerate()
                .map(|(i, (has_parent, parent))| (i > 0 && *has_parent).then(|| parent.index(i)))
                .collect()
        })
    }

    fn is_ancestor(parents: &[Option<usize>], ancestor: usize, mut node: usize) -> bool {
        while let Some(parent) = parents[node] {
            if parent == ancestor {
                return true;
            }
            node = parent;
        }
        false
    }

    /// The rules of `apply_order`, restated over the parent array.
    fn must_run_before(
        parents: &[Option<usize>],
        first: (usize, Action),
        then: (usize, Action),
    ) -> bool {
        use Action::{Create, Delete, Update};
        match (first, then) {
            ((a, Create), (b, Create | Update)) => is_ancestor(parents, a, b),
            ((a, Delete), (b, Create | Update)) => a == b,
            ((a, Delete), (b, Delete)) => is_ancestor(parents, b, a),
            _ => false,
        }
    }

    proptest! {
        #[test]
        fn the_order_is_the_earliest_permutation_respecting_every_rule(
            parents in forest(),
            raw_steps in prop::collection::vec((any::<Index>(), 0..3u8), 0..20),
        ) {
            let object = |i: usize| key("object", &i.to_string());
            let mut graph = ObjectGraph::new();
            for (i, parent) in parents.iter().enumerate() {
                graph.add(object(i), parent.map(object).as_ref());
            }
            let steps: Vec<(usize, Action)> = raw_steps
                .iter()
                .map(|(node, action)| {
                    let action = [Action::Create, Action::Update, Action::Delete][*action as usize];
                    (node.index(parents.len()), action)
                })
                .collect();
            let as_steps: Vec<Step> = steps.iter().map(|&(n, a)| step(a, &object(n))).collect();

            let order = apply_order(&graph, &as_steps).unwrap();

            let mut sorted = order.clone();
            sorted.sort_unstable();
            prop_assert_eq!(sorted, (0..steps.len()).collect::<Vec<_>>());
            // Each position holds the earliest step whose prerequisites have all run: this
            // checks every constraint and that nothing moved without one forcing it.
            let mut done = vec![false; steps.len()];
            for &chosen in &order {
                let earliest_ready = (0..steps.len()).find(|&j| {
                    !done[j]
                        && (0..steps.len())
                            .all(|i| done[i] || !must_run_before(&parents, steps[i], steps[j]))
                });
                prop_assert_eq!(Some(chosen), earliest_ready);
                done[chosen] = true;
            }
        }
    }
}
