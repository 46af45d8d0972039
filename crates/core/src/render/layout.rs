//! The dependency graph of a plan laid out for drawing: each resource in a layer by its
//! dependency depth (what depends on nothing at the top, each dependent below everything it
//! depends on), a layer's resources by address, left to right, wrapped into rows of
//! [`PER_ROW`] so that a wide plan grows down, not sideways. Deterministic: the same plan and
//! dependencies always give the same picture.

use std::collections::{BTreeMap, HashMap};

/// What each resource depends on, by address: the config's `depends_on`, or the state's for a
/// resource the config no longer has (as apply orders them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dependencies(pub BTreeMap<String, Vec<String>>);

pub(super) const NODE_HEIGHT: u32 = 44;
const NODE_GAP: u32 = 24;
const ROW_GAP: u32 = 28;
const LAYER_GAP: u32 = 64;
const MARGIN: u32 = 16;
/// At most this many resources side by side.
pub(super) const PER_ROW: usize = 5;
/// The width of one character of an address, in the 13 px monospace font the nodes use.
const CHAR_WIDTH: u32 = 8;

#[derive(Debug, PartialEq, Eq)]
pub(super) struct Layout {
    /// One per address given, in the same order.
    pub nodes: Vec<NodeBox>,
    /// Each from a dependent to what it depends on, both drawn.
    pub edges: Vec<(usize, usize)>,
    pub node_width: u32,
    pub width: u32,
    pub height: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct NodeBox {
    pub layer: usize,
    pub x: u32,
    pub y: u32,
}

/// Lays out `addresses` (the plan's resources, sorted) with the edges among them.
pub(super) fn layout(addresses: &[&str], dependencies: &Dependencies) -> Layout {
    let index: HashMap<&str, usize> = addresses.iter().enumerate().map(|(i, a)| (*a, i)).collect();
    let needs: Vec<Vec<usize>> = addresses
        .iter()
        .map(|address| {
            let mut on: Vec<usize> = dependencies
                .0
                .get(*address)
                .into_iter()
                .flatten()
                .filter_map(|d| index.get(d.as_str()).copied())
                .collect();
            on.sort_unstable();
            on.dedup();
            on
        })
        .collect();
    let depths = depths(&needs);
    let longest = addresses
        .iter()
        .map(|a| a.chars().count())
        .max()
        .unwrap_or(0);
    let node_width = (longest as u32 * CHAR_WIDTH + 2 * MARGIN).max(160);
    let mut nodes = vec![
        NodeBox {
            layer: 0,
            x: 0,
            y: 0
        };
        addresses.len()
    ];
    let mut y = MARGIN;
    let layers = depths.iter().max().map_or(0, |d| d + 1);
    for layer in 0..layers {
        let members: Vec<usize> = (0..addresses.len())
            .filter(|&i| depths[i] == layer)
            .collect();
        for row in members.chunks(PER_ROW) {
            for (column, &i) in row.iter().enumerate() {
                let x = MARGIN + column as u32 * (node_width + NODE_GAP);
                nodes[i] = NodeBox { layer, x, y };
            }
            y += NODE_HEIGHT + ROW_GAP;
        }
        y += LAYER_GAP - ROW_GAP;
    }
    let columns = addresses.len().clamp(1, PER_ROW) as u32;
    let edges = needs
        .iter()
        .enumerate()
        .flat_map(|(from, on)| on.iter().map(move |&to| (from, to)))
        .collect();
    Layout {
        nodes,
        edges,
        node_width,
        width: 2 * MARGIN + columns * node_width + (columns - 1) * NODE_GAP,
        height: (y + MARGIN)
            .saturating_sub(LAYER_GAP)
            .max(NODE_HEIGHT + 2 * MARGIN),
    }
}

/// Each resource's depth: 0 when it depends on nothing drawn, else one more than the deepest
/// of what it depends on. A cycle (which the config refuses) is cut where it closes, so that a
/// broken input still draws.
fn depths(needs: &[Vec<usize>]) -> Vec<usize> {
    #[derive(Clone, Copy, PartialEq)]
    enum Seen {
        No,
        Visiting,
        Done(usize),
    }
    fn visit(i: usize, needs: &[Vec<usize>], seen: &mut [Seen]) -> usize {
        match seen[i] {
            Seen::Done(depth) => return depth,
            Seen::Visiting => return 0,
            Seen::No => {}
        }
        seen[i] = Seen::Visiting;
        let mut depth = 0;
        for &on in &needs[i] {
            if seen[on] != Seen::Visiting {
                depth = depth.max(visit(on, needs, seen) + 1);
            }
        }
        seen[i] = Seen::Done(depth);
        depth
    }
    let mut seen = vec![Seen::No; needs.len()];
    (0..needs.len())
        .map(|i| visit(i, needs, &mut seen))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dependencies(edges: &[(&str, &[&str])]) -> Dependencies {
        Dependencies(
            edges
                .iter()
                .map(|(from, on)| (from.to_string(), on.iter().map(|s| s.to_string()).collect()))
                .collect(),
        )
    }

    #[test]
    fn dependents_sit_below_what_they_depend_on() {
        let addresses = ["cluster.prod", "load-balancer.store", "nodes.web", "x.y"];
        let laid = layout(
            &addresses,
            &dependencies(&[
                ("load-balancer.store", &["cluster.prod", "nodes.web"]),
                ("nodes.web", &["cluster.prod"]),
                ("x.y", &["not.in.the.plan"]),
            ]),
        );
        let layers: Vec<usize> = laid.nodes.iter().map(|n| n.layer).collect();
        assert_eq!(layers, [0, 2, 1, 0]);
        assert!(laid.nodes[0].y < laid.nodes[2].y && laid.nodes[2].y < laid.nodes[1].y);
        assert_eq!(laid.nodes[0].y, laid.nodes[3].y, "one layer, one row");
        assert!(
            laid.nodes[0].x < laid.nodes[3].x,
            "by address, left to right"
        );
        assert_eq!(
            laid.edges,
            [(1, 0), (1, 2), (2, 0)],
            "none to what is not drawn"
        );
    }

    #[test]
    fn a_wide_layer_wraps_into_rows_inside_the_picture() {
        let names: Vec<String> = (0..PER_ROW + 1).map(|i| format!("lb.{i}")).collect();
        let addresses: Vec<&str> = names.iter().map(String::as_str).collect();
        let laid = layout(&addresses, &Dependencies::default());
        assert_eq!(laid.nodes[PER_ROW].x, laid.nodes[0].x);
        assert!(laid.nodes[PER_ROW].y > laid.nodes[0].y);
        for node in &laid.nodes {
            assert!(node.x + laid.node_width <= laid.width);
            assert!(node.y + NODE_HEIGHT <= laid.height);
        }
    }

    #[test]
    fn a_cycle_still_draws() {
        let laid = layout(
            &["a.a", "b.b"],
            &dependencies(&[("a.a", &["b.b"]), ("b.b", &["a.a"])]),
        );
        assert_eq!(laid.nodes.len(), 2);
        assert_eq!(laid.edges.len(), 2);
    }

    #[test]
    fn the_same_input_gives_the_same_picture() {
        let deps = dependencies(&[("b.b", &["a.a"])]);
        assert_eq!(
            layout(&["a.a", "b.b"], &deps),
            layout(&["a.a", "b.b"], &deps)
        );
    }
}
