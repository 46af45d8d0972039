//! get and list. A list is one consistent snapshot; `limit` pages it and `continue` carries
//! the storage key of the last item served, so paging stays correct while objects come and go.

use std::ops::Bound;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{json, Value};

use super::{not_found, served};
use crate::kubernetes::kinds::{Kind, ObjectKey};
use crate::kubernetes::selector::{FieldSelector, LabelSelector};
use crate::kubernetes::status::{ApiError, ApiResult};
use crate::kubernetes::world::World;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListQuery {
    pub label_selector: Option<String>,
    pub field_selector: Option<String>,
    /// 0 or absent: everything.
    pub limit: Option<usize>,
    pub continue_token: Option<String>,
}

pub fn get(world: &World, kind: Kind, key: &ObjectKey) -> ApiResult<Value> {
    world
        .get(kind, key)
        .map(|stored| served(kind, &world.shown(kind, stored.clone())))
        .ok_or_else(|| not_found(kind, key))
}

/// `namespace`: None lists every namespace (and is the only choice for cluster-scoped kinds).
pub fn list(
    world: &World,
    kind: Kind,
    namespace: Option<&str>,
    query: &ListQuery,
) -> ApiResult<Value> {
    let labels = parse(query.label_selector.as_deref(), LabelSelector::parse)?;
    let fields = parse(query.field_selector.as_deref(), FieldSelector::parse)?;
    let start = match &query.continue_token {
        Some(token) if !token.is_empty() => Bound::Excluded(decode_token(token)?),
        _ => Bound::Unbounded,
    };
    let prefix = namespace.map(|ns| format!("{ns}/"));
    let mut matching = world
        .objects(kind)
        .range::<String, _>((start, Bound::Unbounded))
        .filter(|(key, _)| prefix.as_ref().is_none_or(|p| key.starts_with(p)))
        .filter(|(_, object)| labels.matches(object) && fields.matches(object));
    let limit = query.limit.filter(|l| *l > 0).unwrap_or(usize::MAX);
    let page: Vec<(&String, &Value)> = matching.by_ref().take(limit).collect();
    let remaining = matching.count();
    let mut metadata = json!({"resourceVersion": world.resource_version.to_string()});
    if remaining > 0 {
        let last = page.last().map(|(key, _)| key.as_str()).unwrap_or("");
        metadata["continue"] = json!(URL_SAFE_NO_PAD.encode(last));
        metadata["remainingItemCount"] = json!(remaining);
    }
    let items: Vec<Value> = page
        .into_iter()
        .map(|(_, object)| world.shown(kind, object.clone()))
        .collect();
    Ok(json!({
        "kind": kind.list_kind(),
        "apiVersion": "v1",
        "metadata": metadata,
        "items": items,
    }))
}

fn parse<T: Default>(
    text: Option<&str>,
    parser: impl Fn(&str) -> Result<T, String>,
) -> ApiResult<T> {
    match text {
        Some(text) => parser(text)
            .map_err(|e| ApiError::bad_request(format!("unable to parse requirement: {e}"))),
        None => Ok(T::default()),
    }
}

fn decode_token(token: &str) -> ApiResult<String> {
    URL_SAFE_NO_PAD
        .decode(token)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(|| ApiError::bad_request("continue key is not valid"))
}
