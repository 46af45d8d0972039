//! A node policy's health read (`Provider::health`, the rollout's gate) called in-process, for
//! the tests that check it against a cluster: the Kubernetes provider connected by the config,
//! and the change and state entry apply leaves for the policy `[nodes.web]`.

use std::collections::BTreeMap;

use serde_json::json;

use skyplan_core::config::{load_texts, ConfigSection};
use skyplan_core::model::{Address, ResourceKind};
use skyplan_core::plan::ResourceChange;
use skyplan_core::provider::{Health, Provider, ProviderError};
use skyplan_core::state::ResourceState;
use skyplan_kubernetes::spec::NodePolicySpec;
use skyplan_kubernetes::{KubernetesConfig, KubernetesProvider};

static SECTIONS: &[&dyn ConfigSection] = &[&KubernetesConfig];

pub struct PolicyHealth {
    provider: KubernetesProvider,
    change: ResourceChange,
    entry: ResourceState,
}

impl PolicyHealth {
    /// `config`: a `[cluster.prod]` and the `[nodes.web]` policy over it.
    pub async fn connect(config: &str) -> PolicyHealth {
        let root = tempfile::tempdir().expect("temp dir");
        let files = [("skyplan.toml", config)];
        let config = load_texts(root.path(), &files, SECTIONS).expect("config");
        let provider = KubernetesProvider::connect(&config, None, vec![], BTreeMap::new())
            .await
            .expect("connect");
        let web = config
            .resources
            .iter()
            .find(|r| r.address.kind == ResourceKind::Nodes);
        let spec: &NodePolicySpec = web.expect("[nodes.web]").spec.get().expect("a policy");
        let entry = ResourceState {
            provider: "kubernetes".into(),
            id: "nodes.web".into(),
            ids: json!(null),
            attributes: serde_json::to_value(spec).expect("spec serializes"),
            depends_on: vec![],
        };
        let address = Address::new(ResourceKind::Nodes, "web");
        PolicyHealth {
            provider,
            change: ResourceChange::no_op(address, "kubernetes", None),
            entry,
        }
    }

    /// One read, as the gate makes it after the policy's change.
    pub async fn read(&self) -> Result<Health, ProviderError> {
        self.provider.health(&self.change, Some(&self.entry)).await
    }

    /// The read after the policy was deleted.
    pub async fn read_deleted(&self) -> Result<Health, ProviderError> {
        self.provider.health(&self.change, None).await
    }
}
