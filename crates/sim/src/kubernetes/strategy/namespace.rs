//! A Namespace as the apiserver creates it: the `kubernetes` finalizer, phase Active and the
//! immutable `kubernetes.io/metadata.name` label.

use serde_json::{json, Value};

use super::names::{self, NameRule};
use crate::kubernetes::status::FieldError;

/// Namespaces the apiserver refuses to delete.
pub const PROTECTED: [&str; 3] = ["default", "kube-system", "kube-public"];

pub fn prepare(namespace: &mut Value) -> Result<(), Vec<FieldError>> {
    let errors = names::validate(namespace, NameRule::Dns1123Label);
    if !errors.is_empty() {
        return Err(errors);
    }
    let name = namespace["metadata"]["name"].clone();
    if !namespace["metadata"]["labels"].is_object() {
        namespace["metadata"]["labels"] = json!({});
    }
    namespace["metadata"]["labels"]["kubernetes.io/metadata.name"] = name;
    if namespace["spec"]["finalizers"].is_null() {
        namespace["spec"] = json!({"finalizers": ["kubernetes"]});
    }
    namespace["status"] = json!({"phase": "Active"});
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespace_gets_its_name_label_finalizer_and_phase() {
        let mut namespace = json!({"metadata": {"name": "shop"}});
        prepare(&mut namespace).unwrap();
        assert_eq!(
            namespace,
            json!({"metadata": {"name": "shop",
                                "labels": {"kubernetes.io/metadata.name": "shop"}},
                   "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
        );
        assert!(prepare(&mut json!({"metadata": {"name": "Shop"}})).is_err());
    }
}
