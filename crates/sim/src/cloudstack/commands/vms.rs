//! Virtual machines: the standalone ones of a fresh account and the nodes CKS creates.

use serde_json::{json, Value};

use super::{matches_keyword, matches_tags, tags_of, zone_name, Reply};
use crate::cloudstack::api::{cs_time, list as page, ApiError, ApiResult};
use crate::cloudstack::jobs::{Action, Start};
use crate::cloudstack::params::Params;
use crate::cloudstack::state::Ctx;
use crate::cloudstack::world::{Vm, World};

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

/// stopVirtualMachine / startVirtualMachine: async jobs; the VM is `Stopping` / `Starting`
/// until the job ends. A VM already in the wanted state is left as it is (the server's
/// state machine treats the transition as done).
pub fn power(world: &mut World, p: &Params, start: bool) -> ApiResult<Reply> {
    let id = p.id("id", |id| world.vm(id).is_some())?;
    let (passing, done) = match start {
        true => ("Starting", "Running"),
        false => ("Stopping", "Stopped"),
    };
    if let Some(vm) = world.vms.iter_mut().find(|vm| vm.id == id) {
        if vm.state != done {
            vm.state = passing.into();
        }
    }
    let (cmd, action) = match start {
        true => (
            "org.apache.cloudstack.api.command.user.vm.StartVMCmd",
            Action::VmStart { id: id.clone() },
        ),
        false => (
            "org.apache.cloudstack.api.command.user.vm.StopVMCmd",
            Action::VmStop { id: id.clone() },
        ),
    };
    Ok(Reply::Job(Start {
        cmd,
        instance_type: Some("VirtualMachine"),
        instance_id: Some(id),
        id: None,
        action,
    }))
}

/// The job's end: the VM is in its final state and the result is the VM.
pub fn finish_power(world: &mut World, id: &str, state: &str) -> ApiResult<Value> {
    let Some(vm) = world.vms.iter_mut().find(|vm| vm.id == id) else {
        return Err(ApiError::internal(
            "The virtual machine was expunged meanwhile",
        ));
    };
    vm.state = state.into();
    let vm = world.vm(id).expect("found above");
    Ok(json!({ "virtualmachine": render(world, vm) }))
}
