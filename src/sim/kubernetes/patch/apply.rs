//! Server-side apply, simplified: the applied configuration is merged into the live object
//! with the strategic merge rules (maps key by key, Service ports by port, taints whole), and
//! a missing object is created from it (the store does that). What is NOT modelled: managed
//! fields, so a field an earlier apply set and a later apply omits is kept rather than
//! removed, and conflicts between field managers (`force` is accepted and changes nothing).

use serde_json::Value;

use super::strategic;
use crate::sim::kubernetes::kinds::Kind;

pub fn apply(kind: Kind, live: &Value, applied: &Value) -> Result<Value, String> {
    if !applied.is_object() {
        return Err("an apply configuration must be a JSON object".into());
    }
    strategic::apply(kind, live, applied)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn applied_fields_merge_into_the_live_object_and_others_stay() {
        let live = json!({"metadata": {"name": "s", "uid": "u"},
            "spec": {"ports": [{"name": "http", "port": 80, "nodePort": 30100}]}});
        let applied = json!({"metadata": {"name": "s", "labels": {"app": "shop"}},
            "spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8080}]}});
        assert_eq!(
            apply(Kind::Service, &live, &applied).unwrap(),
            json!({"metadata": {"name": "s", "uid": "u", "labels": {"app": "shop"}},
                   "spec": {"ports": [{"name": "http", "port": 80, "nodePort": 30100,
                                       "targetPort": 8080}]}})
        );
        assert!(apply(Kind::Service, &live, &json!([1])).is_err());
    }
}
