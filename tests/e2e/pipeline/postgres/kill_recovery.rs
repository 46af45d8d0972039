//! The kill test (`cloudscale::kill_recovery`) with state, journal and lock in PostgreSQL: apply killed with
//! SIGKILL at journal checkpoints of a create and of an update, then recovered by the next
//! apply — no duplicates, no orphans, and the lock never outlives the killed run.

use crate::cloudscale::kill_recovery::{
    config_a, config_b, crash_and_recover_in, kill_points, reference, Cloud,
};
use crate::pipeline::postgres::{backend_toml, fresh_workspace};
use crate::support::needs::pg_url;

#[test]
#[ignore = "needs PostgreSQL: SKYPLAN_TEST_PG_URL (.ci/run starts one)"]
fn kill_apply_at_every_step_then_recover_with_the_postgres_backend() {
    let url = pg_url();
    let on_postgres = || Cloud::with_backend(&backend_toml(&url, &fresh_workspace()));
    let (a, b) = (config_a(), config_b());
    let created = reference(std::slice::from_ref(&a));
    let changed = reference(&[a.clone(), b.clone()]);

    let probe = on_postgres();
    probe.configure(&a);
    let create_ops = probe.operations();
    assert_eq!(probe.apply(None).code, 0);
    probe.configure(&b);
    let update_ops = probe.operations();
    assert!(
        !probe
            .project
            .path()
            .join("state/skyplan.state.json")
            .exists(),
        "the state is in PostgreSQL"
    );

    let mut points = 0;
    for point in kill_points(create_ops) {
        crash_and_recover_in(on_postgres(), None, &a, &point, &created);
        points += 1;
    }
    for point in kill_points(update_ops) {
        crash_and_recover_in(on_postgres(), Some(&a), &b, &point, &changed);
        points += 1;
    }
    println!("kill test on PostgreSQL: {points} kill points ({create_ops} create and {update_ops} update operations), 0 duplicates, 0 orphans");
}
