//! "Nodes added/removed" in both modes, driven the way an operator does it: a `[nodes.*]`
//! policy in the same config puts the exclude-from-external-load-balancers label on a node.
//! The plan shows both load balancers losing that node's members (minimal) in the same plan as
//! the label; apply patches the node first, then the load balancers (skyplan itself in direct
//! mode, the simulated CCM in controller mode — which reacts to the changed node set with
//! nothing written to the Service); dropping the policy brings the members back.

use crate::cloudscale::controller::operations;
use crate::cloudscale::direct_mode_service_members::change_of;
use crate::support::{Project, World};

/// `shop` in controller mode writes the Service `default/shop`.
const LOAD_BALANCERS: &str = "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
    [cluster.prod]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\n\n\
    [load-balancer.shop]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\ncluster = \"prod\"\n\
    service = \"default/shop\"\nmode = \"ccm\"\n\
    [[load-balancer.shop.ports]]\nname = \"http\"\nport = 80\n\n";

/// Bound to the Service `shop` writes: applied once that exists.
const DIRECT: &str =
    "[load-balancer.direct]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\ncluster = \"prod\"\n\
    service = \"default/shop\"\n\
    [[load-balancer.direct.ports]]\nname = \"http\"\nport = 80\n\n";

const EXCLUDE: &str = "[nodes.drain]\ncluster = \"prod\"\nnames = [\"node-3\"]\n\
    labels = { \"node.kubernetes.io/exclude-from-external-load-balancers\" = \"true\" }\n";

/// The load balancer `name`'s pool uuid and its member names, sorted.
fn pool_and_members(world: &World, name: &str) -> (String, Vec<String>) {
    let lb = world.uuid("load_balancers", name);
    let pool = world
        .all("pools")
        .into_iter()
        .find(|p| p["load_balancer"] == lb.as_str())
        .unwrap();
    let mut members: Vec<String> = world
        .all("members")
        .iter()
        .filter(|m| m["pool"] == pool["uuid"])
        .map(|m| m["name"].as_str().unwrap().to_string())
        .collect();
    members.sort();
    (pool["uuid"].as_str().unwrap().to_string(), members)
}

/// The names of both load balancers in the simulated cloud.
fn names(world: &World) -> [(String, &'static str, &'static str); 2] {
    let shop = world
        .all("load_balancers")
        .into_iter()
        .find(|l| l["tags"]["skyplan.address"] != "load-balancer.direct")
        .unwrap();
    [
        (
            shop["name"].as_str().unwrap().to_string(),
            "load-balancer.shop",
            "controller: ",
        ),
        ("direct".to_string(), "load-balancer.direct", ""),
    ]
}

#[test]
fn both_modes_follow_a_node_a_policy_excludes_in_the_same_apply() {
    let project = Project::new();
    project.config(LOAD_BALANCERS);
    project.apply_ok();
    project.config(&format!("{LOAD_BALANCERS}{DIRECT}"));
    project.apply_ok();
    let world = project.world();
    let before: Vec<(String, Vec<String>)> = names(&world)
        .iter()
        .map(|(name, _, _)| pool_and_members(&world, name))
        .collect();
    for (_, members) in &before {
        assert_eq!(members.len(), 3, "{members:?}");
    }

    project.config(&format!("{LOAD_BALANCERS}{DIRECT}{EXCLUDE}"));
    let plan = project.plan(&[]);
    for ((_, address, word), (_, members)) in names(&world).iter().zip(&before) {
        let change = change_of(&plan, address);
        assert_eq!(change["impact"], "minimal", "{change:#}");
        let node_3 = members.iter().find(|m| m.starts_with("10.0.0.3:")).unwrap();
        let expected = format!("{word}delete member {node_3}");
        let operations = operations(&change);
        assert!(operations.contains(&expected), "{expected} in {change:#}");
        assert!(!operations.iter().any(|o| o.contains("pool")), "{change:#}");
    }
    let out = project.apply(&[]);
    assert_eq!(out.code, 0, "{out:?}");
    let world = project.world();
    for ((name, _, _), (pool, members)) in names(&world).iter().zip(&before) {
        let (pool_after, members_after) = pool_and_members(&world, name);
        assert_eq!(&pool_after, pool, "{name}: pool kept");
        let kept: Vec<String> = members
            .iter()
            .filter(|m| !m.starts_with("10.0.0.3:"))
            .cloned()
            .collect();
        assert_eq!(members_after, kept, "{name}");
    }
    for (_, address, _) in names(&world) {
        assert_eq!(change_of(&project.plan(&[]), address)["action"], "no-op");
    }

    project.config(&format!("{LOAD_BALANCERS}{DIRECT}"));
    let plan = project.plan(&[]);
    for (_, address, word) in names(&world) {
        let change = change_of(&plan, address);
        assert_eq!(change["impact"], "minimal", "{change:#}");
        assert!(
            operations(&change)
                .iter()
                .any(|o| o.starts_with(&format!("{word}create member 10.0.0.3:"))),
            "{change:#}"
        );
    }
    let out = project.apply(&[]);
    assert_eq!(out.code, 0, "{out:?}");
    let world = project.world();
    for ((name, _, _), before) in names(&world).iter().zip(&before) {
        assert_eq!(
            &pool_and_members(&world, name),
            before,
            "{name}: members back, pool kept"
        );
    }
}
