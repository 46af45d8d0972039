//! What an attribute change does to objects the user does not write. In controller mode the
//! user's change is a Service field; the cloud's controller then changes the cloud objects, and
//! each such predicted change is an [`Effect`] listed under the attribute that causes it.
//!
//! Some values are only known once apply has run (a node port the apiserver allocates when the
//! Service is written): they are [`unknown`] values, never a placeholder number a reader could
//! take for the real one.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::model::Impact;

/// One predicted change to an object the cloud's controller manages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Effect {
    /// Config-shaped path of the object's attribute, e.g. `ports.http.monitor-port`.
    pub path: String,
    pub before: Value,
    pub after: Value,
    pub impact: Impact,
    pub reason: String,
}

/// The key of an unknown value's marker object: `{"unknown": "<why>"}`.
const UNKNOWN: &str = "unknown";

/// A value known only after apply, saying who decides it (`allocated by the apiserver`).
pub fn unknown(why: &str) -> Value {
    json!({ UNKNOWN: why })
}

/// Why a value is unknown, if it is an [`unknown`] marker.
pub fn unknown_reason(value: &Value) -> Option<&str> {
    match value.as_object() {
        Some(object) if object.len() == 1 => object.get(UNKNOWN)?.as_str(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_value_says_who_decides_it_and_nothing_else_reads_as_one() {
        let port = unknown("allocated by the apiserver");
        assert_eq!(port, json!({"unknown": "allocated by the apiserver"}));
        assert_eq!(unknown_reason(&port), Some("allocated by the apiserver"));
        assert_eq!(unknown_reason(&json!(0)), None);
        assert_eq!(unknown_reason(&json!({"unknown": "x", "other": 1})), None);
        assert_eq!(unknown_reason(&json!({"unknown": 3})), None);
    }
}
