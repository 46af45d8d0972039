//! skyplan's own executor makes before it breaks: swapping a pool's members or moving them to
//! another node port creates the new members before the old ones go, so the pool never serves
//! from no member — proven by the simulator's request log, not by skyplan's word.

use crate::support::pools::{emptied, member_counts};
use crate::support::served::ServedCloud;

const PORT: &str = "[[load-balancer.web.ports]]\nname = \"http\"\nport = 80\n";

fn web(members: &str, node_port: u16) -> String {
    format!(
        "[load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [{members}]\n\n\
         {PORT}node-port = {node_port}\n"
    )
}

/// web applied with `before`, then configured with `after`: the apply's pools left empty.
fn emptied_by(
    before: (&str, u16),
    after: (&str, u16),
) -> (ServedCloud, Vec<crate::support::pools::Emptied>) {
    let cloud = ServedCloud::start();
    cloud.configure(&web(before.0, before.1));
    cloud.apply_ok();
    let counts = member_counts(&cloud.sim);
    assert_eq!(counts.values().sum::<usize>(), before.0.split(',').count());
    cloud.configure(&web(after.0, after.1));
    cloud.sim.reset_requests();
    cloud.apply_ok();
    let found = emptied(&counts, &cloud.sim.requests()["log"]);
    (cloud, found)
}

#[test]
fn swapping_every_member_never_leaves_the_pool_empty() {
    let (cloud, found) = emptied_by(("\"10.0.0.11\"", 30080), ("\"10.0.0.21\"", 30080));
    assert_eq!(found, [], "the pool served from no member");
    let members = cloud.sim.list("/load-balancers/pools");
    assert_eq!(members.len(), 1, "the pool was kept");
}

#[test]
fn moving_the_members_to_another_node_port_never_leaves_the_pool_empty() {
    let (_cloud, found) = emptied_by(
        ("\"10.0.0.11\", \"10.0.0.12\"", 30080),
        ("\"10.0.0.11\", \"10.0.0.12\"", 30081),
    );
    assert_eq!(found, [], "the pool served from no member");
}
