//! Server-side apply, simplified. The applied configuration is merged into the live object:
//! maps key by key (so annotations another manager wrote — a cloud controller's
//! `loadbalancer-uuid` — stay), `metadata.finalizers` as a set, and the SSA list-maps
//! (`+listType=map`: Service `spec.ports` keyed by `port`+`protocol`, Node
//! `status.addresses`/`conditions` by `type`, `ownerReferences` by `uid`) as if the applier
//! owned every item: the applied items make the list, each merged into the live item of the
//! same key, so a port's allocated nodePort stays while its port number does, and a port
//! renumbered is a new item (the apiserver then keeps its node port by name). Other lists
//! are replaced. A missing object is created from the configuration (the store does that).
//!
//! Not modelled: managed fields. A field an earlier apply set and a later one omits is kept
//! (the real apiserver removes it when no other manager owns it), list items another manager
//! added are dropped, and there are no conflicts between managers (`force` changes nothing).

use serde_json::{Map, Value};

use crate::kubernetes::kinds::Kind;

pub fn apply(kind: Kind, live: &Value, applied: &Value) -> Result<Value, String> {
    let Value::Object(applied) = applied else {
        return Err("an apply configuration must be a JSON object".into());
    };
    let empty = Map::new();
    let live = live.as_object().unwrap_or(&empty);
    Ok(Value::Object(merge_map(
        kind,
        &mut Vec::new(),
        live,
        applied,
    )))
}

enum ListType {
    Atomic,
    Set,
    Map(&'static [(&'static str, Option<&'static str>)]),
}

/// The key fields of each list-map, with the default a missing key field has.
fn list_type(kind: Kind, path: &[String]) -> ListType {
    let path: Vec<&str> = path.iter().map(String::as_str).collect();
    match (kind, path.as_slice()) {
        (_, ["metadata", "finalizers"]) => ListType::Set,
        (_, ["metadata", "ownerReferences"]) => ListType::Map(&[("uid", None)]),
        (Kind::Service, ["spec", "ports"]) => {
            ListType::Map(&[("port", None), ("protocol", Some("TCP"))])
        }
        (Kind::Node, ["status", "addresses" | "conditions"]) => ListType::Map(&[("type", None)]),
        _ => ListType::Atomic,
    }
}

fn merge_map(
    kind: Kind,
    path: &mut Vec<String>,
    live: &Map<String, Value>,
    applied: &Map<String, Value>,
) -> Map<String, Value> {
    let mut result = live.clone();
    for (key, value) in applied {
        if value.is_null() {
            result.remove(key);
            continue;
        }
        path.push(key.clone());
        let merged = match (live.get(key), value) {
            (Some(Value::Object(live)), Value::Object(applied)) => {
                Value::Object(merge_map(kind, path, live, applied))
            }
            (Some(Value::Array(live)), Value::Array(applied)) => {
                Value::Array(merge_list(kind, path, live, applied))
            }
            (_, value) => value.clone(),
        };
        path.pop();
        result.insert(key.clone(), merged);
    }
    result
}

fn merge_list(kind: Kind, path: &mut Vec<String>, live: &[Value], applied: &[Value]) -> Vec<Value> {
    match list_type(kind, path) {
        ListType::Atomic => applied.to_vec(),
        ListType::Set => {
            let mut result = live.to_vec();
            result.extend(applied.iter().filter(|v| !live.contains(v)).cloned());
            result
        }
        ListType::Map(keys) => {
            let key_of = |item: &Value| -> Vec<Value> {
                keys.iter()
                    .map(|(field, default)| match (item.get(*field), default) {
                        (Some(value), _) => value.clone(),
                        (None, Some(default)) => Value::from(*default),
                        (None, None) => Value::Null,
                    })
                    .collect()
            };
            applied
                .iter()
                .map(|item| {
                    let same = live.iter().find(|l| key_of(l) == key_of(item));
                    match (same, item) {
                        (Some(Value::Object(live)), Value::Object(item)) => {
                            Value::Object(merge_map(kind, path, live, item))
                        }
                        _ => item.clone(),
                    }
                })
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn applied_fields_merge_into_the_live_object_and_others_stay() {
        let live = json!({"metadata": {"name": "s", "uid": "u",
                "annotations": {"k8s.cloudscale.ch/loadbalancer-uuid": "lb-1"}},
            "spec": {"ports": [{"name": "http", "port": 80, "protocol": "TCP",
                                "nodePort": 30100}]}});
        let applied = json!({"metadata": {"name": "s", "annotations": {"a": "b"}},
            "spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8080}]}});
        assert_eq!(
            apply(Kind::Service, &live, &applied).unwrap(),
            json!({"metadata": {"name": "s", "uid": "u", "annotations": {
                        "k8s.cloudscale.ch/loadbalancer-uuid": "lb-1", "a": "b"}},
                   "spec": {"ports": [{"name": "http", "port": 80, "protocol": "TCP",
                                       "nodePort": 30100, "targetPort": 8080}]}})
        );
        assert!(apply(Kind::Service, &live, &json!([1])).is_err());
    }

    #[test]
    fn the_applied_ports_make_the_list_keyed_by_port_and_protocol() {
        let live = json!({"spec": {"ports": [
            {"name": "http", "port": 80, "protocol": "TCP", "nodePort": 30100},
            {"name": "dns", "port": 53, "protocol": "UDP", "nodePort": 30101}]}});
        let applied = json!({"spec": {"ports": [
            {"name": "http", "port": 8080},
            {"name": "dns", "port": 53, "protocol": "UDP"}]}});
        let result = apply(Kind::Service, &live, &applied).unwrap();
        assert_eq!(
            result["spec"]["ports"],
            json!([{"name": "http", "port": 8080},
                   {"name": "dns", "port": 53, "protocol": "UDP", "nodePort": 30101}])
        );
    }

    #[test]
    fn finalizers_are_a_set_and_taints_are_replaced() {
        let live = json!({"metadata": {"finalizers": ["a"]},
                          "spec": {"taints": [{"key": "x", "effect": "NoSchedule"}]}});
        let applied = json!({"metadata": {"finalizers": ["b"]}, "spec": {"taints": []}});
        assert_eq!(
            apply(Kind::Node, &live, &applied).unwrap(),
            json!({"metadata": {"finalizers": ["a", "b"]}, "spec": {"taints": []}})
        );
    }
}
