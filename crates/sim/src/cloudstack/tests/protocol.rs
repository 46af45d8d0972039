//! Signatures, envelopes, errors, paging, the catalog, persistence and request counts.

use serde_json::json;

use super::{TestSim, JOB_TIME};
use crate::cloudstack::signing::signature_of;
use crate::cloudstack::{spawn, SimOptions, DEFAULT_API_KEY, DEFAULT_SECRET_KEY};

#[tokio::test]
async fn a_wrong_secret_is_401_with_the_error_envelope() {
    let sim = TestSim::start().await;
    let answer = sim.call_with_secret("listZones", &[], "wrong").await;
    assert_eq!(answer.status, 401);
    let error = &answer.body["listzonesresponse"];
    assert_eq!(error["errorcode"], 401);
    assert_eq!(
        error["errortext"],
        "unable to verify user credentials and/or request signature"
    );
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn signed(mut list: Vec<(String, String)>) -> Vec<(String, String)> {
    let signature = signature_of(&list, DEFAULT_SECRET_KEY);
    list.push(("signature".into(), signature));
    list
}

#[tokio::test]
async fn expired_requests_are_401_and_rfc3339_expiry_is_accepted() {
    let sim = TestSim::start().await;
    let base = |expires: &str| {
        signed(pairs(&[
            ("command", "listZones"),
            ("response", "json"),
            ("apikey", DEFAULT_API_KEY),
            ("signatureversion", "3"),
            ("expires", expires),
        ]))
    };
    assert_eq!(
        sim.send(&base("2020-01-01T00:00:00+0000")).await.status,
        401
    );
    assert_eq!(sim.send(&base("2099-01-01T00:00:00Z")).await.status, 200);
    // Version 3 without expires is refused; without a version expiry is not checked.
    let no_expiry = signed(pairs(&[
        ("command", "listZones"),
        ("apiKey", DEFAULT_API_KEY),
        ("signatureVersion", "3"),
    ]));
    assert_eq!(sim.send(&no_expiry).await.status, 401);
    let plain = signed(pairs(&[
        ("command", "listZones"),
        ("apiKey", DEFAULT_API_KEY),
    ]));
    assert_eq!(sim.send(&plain).await.status, 200);
}

#[tokio::test]
async fn a_tampered_parameter_breaks_the_signature() {
    let sim = TestSim::start().await;
    let mut request = signed(pairs(&[
        ("command", "listZones"),
        ("apiKey", DEFAULT_API_KEY),
        ("name", "zone1"),
    ]));
    assert_eq!(sim.send(&request).await.status, 200);
    request[2].1 = "zone2".into();
    assert_eq!(sim.send(&request).await.status, 401);
}

#[tokio::test]
async fn post_forms_are_accepted() {
    let sim = TestSim::start().await;
    let request = signed(pairs(&[
        ("command", "listZones"),
        ("response", "json"),
        ("apiKey", DEFAULT_API_KEY),
    ]));
    let response = reqwest::Client::new()
        .post(sim.handle.base_url())
        .form(&request)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["listzonesresponse"]["zone"][0]["name"], "zone1");
}

#[tokio::test]
async fn unknown_commands_are_432_and_unknown_parameters_ignored() {
    let sim = TestSim::start().await;
    let answer = sim.call("listWidgets", &[]).await;
    assert_eq!(answer.status, 432);
    assert_eq!(answer.body["listwidgetsresponse"]["errorcode"], 432);
    let zones = sim.ok("listZones", &[("frobnicate", "yes")]).await;
    assert_eq!(zones["count"], 1);
}

#[tokio::test]
async fn lists_count_the_total_and_empty_lists_are_empty_objects() {
    let sim = TestSim::start().await;
    let offerings = sim.ok("listServiceOfferings", &[]).await;
    assert_eq!(offerings["count"], 5);
    let none = sim
        .ok("listLoadBalancerRules", &[("listall", "true")])
        .await;
    assert_eq!(none, json!({}));
    let missing = sim.call("listZones", &[("page", "1")]).await;
    assert_eq!(missing.status, 431);
    assert_eq!(
        missing.inner()["errortext"],
        "\"pagesize\" parameter is required when \"page\" is specified"
    );
    let too_big = sim
        .call("listZones", &[("page", "1"), ("pagesize", "501")])
        .await;
    assert_eq!(too_big.status, 431);
    assert_eq!(too_big.inner()["cserrorcode"], 4350);
}

#[tokio::test]
async fn the_default_page_size_caps_lists_but_count_is_the_total() {
    let sim = TestSim::with(SimOptions {
        page_size: 2,
        ..SimOptions::default()
    })
    .await;
    let page = sim.ok("listServiceOfferings", &[]).await;
    assert_eq!(page["count"], 5);
    assert_eq!(page["serviceoffering"].as_array().unwrap().len(), 2);
    let third = sim
        .ok("listServiceOfferings", &[("page", "3"), ("pagesize", "2")])
        .await;
    assert_eq!(third["serviceoffering"][0]["name"], "Custom Instance");
}

#[tokio::test]
async fn the_catalog_of_a_fresh_account() {
    let sim = TestSim::start().await;
    let versions = sim
        .list(
            "listKubernetesSupportedVersions",
            "kubernetessupportedversion",
            &[],
        )
        .await;
    let enabled: Vec<_> = versions
        .iter()
        .filter(|v| v["state"] == "Enabled")
        .map(|v| v["semanticversion"].as_str().unwrap())
        .collect();
    assert_eq!(enabled, ["1.28.15", "1.29.3", "1.29.10", "1.30.5"]);
    let capabilities = sim.ok("listCapabilities", &[]).await;
    assert_eq!(capabilities["capability"]["cloudstackversion"], "4.22.0.0");
    assert_eq!(capabilities["capability"]["kubernetesserviceenabled"], true);
    let settings = sim
        .ok(
            "listConfigurations",
            &[("name", "cloud.kubernetes.cluster.max.size")],
        )
        .await;
    assert_eq!(settings["configuration"][0]["value"], "10");
    let networks = sim.list("listNetworks", "network", &[]).await;
    let services: Vec<_> = networks[0]["service"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(["Lb", "Firewall", "SourceNat", "Dns"]
        .iter()
        .all(|s| services.contains(s)));
    let vms = sim.list("listVirtualMachines", "virtualmachine", &[]).await;
    assert_eq!(vms.len(), 2);
    assert_eq!(vms[0]["nic"][0]["networkid"], networks[0]["id"]);
    assert_eq!(vms[0]["hypervisor"], "KVM");
    let ips = sim
        .list("listPublicIpAddresses", "publicipaddress", &[])
        .await;
    assert_eq!(ips.len(), 1, "only the source-NAT address is allocated");
    assert_eq!(ips[0]["issourcenat"], true);
    let keys = sim.list("listSSHKeyPairs", "sshkeypair", &[]).await;
    assert_eq!(keys[0]["name"], "ops");
}

#[tokio::test]
async fn public_ips_are_minted_past_the_pool() {
    let sim = TestSim::start().await;
    let network = sim.network().await;
    let mut last = None;
    // 252 free addresses in the pool, then new ones.
    for _ in 0..260 {
        let started = sim
            .ok("associateIpAddress", &[("networkid", &network)])
            .await;
        last = Some(started["jobid"].as_str().unwrap().to_owned());
    }
    sim.wait(&last.unwrap()).await;
    let all = sim
        .ok(
            "listPublicIpAddresses",
            &[("page", "1"), ("pagesize", "500")],
        )
        .await;
    assert_eq!(all["count"], 261);
    let mut addresses: Vec<_> = all["publicipaddress"]
        .as_array()
        .unwrap()
        .iter()
        .map(|ip| ip["ipaddress"].as_str().unwrap().to_owned())
        .collect();
    addresses.sort();
    addresses.dedup();
    assert_eq!(addresses.len(), 261);
}

#[tokio::test]
async fn the_world_survives_a_restart_and_keeps_the_version_setting() {
    let sim = TestSim::with(SimOptions {
        version: "4.19.1.0".into(),
        ..SimOptions::default()
    })
    .await;
    let ip = sim.new_ip().await;
    let world = sim.world.clone();
    let TestSim { handle, _dir, .. } = sim;
    handle.shutdown().await.unwrap();
    let text = std::fs::read_to_string(&world).unwrap();
    assert!(text.contains(ip["ipaddress"].as_str().unwrap()));
    assert!(text.contains("4.19.1.0"));
    let again = spawn(
        world.clone(),
        "127.0.0.1:0".parse().unwrap(),
        SimOptions {
            job_time: JOB_TIME,
            ..SimOptions::default()
        },
    )
    .await
    .unwrap();
    again.shutdown().await.unwrap();
    let text = std::fs::read_to_string(&world).unwrap();
    assert!(text.contains(ip["id"].as_str().unwrap()));
}

#[tokio::test]
async fn requests_are_counted_by_command() {
    let sim = TestSim::start().await;
    sim.ok("listZones", &[]).await;
    sim.ok("listZones", &[]).await;
    sim.call("listNetworks", &[]).await;
    assert_eq!(sim.handle.request_count(), 3);
    let url = sim
        .handle
        .base_url()
        .replace("/client/api", "/_sim/requests");
    let counts: serde_json::Value = reqwest::get(url).await.unwrap().json().await.unwrap();
    assert_eq!(counts["by_command"]["listZones"], 2);
    assert_eq!(counts["total"], 3);
}

#[tokio::test]
async fn the_request_log_names_each_command_with_its_status_and_times() {
    let sim = TestSim::start().await;
    sim.ok("listZones", &[]).await;
    sim.call_with_secret("listNetworks", &[], "wrong-secret")
        .await;
    let requests_url = sim
        .handle
        .base_url()
        .replace("/client/api", "/_sim/requests");
    let client = reqwest::Client::new();
    let counts: serde_json::Value = client
        .get(&requests_url)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let log = counts["log"].as_array().unwrap();
    let seen: Vec<String> = log
        .iter()
        .map(|r| {
            format!(
                "{} {} {} {}",
                r["method"], r["path"], r["route"], r["status"]
            )
        })
        .collect();
    let expected = [
        r#""GET" "/client/api" "listZones" 200"#,
        r#""GET" "/client/api" "listNetworks" 401"#,
    ];
    assert_eq!(seen, expected);
    let times: Vec<(f64, f64)> = log
        .iter()
        .map(|r| {
            (
                r["started_ms"].as_f64().unwrap(),
                r["ended_ms"].as_f64().unwrap(),
            )
        })
        .collect();
    let (first, second) = (times[0], times[1]);
    assert!(
        first.0 <= first.1 && first.1 <= second.0 && second.0 <= second.1,
        "{times:?}"
    );
    let reset = client
        .post(format!("{requests_url}/reset"))
        .send()
        .await
        .unwrap();
    assert_eq!(reset.status(), 204);
    assert!(sim.handle.requests().log.is_empty());
}

#[test]
fn options_debug_hides_the_secret() {
    let options = SimOptions {
        secret_key: Some("top-secret".into()),
        ..SimOptions::default()
    };
    assert!(!format!("{options:?}").contains("top-secret"));
}
