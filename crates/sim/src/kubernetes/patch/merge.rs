//! RFC 7386 JSON merge patch: objects merge key by key, `null` deletes, anything else
//! (lists included) replaces.

use serde_json::{Map, Value};

pub fn apply(target: &Value, patch: &Value) -> Value {
    let Value::Object(patch) = patch else {
        return patch.clone();
    };
    let mut result = match target {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    for (key, value) in patch {
        if value.is_null() {
            result.remove(key);
        } else {
            let current = result.get(key).cloned().unwrap_or(Value::Null);
            result.insert(key.clone(), apply(&current, value));
        }
    }
    Value::Object(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn maps_merge_null_deletes_and_lists_are_replaced() {
        let target = json!({"metadata": {"labels": {"a": "1", "b": "2"}},
                            "spec": {"taints": [{"key": "x"}, {"key": "y"}]}});
        let patch = json!({"metadata": {"labels": {"a": null, "c": "3"}},
                           "spec": {"taints": [{"key": "z"}]}});
        assert_eq!(
            apply(&target, &patch),
            json!({"metadata": {"labels": {"b": "2", "c": "3"}},
                   "spec": {"taints": [{"key": "z"}]}})
        );
    }

    #[test]
    fn rfc_7386_appendix_example() {
        let target = json!({"title": "Goodbye!", "author": {"givenName": "John",
            "familyName": "Doe"}, "tags": ["example", "sample"], "content": "x"});
        let patch = json!({"title": "Hello!", "phoneNumber": "+01-123-456-7890",
            "author": {"familyName": null}, "tags": ["example"]});
        assert_eq!(
            apply(&target, &patch),
            json!({"title": "Hello!", "author": {"givenName": "John"}, "tags": ["example"],
                   "content": "x", "phoneNumber": "+01-123-456-7890"})
        );
    }

    #[test]
    fn a_non_object_patch_replaces_and_nulls_inside_new_maps_are_dropped() {
        assert_eq!(apply(&json!({"a": 1}), &json!([1])), json!([1]));
        assert_eq!(
            apply(&json!({}), &json!({"a": {"b": null, "c": 1}})),
            json!({"a": {"c": 1}})
        );
    }
}
