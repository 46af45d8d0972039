//! `actualLbState` and `lbMapper.findByServiceInfo`: the load balancer of a Service and its
//! sub-objects as the cloud has them now.

use serde_json::Value;

use super::config::LbConfig;
use super::http::{CallResult, Cloud};
use super::lbstate::{
    Actual, ActualLb, ActualPool, Found, HttpSpec, LbSpec, ListenerSpec, MemberSpec, MonitorSpec,
    PoolSpec, Vip,
};
use super::objects::SubnetRef;

fn text(value: &Value, field: &str) -> String {
    value[field].as_str().unwrap_or_default().to_owned()
}

fn int(value: &Value, field: &str) -> i64 {
    value[field].as_i64().unwrap_or_default()
}

fn port(value: &Value, field: &str) -> u16 {
    u16::try_from(int(value, field)).unwrap_or_default()
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| item.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn found<T>(value: &Value, spec: T) -> Found<T> {
    Found {
        uuid: text(value, "uuid"),
        href: text(value, "href"),
        spec,
    }
}

/// The uuid annotation's load balancer joined with those of the desired name, without
/// duplicates; more than one is an error. Errors of the two lookups are dropped, as the CCM's
/// `limiter.Join` drops them (its condition starts from a nil error), so an API error looks
/// like "no load balancer".
pub async fn find_lb(cloud: &Cloud, config: &LbConfig) -> Result<Option<Value>, String> {
    let mut found: Vec<Value> = Vec::new();
    if !config.uuid.is_empty() {
        if let Ok(lb) = cloud.get(&format!("load-balancers/{}", config.uuid)).await {
            found.push(lb);
        }
    }
    if let Ok(all) = cloud.list("load-balancers").await {
        for lb in all.into_iter().filter(|lb| text(lb, "name") == config.name) {
            if !found.iter().any(|f| f["uuid"] == lb["uuid"]) {
                found.push(lb);
            }
        }
    }
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.pop()),
        _ => Err(format!(
            "unable to get load balancer for {}: found more than one",
            config.name
        )),
    }
}

pub async fn actual_state(cloud: &Cloud, config: &LbConfig) -> Result<Actual, String> {
    let Some(lb) = find_lb(cloud, config).await? else {
        return Ok(Actual::default());
    };
    fetch_children(cloud, lb)
        .await
        .map_err(|e| format!("lb state: {e}"))
}

async fn fetch_children(cloud: &Cloud, lb: Value) -> CallResult<Actual> {
    let lb = lb_of(&lb);
    let monitors = cloud.list("load-balancers/health-monitors").await?;
    let listeners = cloud.list("load-balancers/listeners").await?;
    let mut pools = Vec::new();
    for pool in cloud.list("load-balancers/pools").await? {
        if pool["load_balancer"]["uuid"].as_str() != Some(&lb.uuid) {
            continue;
        }
        let uuid = text(&pool, "uuid");
        let members = cloud
            .list(&format!("load-balancers/pools/{uuid}/members"))
            .await?;
        let of_pool = |item: &&Value| item["pool"]["uuid"].as_str() == Some(uuid.as_str());
        pools.push(ActualPool {
            found: found(&pool, pool_of(&pool)),
            members: members.iter().map(|m| found(m, member_of(m))).collect(),
            monitors: monitors
                .iter()
                .filter(of_pool)
                .map(|m| found(m, monitor_of(m)))
                .collect(),
            listeners: listeners
                .iter()
                .filter(of_pool)
                .map(|l| found(l, listener_of(l)))
                .collect(),
        });
    }
    let floating_ips = cloud
        .list("floating-ips")
        .await?
        .iter()
        .filter(|ip| ip["load_balancer"]["uuid"].as_str() == Some(lb.uuid.as_str()))
        .map(|ip| text(ip, "network"))
        .collect();
    Ok(Actual {
        lb: Some(lb),
        pools,
        floating_ips,
    })
}

pub fn lb_of(lb: &Value) -> ActualLb {
    let vips = lb["vip_addresses"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|vip| Vip {
            address: vip["address"].as_str().map(str::to_owned),
            subnet: text(&vip["subnet"], "uuid"),
        })
        .collect();
    ActualLb {
        uuid: text(lb, "uuid"),
        href: text(lb, "href"),
        status: text(lb, "status"),
        spec: LbSpec {
            name: text(lb, "name"),
            flavor: text(&lb["flavor"], "slug"),
            zone: text(&lb["zone"], "slug"),
            vip_addresses: vips,
        },
    }
}

fn pool_of(pool: &Value) -> PoolSpec {
    PoolSpec {
        name: text(pool, "name"),
        algorithm: text(pool, "algorithm"),
        protocol: text(pool, "protocol"),
    }
}

fn member_of(member: &Value) -> MemberSpec {
    MemberSpec {
        name: text(member, "name"),
        enabled: member["enabled"].as_bool().unwrap_or_default(),
        protocol_port: port(member, "protocol_port"),
        monitor_port: port(member, "monitor_port"),
        address: text(member, "address"),
        subnet: serde_json::from_value::<SubnetRef>(member["subnet"].clone()).unwrap_or_default(),
    }
}

fn monitor_of(monitor: &Value) -> MonitorSpec {
    let http = &monitor["http"];
    MonitorSpec {
        kind: text(monitor, "type"),
        delay_s: int(monitor, "delay_s"),
        timeout_s: int(monitor, "timeout_s"),
        up_threshold: int(monitor, "up_threshold"),
        down_threshold: int(monitor, "down_threshold"),
        http: http.is_object().then(|| HttpSpec {
            expected_codes: strings(&http["expected_codes"]),
            method: text(http, "method"),
            url_path: text(http, "url_path"),
            version: text(http, "version"),
            host: http["host"].as_str().map(str::to_owned),
        }),
    }
}

fn listener_of(listener: &Value) -> ListenerSpec {
    ListenerSpec {
        name: text(listener, "name"),
        protocol: text(listener, "protocol"),
        protocol_port: port(listener, "protocol_port"),
        allowed_cidrs: strings(&listener["allowed_cidrs"]),
        timeout_client_data_ms: int(listener, "timeout_client_data_ms"),
        timeout_member_connect_ms: int(listener, "timeout_member_connect_ms"),
        timeout_member_data_ms: int(listener, "timeout_member_data_ms"),
    }
}
