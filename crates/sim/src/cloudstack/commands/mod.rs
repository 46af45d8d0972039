//! The API's commands, one file per area. A command reads its parameters, validates what the
//! server validates synchronously, and either answers at once or starts an async job whose
//! [`Action`](super::jobs::Action) changes the world when it ends.

pub mod catalog;
pub mod clusters;
pub mod firewall;
pub mod ips;
pub mod lb;
pub mod tags;
pub mod vms;

use serde_json::{json, Value};

use super::api::{ApiError, ApiResult};
use super::jobs::{Job, Start};
use super::params::Params;
use super::state::Ctx;
use super::world::World;

/// What a command answers.
#[derive(Debug)]
pub enum Reply {
    /// The body under the response key; `mutated` when the world changed.
    Now { body: Value, mutated: bool },
    /// An async job to start.
    Job(Start),
}

impl Reply {
    pub fn read(body: Value) -> ApiResult<Reply> {
        Ok(Reply::Now {
            body,
            mutated: false,
        })
    }
}

pub fn dispatch(world: &mut World, cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let command = p.command();
    match command.to_lowercase().as_str() {
        "listzones" => catalog::list_zones(world, cx, p),
        "listserviceofferings" => catalog::list_offerings(world, cx, p),
        "listkubernetessupportedversions" => catalog::list_versions(world, cx, p),
        "listnetworks" => catalog::list_networks(world, cx, p),
        "listsshkeypairs" => catalog::list_keypairs(world, cx, p),
        "listcapabilities" => catalog::capabilities(cx),
        "listconfigurations" => catalog::list_configurations(cx, p),
        "listvirtualmachines" => vms::list(world, cx, p),
        "startvirtualmachine" => vms::power(world, p, true),
        "stopvirtualmachine" => vms::power(world, p, false),
        "associateipaddress" => ips::associate(world, cx, p),
        "disassociateipaddress" => ips::disassociate(world, p),
        "listpublicipaddresses" => ips::list(world, cx, p),
        "createloadbalancerrule" => lb::create(world, cx, p),
        "updateloadbalancerrule" => lb::update(world, cx, p),
        "deleteloadbalancerrule" => lb::delete(world, p),
        "assigntoloadbalancerrule" => lb::assign(world, p, true),
        "removefromloadbalancerrule" => lb::assign(world, p, false),
        "listloadbalancerrules" => lb::list(world, cx, p),
        "listloadbalancerruleinstances" => lb::list_instances(world, cx, p),
        "createfirewallrule" => firewall::create(world, cx, p),
        "deletefirewallrule" => firewall::delete(world, p),
        "listfirewallrules" => firewall::list(world, cx, p),
        "createtags" => tags::create(world, p),
        "deletetags" => tags::delete(p),
        "listtags" => tags::list(world, cx, p),
        "createkubernetescluster" => clusters::create::create(world, cx, p),
        "listkubernetesclusters" => clusters::list(world, cx, p),
        "scalekubernetescluster" => clusters::scale::scale(world, cx, p),
        "upgradekubernetescluster" => clusters::upgrade::upgrade(world, cx, p),
        "startkubernetescluster" => clusters::lifecycle::start(world, p),
        "stopkubernetescluster" => clusters::lifecycle::stop(world, p),
        "deletekubernetescluster" => clusters::lifecycle::delete(world, p),
        "getkubernetesclusterconfig" => clusters::config(world, cx, p),
        "queryasyncjobresult" => query_job(world, p),
        _ => Err(ApiError::unknown_command(command)),
    }
}

fn query_job(world: &World, p: &Params) -> ApiResult<Reply> {
    let id = p.id("jobid", |id| world.jobs.iter().any(|j| j.id == id))?;
    let job = world.jobs.iter().find(|j| j.id == id).expect("checked");
    Reply::read(job.render())
}

/// The `{"jobid", "id"}` answer of an async command.
pub fn job_started(job: &Job, id: Option<&str>) -> Value {
    let mut body = json!({ "jobid": job.id });
    if let Some(id) = id {
        body["id"] = id.into();
    }
    body
}

/// The `tags` of an object: `[{key, value, resourcetype, resourceid}]`.
pub fn tags_of(world: &World, resource_id: &str) -> Value {
    Value::Array(
        world
            .tags_of(resource_id)
            .into_iter()
            .map(|t| {
                json!({
                    "key": t.key, "value": t.value,
                    "resourcetype": t.resourcetype, "resourceid": t.resourceid,
                })
            })
            .collect(),
    )
}

/// The `tags[i].key`/`tags[i].value` filter of tagged lists: an object matches when it
/// carries any one of the pairs (the server ORs them in its tag join).
pub fn matches_tags(world: &World, p: &Params, resource_id: &str) -> bool {
    let wanted = p.map("tags");
    wanted.is_empty()
        || world.tags_of(resource_id).iter().any(|tag| {
            wanted.iter().any(|pair| {
                pair.get("key") == Some(&tag.key)
                    && pair.get("value").is_none_or(|v| *v == tag.value)
            })
        })
}

/// `keyword`: a case-insensitive LIKE `%kw%`, as MySQL compares.
pub fn matches_keyword(keyword: Option<&str>, fields: &[Option<&str>]) -> bool {
    let Some(keyword) = keyword else {
        return true;
    };
    let keyword = keyword.to_lowercase();
    fields
        .iter()
        .flatten()
        .any(|f| f.to_lowercase().contains(&keyword))
}

pub fn zone_name(world: &World, id: &str) -> String {
    world.zone(id).map(|z| z.name.clone()).unwrap_or_default()
}

pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
