//! The PhoenixNAP example (`examples/phoenixnap`, its simulated account and cluster committed
//! under `state/phoenixnap/embedded`): planned and applied on the embedded default, then the
//! simulated cloud has one /29 with the CCM's four tags on the network and the Service carries
//! the third address; and no output at any verbosity shows the client secret or a token.

use std::path::{Path, PathBuf};

use crate::phoenixnap::support::{tags, third_address, Pnap, USAGE};
use crate::support::kube_sim::Kube;
use crate::support::{run, Project};

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        match entry.file_type().unwrap().is_dir() {
            true => copy_tree(&entry.path(), &target),
            false => drop(std::fs::copy(entry.path(), target).unwrap()),
        }
    }
}

/// A project holding a copy of the example and its simulated account and cluster.
fn example_project() -> (Project, PathBuf) {
    let project = Project::new();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = project.path().join("examples/phoenixnap");
    std::fs::create_dir_all(&example).unwrap();
    std::fs::copy(
        repo.join("examples/phoenixnap/skyplan.toml"),
        example.join("skyplan.toml"),
    )
    .unwrap();
    copy_tree(
        &repo.join("state/phoenixnap/embedded"),
        &project.path().join("state/phoenixnap/embedded"),
    );
    (project, example)
}

#[test]
fn pnap_example_applies_a_block_the_ccm_adopts() {
    let (project, example) = example_project();
    let plan = run(&mut project.command_with_config(&example, &["plan", "--json"]));
    assert_eq!(plan.code, 0, "{plan:?}");
    let change = crate::phoenixnap::support::api_change(&plan.json());
    assert_eq!(change["action"], "create");
    assert_eq!(change["impact"], "none");
    let mut all_output = String::new();
    for args in [
        &["-vv", "apply", "--auto-approve"][..],
        &["-vv", "plan", "--detailed-exitcode"],
        &["-vv", "drift", "--format", "json"],
    ] {
        let out = run(&mut project.command_with_config(&example, args));
        assert_eq!(out.code, 0, "{args:?}: {out:?}");
        if args[1] == "apply" {
            assert!(
                out.stdout.contains("load-balancer.api: as predicted"),
                "apply verifies itself: {out:?}"
            );
        }
        all_output.push_str(&out.stdout);
        all_output.push_str(&out.stderr);
    }
    let world = project.path().join("state/phoenixnap/embedded");
    let cloud = Pnap::start(&world.join("phoenixnap.json"));
    let blocks = cloud.blocks();
    assert_eq!(blocks.len(), 1, "{blocks:#?}");
    let block = &blocks[0];
    assert_eq!(block["cidrBlockSize"], "/29");
    assert_eq!(block["status"], "assigned");
    assert_eq!(
        block["assignedResourceId"],
        cloud.network("k8s-public")["id"]
    );
    let names: Vec<String> = tags(block)
        .iter()
        .map(|t| t.split('=').next().unwrap().to_string())
        .collect();
    assert_eq!(
        names,
        ["cluster", "serviceName", "serviceNamespace", "usage"]
    );
    assert!(tags(block).contains(&format!("usage={USAGE}")));
    let kube_sim = crate::support::kube_sim::KubeSim::start_on(&world.join("kubernetes/prod.json"));
    let service = Kube {
        url: kube_sim.url.clone(),
    }
    .service("api");
    let address = third_address(block["cidr"].as_str().unwrap());
    assert_eq!(service["spec"]["loadBalancerIP"], address.as_str());
    assert_eq!(
        service["status"]["loadBalancer"]["ingress"][0]["ip"],
        address.as_str(),
        "the simulated CCM adopted the block"
    );
    assert!(
        !all_output.contains("skyplan-sim-pnap-secret"),
        "the client secret leaked: {all_output}"
    );
    assert!(
        !has_hex_run(&all_output, 64),
        "something token-shaped (the simulator's tokens are 64 hex digits) leaked: {all_output}"
    );
    assert!(
        !all_output.to_lowercase().contains("bearer "),
        "a bearer token leaked: {all_output}"
    );
}

/// Whether `text` has `len` hex digits in a row (block ids have 24, UUIDs break at dashes).
fn has_hex_run(text: &str, len: usize) -> bool {
    let mut run = 0;
    for c in text.chars() {
        run = if c.is_ascii_hexdigit() { run + 1 } else { 0 };
        if run >= len {
            return true;
        }
    }
    false
}
