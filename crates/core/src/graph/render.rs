//! Text renderings of the graph. Nodes are numbered in key order and edges sorted, so the
//! output depends only on the graph's content, never on the order objects were added in.

use std::collections::HashMap;
use std::fmt::Write;

use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;

use super::object_graph::ObjectGraph;

impl ObjectGraph {
    /// Graphviz DOT, edges pointing from an object to those that depend on it.
    pub fn to_dot(&self) -> String {
        let (labels, edges) = self.sorted();
        let mut out = String::from("digraph skyplan {\n");
        for (id, label) in labels.iter().enumerate() {
            let label = label.replace('\\', "\\\\").replace('"', "\\\"");
            writeln!(out, "  n{id} [label=\"{label}\"];").expect("writing to a String");
        }
        for (from, to) in edges {
            writeln!(out, "  n{from} -> n{to};").expect("writing to a String");
        }
        out.push_str("}\n");
        out
    }

    /// A Mermaid flowchart, top-down, edges pointing from an object to those that depend on it.
    pub fn to_mermaid(&self) -> String {
        let (labels, edges) = self.sorted();
        let mut out = String::from("flowchart TD\n");
        for (id, label) in labels.iter().enumerate() {
            // Mermaid has no backslash escapes inside quoted labels, only HTML entities.
            let label = label.replace('"', "#quot;");
            writeln!(out, "  n{id}[\"{label}\"]").expect("writing to a String");
        }
        for (from, to) in edges {
            writeln!(out, "  n{from} --> n{to}").expect("writing to a String");
        }
        out
    }

    /// Node labels in key order, and edges as sorted pairs of positions in that order.
    fn sorted(&self) -> (Vec<String>, Vec<(usize, usize)>) {
        let graph = self.graph();
        let mut nodes: Vec<NodeIndex> = graph.node_indices().collect();
        nodes.sort_by(|a, b| graph[*a].cmp(&graph[*b]));
        let position: HashMap<NodeIndex, usize> =
            nodes.iter().enumerate().map(|(i, &n)| (n, i)).collect();
        let mut edges: Vec<(usize, usize)> = graph
            .edge_references()
            .map(|e| (position[&e.source()], position[&e.target()]))
            .collect();
        edges.sort_unstable();
        let labels = nodes.iter().map(|&n| graph[n].to_string()).collect();
        (labels, edges)
    }
}

#[cfg(test)]
mod tests {
    use crate::graph::{ObjectGraph, ObjectKey};
    use crate::model::{Address, ResourceKind};

    /// Added in an order unlike the key order, with a quote in one name.
    fn graph() -> ObjectGraph {
        let key = |kind: &str, name: &str| {
            ObjectKey::new(Address::new(ResourceKind::LoadBalancer, "web"), kind, name)
        };
        let mut graph = ObjectGraph::new();
        graph.add(key("pool", "tcp/80"), Some(&key("load-balancer", "web")));
        graph.add(key("member", "10.0.0.1"), Some(&key("pool", "tcp/80")));
        graph.add(key("listener", "say \"hi\""), Some(&key("pool", "tcp/80")));
        graph
    }

    #[test]
    fn dot_lists_nodes_in_key_order_with_escaped_labels() {
        assert_eq!(
            graph().to_dot(),
            r#"digraph skyplan {
  n0 [label="load-balancer.web listener say \"hi\""];
  n1 [label="load-balancer.web load-balancer web"];
  n2 [label="load-balancer.web member 10.0.0.1"];
  n3 [label="load-balancer.web pool tcp/80"];
  n1 -> n3;
  n3 -> n0;
  n3 -> n2;
}
"#
        );
    }

    #[test]
    fn mermaid_is_a_top_down_flowchart_with_quoted_labels() {
        assert_eq!(
            graph().to_mermaid(),
            r#"flowchart TD
  n0["load-balancer.web listener say #quot;hi#quot;"]
  n1["load-balancer.web load-balancer web"]
  n2["load-balancer.web member 10.0.0.1"]
  n3["load-balancer.web pool tcp/80"]
  n1 --> n3
  n3 --> n0
  n3 --> n2
"#
        );
    }
}
