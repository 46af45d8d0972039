//! The action planning against hand-built states, as the CCM's `TestNext*Actions` do.

use super::*;
use crate::controllers::lbstate::{ActualLb, DesiredPool, HttpSpec, Vip};
use crate::controllers::objects::SubnetRef;

fn lb() -> LbSpec {
    LbSpec {
        name: "k8s-service-u".into(),
        flavor: "lb-standard".into(),
        zone: "lpg1".into(),
        vip_addresses: vec![],
    }
}

fn member(address: &str, port: u16, monitor_port: u16) -> MemberSpec {
    MemberSpec {
        name: format!("{address}:{port}"),
        enabled: true,
        protocol_port: port,
        monitor_port,
        address: address.into(),
        subnet: SubnetRef {
            href: "h".into(),
            uuid: "s".into(),
            cidr: "10.0.0.0/24".into(),
        },
    }
}

fn monitor(kind: &str, version: Option<&str>) -> MonitorSpec {
    MonitorSpec {
        kind: kind.into(),
        delay_s: 2,
        timeout_s: 1,
        up_threshold: 2,
        down_threshold: 3,
        http: version.map(|v| HttpSpec {
            expected_codes: vec!["200".into()],
            method: "GET".into(),
            url_path: "/".into(),
            version: v.into(),
            host: None,
        }),
    }
}

fn listener(port: u16) -> ListenerSpec {
    ListenerSpec {
        name: format!("tcp/{port}"),
        protocol: "tcp".into(),
        protocol_port: port,
        allowed_cidrs: vec![],
        timeout_client_data_ms: 50000,
        timeout_member_connect_ms: 5000,
        timeout_member_data_ms: 50000,
    }
}

fn pool(name: &str) -> PoolSpec {
    PoolSpec {
        name: name.into(),
        algorithm: "round_robin".into(),
        protocol: "tcp".into(),
    }
}

fn desired_pool(name: &str, port: u16, members: Vec<MemberSpec>) -> DesiredPool {
    DesiredPool {
        pool: pool(name),
        members,
        monitor: monitor("tcp", None),
        listener: listener(port),
    }
}

fn found<T>(id: &str, spec: T) -> Found<T> {
    Found {
        uuid: id.into(),
        href: format!("href-{id}"),
        spec,
    }
}

/// The actual state that exactly matches `desired`.
fn actual_of(desired: &Desired) -> Actual {
    Actual {
        lb: Some(ActualLb {
            uuid: "lb".into(),
            href: "href-lb".into(),
            status: "running".into(),
            spec: desired.lb.clone(),
        }),
        pools: desired
            .pools
            .iter()
            .map(|p| ActualPool {
                found: found(&format!("pool-{}", p.pool.name), p.pool.clone()),
                members: p
                    .members
                    .iter()
                    .map(|m| found(&format!("m-{}", m.name), m.clone()))
                    .collect(),
                monitors: vec![found(&format!("mon-{}", p.pool.name), p.monitor.clone())],
                listeners: vec![found(&format!("l-{}", p.listener.name), p.listener.clone())],
            })
            .collect(),
        floating_ips: vec![],
    }
}

fn desired() -> Desired {
    Desired {
        lb: lb(),
        pools: vec![desired_pool(
            "tcp",
            80,
            vec![member("10.0.0.5", 30080, 30080)],
        )],
        floating_ips: vec![],
    }
}

fn labels(actions: &[Action]) -> Vec<String> {
    actions.iter().filter_map(Action::label).collect()
}

#[test]
fn nothing_to_do_when_states_match() {
    let d = desired();
    let next = next_actions(Some(&d), &actual_of(&d)).unwrap();
    assert_eq!(labels(&next), Vec::<String>::new());
    assert!(!next.contains(&Action::Refetch));
}

#[test]
fn a_missing_lb_is_created_then_refetched() {
    let next = next_actions(Some(&desired()), &Actual::default()).unwrap();
    assert_eq!(next, vec![Action::CreateLb(lb()), Action::Refetch]);
}

#[test]
fn no_desired_state_deletes_the_lb_after_awaiting_it() {
    let actual = actual_of(&desired());
    let next = next_actions(None, &actual).unwrap();
    assert!(matches!(next[0], Action::AwaitLb { .. }));
    assert_eq!(labels(&next), vec!["delete lb k8s-service-u"]);
}

#[test]
fn a_renamed_port_recreates_its_pool_members_first() {
    let actual = actual_of(&desired());
    let mut renamed = desired();
    renamed.pools[0].pool.name = "tcp/http".into();
    let next = next_actions(Some(&renamed), &actual).unwrap();
    assert_eq!(
        labels(&next),
        vec![
            "delete member 10.0.0.5:30080 of pool tcp",
            "delete pool tcp",
            "create pool tcp/http"
        ]
    );
    assert_eq!(next.last(), Some(&Action::Refetch));
}

#[test]
fn algorithm_is_part_of_the_pool_key_but_allowed_cidrs_are_updated_in_place() {
    let actual = actual_of(&desired());
    let mut changed = desired();
    changed.pools[0].pool.algorithm = "source_ip".into();
    assert!(labels(&next_actions(Some(&changed), &actual).unwrap())
        .contains(&"delete pool tcp".to_string()));
    let mut cidrs = desired();
    cidrs.pools[0].listener.allowed_cidrs = vec!["10.0.0.0/8".into()];
    cidrs.pools[0].listener.timeout_member_data_ms = 1;
    let next = next_actions(Some(&cidrs), &actual).unwrap();
    assert_eq!(
        labels(&next),
        vec![
            "update listener tcp/80 allowed_cidrs",
            "update listener tcp/80 timeout_member_data_ms"
        ]
    );
    assert!(!next.contains(&Action::Refetch));
}

#[test]
fn a_changed_node_port_recreates_members_with_a_pause_between() {
    let actual = actual_of(&desired());
    let mut moved = desired();
    moved.pools[0].members = vec![member("10.0.0.5", 31000, 31000)];
    let next = next_actions(Some(&moved), &actual).unwrap();
    assert_eq!(
        labels(&next),
        vec![
            "delete member 10.0.0.5:30080 of pool tcp",
            "create member 10.0.0.5:31000 of pool tcp"
        ]
    );
    assert!(next.contains(&Action::Sleep(BETWEEN_DELETE_AND_CREATE)));
    assert_eq!(next.last(), Some(&Action::Refetch));
}

#[test]
fn a_monitor_port_change_alone_recreates_members() {
    let actual = actual_of(&desired());
    let mut local = desired();
    local.pools[0].members = vec![member("10.0.0.5", 30080, 32000)];
    let next = labels(&next_actions(Some(&local), &actual).unwrap());
    assert_eq!(next.len(), 2);
    assert!(next[1].starts_with("create member 10.0.0.5:30080"));
}

#[test]
fn a_port_number_change_recreates_only_the_listener() {
    let actual = actual_of(&desired());
    let mut moved = desired();
    moved.pools[0].listener = listener(8080);
    let next = labels(&next_actions(Some(&moved), &actual).unwrap());
    assert_eq!(
        next,
        vec!["delete listener tcp/80", "create listener tcp/8080"]
    );
}

#[test]
fn monitor_type_or_http_version_recreate_numbers_and_paths_update() {
    let actual = actual_of(&desired());
    let mut http = desired();
    http.pools[0].monitor = monitor("http", Some("1.0"));
    let next = labels(&next_actions(Some(&http), &actual).unwrap());
    assert_eq!(
        next,
        vec![
            "delete monitor tcp of pool tcp",
            "create monitor http of pool tcp"
        ]
    );

    let mut base = desired();
    base.pools[0].monitor = monitor("http", Some("1.1"));
    let actual = actual_of(&base);
    let mut tuned = base.clone();
    tuned.pools[0].monitor.delay_s = 9;
    tuned.pools[0].monitor.http.as_mut().unwrap().url_path = "/h".into();
    let next = labels(&next_actions(Some(&tuned), &actual).unwrap());
    assert_eq!(
        next,
        vec![
            "update monitor http of pool tcp http.url_path",
            "update monitor http of pool tcp delay_s"
        ]
    );
    // An http monitor whose version is left to the default keys as 1.1.
    let mut defaulted = base.clone();
    defaulted.pools[0].monitor.http = None;
    assert!(labels(&next_actions(Some(&defaulted), &actual).unwrap()).is_empty());
}

#[test]
fn flavor_zone_and_vip_changes_are_refused() {
    let actual = actual_of(&desired());
    let mut flavor = desired();
    flavor.lb.flavor = "lb-large".into();
    assert!(next_actions(Some(&flavor), &actual)
        .unwrap_err()
        .contains("flavor"));
    let mut zone = desired();
    zone.lb.zone = "rma1".into();
    assert!(next_actions(Some(&zone), &actual)
        .unwrap_err()
        .contains("zone"));
    let mut vip = desired();
    vip.lb.vip_addresses = vec![Vip {
        address: None,
        subnet: "other".into(),
    }];
    assert!(next_actions(Some(&vip), &actual)
        .unwrap_err()
        .contains("VIP"));
}

#[test]
fn rename_and_floating_ips_are_in_place_and_never_unassigned() {
    let mut actual = actual_of(&desired());
    actual.floating_ips = vec!["5.102.150.1/32".into()];
    let mut d = desired();
    d.lb.name = "mine".into();
    d.floating_ips = vec!["5.102.150.2/32".into()];
    let next = labels(&next_actions(Some(&d), &actual).unwrap());
    assert_eq!(
        next,
        vec!["rename lb mine", "assign floating ip 5.102.150.2/32"]
    );
}

#[test]
fn a_new_port_creates_a_pool_and_leaves_the_others() {
    let actual = actual_of(&desired());
    let mut more = desired();
    more.pools.push(desired_pool("tcp/https", 443, vec![]));
    let next = labels(&next_actions(Some(&more), &actual).unwrap());
    assert_eq!(next, vec!["create pool tcp/https"]);
}
