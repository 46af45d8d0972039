//! Property tests of the cluster plan against a small model of what CloudStack accepts
//! (research/cloudstack.md §3): a plan that is not forbidden only contains calls the server
//! accepts in that order, ends in the desired state, and never shows a lower class than what
//! its calls do.

use proptest::prelude::*;
use proptest::sample::select;

use super::*;
use crate::cluster::checks::{
    is_smaller, scales_running_vms, version_step, KubeVersion, VersionStep,
};
use crate::cluster::ClusterOp;
use crate::ops::Op;
use crate::spec::Autoscaling;
use skyplan_core::model::Impact;
use skyplan_core::plan::Action;

/// The cluster as the model server sees it.
#[derive(Debug, Clone)]
struct Model {
    state: String,
    size: u32,
    offering: String,
    version: String,
    autoscaling: Option<(u32, u32)>,
    hypervisor: String,
}

/// What the calls did to the workloads, to compare with the plan's class.
fn accept(model: &mut Model, op: &ClusterOp, inventory: &Inventory) -> Result<Impact, String> {
    let scalable = ["Created", "Running", "Stopped"].contains(&model.state.as_str());
    let running = model.state == "Running";
    match op {
        ClusterOp::ScaleOffering { offering, .. } => {
            if !scalable {
                return Err(format!("scale in state {}", model.state));
            }
            let old = inventory.offering_by_id(&model.offering).unwrap();
            let new = inventory.offering_by_id(&offering.id).unwrap();
            if running && !scales_running_vms(&model.hypervisor) {
                return Err("scaling running VMs on this hypervisor".into());
            }
            if running && is_smaller(new, old) {
                return Err("scale down while Running".into());
            }
            model.offering = offering.id.clone();
            Ok(if running {
                Impact::Minimal
            } else {
                Impact::None
            })
        }
        ClusterOp::ScaleSize { workers, .. } => {
            if !scalable || (model.state == "Stopped" && *workers != model.size) {
                return Err(format!("size in state {}", model.state));
            }
            let down = *workers < model.size;
            model.size = *workers;
            Ok(if down && running {
                Impact::Minimal
            } else {
                Impact::None
            })
        }
        ClusterOp::Autoscale {
            enabled, min, max, ..
        } => {
            if !running {
                return Err(format!("autoscaling in state {}", model.state));
            }
            model.autoscaling = enabled.then_some((*min, *max));
            Ok(Impact::None)
        }
        ClusterOp::Upgrade { version, .. } => {
            let from = KubeVersion::parse(&model.version).unwrap();
            let to = KubeVersion::parse(&version.name).unwrap();
            if !running || version_step(from, to) != VersionStep::Upgrade {
                return Err(format!("upgrade {from} → {to} in state {}", model.state));
            }
            model.version = version.name.clone();
            Ok(Impact::Minimal)
        }
        ClusterOp::Start { .. } => {
            if !["Created", "Stopped", "Alert"].contains(&model.state.as_str()) {
                return Err(format!("start in state {}", model.state));
            }
            model.state = "Running".into();
            Ok(Impact::PoolRecreate)
        }
        ClusterOp::Stop { .. } => {
            if !["Running", "Alert"].contains(&model.state.as_str()) {
                return Err(format!("stop in state {}", model.state));
            }
            model.state = "Stopped".into();
            Ok(Impact::PoolRecreate)
        }
        ClusterOp::Create(_) | ClusterOp::Delete { .. } => Err("not modelled".into()),
    }
}

const OFFERINGS: &[&str] = &["Small Instance", "Medium Instance", "Large Instance"];
const VERSIONS: &[&str] = &["1.28.5", "1.29.3", "1.29.5", "1.30.1", "1.31.0"];

fn specs() -> impl Strategy<Value = CloudstackClusterSpec> {
    (
        1u32..=5,
        select(OFFERINGS),
        select(VERSIONS),
        prop_oneof![Just(None), Just(Some((1, 4))), Just(Some((2, 6)))],
        any::<bool>(),
    )
        .prop_map(|(workers, offering, version, autoscaling, running)| {
            let mut spec = spec();
            spec.workers = workers;
            spec.service_offering = offering.into();
            spec.kubernetes_version = version.into();
            spec.autoscaling = autoscaling.map(|(min, max)| Autoscaling { min, max });
            spec.state = if running {
                ClusterRunState::Running
            } else {
                ClusterRunState::Stopped
            };
            spec
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn plans_that_may_run_are_accepted_converge_and_never_under_predict(
        applied in specs(),
        desired in specs(),
        hypervisor in select(&["KVM", "XenServer"][..]),
        live_size in 1u32..=6,
        unsettled in select(&[None, Some("Alert"), Some("Created")][..]),
    ) {
        let mut inventory = inventory();
        let mut live = live_cluster(&applied, &inventory);
        if applied.autoscaling.is_some() {
            live.size = live_size;
        }
        if let Some(state) = unsettled {
            live.state = state.into();
        }
        inventory.vms = vms(&live, hypervisor);
        inventory.clusters = vec![live.clone()];
        let Ok(change) = plan_with(&inventory, Some(&desired), Some(&applied), false, false) else {
            return Ok(());
        };
        prop_assert_ne!(change.action, Action::Create);
        if change.impact() == Impact::Forbidden {
            return Ok(());
        }
        let mut model = Model {
            state: live.state.clone(),
            size: live.size,
            offering: live.serviceofferingid.clone(),
            version: applied.kubernetes_version.clone(),
            autoscaling: applied.autoscaling.map(|a| (a.min, a.max)),
            hypervisor: hypervisor.into(),
        };
        let mut done = Impact::None;
        for operation in &change.operations {
            let Some(Op::Cluster(op)) = Op::of(operation) else {
                panic!("a cluster operation");
            };
            let effect = accept(&mut model, &op, &inventory);
            prop_assert!(effect.is_ok(), "{op} refused: {:?}\nops: {:?}", effect, change.operations);
            done = done.max(effect.unwrap());
        }
        prop_assert!(change.impact() >= done, "plan says {} but the calls do {done}: {:?}", change.impact(), change.attributes);
        let wanted_state = match desired.state {
            ClusterRunState::Running => "Running",
            ClusterRunState::Stopped => "Stopped",
        };
        // A cluster created but never started runs nothing: as good as stopped.
        let settled = if model.state == "Created" { "Stopped" } else { model.state.as_str() };
        prop_assert_eq!(settled, wanted_state);
        prop_assert_eq!(&model.offering, &inventory.offering(&desired.service_offering).unwrap().id);
        prop_assert_eq!(&model.version, &desired.kubernetes_version);
        prop_assert_eq!(model.autoscaling, desired.autoscaling.map(|a| (a.min, a.max)));
        if desired.autoscaling.is_none() {
            prop_assert_eq!(model.size, desired.workers);
        }
    }
}
