//! `nextLbActions` (reconcile.go): from a desired and an actual state, the next actions, in the
//! CCM's phases. A phase that changes structure ends with `Refetch`: the caller runs the
//! actions up to it, fetches the actual state again and plans anew.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{json, Value};

use super::lbstate::{
    listener_key, member_key, monitor_key, pool_key, Actual, ActualPool, Desired, Found, LbSpec,
    ListenerSpec, MemberSpec, MonitorSpec, PoolSpec,
};

/// The CCM's two pauses, in real time; the runner scales them.
pub const AFTER_DELETE: Duration = Duration::from_millis(500);
pub const BETWEEN_DELETE_AND_CREATE: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    CreateLb(LbSpec),
    AwaitLb {
        href: String,
    },
    DeleteLb {
        href: String,
        name: String,
    },
    RenameLb {
        href: String,
        name: String,
    },
    /// Any sub-object; `what` names it for the log (`pool tcp/http`, `member … of pool tcp`).
    Delete {
        href: String,
        what: String,
    },
    CreatePool {
        lb_uuid: String,
        pool: PoolSpec,
    },
    CreateMember {
        pool_uuid: String,
        pool: String,
        member: MemberSpec,
    },
    CreateListener {
        pool_uuid: String,
        listener: ListenerSpec,
    },
    CreateMonitor {
        pool_uuid: String,
        pool: String,
        monitor: MonitorSpec,
    },
    /// A single-field PATCH of a listener or monitor.
    Update {
        href: String,
        what: String,
        field: &'static str,
        body: Value,
    },
    AssignFloatingIp {
        network: String,
        lb_uuid: String,
    },
    Sleep(Duration),
    Refetch,
}

impl Action {
    /// One line for the reconcile log; `None` for the CCM's bookkeeping steps.
    pub fn label(&self) -> Option<String> {
        Some(match self {
            Action::CreateLb(lb) => format!("create lb {}", lb.name),
            Action::DeleteLb { name, .. } => format!("delete lb {name}"),
            Action::RenameLb { name, .. } => format!("rename lb {name}"),
            Action::Delete { what, .. } => format!("delete {what}"),
            Action::CreatePool { pool, .. } => format!("create pool {}", pool.name),
            Action::CreateMember { pool, member, .. } => {
                format!("create member {} of pool {pool}", member.name)
            }
            Action::CreateListener { listener, .. } => format!("create listener {}", listener.name),
            Action::CreateMonitor { pool, monitor, .. } => {
                format!("create monitor {} of pool {pool}", monitor.kind)
            }
            Action::Update { what, field, .. } => format!("update {what} {field}"),
            Action::AssignFloatingIp { network, .. } => format!("assign floating ip {network}"),
            Action::AwaitLb { .. } | Action::Sleep(_) | Action::Refetch => return None,
        })
    }
}

/// `desired = None` asks for no load balancer at all (EnsureLoadBalancerDeleted).
pub fn next_actions(desired: Option<&Desired>, actual: &Actual) -> Result<Vec<Action>, String> {
    let Some(lb) = &actual.lb else {
        return Ok(match desired {
            Some(desired) => vec![Action::CreateLb(desired.lb.clone()), Action::Refetch],
            None => vec![],
        });
    };
    let mut next = vec![Action::AwaitLb {
        href: lb.href.clone(),
    }];
    let Some(desired) = desired else {
        next.push(Action::DeleteLb {
            href: lb.href.clone(),
            name: lb.spec.name.clone(),
        });
        return Ok(next);
    };
    validate_lb_changes(&desired.lb, &lb.spec, &lb.href)?;
    if desired.lb.name != lb.spec.name {
        next.push(Action::RenameLb {
            href: lb.href.clone(),
            name: desired.lb.name.clone(),
        });
    }
    if pool_changes(desired, actual, &lb.uuid, &mut next) {
        next.push(Action::Refetch);
        return Ok(next);
    }
    let before = next.len();
    content_changes(desired, actual, &mut next)?;
    if next.len() > before {
        next.push(Action::Refetch);
        return Ok(next);
    }
    property_updates(desired, actual, &mut next);
    for network in &desired.floating_ips {
        if !actual.floating_ips.contains(network) {
            next.push(Action::AssignFloatingIp {
                network: network.clone(),
                lb_uuid: lb.uuid.clone(),
            });
        }
    }
    Ok(next)
}

/// Flavor, zone and (non-empty) VIPs cannot change: an error, nothing done.
fn validate_lb_changes(desired: &LbSpec, actual: &LbSpec, href: &str) -> Result<(), String> {
    if !desired.vip_addresses.is_empty() {
        let same = desired.vip_addresses.len() == actual.vip_addresses.len()
            && desired
                .vip_addresses
                .iter()
                .zip(&actual.vip_addresses)
                .all(|(d, a)| {
                    d.subnet == a.subnet
                        && d.address
                            .as_ref()
                            .is_none_or(|d| Some(d) == a.address.as_ref())
                });
        if !same {
            return Err(format!(
                "VIP addresses for {href} changed, please re-create the service"
            ));
        }
    }
    if desired.flavor != actual.flavor {
        return Err(format!(
            "flavor for {href} changed, please configure the previous flavor or contact support"
        ));
    }
    if desired.zone != actual.zone {
        return Err(format!(
            "zone for {href} changed, please configure the previous zone or contact support"
        ));
    }
    Ok(())
}

/// `compare.Diff`: actual items whose key is not desired, desired items whose key is not
/// actual. Duplicate keys collapse, as in the CCM's maps.
fn diff<'a, D, A>(
    desired: &'a [D],
    actual: &'a [A],
    desired_key: impl Fn(&D) -> String,
    actual_key: impl Fn(&A) -> String,
) -> (Vec<&'a A>, Vec<&'a D>) {
    let wanted: HashSet<String> = desired.iter().map(&desired_key).collect();
    let present: HashSet<String> = actual.iter().map(&actual_key).collect();
    let delete = actual
        .iter()
        .filter(|a| !wanted.contains(&actual_key(a)))
        .collect();
    let mut seen = HashSet::new();
    let create = desired
        .iter()
        .filter(|d| {
            let key = desired_key(d);
            !present.contains(&key) && seen.insert(key)
        })
        .collect();
    (delete, create)
}

fn delete(next: &mut Vec<Action>, href: &str, what: String) {
    next.push(Action::Delete {
        href: href.to_owned(),
        what,
    });
    next.push(Action::Sleep(AFTER_DELETE));
}

/// Pools to delete go with their members first; listeners and monitors go with the pool.
fn pool_changes(desired: &Desired, actual: &Actual, lb_uuid: &str, next: &mut Vec<Action>) -> bool {
    let desired_pools: Vec<&PoolSpec> = desired.pools.iter().map(|p| &p.pool).collect();
    let (gone, new) = diff(
        &desired_pools,
        &actual.pools,
        |p| pool_key(p),
        |a| pool_key(&a.found.spec),
    );
    for pool in &gone {
        for member in &pool.members {
            let what = format!(
                "member {} of pool {}",
                member.spec.name, pool.found.spec.name
            );
            delete(next, &member.href, what);
        }
        delete(
            next,
            &pool.found.href,
            format!("pool {}", pool.found.spec.name),
        );
    }
    for pool in &new {
        next.push(Action::CreatePool {
            lb_uuid: lb_uuid.to_owned(),
            pool: (**pool).clone(),
        });
    }
    !gone.is_empty() || !new.is_empty()
}

fn actual_pool<'a>(actual: &'a Actual, name: &str) -> Result<&'a ActualPool, String> {
    actual
        .pools
        .iter()
        .rev() // a map by name: the last pool of a name wins
        .find(|p| p.found.spec.name == name)
        .ok_or_else(|| format!("no existing pool found for {name}"))
}

/// Members, then listeners, then monitors of every pool: deletes, a pause if the same
/// category also creates, creates.
fn content_changes(
    desired: &Desired,
    actual: &Actual,
    next: &mut Vec<Action>,
) -> Result<(), String> {
    for d in &desired.pools {
        let a = actual_pool(actual, &d.pool.name)?;
        let (gone, new) = diff(&d.members, &a.members, member_key, |m| member_key(&m.spec));
        for m in &gone {
            delete(
                next,
                &m.href,
                format!("member {} of pool {}", m.spec.name, d.pool.name),
            );
        }
        pause_between(next, &gone, &new);
        for m in new {
            next.push(Action::CreateMember {
                pool_uuid: a.found.uuid.clone(),
                pool: d.pool.name.clone(),
                member: m.clone(),
            });
        }
    }
    for d in &desired.pools {
        let a = actual_pool(actual, &d.pool.name)?;
        let wanted = std::slice::from_ref(&d.listener);
        let (gone, new) = diff(wanted, &a.listeners, listener_key, |l| {
            listener_key(&l.spec)
        });
        for l in &gone {
            delete(next, &l.href, format!("listener {}", l.spec.name));
        }
        pause_between(next, &gone, &new);
        for l in new {
            next.push(Action::CreateListener {
                pool_uuid: a.found.uuid.clone(),
                listener: l.clone(),
            });
        }
    }
    for d in &desired.pools {
        let a = actual_pool(actual, &d.pool.name)?;
        let wanted = std::slice::from_ref(&d.monitor);
        let (gone, new) = diff(wanted, &a.monitors, monitor_key, |m| monitor_key(&m.spec));
        for m in &gone {
            delete(
                next,
                &m.href,
                format!("monitor {} of pool {}", m.spec.kind, d.pool.name),
            );
        }
        pause_between(next, &gone, &new);
        for m in new {
            next.push(Action::CreateMonitor {
                pool_uuid: a.found.uuid.clone(),
                pool: d.pool.name.clone(),
                monitor: m.clone(),
            });
        }
    }
    Ok(())
}

fn pause_between<A, B>(next: &mut Vec<Action>, gone: &[A], new: &[B]) {
    if !gone.is_empty() && !new.is_empty() {
        next.push(Action::Sleep(BETWEEN_DELETE_AND_CREATE));
    }
}

/// `compare.Match`: the actual item of the same key, for in-place updates.
fn matching<'a, T>(
    actual: &'a [Found<T>],
    key: &str,
    key_of: impl Fn(&T) -> String,
) -> Option<&'a Found<T>> {
    actual.iter().find(|a| key_of(&a.spec) == key)
}

fn property_updates(desired: &Desired, actual: &Actual, next: &mut Vec<Action>) {
    for d in &desired.pools {
        let Ok(a) = actual_pool(actual, &d.pool.name) else {
            continue;
        };
        if let Some(l) = matching(&a.listeners, &listener_key(&d.listener), listener_key) {
            listener_updates(&d.listener, l, next);
        }
        if let Some(m) = matching(&a.monitors, &monitor_key(&d.monitor), monitor_key) {
            monitor_updates(&d.monitor, m, &d.pool.name, next);
        }
    }
}

fn listener_updates(desired: &ListenerSpec, actual: &Found<ListenerSpec>, next: &mut Vec<Action>) {
    let what = format!("listener {}", actual.spec.name);
    let mut update = |field: &'static str, differs: bool, value: Value| {
        if differs {
            next.push(Action::Update {
                href: actual.href.clone(),
                what: what.clone(),
                field,
                body: json!({ field: value }),
            });
        }
    };
    let a = &actual.spec;
    update(
        "allowed_cidrs",
        desired.allowed_cidrs != a.allowed_cidrs,
        json!(desired.allowed_cidrs),
    );
    update(
        "timeout_client_data_ms",
        desired.timeout_client_data_ms != a.timeout_client_data_ms,
        json!(desired.timeout_client_data_ms),
    );
    update(
        "timeout_member_connect_ms",
        desired.timeout_member_connect_ms != a.timeout_member_connect_ms,
        json!(desired.timeout_member_connect_ms),
    );
    update(
        "timeout_member_data_ms",
        desired.timeout_member_data_ms != a.timeout_member_data_ms,
        json!(desired.timeout_member_data_ms),
    );
}

fn monitor_updates(
    desired: &MonitorSpec,
    actual: &Found<MonitorSpec>,
    pool: &str,
    next: &mut Vec<Action>,
) {
    let what = format!("monitor {} of pool {pool}", actual.spec.kind);
    let mut update = |field: &'static str, differs: bool, body: Value| {
        if differs {
            next.push(Action::Update {
                href: actual.href.clone(),
                what: what.clone(),
                field,
                body,
            });
        }
    };
    if let (Some(d), Some(a)) = (&desired.http, &actual.spec.http) {
        update(
            "http.host",
            d.host != a.host,
            json!({"http": {"host": d.host}}),
        );
        update(
            "http.url_path",
            d.url_path != a.url_path,
            json!({"http": {"url_path": d.url_path}}),
        );
        update(
            "http.method",
            d.method != a.method,
            json!({"http": {"method": d.method}}),
        );
        update(
            "http.expected_codes",
            d.expected_codes != a.expected_codes,
            json!({"http": {"expected_codes": d.expected_codes}}),
        );
    }
    let a = &actual.spec;
    update(
        "delay_s",
        desired.delay_s != a.delay_s,
        json!({"delay_s": desired.delay_s}),
    );
    update(
        "timeout_s",
        desired.timeout_s != a.timeout_s,
        json!({"timeout_s": desired.timeout_s}),
    );
    update(
        "up_threshold",
        desired.up_threshold != a.up_threshold,
        json!({"up_threshold": desired.up_threshold}),
    );
    update(
        "down_threshold",
        desired.down_threshold != a.down_threshold,
        json!({"down_threshold": desired.down_threshold}),
    );
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
