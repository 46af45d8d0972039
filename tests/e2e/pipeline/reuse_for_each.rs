//! `for-each` against the embedded cloudscale: one load balancer per item, addressed
//! `load-balancer.web["a"]` in the plan, the state, `--target`, `[[moved]]`, with cloud names
//! `web-a`; and each error at its place.

use crate::support::{Output, Project};

const PROVIDER: &str = "[provider.cloudscale]\nendpoint = \"embedded\"\n\n";

/// `web` per item of `for_each`, in the item's zone (a table of items) or lpg1.
fn web(for_each: &str, zone: &str) -> String {
    format!(
        "[load-balancer.web]\nprovider = \"cloudscale\"\nfor-each = {for_each}\nzone = \"{zone}\"\n\
         members = [\"10.0.0.11\"]\n\n\
         [[load-balancer.web.ports]]\nname = \"http-${{each.key}}\"\nport = 80\nnode-port = 30080\n\n"
    )
}

fn state_list(project: &Project) -> Vec<String> {
    let out = project.run(&["state", "list"]);
    assert_eq!(out.code, 0, "{out:?}");
    out.stdout.lines().map(str::to_string).collect()
}

fn invalid(out: &Output, place: &str, message: &str) {
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains(place), "{place} in {out:?}");
    assert!(out.stderr.contains(message), "{message} in {out:?}");
}

const A: &str = r#"load-balancer.web["a"]"#;
const B: &str = r#"load-balancer.web["b"]"#;

#[test]
fn one_load_balancer_per_item_with_a_valid_cloud_name_and_its_address_everywhere() {
    let project = Project::new();
    project.config(&format!(
        "{PROVIDER}{}",
        web(
            "{ a = { zone = \"lpg1\" }, b = { zone = \"rma1\" } }",
            "${each.value.zone}"
        )
    ));
    let plan = project.plan(&[]);
    let addresses: Vec<_> = (plan["changes"].as_array().unwrap().iter())
        .map(|c| c["address"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(addresses, [A, B]);

    let out = project.apply(&["--target", "load-balancer.web[a]"]);
    assert!(out.code == 0 || out.code == 4, "{out:?}");
    assert_eq!(state_list(&project), [A]);
    project.apply_ok();
    assert_eq!(state_list(&project), [A, B]);

    let world = project.world();
    let b = world.named("load_balancers", "web-b").expect("named web-b");
    assert_eq!(b["zone"], "rma1");
    assert_eq!(b["tags"]["skyplan.address"], B);
    assert!(world.named("load_balancers", "web-a").is_some());
    assert_eq!(project.run(&["plan", "--detailed-exitcode"]).code, 0);
    let targeted = project.plan(&["--target", B]);
    assert_eq!(
        targeted["changes"].as_array().unwrap().len(),
        1,
        "{targeted}"
    );
    assert_eq!(project.run(&["drift"]).code, 0);
}

#[test]
fn a_table_moved_into_a_for_each_keeps_its_load_balancer() {
    let project = Project::new();
    project.config(&format!(
        "{PROVIDER}{}",
        web("[\"a\"]", "lpg1")
            .replace("for-each = [\"a\"]\n", "name = \"web-a\"\n")
            .replace("${each.key}", "a")
    ));
    project.apply_ok();
    let before = project.world().all("load_balancers");
    project.config(&format!(
        "{PROVIDER}{}[[moved]]\nfrom = \"load-balancer.web\"\nto = '{A}'\n",
        web("[\"a\"]", "lpg1")
    ));
    let plan = project.plan(&[]);
    assert_eq!(
        plan["changes"][0]["moved_from"], "load-balancer.web",
        "{plan}"
    );
    assert_eq!(plan["summary"]["create"], 0, "{plan}");
    project.apply_ok();
    assert_eq!(state_list(&project), [A]);
    let after = project.world().all("load_balancers");
    assert_eq!(after[0]["uuid"], before[0]["uuid"]);
}

#[test]
fn an_empty_for_each_is_no_resource() {
    let project = Project::new();
    project.config(&format!("{PROVIDER}{}", web("[]", "lpg1")));
    let out = project.run(&["validate"]);
    assert!(out.stdout.contains("0 resources"), "{out:?}");
}

#[test]
fn a_key_twice_is_an_error_at_its_place() {
    let project = Project::new();
    project.config(&format!("{PROVIDER}{}", web("[\"a\", \"a\"]", "lpg1")));
    let out = project.run(&["validate"]);
    invalid(&out, "skyplan.toml:6:18", "`a` is in the for-each twice");
}

#[test]
fn each_outside_a_for_each_is_an_error_at_the_reference() {
    let project = Project::new();
    project.config(&format!(
        "{PROVIDER}[load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"${{each.key}}\"\n"
    ));
    let out = project.run(&["validate"]);
    invalid(
        &out,
        "skyplan.toml:6:9",
        "`${each.key}` is outside a table with for-each",
    );
}

#[test]
fn an_instance_whose_cloud_name_is_another_table_s_is_an_error() {
    let project = Project::new();
    project.config(&format!(
        "{PROVIDER}{}[load-balancer.web-a]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = []\n",
        web("[\"a\"]", "lpg1")
    ));
    let out = project.run(&["validate"]);
    invalid(
        &out,
        "skyplan.toml:4:16",
        "would have the cloud name `web-a` of load-balancer.web-a",
    );
}

#[test]
fn embedded_clusters_of_a_for_each_keep_their_worlds_under_their_cloud_names() {
    let project = Project::new();
    project.config(
        "[cluster.prod]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\nfor-each = [\"a\", \"b\"]\n\n\
         [nodes.web]\ncluster = 'prod[\"b\"]'\nnames = [\"node-*\"]\nlabels = { tier = \"web\" }\n",
    );
    project.apply_ok();
    let worlds = project.path().join("state/embedded/kubernetes");
    let mut names: Vec<_> = (std::fs::read_dir(&worlds).unwrap())
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["prod-a.json", "prod-b.json"]);
    assert_eq!(project.run(&["plan", "--detailed-exitcode"]).code, 0);
}
