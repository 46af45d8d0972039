//! Resource tags on VMs, LB rules, public addresses and Kubernetes clusters: created and
//! deleted by async jobs, shown in every tagged object's `tags` and by listTags.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::Reply;
use crate::cloudstack::api::{list as page, ApiError, ApiResult};
use crate::cloudstack::jobs::{Action, Start};
use crate::cloudstack::params::Params;
use crate::cloudstack::state::Ctx;
use crate::cloudstack::world::{Tag, World};

const CREATE_CMD: &str = "org.apache.cloudstack.api.command.user.tag.CreateTagsCmd";
const DELETE_CMD: &str = "org.apache.cloudstack.api.command.user.tag.DeleteTagsCmd";
/// The resource types modelled here, spelled as the API takes them.
const TYPES: [&str; 4] = [
    "UserVm",
    "LoadBalancer",
    "PublicIpAddress",
    "KubernetesCluster",
];

fn exists(world: &World, kind: &str, id: &str) -> bool {
    match kind {
        "UserVm" => world.vm(id).is_some(),
        "LoadBalancer" => world.lb_rule(id).is_some(),
        "PublicIpAddress" => world.public_ip(id).is_some_and(|ip| ip.state != "Free"),
        "KubernetesCluster" => world.cluster(id).is_some(),
        _ => false,
    }
}

/// The canonical spelling of a resource type (the server matches it case-insensitively).
fn resource_type(p: &Params) -> ApiResult<&'static str> {
    let given = p.required("resourcetype")?;
    TYPES
        .iter()
        .find(|t| t.eq_ignore_ascii_case(given))
        .copied()
        .ok_or_else(|| ApiError::param(format!("Invalid resource type: {given}")))
}

fn resource_ids(p: &Params) -> ApiResult<Vec<String>> {
    let ids = p.list("resourceids").unwrap_or_default();
    if ids.is_empty() {
        p.required("resourceids")?;
    }
    Ok(ids)
}

pub fn create(world: &mut World, p: &Params) -> ApiResult<Reply> {
    let kind = resource_type(p)?;
    let ids = resource_ids(p)?;
    let pairs: Vec<(String, String)> = p
        .map("tags")
        .into_iter()
        .filter_map(|m| {
            Some((
                m.get("key")?.clone(),
                m.get("value").cloned().unwrap_or_default(),
            ))
        })
        .collect();
    if pairs.is_empty() {
        p.required("tags")?;
    }
    let refusal = ids.iter().find_map(|id| {
        if !exists(world, kind, id) {
            return Some(format!(
                "Unable to find resource by id {id} and type {kind}"
            ));
        }
        pairs.iter().find_map(|(key, _)| {
            let taken = world
                .tags
                .iter()
                .any(|t| t.resourceid == *id && t.key == *key);
            taken.then(|| format!("tag {key} already on {kind} with id {id}"))
        })
    });
    let tags = ids
        .iter()
        .flat_map(|id| {
            pairs.iter().map(move |(key, value)| Tag {
                key: key.clone(),
                value: value.clone(),
                resourcetype: kind.into(),
                resourceid: id.clone(),
            })
        })
        .collect();
    let action = match refusal {
        Some(text) => Action::fail(ApiError::param(text)),
        None => Action::TagsCreate { tags },
    };
    Ok(Reply::Job(Start {
        cmd: CREATE_CMD,
        instance_type: None,
        instance_id: None,
        id: None,
        action,
    }))
}

pub fn finish_create(world: &mut World, tags: Vec<Tag>) -> ApiResult<Value> {
    for tag in tags {
        let kind = tag.resourcetype.clone();
        if exists(world, &kind, &tag.resourceid) {
            world
                .tags
                .retain(|t| !(t.resourceid == tag.resourceid && t.key == tag.key));
            world.tags.push(tag);
        }
    }
    Ok(json!({ "success": true }))
}

/// Which tags a deleteTags removes: every tag of the resources, or the keys given (and, where
/// a value is given, only with that value).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Deletion {
    pub resource_ids: Vec<String>,
    pub resource_type: String,
    pub keys: Vec<(String, Option<String>)>,
}

pub fn delete(p: &Params) -> ApiResult<Reply> {
    let kind = resource_type(p)?;
    let deletion = Deletion {
        resource_ids: resource_ids(p)?,
        resource_type: kind.into(),
        keys: p
            .map("tags")
            .into_iter()
            .filter_map(|m| Some((m.get("key")?.clone(), m.get("value").cloned())))
            .collect(),
    };
    Ok(Reply::Job(Start {
        cmd: DELETE_CMD,
        instance_type: None,
        instance_id: None,
        id: None,
        action: Action::TagsDelete(deletion),
    }))
}

pub fn finish_delete(world: &mut World, d: &Deletion) -> ApiResult<Value> {
    world.tags.retain(|t| {
        let selected = d.resource_ids.contains(&t.resourceid)
            && t.resourcetype == d.resource_type
            && (d.keys.is_empty()
                || d.keys.iter().any(|(key, value)| {
                    *key == t.key && value.as_ref().is_none_or(|v| *v == t.value)
                }));
        !selected
    });
    Ok(json!({ "success": true }))
}

pub fn list(world: &World, cx: &Ctx, p: &Params) -> ApiResult<Reply> {
    let id = p.text("resourceid");
    let kind = p.text("resourcetype");
    let key = p.text("key");
    let value = p.text("value");
    let items = world
        .tags
        .iter()
        .filter(|t| id.is_none_or(|id| t.resourceid == id))
        .filter(|t| kind.is_none_or(|k| t.resourcetype.eq_ignore_ascii_case(k)))
        .filter(|t| key.is_none_or(|k| t.key == k))
        .filter(|t| value.is_none_or(|v| t.value == v))
        .map(|t| {
            json!({"key": t.key, "value": t.value, "resourcetype": t.resourcetype,
                   "resourceid": t.resourceid})
        })
        .collect();
    Reply::read(page(p, "tag", items, cx.page_size)?)
}
