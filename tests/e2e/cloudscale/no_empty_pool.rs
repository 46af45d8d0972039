//! The property behind make-before-break, over generated changes: whatever a config change
//! does to a direct-mode load balancer — members, node port, port name and number, algorithm —
//! the simulator's request log of its apply never shows a pool that had members left without
//! any, unless the plan said so (a pool recreated, or a port said to serve nothing).

use proptest::prelude::*;
use serde_json::Value;

use crate::support::pools::{emptied, member_counts};
use crate::support::served::ServedCloud;

#[derive(Debug, Clone)]
struct Shape {
    members: Vec<u8>,
    node_port: u16,
    port_name: &'static str,
    port: u16,
    algorithm: &'static str,
}

impl Shape {
    fn config(&self) -> String {
        let members: Vec<String> = (self.members.iter())
            .map(|m| format!("\"10.0.0.{m}\""))
            .collect();
        format!(
            "[load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [{}]\nalgorithm = \"{}\"\n\n\
             [[load-balancer.web.ports]]\nname = \"{}\"\nport = {}\nnode-port = {}\n",
            members.join(", "),
            self.algorithm,
            self.port_name,
            self.port,
            self.node_port
        )
    }
}

fn shape() -> impl Strategy<Value = Shape> {
    (
        proptest::sample::subsequence(vec![11u8, 12, 13, 14], 1..=3),
        prop_oneof![Just(30080u16), Just(30081)],
        prop_oneof![Just("http"), Just("web")],
        prop_oneof![Just(80u16), Just(8080)],
        prop_oneof![Just("round_robin"), Just("source_ip")],
    )
        .prop_map(|(members, node_port, port_name, port, algorithm)| Shape {
            members,
            node_port,
            port_name,
            port,
            algorithm,
        })
}

/// Whether the plan says a pool of its change goes without serving: a class of pool-recreate
/// or above, or a reason that says a port serves nothing.
fn said_so(plan: &Value) -> bool {
    let changes = plan["changes"].as_array().unwrap();
    changes.iter().any(|c| {
        matches!(c["impact"].as_str(), Some("pool-recreate" | "forbidden"))
            || c["attributes"].to_string().contains("serves nothing")
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn an_apply_never_empties_a_pool_the_plan_did_not_say(before in shape(), after in shape()) {
        let cloud = ServedCloud::start();
        cloud.configure(&before.config());
        cloud.apply_ok();
        let counts = member_counts(&cloud.sim);
        cloud.configure(&after.config());
        let plan = cloud.skyplan(&["plan", "--json"]);
        prop_assert_eq!(plan.code, 0, "{:?}", plan);
        cloud.sim.reset_requests();
        cloud.apply_ok();
        let found = emptied(&counts, &cloud.sim.requests()["log"]);
        prop_assert!(
            found.is_empty() || said_so(&plan.json()),
            "{:?} → {:?}: pools left without members {:?}, and the plan did not say so: {:#}",
            before, after, found, plan.json()
        );
    }
}
