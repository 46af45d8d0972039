//! Renaming a resource: `[[moved]]` in the config and `skyplan state mv`, against the embedded
//! cloudscale. A rename is a state change only: planned as a no-op that `plan
//! --detailed-exitcode` still counts (exit 2), recorded by apply, never a delete and a create.

use serde_json::Value;

use crate::support::{Output, Project};

const PROVIDER: &str = "[provider.cloudscale]\nendpoint = \"embedded\"\n\n";

/// A load balancer at `[load-balancer.KEY]`; `name` as the cloud names it (none: the key).
fn load_balancer(key: &str, name: Option<&str>) -> String {
    let name = name
        .map(|n| format!("name = \"{n}\"\n"))
        .unwrap_or_default();
    format!(
        "[load-balancer.{key}]\nprovider = \"cloudscale\"\n{name}zone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\n\n\
         [[load-balancer.{key}.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n\n"
    )
}

fn moved(from: &str, to: &str) -> String {
    format!("[[moved]]\nfrom = \"{from}\"\nto = \"{to}\"\n\n")
}

/// The config renames `edge` to `front` with a `[[moved]]` entry; `name` as in
/// [`load_balancer`].
fn rename_edge_to_front(project: &Project, name: Option<&str>) {
    project.config(&format!(
        "{PROVIDER}{}{}",
        load_balancer("front", name),
        moved("load-balancer.edge", "load-balancer.front")
    ));
}

/// `edge` (named "edge" in the cloud) applied.
fn edge_applied() -> Project {
    let project = Project::new();
    project.config(&format!(
        "{PROVIDER}{}",
        load_balancer("edge", Some("edge"))
    ));
    project.apply_ok();
    project
}

fn state_list(project: &Project) -> Vec<String> {
    let out = project.run(&["state", "list"]);
    assert_eq!(out.code, 0, "{out:?}");
    out.stdout.lines().map(str::to_string).collect()
}

/// The load balancers of the simulated cloud: (uuid, name).
fn cloud_load_balancers(project: &Project) -> Vec<(String, String)> {
    (project.world().all("load_balancers").iter())
        .map(|lb| (text(&lb["uuid"]), text(&lb["name"])))
        .collect()
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_string()
}

fn change<'p>(plan: &'p Value, address: &str) -> &'p Value {
    (plan["changes"].as_array().unwrap().iter())
        .find(|c| c["address"] == address)
        .unwrap_or_else(|| panic!("{address} not planned: {plan}"))
}

fn assert_no_delete_or_create(plan: &Value) {
    for action in ["create", "delete", "replace"] {
        assert_eq!(plan["summary"][action], 0, "{action}: {plan}");
    }
}

fn plan_exit(project: &Project) -> Output {
    project.run(&["plan", "--detailed-exitcode"])
}

#[test]
fn a_moved_block_renames_a_load_balancer_in_the_state_only() {
    let project = edge_applied();
    let before = cloud_load_balancers(&project);
    assert_eq!(before.len(), 1);
    rename_edge_to_front(&project, Some("edge"));

    let text = plan_exit(&project);
    assert_eq!(text.code, 2, "a move is pending: {text:?}");
    assert!(
        text.stdout
            .contains("# load-balancer.edge has moved to load-balancer.front"),
        "{text:?}"
    );
    assert!(
        !text.stdout.contains("will be deleted") && !text.stdout.contains("will be created"),
        "{text:?}"
    );
    assert!(text.stdout.contains("1 to move."), "{text:?}");

    let plan = project.plan(&[]);
    assert_no_delete_or_create(&plan);
    assert_eq!(plan["changes"].as_array().unwrap().len(), 1, "{plan}");
    let front = change(&plan, "load-balancer.front");
    assert_eq!(front["action"], "no-op");
    assert_eq!(front["moved_from"], "load-balancer.edge");
    assert_eq!(plan["summary"]["moved"], 1);
    // Before apply too, its drift is checked under the new address from the old entry: in
    // sync, neither `front` not applied nor `edge` missing.
    let drift = project.run(&["drift"]);
    assert_eq!(drift.code, 0, "{drift:?}");
    assert!(
        drift.stdout.contains("No drift: 1 of 1 resource in sync."),
        "{drift:?}"
    );

    let out = project.apply(&[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains(
            "Apply complete: 0 changes (and 1 resource moved in the state), 0 operations"
        ),
        "{out:?}"
    );
    assert_eq!(state_list(&project), ["load-balancer.front"]);
    assert_eq!(
        cloud_load_balancers(&project),
        before,
        "the cloud is as it was"
    );

    // The move is kept in the config: its source is gone, so it does nothing.
    let again = plan_exit(&project);
    assert_eq!(again.code, 0, "{again:?}");
    assert!(again.stdout.starts_with("No changes."), "{again:?}");
    let plan = project.plan(&[]);
    assert!(change(&plan, "load-balancer.front")
        .get("moved_from")
        .is_none());
    assert!(plan["summary"].get("moved").is_none(), "{plan}");

    assert_eq!(project.run(&["drift"]).code, 0);
}

#[test]
fn a_moved_resource_whose_config_changes_is_planned_as_that_change() {
    // Without `name`, the cloud's name follows the key: renamed in place with the move.
    let project = edge_applied();
    let uuid = cloud_load_balancers(&project)[0].0.clone();
    rename_edge_to_front(&project, None);
    let plan = project.plan(&[]);
    assert_no_delete_or_create(&plan);
    let front = change(&plan, "load-balancer.front");
    assert_eq!(front["action"], "update", "{plan}");
    assert_eq!(front["impact"], "none", "{plan}");
    assert_eq!(front["moved_from"], "load-balancer.edge");
    let text = project.run(&["plan"]);
    assert!(
        text.stdout.contains("# (moved from load-balancer.edge)"),
        "{text:?}"
    );

    let out = project.apply(&[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("Apply complete: 1 change (and 1 resource moved in the state)"),
        "{out:?}"
    );
    assert_eq!(cloud_load_balancers(&project), [(uuid, "front".into())]);
    assert_eq!(state_list(&project), ["load-balancer.front"]);
    assert_eq!(plan_exit(&project).code, 0);
}

#[test]
fn a_saved_plan_applies_its_moves() {
    let project = edge_applied();
    rename_edge_to_front(&project, Some("edge"));
    let file = project.path().join("plan.json");
    let out = project.run(&["plan", "--out", file.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{out:?}");
    let shown = project.run(&["show", file.to_str().unwrap(), "--json"]);
    assert_eq!(
        change(&shown.json(), "load-balancer.front")["moved_from"],
        "load-balancer.edge"
    );
    let out = project.run(&["apply", file.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(state_list(&project), ["load-balancer.front"]);
    assert_eq!(plan_exit(&project).code, 0);
}

#[test]
fn a_move_whose_source_is_not_in_the_state_does_nothing() {
    let project = Project::new();
    rename_edge_to_front(&project, None);
    let plan = project.plan(&[]);
    let front = change(&plan, "load-balancer.front");
    assert_eq!(front["action"], "create");
    assert!(front.get("moved_from").is_none(), "{plan}");
    project.apply_ok();
    assert_eq!(state_list(&project), ["load-balancer.front"]);
    assert_eq!(plan_exit(&project).code, 0);
}

#[test]
fn a_move_onto_an_address_the_state_holds_is_refused_naming_both() {
    let project = Project::new();
    let both = format!(
        "{PROVIDER}{}{}",
        load_balancer("edge", None),
        load_balancer("front", None)
    );
    project.config(&both);
    project.apply_ok();
    rename_edge_to_front(&project, None);
    let out = project.run(&["plan"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains(
            "load-balancer.edge cannot move to load-balancer.front: both are in the state"
        ),
        "{out:?}"
    );
    assert!(out.stderr.contains("skyplan.toml:"), "{out:?}");
    assert_eq!(
        state_list(&project),
        ["load-balancer.edge", "load-balancer.front"],
        "nothing was written"
    );
}

#[test]
fn a_target_that_leaves_out_a_move_is_refused() {
    let project = edge_applied();
    project.config(&format!(
        "{PROVIDER}{}{}{}",
        load_balancer("front", Some("edge")),
        load_balancer("api", None),
        moved("load-balancer.edge", "load-balancer.front")
    ));
    let out = project.run(&["plan", "--target", "load-balancer.api"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("load-balancer.front (moved from load-balancer.edge)"),
        "{out:?}"
    );
    let out = project.run(&["plan", "--json", "--target", "load-balancer.front"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        change(&out.json(), "load-balancer.front")["moved_from"],
        "load-balancer.edge"
    );
}

#[test]
fn state_mv_renames_an_entry_and_back() {
    let project = Project::new();
    project.config(&format!(
        "{PROVIDER}{}{}",
        load_balancer("edge", Some("edge")),
        load_balancer("api", None)
    ));
    project.apply_ok();
    let entry = |project: &Project, address: &str| {
        let out = project.run(&["state", "show", address]);
        assert_eq!(out.code, 0, "{out:?}");
        out.json()
    };
    let edge = entry(&project, "load-balancer.edge");

    let out = project.run(&["state", "mv", "load-balancer.edge", "load-balancer.front"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout.trim(),
        "Moved load-balancer.edge to load-balancer.front."
    );
    assert_eq!(
        state_list(&project),
        ["load-balancer.api", "load-balancer.front"]
    );
    assert_eq!(entry(&project, "load-balancer.front"), edge);
    // The table renamed the same way: nothing to do.
    project.config(&format!(
        "{PROVIDER}{}{}",
        load_balancer("front", Some("edge")),
        load_balancer("api", None)
    ));
    assert_eq!(plan_exit(&project).code, 0);

    let out = project.run(&["state", "mv", "load-balancer.front", "load-balancer.edge"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(entry(&project, "load-balancer.edge"), edge);

    let refused = |args: &[&str], why: &str| {
        let mut command = vec!["state", "mv"];
        command.extend_from_slice(args);
        let out = project.run(&command);
        assert_eq!(out.code, 1, "{args:?}: {out:?}");
        assert!(
            out.stderr.contains(why),
            "{args:?}: expected `{why}`: {out:?}"
        );
    };
    refused(
        &["load-balancer.gone", "load-balancer.x"],
        "load-balancer.gone is not in the state",
    );
    refused(
        &["load-balancer.edge", "load-balancer.api"],
        "load-balancer.api is already in the state",
    );
    refused(
        &["load-balancer.edge", "cluster.edge"],
        "load-balancer.edge cannot move to cluster.edge",
    );
    refused(
        &["lb.edge", "load-balancer.x"],
        "`lb.edge` is not a resource address",
    );
    assert_eq!(
        state_list(&project),
        ["load-balancer.api", "load-balancer.edge"],
        "refused moves change nothing"
    );
}

#[test]
fn moves_onto_one_address_and_cycles_are_config_errors_at_their_place() {
    let project = Project::new();
    let onto_one = format!(
        "{PROVIDER}{}{}{}",
        load_balancer("front", None),
        moved("load-balancer.a", "load-balancer.front"),
        moved("load-balancer.b", "load-balancer.front")
    );
    let line = onto_one.lines().count() - 1;
    project.config(&onto_one);
    for command in [&["validate"][..], &["plan"]] {
        let out = project.run(command);
        assert_eq!(out.code, 1, "{out:?}");
        assert!(
            out.stderr.contains("two moves end at load-balancer.front"),
            "{out:?}"
        );
        assert!(
            out.stderr.contains(&format!("skyplan.toml:{line}:6")),
            "{out:?}"
        );
    }

    let cycle = format!(
        "{PROVIDER}{}{}",
        moved("load-balancer.a", "load-balancer.b"),
        moved("load-balancer.b", "load-balancer.a")
    );
    project.config(&cycle);
    let out = project.run(&["validate"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains(
            "these moves form a cycle: load-balancer.a → load-balancer.b → load-balancer.a"
        ),
        "{out:?}"
    );
    assert!(out.stderr.contains("skyplan.toml:5:8"), "{out:?}");
    assert!(!project.world_path().exists(), "nothing was sent");
}

#[test]
fn a_move_is_recorded_when_its_resource_s_change_is_held_back() {
    let project = edge_applied();
    project.config(&format!(
        "{PROVIDER}{}{}",
        load_balancer("front", Some("edge")).replace("zone = ", "flavor = \"lb-large\"\nzone = "),
        moved("load-balancer.edge", "load-balancer.front")
    ));
    let plan = project.plan(&[]);
    let front = change(&plan, "load-balancer.front");
    assert_eq!(
        (&front["action"], &front["impact"]),
        (&Value::from("update"), &Value::from("forbidden"))
    );
    assert_eq!(front["moved_from"], "load-balancer.edge");

    let out = project.apply(&[]);
    assert_eq!(out.code, 4, "held back, the move recorded: {out:?}");
    assert!(
        out.stderr
            .contains("Applied 0 changes (and recorded 1 move in the state) and held back 1"),
        "{out:?}"
    );
    assert_eq!(state_list(&project), ["load-balancer.front"]);
    let plan = project.plan(&[]);
    let front = change(&plan, "load-balancer.front");
    assert_eq!(front["impact"], "forbidden", "still to do: {plan}");
    assert!(front.get("moved_from").is_none(), "{plan}");
}

/// The other providers plan a rename as a move and nothing else: a CloudStack cluster, its
/// load balancer (whose rules and IP keep their old `skyplan.address` tag: the state's IDs
/// find them, and no provider compares the tag) and a node policy on its nodes, each renamed
/// with its cloud name kept.
#[test]
fn cloudstack_and_node_policy_renames_are_moves_only() {
    use crate::cloudstack::support::CsProject;
    let resources = |cluster: &str, lb: &str, policy: &str| {
        format!(
            "[cluster.{cluster}]\nprovider = \"cloudstack\"\nname = \"lab\"\nzone = \"zone1\"\n\
             kubernetes-version = \"1.30.5\"\nworkers = 2\nservice-offering = \"Medium Instance\"\n\
             network = \"k8s-net\"\n\n\
             [load-balancer.{lb}]\nprovider = \"cloudstack\"\nname = \"edge\"\ncluster = \"{cluster}\"\n\n\
             [[load-balancer.{lb}.ports]]\nport = 80\nnode-port = 30080\n\n\
             [nodes.{policy}]\ncluster = \"{cluster}\"\nnames = [\"*\"]\nlabels = {{ tier = \"web\" }}\n\n"
        )
    };
    let project = CsProject::new();
    project.config(&resources("lab", "edge", "web"));
    project.apply_ok();
    // The node policy's nodes exist once the cluster does: the second apply labels them.
    project.apply_converges();
    project.config(&format!(
        "{}{}{}{}",
        resources("lab2", "front", "workers"),
        moved("cluster.lab", "cluster.lab2"),
        moved("load-balancer.edge", "load-balancer.front"),
        moved("nodes.web", "nodes.workers"),
    ));
    let plan = project.plan(&[]);
    assert_no_delete_or_create(&plan);
    assert_eq!(plan["summary"]["moved"], 3, "{plan}");
    for (to, from) in [
        ("cluster.lab2", "cluster.lab"),
        ("load-balancer.front", "load-balancer.edge"),
        ("nodes.workers", "nodes.web"),
    ] {
        let planned = change(&plan, to);
        assert_eq!(planned["action"], "no-op", "{to}: {plan}");
        assert_eq!(planned["moved_from"], from);
    }
    assert_eq!(plan_exit(&project).code, 2);
    project.apply_ok();
    assert_eq!(
        state_list(&project),
        ["cluster.lab2", "load-balancer.front", "nodes.workers"]
    );
    let entry = project
        .run(&["state", "show", "load-balancer.front"])
        .json();
    assert_eq!(
        entry["depends_on"],
        serde_json::json!(["cluster.lab2", "nodes.workers"]),
        "what it depends on renamed with it"
    );
    assert_eq!(plan_exit(&project).code, 0);
    assert_eq!(project.run(&["drift"]).code, 0);

    // The old address given to a new load balancer: its public IP still carries
    // skyplan.address=load-balancer.edge, and front's state entry names it — a new IP.
    project.config(&format!(
        "{}[load-balancer.edge]\nprovider = \"cloudstack\"\nname = \"edge-new\"\ncluster = \"lab2\"\n\n\
         [[load-balancer.edge.ports]]\nport = 81\nnode-port = 30081\n",
        resources("lab2", "front", "workers"),
    ));
    let plan = project.plan(&[]);
    assert_eq!(
        change(&plan, "load-balancer.edge")["action"],
        "create",
        "{plan}"
    );
    assert_eq!(
        change(&plan, "load-balancer.front")["action"],
        "no-op",
        "{plan}"
    );
}

/// A PhoenixNAP block's load balancer: the block is found by the state's ID and the CCM's
/// tags, which name no address.
#[test]
fn a_phoenixnap_rename_is_a_move_only() {
    use crate::phoenixnap::support::{config, project_with_service};
    let project = project_with_service();
    project.apply_ok();
    let renamed = config("").replace("[load-balancer.api]", "[load-balancer.gateway]");
    project.config(&format!(
        "{renamed}\n{}",
        moved("load-balancer.api", "load-balancer.gateway")
    ));
    let plan = project.plan(&[]);
    assert_no_delete_or_create(&plan);
    let gateway = change(&plan, "load-balancer.gateway");
    assert_eq!(gateway["action"], "no-op", "{plan}");
    assert_eq!(gateway["moved_from"], "load-balancer.api");
    project.apply_ok();
    assert_eq!(
        state_list(&project),
        ["cluster.prod", "load-balancer.gateway"]
    );
    assert_eq!(plan_exit(&project).code, 0);
}

#[test]
fn an_old_address_given_to_a_new_resource_creates_it_rather_than_taking_the_moved_one() {
    let project = edge_applied();
    rename_edge_to_front(&project, Some("edge"));
    project.apply_ok();
    // The moved load balancer still carries skyplan.address=load-balancer.edge; a new edge
    // must not adopt it by that tag: front's state entry names it.
    project.config(&format!(
        "{PROVIDER}{}{}",
        load_balancer("front", Some("edge")),
        load_balancer("edge", Some("edge-new"))
    ));
    let plan = project.plan(&[]);
    assert_eq!(
        change(&plan, "load-balancer.edge")["action"],
        "create",
        "{plan}"
    );
    assert_eq!(
        change(&plan, "load-balancer.front")["action"],
        "no-op",
        "{plan}"
    );
    project.apply_ok();
    assert_eq!(cloud_load_balancers(&project).len(), 2);
    assert_eq!(plan_exit(&project).code, 0);
}
