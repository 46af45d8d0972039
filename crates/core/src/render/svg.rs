//! The plan's dependency graph as inline SVG, for the HTML report: one node per resource of the
//! plan (no-ops included), filled with its class's colour, and an arrow from each resource to
//! what it depends on. Every node carries its address, action and class as attributes
//! (`data-address`, `data-action`, `data-impact`, `class="node impact-<class>"`), so that the
//! picture can be checked as well as looked at.

use std::fmt::Write;

use super::escape::html;
use super::layout::{layout, Dependencies, NodeBox, NODE_HEIGHT};
use super::view::{ChangeView, PlanView};
use crate::model::Impact;
use crate::plan::Action;

/// Each class's one colour, in the graph and on the badges. A no-op is `none` and shares its
/// colour (and is drawn with a dashed outline).
pub fn impact_colour(impact: Impact) -> &'static str {
    match impact {
        Impact::None => "#a3d9a5",
        Impact::Minimal => "#8ec5ff",
        Impact::PoolRecreate => "#ffc46b",
        Impact::Forbidden => "#ff7b72",
    }
}

pub(super) fn graph(view: &PlanView, dependencies: &Dependencies) -> String {
    let addresses: Vec<&str> = view.changes.iter().map(|c| c.address.as_str()).collect();
    let laid = layout(&addresses, dependencies);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"dependency-graph\" width=\"{w}\" \
         height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"The plan's {n} \
         resources and what each depends on\">",
        w = laid.width,
        h = laid.height,
        n = addresses.len()
    );
    out.push_str(
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" \
         markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M 0 0 L 10 5 L 0 10 z\" \
         fill=\"#57606a\"/></marker></defs>\n",
    );
    out.push_str("<g class=\"edges\">\n");
    for &(from, to) in &laid.edges {
        edge(
            &mut out,
            view,
            (from, laid.nodes[from]),
            (to, laid.nodes[to]),
            laid.node_width,
        );
    }
    out.push_str("</g>\n<g class=\"nodes\">\n");
    for (change, at) in view.changes.iter().zip(&laid.nodes) {
        node(&mut out, change, at, laid.node_width);
    }
    out.push_str("</g>\n</svg>\n");
    out
}

/// From the dependent's top to the bottom of what it depends on, which is always above it: a
/// straight line to the layer just above, a curve around the right of the boxes between
/// further up (a straight line would run behind them and seem to end there).
fn edge(
    out: &mut String,
    view: &PlanView,
    (from, dependent): (usize, NodeBox),
    (to, dependency): (usize, NodeBox),
    width: u32,
) {
    let (x1, y1) = (dependent.x + width / 2, dependent.y);
    let (x2, y2) = (dependency.x + width / 2, dependency.y + NODE_HEIGHT);
    let d = if dependent.layer - dependency.layer <= 1 {
        format!("M {x1} {y1} L {x2} {y2}")
    } else {
        // A cubic curve reaches 3/4 of its control points' offset: past the boxes' edge.
        let bulge = width * 2 / 3 + 32;
        format!(
            "M {x1} {y1} C {} {} {} {} {x2} {y2}",
            x1 + bulge,
            y1 - NODE_HEIGHT,
            x2 + bulge,
            y2 + NODE_HEIGHT
        )
    };
    let _ = writeln!(
        out,
        "<path class=\"edge\" data-from=\"{}\" data-to=\"{}\" d=\"{d}\" fill=\"none\" \
         stroke=\"#57606a\" stroke-width=\"1.5\" marker-end=\"url(#arrow)\"/>",
        html(&view.changes[from].address),
        html(&view.changes[to].address),
    );
}

fn node(out: &mut String, change: &ChangeView, at: &NodeBox, width: u32) {
    let class = change.impact;
    let dashed = match change.action {
        Action::NoOp => " stroke-dasharray=\"4 3\"",
        _ => "",
    };
    let _ = writeln!(
        out,
        "<g class=\"node impact-{class}\" data-address=\"{address}\" data-action=\"{action}\" \
         data-impact=\"{class}\"><title>{address}: {action}, {class}</title>\
         <rect x=\"{x}\" y=\"{y}\" width=\"{width}\" height=\"{NODE_HEIGHT}\" rx=\"6\" \
         fill=\"{fill}\" stroke=\"#24292f\"{dashed}/>\
         <text x=\"{cx}\" y=\"{ty}\" text-anchor=\"middle\" class=\"address\">{address}</text>\
         <text x=\"{cx}\" y=\"{ay}\" text-anchor=\"middle\" class=\"action\">{action} · {class}</text></g>",
        address = html(&change.address),
        action = change.action.as_str(),
        fill = impact_colour(class),
        x = at.x,
        y = at.y,
        cx = at.x + width / 2,
        ty = at.y + 19,
        ay = at.y + 35,
    );
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{dependencies, reviewed};
    use super::*;

    #[test]
    fn one_node_per_resource_filled_with_its_class() {
        let svg = graph(&reviewed(), &dependencies());
        assert_eq!(svg.matches("<g class=\"node ").count(), 4, "{svg}");
        for (address, class) in [
            ("load-balancer.api", Impact::None),
            ("load-balancer.docs", Impact::None),
            ("load-balancer.shop", Impact::Forbidden),
            ("load-balancer.web", Impact::PoolRecreate),
        ] {
            let node = svg
                .lines()
                .find(|l| l.contains(&format!("data-address=\"{address}\"")))
                .unwrap();
            assert!(node.contains(&format!("data-impact=\"{class}\"")), "{node}");
            assert!(
                node.contains(&format!("fill=\"{}\"", impact_colour(class))),
                "{node}"
            );
        }
        assert_eq!(svg.matches("<path class=\"edge\"").count(), 3, "{svg}");
    }

    #[test]
    fn every_class_has_its_own_colour() {
        let colours: std::collections::BTreeSet<_> =
            Impact::ALL.into_iter().map(impact_colour).collect();
        assert_eq!(colours.len(), Impact::ALL.len());
    }
}
