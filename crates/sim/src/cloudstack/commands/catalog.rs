//! What the account sees but does not change here: zones, service offerings, Kubernetes
//! versions, networks, SSH key pairs, the capabilities and the account's settings.

use serde_json::{json, Value};

use super::{matches_keyword, zone_name, Reply};
use crate::cloudstack::api::{cs_time, list, ApiResult};
use crate::cloudstack::params::Params;
use crate::cloudstack::state::Ctx;
use crate::cloudstack::world::{Network, World};

/// The services of every network here: an isolated network with a virtual router.
const NETWORK_SERVICES: [&str; 6] = [
    "Lb",
    "Firewall",
    "SourceNat",
    "Dns",
    "Dhcp",
    "PortForwarding",
];

pub const MAX_SIZE_SETTING: &str = "cloud.kubernetes.cluster.max.size";

pub fn list_zones(world: &World, cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let id = p.text("id");
    let name = p.text("name");
    let items = world
        .zones
        .iter()
        .filter(|z| id.is_none_or(|id| z.id == id) && name.is_none_or(|n| z.name == n))
        .map(|z| {
            json!({"id": z.id, "name": z.name, "allocationstate": "Enabled",
                   "networktype": "Advanced", "securitygroupsenabled": false})
        })
        .collect();
    Reply::read(list(p, "zone", items, cx.page_size)?)
}

pub fn list_offerings(world: &World, cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let id = p.text("id");
    let name = p.text("name");
    let items = world
        .offerings
        .iter()
        .filter(|o| id.is_none_or(|id| o.id == id) && name.is_none_or(|n| o.name == n))
        .filter(|o| matches_keyword(p.text("keyword"), &[Some(&o.name)]))
        .map(|o| {
            let mut body = json!({
                "id": o.id, "name": o.name, "displaytext": o.name,
                "iscustomized": o.iscustomized, "created": cs_time(o.created),
            });
            if !o.iscustomized {
                body["cpunumber"] = o.cpunumber.into();
                body["cpuspeed"] = o.cpuspeed.into();
                body["memory"] = o.memory.into();
            }
            body
        })
        .collect();
    Reply::read(list(p, "serviceoffering", items, cx.page_size)?)
}

pub fn list_versions(world: &World, cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let id = p.text("id");
    let zone = p.text("zoneid");
    let items = world
        .versions
        .iter()
        .filter(|v| id.is_none_or(|id| v.id == id) && zone.is_none_or(|z| v.zoneid == z))
        .filter(|v| matches_keyword(p.text("keyword"), &[Some(&v.name)]))
        .map(|v| {
            json!({
                "id": v.id, "name": v.name, "semanticversion": v.semanticversion,
                "state": v.state, "mincpunumber": v.mincpunumber, "minmemory": v.minmemory,
                "isostate": v.isostate, "zoneid": v.zoneid, "zonename": zone_name(world, &v.zoneid),
                "supportsha": true, "supportsautoscaling": true,
            })
        })
        .collect();
    Reply::read(list(p, "kubernetessupportedversion", items, cx.page_size)?)
}

pub fn render_network(world: &World, n: &Network) -> Value {
    let services: Vec<Value> = NETWORK_SERVICES
        .iter()
        .map(|s| json!({"name": s, "provider": [{"name": "VirtualRouter"}]}))
        .collect();
    json!({
        "id": n.id, "name": n.name, "displaytext": n.name, "zoneid": n.zoneid,
        "zonename": zone_name(world, &n.zoneid), "cidr": n.cidr, "type": "Isolated",
        "state": "Implemented", "service": services, "restartrequired": false,
    })
}

pub fn list_networks(world: &World, cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let id = p.text("id");
    let zone = p.text("zoneid");
    let items = world
        .networks
        .iter()
        .filter(|n| id.is_none_or(|id| n.id == id) && zone.is_none_or(|z| n.zoneid == z))
        .filter(|n| matches_keyword(p.text("keyword"), &[Some(&n.name)]))
        .map(|n| render_network(world, n))
        .collect();
    Reply::read(list(p, "network", items, cx.page_size)?)
}

pub fn list_keypairs(world: &World, cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let name = p.text("name");
    let items = world
        .keypairs
        .iter()
        .filter(|k| name.is_none_or(|n| k.name == n))
        .map(|k| json!({"name": k.name, "fingerprint": k.fingerprint}))
        .collect();
    Reply::read(list(p, "sshkeypair", items, cx.page_size)?)
}

pub fn capabilities(cx: &Ctx) -> ApiResult<Reply> {
    Reply::read(json!({"capability": {
        "cloudstackversion": cx.version,
        "kubernetesserviceenabled": true,
        "kubernetesclusterexperimentalfeaturesenabled": false,
        "userpublictemplateenabled": true,
        "supportELB": "false",
        "projectinviterequired": false,
        "allowusercreateprojects": true,
        "customdiskofferingmaxsize": 1024,
        "apilimitinterval": 1,
        "apilimitmax": 0,
    }}))
}

/// The account's settings any user may read; only the one CKS needs is modelled.
pub fn list_configurations(cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let settings = [(
        MAX_SIZE_SETTING,
        cx.max_cluster_size.to_string(),
        "Maximum size (control nodes + workers) of a Kubernetes cluster",
    )];
    let items = settings
        .iter()
        .filter(|(name, _, _)| p.text("name").is_none_or(|n| n == *name))
        .map(|(name, value, description)| {
            json!({"name": name, "value": value, "description": description,
                   "category": "Advanced", "scope": "account", "isdynamic": true})
        })
        .collect();
    Reply::read(list(p, "configuration", items, cx.page_size)?)
}
