//! The async job lifecycle and the job faults.

use std::time::Duration;

use super::TestSim;
use crate::cloudstack::{Faults, SimOptions};

#[tokio::test]
async fn a_job_is_pending_then_done_and_the_world_changes_when_it_ends() {
    let sim = TestSim::with(SimOptions {
        job_time: Duration::from_millis(400),
        ..SimOptions::default()
    })
    .await;
    let network = sim.network().await;
    let started = sim
        .ok("associateIpAddress", &[("networkid", &network)])
        .await;
    let jobid = started["jobid"].as_str().unwrap();
    let ip_id = started["id"].as_str().unwrap();
    let pending = sim.ok("queryAsyncJobResult", &[("jobid", jobid)]).await;
    assert_eq!(pending["jobstatus"], 0);
    assert!(pending.get("jobresult").is_none());
    assert_eq!(pending["jobinstancetype"], "IpAddress");
    assert_eq!(pending["jobinstanceid"], ip_id);
    assert!(pending["cmd"]
        .as_str()
        .unwrap()
        .ends_with("AssociateIPAddrCmd"));
    let listed = sim
        .list("listPublicIpAddresses", "publicipaddress", &[("id", ip_id)])
        .await;
    assert_eq!(listed[0]["state"], "Allocating");
    let done = sim.wait(jobid).await;
    assert_eq!(done["jobstatus"], 1);
    assert_eq!(done["jobresultcode"], 0);
    assert_eq!(done["jobresult"]["ipaddress"]["id"], ip_id);
    assert_eq!(done["jobresult"]["ipaddress"]["state"], "Allocated");
    assert_eq!(
        done["jobresult"]["ipaddress"]["associatednetworkid"],
        network
    );
}

#[tokio::test]
async fn unknown_jobs_are_431() {
    let sim = TestSim::start().await;
    let answer = sim
        .call("queryAsyncJobResult", &[("jobid", "no-such-job")])
        .await;
    assert_eq!(answer.status, 431);
}

#[tokio::test]
async fn injected_job_failures_fail_with_530_and_undo_the_create() {
    let sim = TestSim::with(SimOptions {
        faults: "job-fail=1".parse::<Faults>().unwrap(),
        ..SimOptions::default()
    })
    .await;
    let network = sim.network().await;
    let job = sim
        .run("associateIpAddress", &[("networkid", &network)])
        .await;
    assert_eq!(job["jobstatus"], 2);
    assert_eq!(job["jobresultcode"], 530);
    assert_eq!(job["jobresult"]["errortext"], "simulated failure");
    let ips = sim
        .list("listPublicIpAddresses", "publicipaddress", &[])
        .await;
    assert_eq!(ips.len(), 1, "the address went back to the pool");
    assert_eq!(sim.handle.requests().job_failures, 1);
}

#[tokio::test]
async fn after_commit_faults_carry_the_call_out_but_lose_the_answer() {
    let sim = TestSim::with(SimOptions {
        faults: "after-commit=1".parse::<Faults>().unwrap(),
        ..SimOptions::default()
    })
    .await;
    let network = sim.network().await;
    let lost = sim
        .call("associateIpAddress", &[("networkid", &network)])
        .await;
    assert!(lost.status == 500 || lost.status == 0 || lost.body.is_null());
    tokio::time::sleep(Duration::from_millis(150)).await;
    let ips = sim
        .list("listPublicIpAddresses", "publicipaddress", &[])
        .await;
    assert_eq!(ips.len(), 2, "the address was associated all the same");
    assert!(ips
        .iter()
        .any(|ip| ip["issourcenat"] == false && ip["state"] == "Allocated"));
}

#[tokio::test]
async fn only_creates_answer_with_an_id() {
    let sim = TestSim::start().await;
    let network = sim.network().await;
    let created = sim
        .ok("associateIpAddress", &[("networkid", &network)])
        .await;
    let ip = created["id"]
        .as_str()
        .expect("a create gives the new id")
        .to_owned();
    sim.wait(created["jobid"].as_str().unwrap()).await;
    let released = sim.ok("disassociateIpAddress", &[("id", &ip)]).await;
    assert!(released["jobid"].is_string());
    assert!(released.get("id").is_none(), "{released}");
}
