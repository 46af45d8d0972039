//! The states a rule's VMs report: their own, or `Stopped` once `unhealthy-after-change`
//! picked the rule at a change, until a server starts without the fault.

use super::{id, TestSim};
use crate::cloudstack::SimOptions;

async fn sim_with(faults: &str) -> TestSim {
    let faults = faults.parse().unwrap();
    TestSim::with(SimOptions {
        faults,
        ..SimOptions::default()
    })
    .await
}

/// A rule named `name` with the fresh account's VMs web-1 and web-2 assigned; its id.
async fn rule_with_vms(sim: &TestSim, name: &str, port: &str) -> String {
    let ip = id(&sim.new_ip().await);
    let params = [
        ("name", name),
        ("publicipid", ip.as_str()),
        ("publicport", port),
        ("privateport", "30080"),
        ("algorithm", "roundrobin"),
    ];
    let created = sim.done("createLoadBalancerRule", &params).await;
    let rule = id(&created["loadbalancer"]);
    let vms = sim.list("listVirtualMachines", "virtualmachine", &[]).await;
    let vm_ids: Vec<String> = vms.iter().map(id).collect();
    let assign = [
        ("id", rule.as_str()),
        ("virtualmachineids", &vm_ids.join(",")),
    ];
    sim.done("assignToLoadBalancerRule", &assign).await;
    rule
}

async fn member_states(sim: &TestSim, rule: &str) -> Vec<String> {
    let members = sim
        .list(
            "listLoadBalancerRuleInstances",
            "loadbalancerruleinstance",
            &[("id", rule)],
        )
        .await;
    members
        .iter()
        .map(|vm| vm["state"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn the_named_rules_vms_report_stopped_after_a_change_and_the_others_running() {
    let sim = sim_with("unhealthy-after-change=web-tcp-80").await;
    let web = rule_with_vms(&sim, "web-tcp-80", "80").await;
    let api = rule_with_vms(&sim, "api-tcp-81", "81").await;
    assert_eq!(member_states(&sim, &web).await, ["Stopped", "Stopped"]);
    assert_eq!(member_states(&sim, &api).await, ["Running", "Running"]);
    // The VMs themselves are not stopped: only the picked rule reports them so.
    let vms = sim.list("listVirtualMachines", "virtualmachine", &[]).await;
    assert!(vms.iter().all(|vm| vm["state"] == "Running"));
}

#[tokio::test]
async fn a_certain_share_picks_every_changed_rule_and_a_null_share_none() {
    let always = sim_with("unhealthy-after-change=1").await;
    let rule = rule_with_vms(&always, "a-tcp-80", "80").await;
    assert_eq!(member_states(&always, &rule).await, ["Stopped", "Stopped"]);
    let never = sim_with("unhealthy-after-change=0").await;
    let rule = rule_with_vms(&never, "a-tcp-80", "80").await;
    assert_eq!(member_states(&never, &rule).await, ["Running", "Running"]);
}

#[tokio::test]
async fn a_server_started_without_the_fault_reports_the_vms_own_state() {
    let sim = sim_with("unhealthy-after-change=web-tcp-80").await;
    let web = rule_with_vms(&sim, "web-tcp-80", "80").await;
    assert_eq!(member_states(&sim, &web).await, ["Stopped", "Stopped"]);
    let again = sim.restart(SimOptions::default()).await;
    assert_eq!(member_states(&again, &web).await, ["Running", "Running"]);
}
