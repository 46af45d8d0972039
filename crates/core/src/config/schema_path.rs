//! Whether a resource kind has an attribute path, decided from its section's JSON schema walked
//! segment by segment — so `ignore-changes` is checked alike for every provider, whatever keys
//! its tables have.
//!
//! Paths are spelled as the plan spells attributes: `timeouts.client-data-ms`; an array of
//! tables (`ports`) takes an element's name as a segment (`ports.http`); and an element takes
//! the keys of the table that holds it (`ports.http.algorithm` when `algorithm` is the load
//! balancer's, which each port inherits and the plan reports per port).

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

use super::section::ConfigSection;
use crate::model::ResourceKind;

/// One resource kind's schema with the definitions it refers to.
#[derive(Debug)]
pub struct KindSchema {
    root: Value,
    definitions: Map<String, Value>,
}

/// How a path is reached in a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A key of the current table.
    Key(String),
    /// An element of an array of tables, by its name.
    Element(String),
    /// A key the current element takes from the table that holds its array.
    Inherited(String),
}

impl Step {
    /// Where the steps write, as a dotted path of the table's own keys (`[name]` for an
    /// element): two paths written at one place cannot take different values.
    pub fn written_at(steps: &[Step]) -> String {
        let mut at: Vec<String> = Vec::new();
        for step in steps {
            match step {
                Step::Key(key) => at.push(key.clone()),
                Step::Element(name) => at.push(format!("[{name}]")),
                Step::Inherited(key) => {
                    at.truncate(at.len().saturating_sub(2));
                    at.push(key.clone());
                }
            }
        }
        at.join(".")
    }
}

/// The schema of each kind of table `section` takes.
pub fn kind_schemas(section: &dyn ConfigSection) -> Vec<(ResourceKind, KindSchema)> {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let schema = section.schema(&mut generator);
    let definitions = generator.definitions().clone();
    (schema.resources.into_iter())
        .map(|(kind, root)| {
            let schema = KindSchema {
                root: root.to_value(),
                definitions: definitions.clone(),
            };
            (kind, schema)
        })
        .collect()
}

/// The steps that reach `path` in a table of the kind, or `None` when it has no such path.
pub fn steps(schema: &KindSchema, path: &str) -> Option<Vec<Step>> {
    if path.is_empty() {
        return None;
    }
    let segments: Vec<&str> = path.split('.').collect();
    schema.in_table(&schema.root, &segments, None)
}

impl KindSchema {
    /// A kind's schema as schemars writes one: `root`, and the `definitions` it refers to.
    #[cfg(test)]
    pub(crate) fn from_json(root: Value, definitions: Value) -> KindSchema {
        let definitions = definitions.as_object().cloned().unwrap_or_default();
        KindSchema { root, definitions }
    }

    /// The keys a table of the kind may have (any of its alternatives), for messages.
    pub fn keys(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = (self.alternatives(&self.root).into_iter())
            .filter_map(|choice| choice.get("properties").and_then(Value::as_object))
            .flat_map(|properties| properties.keys().map(String::as_str))
            .filter(|key| !["provider", "ignore-changes"].contains(key))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// The schema a `$ref` points at (`#/$defs/Name`), else the schema itself.
    fn deref<'s>(&'s self, schema: &'s Value) -> &'s Value {
        let mut schema = schema;
        while let Some(name) = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
        {
            match self.definitions.get(name) {
                Some(found) => schema = found,
                None => break,
            }
        }
        schema
    }

    /// The schemas a value may match: each alternative of an `anyOf`/`oneOf`, dereferenced.
    fn alternatives<'s>(&'s self, schema: &'s Value) -> Vec<&'s Value> {
        let schema = self.deref(schema);
        let choices = ["anyOf", "oneOf", "allOf"]
            .iter()
            .find_map(|k| schema.get(*k).and_then(Value::as_array));
        match choices {
            Some(choices) => choices.iter().flat_map(|c| self.alternatives(c)).collect(),
            None => vec![schema],
        }
    }

    /// Whether no alternative of `schema` is a table or an array: nothing below its values.
    fn is_scalar(&self, schema: &Value) -> bool {
        self.alternatives(schema).iter().all(|choice| {
            choice.get("properties").is_none()
                && !matches!(
                    choice.get("type").and_then(Value::as_str),
                    Some("object" | "array")
                )
        })
    }

    /// `segments` within a table of schema `table`; `holder` is the table whose array holds it
    /// when it is an element.
    fn in_table(
        &self,
        table: &Value,
        segments: &[&str],
        holder: Option<&Value>,
    ) -> Option<Vec<Step>> {
        let Some((first, rest)) = segments.split_first() else {
            return Some(vec![]);
        };
        if *first == "ignore-changes" {
            return None;
        }
        for choice in self.alternatives(table) {
            if let Some(value) = choice.get("properties").and_then(|p| p.get(*first)) {
                if let Some(steps) = self.in_value(value, rest, choice) {
                    return Some(prepend(Step::Key(first.to_string()), steps));
                }
            }
            // A map (labels): any key — one holding dots too (`app.kubernetes.io/name`), when
            // its values are no tables a path could go on into.
            if let Some(values) = choice.get("additionalProperties").filter(|v| v.is_object()) {
                if let Some(steps) = self.in_value(values, rest, choice) {
                    return Some(prepend(Step::Key(first.to_string()), steps));
                }
                if self.is_scalar(values) {
                    return Some(vec![Step::Key(segments.join("."))]);
                }
            }
        }
        let holder = holder?;
        for choice in self.alternatives(holder) {
            if let Some(value) = choice.get("properties").and_then(|p| p.get(*first)) {
                if let Some(steps) = self.in_value(value, rest, choice) {
                    return Some(prepend(Step::Inherited(first.to_string()), steps));
                }
            }
        }
        None
    }

    /// `segments` within the value of a key of `table`, whose schema is `value`.
    fn in_value(&self, value: &Value, segments: &[&str], table: &Value) -> Option<Vec<Step>> {
        let Some((first, rest)) = segments.split_first() else {
            return Some(vec![]);
        };
        for choice in self.alternatives(value) {
            let is_array = choice.get("type").and_then(Value::as_str) == Some("array");
            let items = choice.get("items").map(|i| self.deref(i));
            if let Some(element) = items.filter(|i| is_array && i.get("properties").is_some()) {
                let steps = self.in_table(element, rest, Some(table))?;
                return Some(prepend(Step::Element(first.to_string()), steps));
            }
        }
        self.in_table(value, segments, None)
    }
}

fn prepend(step: Step, mut steps: Vec<Step>) -> Vec<Step> {
    steps.insert(0, step);
    steps
}

#[cfg(test)]
#[path = "schema_path_tests.rs"]
mod tests;
