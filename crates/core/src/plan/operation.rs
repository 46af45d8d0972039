//! A cloud operation as a plan carries it, opaque to the pipeline: its kind (what apply's
//! measured durations are kept by), its summary (what the plan shows and the journal records)
//! and the provider's own description of it, which only that provider reads back.

use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::Record;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Operation {
    /// `provider/op` from the provider's serde tags (`cloudscale/create-pool`,
    /// `cloudstack/cluster/scale`): stable across plans, free of names and UUIDs.
    pub kind: String,
    /// As the plan shows it: `create pool tcp/http`.
    pub summary: String,
    /// The provider's operation, as it serializes.
    payload: Record,
}

/// The tags an operation's kind is made of: `kind` (the resource kind, for a provider with
/// several) and `op`.
#[derive(Deserialize)]
struct Tags<'a> {
    #[serde(borrow)]
    kind: Option<&'a str>,
    #[serde(borrow)]
    op: Option<&'a str>,
}

impl Operation {
    /// `operation` of `provider`, which tags its variants with `op` (and `kind`).
    pub fn new<O: Serialize + fmt::Display>(provider: &str, operation: &O) -> Operation {
        let payload = Record::of(operation);
        let tags: Tags = serde_json::from_str(payload.json()).expect("an operation is an object");
        let kind = [Some(provider), tags.kind, tags.op]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("/");
        Operation {
            kind,
            summary: operation.to_string(),
            payload,
        }
    }

    /// The provider that made it.
    pub fn provider(&self) -> &str {
        self.kind.split('/').next().unwrap_or_default()
    }

    /// The provider's operation back, if `provider` made it (`None` for another's).
    pub fn read<O: DeserializeOwned>(&self, provider: &str) -> Option<O> {
        if self.provider() != provider {
            return None;
        }
        self.payload.parse().ok()
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(tag = "op", rename_all = "kebab-case")]
    enum Op {
        RenameLb { name: String },
    }

    impl fmt::Display for Op {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let Op::RenameLb { name } = self;
            write!(f, "rename to {name}")
        }
    }

    #[derive(Serialize)]
    #[serde(tag = "kind", rename_all = "kebab-case")]
    enum Nested {
        Cluster(Op),
    }

    impl fmt::Display for Nested {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let Nested::Cluster(op) = self;
            op.fmt(f)
        }
    }

    #[test]
    fn the_kind_names_provider_and_tags_and_the_summary_is_the_display() {
        let op = Operation::new("cloudscale", &Op::RenameLb { name: "web".into() });
        assert_eq!(op.kind, "cloudscale/rename-lb");
        assert_eq!(op.to_string(), "rename to web");
        let nested = Nested::Cluster(Op::RenameLb { name: "x".into() });
        assert_eq!(
            Operation::new("cloudstack", &nested).kind,
            "cloudstack/cluster/rename-lb"
        );
    }

    #[test]
    fn only_the_provider_that_made_it_reads_it_back_also_from_a_saved_plan() {
        let op = Operation::new("cloudscale", &Op::RenameLb { name: "web".into() });
        let saved: Operation = serde_json::from_str(&serde_json::to_string(&op).unwrap()).unwrap();
        assert_eq!(saved, op);
        assert_eq!(
            saved.read::<Op>("cloudscale"),
            Some(Op::RenameLb { name: "web".into() })
        );
        assert_eq!(saved.read::<Op>("phoenixnap"), None);
    }
}
