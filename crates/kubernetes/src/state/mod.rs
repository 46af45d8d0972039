//! State, journal and lock in a Kubernetes namespace (`[backend.kubernetes]`), for skyplan
//! running in the cluster (a CronJob) or any team sharing it: the state compressed in Secrets
//! (`store`), the journal in Secrets (`journal`), the lock a Lease renewed while the run lasts
//! (`lease`). Core's [`StateBackend`], kept here because core knows no Kubernetes client; the
//! binary's registry opens it.

mod codec;
mod connect;
mod errors;
mod journal;
mod lease;
mod objects;
mod store;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kube::Api;

use skyplan_core::config::KubernetesBackend;
use skyplan_core::state::journal::{Interrupted, Journal};
use skyplan_core::state::{
    parse_state, Executor, LockInfo, State, StateBackend, StateError, StateLock, StateVersion,
};

use self::errors::setup;
use self::journal::JournalSecrets;
use self::lease::LeaseLock;
use self::store::StateSecrets;

/// One workspace of one namespace.
pub struct KubeBackend {
    namespace: String,
    server: String,
    state: StateSecrets,
    journal: JournalSecrets,
    lease: LeaseLock,
    /// Dropped last: it drives the client.
    executor: Arc<Executor>,
}

impl KubeBackend {
    /// Connects as the settings say (nothing is read or written until asked).
    pub fn open(settings: &KubernetesBackend) -> Result<KubeBackend, StateError> {
        let executor = Arc::new(
            Executor::new("skyplan-kubernetes")
                .map_err(|e| setup(format!("cannot start its runtime: {e}")))?,
        );
        let (access, namespace) = (settings.access.clone(), settings.namespace.clone());
        // The client spawns its connection's tasks on the runtime it is built on.
        let connected = executor
            .run(async move { connect::connect(&access, namespace).await })
            .map_err(setup)?;
        let secrets = Api::namespaced(connected.client.clone(), &connected.namespace);
        let workspace = settings.workspace.clone();
        Ok(KubeBackend {
            state: StateSecrets {
                api: secrets.clone(),
                workspace: workspace.clone(),
            },
            journal: JournalSecrets {
                api: secrets,
                workspace: workspace.clone(),
            },
            lease: LeaseLock {
                api: Api::namespaced(connected.client, &connected.namespace),
                workspace,
                seconds: settings.lease_seconds,
            },
            namespace: connected.namespace,
            server: connected.server,
            executor,
        })
    }

    /// How many Secrets the last write of `state` took (for the tests that measure it).
    pub fn write_counted(
        &self,
        next: &State,
        replaces: Option<&StateVersion>,
    ) -> Result<usize, StateError> {
        let json = serde_json::to_vec_pretty(next).expect("a state serializes to JSON");
        let (state, version, replaces) = (
            self.state.clone(),
            StateVersion::of(next),
            replaces.cloned(),
        );
        self.executor
            .run(async move { state.write(&version, &json, replaces.as_ref()).await })
    }

    /// Where the state is, as a path-like name for the errors that take one.
    fn place(&self) -> PathBuf {
        format!(
            "kubernetes:{}/{}",
            self.namespace,
            objects::state_name(&self.state.workspace)
        )
        .into()
    }
}

impl StateBackend for KubeBackend {
    fn describe(&self) -> String {
        format!(
            "Kubernetes namespace `{}` workspace `{}` on {}",
            self.namespace, self.state.workspace, self.server
        )
    }

    fn load(&self) -> Result<Option<State>, StateError> {
        let state = self.state.clone();
        let json = self.executor.run(async move { state.load().await })?;
        json.map(|bytes| parse_state(&self.place(), &String::from_utf8_lossy(&bytes)))
            .transpose()
    }

    fn write(&self, next: &State, replaces: Option<&StateVersion>) -> Result<(), StateError> {
        self.write_counted(next, replaces).map(drop)
    }

    fn lock(&self, operation: &str, wait: Option<Duration>) -> Result<StateLock, StateError> {
        let info = LockInfo::for_this_process(operation);
        self.lease.acquire(&self.executor, info, wait)
    }

    fn force_unlock(&self, id: &str) -> Result<LockInfo, StateError> {
        let (lease, id) = (self.lease.clone(), id.to_string());
        self.executor
            .run(async move { lease.force_unlock(&id).await })
    }

    fn start_journal(&self) -> Result<Journal, StateError> {
        self.journal.start(self.executor.clone())
    }

    fn interrupted(&self) -> Result<Option<Interrupted>, StateError> {
        let journal = self.journal.clone();
        self.executor
            .run(async move { journal.interrupted().await })
    }

    fn archive_journal(&self) -> Result<String, StateError> {
        let journal = self.journal.clone();
        let stamp = self.executor.run(async move { journal.archive().await })?;
        Ok(format!("{}, archived at {stamp}", self.describe()))
    }
}

#[cfg(test)]
mod conformance;
