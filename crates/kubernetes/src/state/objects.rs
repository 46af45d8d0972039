//! The names and labels of what the backend keeps in its namespace: for a workspace W, the
//! state's index Secret `skyplan-state-W` (and its pieces `skyplan-state-W-<generation>-<n>`
//! when it does not fit one), the journal's Secrets `skyplan-journal-W-<run>-<n>` and the
//! Lease `skyplan-lock-W`. Every one is labelled managed-by skyplan, with its workspace and
//! part, so that `kubectl get secrets -l app.kubernetes.io/managed-by=skyplan` lists them.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

pub(super) const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
pub(super) const WORKSPACE: &str = "skyplan.io/workspace";
pub(super) const PART: &str = "skyplan.io/part";
pub(super) const GENERATION: &str = "skyplan.io/generation";
pub(super) const RUN: &str = "skyplan.io/run";
pub(super) const ARCHIVED: &str = "skyplan.io/archived";

/// The Secret type of everything the backend writes: not a credential kubectl knows.
const SECRET_TYPE: &str = "skyplan.io/state";

/// What a Secret holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    /// The state's index, with the state itself when it fits.
    State,
    /// A piece of a state too large for the index.
    StateChunk,
    Journal,
    /// The Lease.
    Lock,
}

impl Part {
    fn label(self) -> &'static str {
        match self {
            Part::State => "state",
            Part::StateChunk => "state-chunk",
            Part::Journal => "journal",
            Part::Lock => "lock",
        }
    }
}

pub(super) fn state_name(workspace: &str) -> String {
    format!("skyplan-state-{workspace}")
}

pub(super) fn chunk_name(workspace: &str, generation: &str, index: usize) -> String {
    format!("skyplan-state-{workspace}-{generation}-{index}")
}

pub(super) fn journal_name(workspace: &str, run: &str, index: usize) -> String {
    format!("skyplan-journal-{workspace}-{run}-{index}")
}

pub(super) fn lease_name(workspace: &str) -> String {
    format!("skyplan-lock-{workspace}")
}

/// The labels every object of the workspace has.
pub(super) fn labels(workspace: &str, part: Part) -> BTreeMap<String, String> {
    BTreeMap::from([
        (MANAGED_BY.to_string(), "skyplan".to_string()),
        (WORKSPACE.to_string(), workspace.to_string()),
        (PART.to_string(), part.label().to_string()),
    ])
}

/// The label selector of the workspace's objects of `part`, and `more` (`key=value`, `!key`).
pub(super) fn selector(workspace: &str, part: Part, more: &[String]) -> String {
    let mut terms = vec![
        format!("{MANAGED_BY}=skyplan"),
        format!("{WORKSPACE}={workspace}"),
        format!("{PART}={}", part.label()),
    ];
    terms.extend(more.iter().cloned());
    terms.join(",")
}

/// An empty Secret of the workspace named `name`, labelled as `part` and with `extra` labels.
pub(super) fn secret(name: String, workspace: &str, part: Part, extra: &[(&str, &str)]) -> Secret {
    let mut labels = labels(workspace, part);
    for (key, value) in extra {
        labels.insert(key.to_string(), value.to_string());
    }
    Secret {
        metadata: ObjectMeta {
            name: Some(name),
            labels: Some(labels),
            ..ObjectMeta::default()
        },
        type_: Some(SECRET_TYPE.to_string()),
        ..Secret::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_selector_names_the_workspace_and_part() {
        let selector = selector("prod", Part::Journal, &[format!("!{ARCHIVED}")]);
        assert_eq!(
            selector,
            "app.kubernetes.io/managed-by=skyplan,skyplan.io/workspace=prod,\
             skyplan.io/part=journal,!skyplan.io/archived"
        );
    }
}
