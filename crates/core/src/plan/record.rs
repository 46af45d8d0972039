//! What a change records in the state once applied: the resource's desired attributes, kept
//! as the JSON text they serialize to.
//!
//! Text rather than a `serde_json::Value`: a plan makes one record per resource and most are
//! never read — only an apply turns them into state. A `Value` of a load balancer's spec is a
//! tree of small maps; at 5,000 load balancers building them was a quarter of the comparison's
//! time and 20 MB of the plan (issue 9). The text is one allocation, and a saved plan holds
//! the same JSON either way.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Record(Box<RawValue>);

impl Record {
    /// The record of `attributes` (a spec: serializing one cannot fail).
    pub fn of(attributes: &impl Serialize) -> Record {
        Record(serde_json::value::to_raw_value(attributes).expect("specs serialize"))
    }

    /// The JSON text.
    pub fn json(&self) -> &str {
        self.0.get()
    }

    pub fn to_value(&self) -> Value {
        self.parse().expect("a record is JSON")
    }

    /// The attributes read back as `T`.
    pub fn parse<T: DeserializeOwned>(&self) -> serde_json::Result<T> {
        serde_json::from_str(self.0.get())
    }
}

/// Equal when the JSON is, however it is spaced (a saved plan may be pretty-printed).
impl PartialEq for Record {
    fn eq(&self, other: &Record) -> bool {
        self.0.get() == other.0.get() || self.to_value() == other.to_value()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_record_is_the_json_of_its_attributes_in_a_saved_plan_too() {
        let record = Record::of(&json!({"zone": "lpg1", "ports": [80]}));
        assert_eq!(record.to_value(), json!({"ports": [80], "zone": "lpg1"}));
        let saved = serde_json::to_string_pretty(&json!({ "record": record })).unwrap();
        let read: Value = serde_json::from_str(&saved).unwrap();
        assert_eq!(read["record"], json!({"zone": "lpg1", "ports": [80]}));
        let again: Record = serde_json::from_str(&read["record"].to_string()).unwrap();
        assert_eq!(again, record);
    }

    #[test]
    fn records_compare_as_json_not_as_text() {
        let compact: Record = serde_json::from_str(r#"{"a":1,"b":[2]}"#).unwrap();
        let spaced: Record = serde_json::from_str("{ \"b\": [ 2 ], \"a\": 1 }").unwrap();
        assert_eq!(compact, spaced);
        assert_ne!(compact, Record::of(&json!({"a": 2})));
    }
}
