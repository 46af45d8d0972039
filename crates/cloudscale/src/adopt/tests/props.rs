//! The key invariant, over random specs the config can produce: a config generated for a live
//! load balancer plans nothing for it. The live objects are those skyplan's own mapping makes
//! of the spec (created through the API interpreter of `diff_props`), in direct mode made by
//! hand or by skyplan, in controller mode made by the CCM for the Service skyplan would write.

use proptest::prelude::*;

use super::*;
use crate::ccm::service::desired_body;
use crate::spec::TrafficPolicy;
use skyplan_core::plan::Action;
use skyplan_kubernetes::spec::{LbMode, ServiceBinding};

const UUID: &str = "0f8a1e36-5d4b-4c1e-9a51-0000000000f1";
const UID: &str = "3f1c2d4e-0000-4000-8000-0000000000f1";

/// The nodes whose servers hold `members` (10.0.0.1<i> is node-<i>'s).
fn nodes_of(members: &[String]) -> Vec<u8> {
    members
        .iter()
        .map(|m| {
            m.trim_start_matches("10.0.0.1")
                .parse()
                .expect("10.0.0.1<i>")
        })
        .collect()
}

/// The Service skyplan would write for `spec`, as the apiserver and the CCM leave it: with a
/// uid, its node ports, the health-check node port and the CCM's uuid annotation.
fn written(spec: &CloudscaleLoadBalancerSpec, binding: &ServiceBinding) -> Service {
    let mut body = desired_body(spec, binding, true);
    body["metadata"]["uid"] = json!(UID);
    body["metadata"]["annotations"]["k8s.cloudscale.ch/loadbalancer-uuid"] = json!(UUID);
    if let Some(port) = spec.health_check_node_port {
        body["spec"]["healthCheckNodePort"] = json!(port);
    }
    serde_json::from_value(body).expect("a Service")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn a_generated_direct_mode_config_plans_nothing(
        spec in made::spec(), placement in made::placement(), by_hand in any::<bool>()
    ) {
        let spec = made::placed(spec, &placement);
        // Made by skyplan it is adopted as the address its tag names.
        let mut live = created(&spec, UUID);
        let name = match by_hand {
            true => "adopted",
            false => "web",
        };
        if by_hand {
            live = untagged(live);
        }
        let survey = survey(vec![live.clone()], vec![]);
        let text = config_of(generated(name, UUID, &survey));
        let adopted = read(name, &text);
        prop_assert!(adopted.binding.is_none());
        let address = lb_address(name);
        let desired = crate::desired::desired_objects(&address, &adopted, &made::subnets())
            .expect("members in the subnet");
        let change = crate::diff::diff(&crate::diff::DiffInput {
            address: &address,
            desired: Some((&adopted, &desired)),
            prior: Some(&adopted),
            live: Some(&live),
            replace: false,
            allow_delete: false,
            tag: false,
        });
        prop_assert_eq!(change.action, Action::NoOp, "{:#?}\n{}", change, text);
        prop_assert!(change.operations.is_empty());
    }

    #[test]
    fn a_generated_controller_mode_config_plans_nothing(spec in made::spec()) {
        let mut spec = spec;
        let binding = ServiceBinding {
            cluster: cluster(),
            namespace: "default".into(),
            name: "shop".into(),
            mode: LbMode::Ccm,
        };
        if spec.traffic_policy == TrafficPolicy::Local {
            spec.health_check_node_port.get_or_insert(32100);
        }
        // The CCM's members are the nodes' servers' addresses; its node ports the Service's.
        let service = written(&spec, &binding);
        let live = untagged(created(&spec, UUID));
        let survey = survey(vec![live], vec![service.clone()]);
        let text = config_of(generated("shop", UUID, &survey));
        let adopted = read("shop", &text);
        prop_assert_eq!(adopted.binding.as_ref(), Some(&binding));
        let change = ccm_plan("shop", &adopted, &service, &survey, &nodes_of(&spec.members));
        prop_assert_eq!(change.action, Action::NoOp, "{:#?}\n{}", change, text);
        prop_assert!(change.operations.is_empty());
    }
}
