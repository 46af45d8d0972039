use super::*;
use crate::apply::test_changes::{at, change, policy};
use crate::apply::window::MaintenancePolicy;
use crate::model::{Downtime, Impact, ResourceKind};
use crate::plan::Placement;

fn pools(name: &str) -> ResourceChange {
    change(name, Impact::PoolRecreate, Downtime::new(60, 120))
}

fn placed(mut change: ResourceChange, zone: Option<&str>, cluster: Option<&str>) -> ResourceChange {
    change.placement = Some(Placement {
        zone: zone.map(String::from),
        cluster: cluster.map(String::from),
    });
    change
}

fn limit(n: usize, per: Option<RolloutPer>) -> Rollout {
    Rollout {
        max_disrupted: Some(n),
        per,
        ..Rollout::default()
    }
}

fn names(waves: &[Vec<&ResourceChange>]) -> Vec<Vec<String>> {
    (waves.iter())
        .map(|w| w.iter().map(|c| c.address.name.clone()).collect())
        .collect()
}

fn no_dependencies(_: &Address) -> Vec<Address> {
    vec![]
}

#[test]
fn disruptive_changes_are_cut_into_waves_of_at_most_n_and_calm_ones_are_in_none() {
    let changes = [
        pools("a"),
        pools("b"),
        change("calm", Impact::None, Downtime::ZERO),
        change("small", Impact::Minimal, Downtime::new(0, 5)),
        pools("c"),
    ];
    let work: Vec<_> = changes.iter().collect();
    let waves = cut(&work, &limit(2, None), no_dependencies);
    assert_eq!(names(&waves), [vec!["a", "b"], vec!["small", "c"]]);
    let unlimited = cut(&work, &Rollout::default(), no_dependencies);
    assert_eq!(names(&unlimited), [vec!["a", "b", "small", "c"]]);
}

#[test]
fn a_change_is_never_in_an_earlier_wave_than_what_it_depends_on() {
    let changes = [pools("a"), pools("b"), pools("c")];
    let work: Vec<_> = changes.iter().collect();
    // a depends on c: c's layer comes first, even though the limit would let a and b in.
    let a_needs_c = |address: &Address| match address.name.as_str() {
        "a" => vec![Address::new(ResourceKind::LoadBalancer, "c")],
        _ => vec![],
    };
    let waves = cut(&work, &limit(2, None), a_needs_c);
    assert_eq!(names(&waves), [vec!["b", "c"], vec!["a"]]);
}

#[test]
fn per_zone_the_limit_applies_to_each_zone_and_unplaced_changes_share_a_group() {
    let changes = [
        placed(pools("a1"), Some("lpg1"), None),
        placed(pools("a2"), Some("lpg1"), None),
        placed(pools("b1"), Some("rma1"), None),
        pools("u1"),
        placed(pools("u2"), None, Some("cluster.lab")),
    ];
    let work: Vec<_> = changes.iter().collect();
    let waves = cut(&work, &limit(1, Some(RolloutPer::Zone)), no_dependencies);
    assert_eq!(names(&waves), [vec!["a1", "b1", "u1"], vec!["a2", "u2"]]);
    let by_cluster = cut(&work, &limit(1, Some(RolloutPer::Cluster)), no_dependencies);
    // Only u2 names its cluster; the four others are `unplaced` together.
    assert_eq!(
        names(&by_cluster),
        [vec!["a1", "u2"], vec!["a2"], vec!["b1"], vec!["u1"]]
    );
}

#[test]
fn each_wave_is_as_long_as_its_slowest_change() {
    let changes = [
        pools("a"),
        change("small", Impact::Minimal, Downtime::new(0, 5)),
    ];
    let work: Vec<_> = changes.iter().collect();
    assert_eq!(
        estimate(&work, &Durations::default()),
        Downtime::new(60, 120)
    );
}

#[test]
fn a_wave_fits_the_window_if_it_ends_in_it_after_the_waves_before() {
    let changes: Vec<_> = ["a", "b", "c", "d", "e"].map(pools).into();
    let durations = Durations::default();
    // Saturday 04:55 Zurich: five minutes left; each wave may take two, pauses of 30 s.
    let window = WindowCheck {
        policy: &policy(),
        now: at("2026-11-28T03:55:00Z"),
        durations: &durations,
    };
    let rollout = Rollout {
        pause: Duration::from_secs(30),
        ..limit(2, None)
    };
    let plan = plan_rollout(&changes, &rollout, &window, no_dependencies);
    let fits: Vec<_> = plan.waves.iter().map(|w| w.fits_window).collect();
    // 04:55 + 2 min = 04:57 fits; 04:57:30 + 2 min = 04:59:30 fits; 05:00 does not.
    assert_eq!(fits, [true, true, false]);
    assert_eq!(plan.first_unfit(), Some(2));
    assert_eq!(plan.waves[0].estimate, Downtime::new(60, 120));

    let unrestricted = MaintenancePolicy::unrestricted();
    let anytime = WindowCheck {
        policy: &unrestricted,
        ..window
    };
    let plan = plan_rollout(&changes, &rollout, &anytime, no_dependencies);
    assert!(plan.waves.iter().all(|w| w.fits_window));
    assert_eq!(plan.first_unfit(), None);
}
