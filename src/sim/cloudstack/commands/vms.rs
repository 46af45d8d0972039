//! Virtual machines: the standalone ones of a fresh account and the nodes CKS creates.

use serde_json::{json, Value};

use super::{matches_keyword, matches_tags, tags_of, zone_name, Reply};
use crate::sim::cloudstack::api::{cs_time, list as page, ApiResult};
use crate::sim::cloudstack::params::Params;
use crate::sim::cloudstack::state::Ctx;
use crate::sim::cloudstack::world::{Vm, World};

pub fn render(world: &World, vm: &Vm) -> Value {
    let offering = world.offering(&vm.serviceofferingid);
    let network = world.network(&vm.networkid);
    json!({
        "id": vm.id, "name": vm.name, "displayname": vm.name, "state": vm.state,
        "zoneid": vm.zoneid, "zonename": zone_name(world, &vm.zoneid),
        "serviceofferingid": vm.serviceofferingid,
        "serviceofferingname": offering.map(|o| o.name.clone()),
        "cpunumber": offering.map(|o| o.cpunumber), "memory": offering.map(|o| o.memory),
        "hypervisor": vm.hypervisor, "created": cs_time(vm.created),
        "nic": [{
            "id": vm.nic_id, "networkid": vm.networkid,
            "networkname": network.map(|n| n.name.clone()),
            "ipaddress": vm.ipaddress, "isdefault": true, "type": "Isolated",
        }],
        "tags": tags_of(world, &vm.id),
    })
}

pub fn list(world: &World, cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let id = p.text("id");
    let ids = p.list("ids");
    let name = p.text("name");
    let network = p.text("networkid");
    let state = p.text("state");
    let items = world
        .vms
        .iter()
        .filter(|vm| id.is_none_or(|id| vm.id == id))
        .filter(|vm| ids.as_ref().is_none_or(|ids| ids.contains(&vm.id)))
        .filter(|vm| name.is_none_or(|n| vm.name == n))
        .filter(|vm| network.is_none_or(|n| vm.networkid == n))
        .filter(|vm| state.is_none_or(|s| vm.state.eq_ignore_ascii_case(s)))
        .filter(|vm| matches_keyword(p.text("keyword"), &[Some(&vm.name)]))
        .filter(|vm| matches_tags(world, p, &vm.id))
        .map(|vm| render(world, vm))
        .collect();
    Reply::read(page(p, "virtualmachine", items, cx.page_size)?)
}
