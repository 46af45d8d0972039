//! Strategic merge patch for the core types served (research §2.6, apimachinery
//! `strategicpatch/patch.go`): maps merge key by key and `null` deletes; a list merges by the
//! strategy its field declares in the Go types, and is replaced whole otherwise.
//!
//! Declared here: `metadata.finalizers` (primitive union), `metadata.ownerReferences` (by
//! `uid`); Node `spec.podCIDRs` (union), `status.addresses`/`status.conditions` (by `type`);
//! Service `spec.ports` (by `port` only, so TCP and UDP on one port collide as in the real
//! apiserver, kubernetes#39188), `status.conditions` (by `type`). Node `spec.taints` is atomic
//! (`+listType=atomic`): the whole list is replaced, `null` clears it.
//!
//! Directives understood and stripped: `$patch` (replace, delete, merge) on maps and list
//! items, `$deleteFromPrimitiveList/<f>`, `$setElementOrder/<f>` (items it names come first in
//! its order, others follow in their merged order — the real engine interleaves server-only
//! items, which no client here relies on), `$retainKeys`.

use serde_json::{Map, Value};

use crate::kubernetes::kinds::Kind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListStrategy {
    /// Replaced whole: every list the Go types do not declare a strategy for.
    Atomic,
    /// A list of primitives merged as a set.
    Union,
    /// A list of maps merged item by item on this key.
    MergeKey(&'static str),
}

fn list_strategy(kind: Kind, path: &[String]) -> ListStrategy {
    let path: Vec<&str> = path.iter().map(String::as_str).collect();
    match (kind, path.as_slice()) {
        (_, ["metadata", "finalizers"]) => ListStrategy::Union,
        (_, ["metadata", "ownerReferences"]) => ListStrategy::MergeKey("uid"),
        (Kind::Node, ["spec", "podCIDRs"]) => ListStrategy::Union,
        (Kind::Node, ["status", "addresses" | "conditions"]) => ListStrategy::MergeKey("type"),
        (Kind::Service, ["spec", "ports"]) => ListStrategy::MergeKey("port"),
        (Kind::Service, ["status", "conditions"]) => ListStrategy::MergeKey("type"),
        (Kind::Namespace, ["status", "conditions"]) => ListStrategy::MergeKey("type"),
        _ => ListStrategy::Atomic,
    }
}

pub fn apply(kind: Kind, original: &Value, patch: &Value) -> Result<Value, String> {
    let Value::Object(patch) = patch else {
        return Err("a strategic merge patch must be a JSON object".into());
    };
    let empty = Map::new();
    let original = original.as_object().unwrap_or(&empty);
    let merged = merge_map(kind, &mut Vec::new(), original, patch)?;
    Ok(Value::Object(merged.unwrap_or_default()))
}

/// `None`: the patch deletes the map (`$patch: delete`).
fn merge_map(
    kind: Kind,
    path: &mut Vec<String>,
    original: &Map<String, Value>,
    patch: &Map<String, Value>,
) -> Result<Option<Map<String, Value>>, String> {
    match patch.get("$patch").map(|d| d.as_str()) {
        None | Some(Some("merge")) => {}
        Some(Some("replace")) => {
            return merge_map(kind, path, &Map::new(), &without(patch, "$patch"));
        }
        Some(Some("delete")) => return Ok(None),
        Some(other) => return Err(format!("unknown patch type: {other:?}")),
    }
    let mut result = original.clone();
    for (key, values) in patch {
        if let Some(field) = key.strip_prefix("$deleteFromPrimitiveList/") {
            let values = values
                .as_array()
                .ok_or_else(|| format!("{key} must be a list"))?;
            if let Some(Value::Array(items)) = result.get_mut(field) {
                items.retain(|item| !values.contains(item));
            }
        }
    }
    for (key, value) in patch.iter().filter(|(key, _)| !key.starts_with('$')) {
        if value.is_null() {
            result.remove(key);
            continue;
        }
        path.push(key.clone());
        let merged = merge_value(kind, path, result.get(key), value);
        path.pop();
        match merged? {
            Some(merged) => result.insert(key.clone(), merged),
            None => result.remove(key),
        };
    }
    for (key, order) in patch {
        if let Some(field) = key.strip_prefix("$setElementOrder/") {
            if let Some(Value::Array(items)) = result.get_mut(field) {
                path.push(field.to_owned());
                set_element_order(list_strategy(kind, path), items, order)?;
                path.pop();
            }
        }
    }
    if let Some(retained) = patch.get("$retainKeys") {
        let retained = retained.as_array().ok_or("$retainKeys must be a list")?;
        result.retain(|key, _| retained.iter().any(|r| r.as_str() == Some(key)));
    }
    Ok(Some(result))
}

fn merge_value(
    kind: Kind,
    path: &mut Vec<String>,
    original: Option<&Value>,
    patch: &Value,
) -> Result<Option<Value>, String> {
    let empty = Map::new();
    Ok(match (original, patch) {
        (Some(Value::Object(original)), Value::Object(patch)) => {
            merge_map(kind, path, original, patch)?.map(Value::Object)
        }
        (_, Value::Object(patch)) => merge_map(kind, path, &empty, patch)?.map(Value::Object),
        (Some(Value::Array(original)), Value::Array(patch)) => {
            Some(Value::Array(merge_list(kind, path, original, patch)?))
        }
        (_, Value::Array(patch)) => Some(Value::Array(merge_list(kind, path, &[], patch)?)),
        (_, scalar) => Some(scalar.clone()),
    })
}

fn merge_list(
    kind: Kind,
    path: &mut Vec<String>,
    original: &[Value],
    patch: &[Value],
) -> Result<Vec<Value>, String> {
    let is_replace = |item: &Value| item.get("$patch").and_then(Value::as_str) == Some("replace");
    if patch.iter().any(is_replace) {
        let rest: Vec<Value> = patch.iter().filter(|i| !is_replace(i)).cloned().collect();
        return merge_list_with(kind, path, ListStrategy::Atomic, &[], &rest);
    }
    merge_list_with(kind, path, list_strategy(kind, path), original, patch)
}

fn merge_list_with(
    kind: Kind,
    path: &mut Vec<String>,
    strategy: ListStrategy,
    original: &[Value],
    patch: &[Value],
) -> Result<Vec<Value>, String> {
    match strategy {
        ListStrategy::Atomic => patch
            .iter()
            .map(|item| merge_value(kind, path, None, item))
            .filter_map(Result::transpose)
            .collect(),
        ListStrategy::Union => {
            let mut result = original.to_vec();
            for item in patch {
                if !result.contains(item) {
                    result.push(item.clone());
                }
            }
            Ok(result)
        }
        ListStrategy::MergeKey(merge_key) => {
            let mut result = original.to_vec();
            for item in patch {
                merge_keyed_item(kind, path, merge_key, &mut result, item)?;
            }
            Ok(result)
        }
    }
}

fn merge_keyed_item(
    kind: Kind,
    path: &mut Vec<String>,
    merge_key: &str,
    result: &mut Vec<Value>,
    item: &Value,
) -> Result<(), String> {
    let Value::Object(item) = item else {
        return Err(format!("{}: items must be maps", path.join(".")));
    };
    let key = item
        .get(merge_key)
        .ok_or_else(|| format!("map: {item:?} does not contain declared merge key: {merge_key}"))?;
    let found = result.iter().position(|o| o.get(merge_key) == Some(key));
    let empty = Map::new();
    let original = found.and_then(|i| result[i].as_object()).unwrap_or(&empty);
    let merged = merge_map(kind, path, original, item)?;
    match (found, merged) {
        (Some(i), Some(merged)) => result[i] = Value::Object(merged),
        (Some(i), None) => {
            result.remove(i);
        }
        (None, Some(merged)) => result.push(Value::Object(merged)),
        (None, None) => {}
    }
    Ok(())
}

fn set_element_order(
    strategy: ListStrategy,
    items: &mut [Value],
    order: &Value,
) -> Result<(), String> {
    let order = order.as_array().ok_or("$setElementOrder must be a list")?;
    let identity = |item: &Value| -> Value {
        match strategy {
            ListStrategy::MergeKey(key) => item.get(key).cloned().unwrap_or(Value::Null),
            _ => item.clone(),
        }
    };
    let wanted: Vec<Value> = order.iter().map(identity).collect();
    items.sort_by_key(|item| {
        let id = identity(item);
        wanted.iter().position(|w| *w == id).unwrap_or(usize::MAX)
    });
    Ok(())
}

fn without(map: &Map<String, Value>, key: &str) -> Map<String, Value> {
    let mut map = map.clone();
    map.remove(key);
    map
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node_patch(original: Value, patch: Value) -> Value {
        apply(Kind::Node, &original, &patch).unwrap()
    }

    fn service_patch(original: Value, patch: Value) -> Value {
        apply(Kind::Service, &original, &patch).unwrap()
    }

    #[test]
    fn taints_are_atomic_the_whole_list_is_replaced() {
        let node = json!({"spec": {"taints": [
            {"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "NoExecute"}]}});
        let patched = node_patch(
            node,
            json!({"spec": {"taints": [{"key": "c", "value": "v", "effect": "NoSchedule"}]}}),
        );
        assert_eq!(
            patched["spec"]["taints"],
            json!([{"key": "c", "value": "v", "effect": "NoSchedule"}])
        );
    }

    #[test]
    fn null_taints_clear_the_list() {
        let node = json!({"spec": {"providerID": "x", "taints": [{"key": "a"}]}});
        assert_eq!(
            node_patch(node, json!({"spec": {"taints": null}})),
            json!({"spec": {"providerID": "x"}})
        );
    }

    #[test]
    fn maps_merge_key_by_key_and_null_deletes() {
        let node = json!({"metadata": {"labels": {"a": "1", "b": "2"}}});
        assert_eq!(
            node_patch(node, json!({"metadata": {"labels": {"a": null, "c": "3"}}})),
            json!({"metadata": {"labels": {"b": "2", "c": "3"}}})
        );
    }

    #[test]
    fn service_ports_merge_by_port() {
        let service = json!({"spec": {"ports": [
            {"name": "http", "port": 80, "protocol": "TCP", "nodePort": 30080},
            {"name": "https", "port": 443, "protocol": "TCP", "nodePort": 30443}]}});
        let patched = service_patch(
            service,
            json!({"spec": {"ports": [{"port": 80, "targetPort": 8080},
                                      {"port": 8443, "name": "alt"}]}}),
        );
        assert_eq!(
            patched["spec"]["ports"],
            json!([
                {"name": "http", "port": 80, "protocol": "TCP", "nodePort": 30080,
                 "targetPort": 8080},
                {"name": "https", "port": 443, "protocol": "TCP", "nodePort": 30443},
                {"port": 8443, "name": "alt"}])
        );
    }

    #[test]
    fn kubectl_client_side_apply_body_with_set_element_order() {
        // The body kubectl v1.32 sends for `apply` of an existing Service (research §2.1).
        let service = json!({
            "metadata": {"name": "s1", "annotations": {"x": "y"}},
            "spec": {"type": "LoadBalancer", "ports": [
                {"port": 80, "protocol": "TCP", "targetPort": 80, "nodePort": 31000}]}});
        let patch = json!({
            "metadata": {"annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": "{\"kind\":\"Service\"}\n"}},
            "spec": {"$setElementOrder/ports": [{"port": 80}],
                     "ports": [{"port": 80, "targetPort": 8080}]}});
        let patched = service_patch(service, patch);
        assert_eq!(
            patched,
            json!({
                "metadata": {"name": "s1", "annotations": {"x": "y",
                    "kubectl.kubernetes.io/last-applied-configuration":
                        "{\"kind\":\"Service\"}\n"}},
                "spec": {"type": "LoadBalancer", "ports": [
                    {"port": 80, "protocol": "TCP", "targetPort": 8080, "nodePort": 31000}]}})
        );
    }

    #[test]
    fn set_element_order_reorders_merged_items() {
        let service = json!({"spec": {"ports": [{"port": 80}, {"port": 443}]}});
        let patched = service_patch(
            service,
            json!({"spec": {"$setElementOrder/ports": [{"port": 443}, {"port": 80}],
                            "ports": [{"port": 443, "name": "https"}]}}),
        );
        assert_eq!(
            patched["spec"]["ports"],
            json!([{"port": 443, "name": "https"}, {"port": 80}])
        );
    }

    #[test]
    fn a_list_item_with_patch_delete_is_removed() {
        let service = json!({"spec": {"ports": [{"port": 80}, {"port": 443}]}});
        let patched = service_patch(
            service,
            json!({"spec": {"ports": [{"port": 80, "$patch": "delete"}]}}),
        );
        assert_eq!(patched["spec"]["ports"], json!([{"port": 443}]));
    }

    #[test]
    fn a_list_with_patch_replace_is_replaced_whole() {
        let service = json!({"spec": {"ports": [{"port": 80}, {"port": 443}]}});
        let patched = service_patch(
            service,
            json!({"spec": {"ports": [{"$patch": "replace"}, {"port": 8080}]}}),
        );
        assert_eq!(patched["spec"]["ports"], json!([{"port": 8080}]));
    }

    #[test]
    fn a_map_with_patch_replace_or_delete() {
        let node = json!({"metadata": {"labels": {"a": "1", "b": "2"}}});
        assert_eq!(
            node_patch(
                node.clone(),
                json!({"metadata": {"labels": {"$patch": "replace", "c": "3"}}})
            ),
            json!({"metadata": {"labels": {"c": "3"}}})
        );
        assert_eq!(
            node_patch(node, json!({"metadata": {"labels": {"$patch": "delete"}}})),
            json!({"metadata": {}})
        );
    }

    #[test]
    fn finalizers_are_a_union_and_delete_from_primitive_list_removes() {
        let service = json!({"metadata": {"finalizers": ["a", "b"]}});
        let added = service_patch(
            service.clone(),
            json!({"metadata": {"finalizers": ["b", "service.kubernetes.io/load-balancer-cleanup"]}}),
        );
        assert_eq!(
            added["metadata"]["finalizers"],
            json!(["a", "b", "service.kubernetes.io/load-balancer-cleanup"])
        );
        let removed = service_patch(
            service,
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
        );
        assert_eq!(removed["metadata"]["finalizers"], json!(["b"]));
    }

    #[test]
    fn node_addresses_and_conditions_merge_by_type() {
        let node = json!({"status": {
            "addresses": [{"type": "InternalIP", "address": "10.0.0.1"},
                          {"type": "Hostname", "address": "n"}],
            "conditions": [{"type": "Ready", "status": "True"}]}});
        let patched = node_patch(
            node,
            json!({"status": {
                "addresses": [{"type": "ExternalIP", "address": "5.1.2.3"},
                              {"type": "InternalIP", "address": "10.0.0.2"}],
                "conditions": [{"type": "Ready", "status": "False"}]}}),
        );
        assert_eq!(
            patched["status"]["addresses"],
            json!([{"type": "InternalIP", "address": "10.0.0.2"},
                   {"type": "Hostname", "address": "n"},
                   {"type": "ExternalIP", "address": "5.1.2.3"}])
        );
        assert_eq!(
            patched["status"]["conditions"],
            json!([{"type": "Ready", "status": "False"}])
        );
    }

    #[test]
    fn retain_keys_drops_the_keys_it_does_not_name() {
        let service = json!({"spec": {"a": 1, "b": 2, "c": 3}});
        let patched = service_patch(
            service,
            json!({"spec": {"$retainKeys": ["a", "d"], "d": 4}}),
        );
        assert_eq!(patched, json!({"spec": {"a": 1, "d": 4}}));
    }

    #[test]
    fn directives_in_new_values_are_stripped_and_merge_keys_required() {
        let patched = service_patch(
            json!({}),
            json!({"spec": {"$setElementOrder/ports": [{"port": 80}],
                            "ports": [{"port": 80}]}}),
        );
        assert_eq!(patched, json!({"spec": {"ports": [{"port": 80}]}}));
        let missing_key = apply(
            Kind::Service,
            &json!({"spec": {"ports": [{"port": 80}]}}),
            &json!({"spec": {"ports": [{"name": "x"}]}}),
        );
        assert!(missing_key.unwrap_err().contains("merge key: port"));
        assert!(apply(Kind::Node, &json!({}), &json!({"$patch": "explode"})).is_err());
    }
}
