//! impact.md's deletion rule in controller mode on CloudStack (see
//! `cloudscale::controller::removal` for cloudscale): a load balancer removed from the config
//! is refused unless named with --allow-delete; then skyplan deletes the Service it wrote and
//! the CloudStack CCM deletes the load balancer rule.

use crate::cloudstack::controller::{config, with_cluster, CLUSTER, HTTP};
use crate::cloudstack::support::{change, Account};

/// The Service is deleted only with --allow-delete, and then the CloudStack CCM deletes its
/// rules.
#[test]
fn cs_a_controller_mode_load_balancer_removed_is_refused_then_deleted_through_its_service() {
    let (project, sim) = with_cluster();
    project.config_served(&sim.base_url, &config("", HTTP));
    project.apply_converges();
    assert_eq!(Account::read_at(&sim.base_url).rules.len(), 1);

    project.config_served(&sim.base_url, CLUSTER);
    let plan = project.plan(&[]);
    let shop = change(&plan, "load-balancer.shop");
    assert_eq!(
        (shop["action"].as_str(), shop["impact"].as_str()),
        (Some("delete"), Some("forbidden")),
        "{shop:#}"
    );
    assert!(
        shop["attributes"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("--allow-delete load-balancer.shop"),
        "{shop:#}"
    );
    let refused = project.apply(&[]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert_eq!(
        Account::read_at(&sim.base_url).rules.len(),
        1,
        "nothing deleted"
    );

    let out = project.apply(&["--allow-delete", "load-balancer.shop"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        Account::read_at(&sim.base_url).rules.is_empty(),
        "the CCM deleted the rule"
    );
    assert_eq!(project.run(&["state", "list"]).stdout, "cluster.lab\n");
    sim.terminate();
}
