//! Apply: runs a plan's changes, one task per resource (operations of one load balancer are
//! serialised, load balancers run side by side up to `parallelism`), and records finished
//! resources in the state as it goes.

pub mod hold;
pub mod progress;
pub mod rollout;
#[cfg(test)]
pub(crate) mod test_changes;
mod timing;
mod waves;
pub mod window;
pub mod window_check;

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;

use progress::{Event, Progress};
use timing::{record_durations, Timings};

use crate::plan::verification::{record_mismatch, RecordedMismatch};
use crate::plan::{Action, Plan, ResourceChange, Verification};
use crate::provider::{Applied, ProviderError};
use crate::state::journal::{Entry, Observer, Phase};
use crate::state::{ResourceState, State};
use crate::workspace::{Refreshes, Workspace, WorkspaceError};

#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("apply refuses forbidden changes: {}", .0.join("; "))]
    Refused(Vec<String>),
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    #[error("{} of {} resources failed: {}", .failed.len(), .total, summarize(.failed))]
    Failed {
        failed: Vec<ProviderError>,
        total: usize,
    },
}

/// The first few failures in full; a run where hundreds fail for one reason stays readable.
fn summarize(failed: &[ProviderError]) -> String {
    const SHOWN: usize = 5;
    let mut text: Vec<String> = failed.iter().take(SHOWN).map(|e| e.to_string()).collect();
    if failed.len() > SHOWN {
        text.push(format!("and {} more", failed.len() - SHOWN));
    }
    text.join("; ")
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ApplyReport {
    pub applied: Vec<String>,
    /// Not started because `admit` turned them away (the window closed).
    pub left: Vec<String>,
    pub operations: usize,
    /// What the providers that verify found, per resource applied, by address.
    pub verified: Vec<Verification>,
}

impl ApplyReport {
    /// The resources where the cloud did more than the plan's class said.
    pub fn under_predicted(&self) -> impl Iterator<Item = &Verification> {
        self.verified.iter().filter(|v| v.under_predicted())
    }
}

/// Each forbidden change nobody asked for by name, with the attributes that make it forbidden.
fn refusals(plan: &Plan) -> Vec<String> {
    plan.refused()
        .map(|change| {
            format!(
                "{} ({})",
                change.address,
                hold::forbidden_paths(change).join(", ")
            )
        })
        .collect()
}

/// What apply holds back of `plan` in this workspace (see [`hold::hold_back`]): by the
/// dependencies apply orders by, so that what is held back is exactly what could not run.
pub fn hold_back(
    workspace: &Workspace,
    plan: &Plan,
    excluded: &[crate::model::Address],
    window: &window_check::WindowCheck,
) -> hold::HoldBack {
    hold::hold_back(plan, excluded, window, |address| {
        order_dependencies(workspace, address)
    })
}

/// [`hold_back`], and with a rollout its waves (see [`rollout`]): the first wave that does not
/// fit the window when it would start is held back with every later wave (and what must
/// follow them). The waves are those of the changes apply would run without them.
pub fn hold_back_rolled_out(
    workspace: &Workspace,
    plan: &Plan,
    excluded: &[crate::model::Address],
    window: &window_check::WindowCheck,
    rollout: Option<&crate::config::Rollout>,
) -> (hold::HoldBack, Option<rollout::RolloutPlan>) {
    let holds = hold_back(workspace, plan, excluded, window);
    let Some(rollout) = rollout else {
        return (holds, None);
    };
    let order = |address: &crate::model::Address| order_dependencies(workspace, address);
    let waves = rollout::plan_rollout(&holds.runnable.changes, rollout, window, order);
    let Some(first) = waves.first_unfit() else {
        return (holds, Some(waves));
    };
    let count = waves.waves.len();
    let mut more = std::collections::BTreeMap::new();
    for (i, wave) in waves.waves.iter().enumerate().skip(first) {
        for address in &wave.addresses {
            let reason = hold::HeldReason::Rollout {
                wave: i + 1,
                waves: count,
            };
            more.insert(address.clone(), reason);
        }
    }
    let holds = hold::hold_back_with(plan, excluded, window, &more, order);
    (holds, Some(waves))
}

/// Whether running the change changes anything: cloud calls, or a state entry to record.
fn needs_apply(change: &ResourceChange, workspace: &Workspace) -> bool {
    change.action != Action::NoOp || !workspace.state.resources.contains_key(&change.address)
}

/// How often apply writes the state while it runs (and once more at the end). Each write is
/// a full atomic rewrite with fsync, so writing after every resource would make a large apply
/// quadratic; what finished since the last write is still found after a crash through the
/// ownership tags.
const SAVE_INTERVAL: Duration = Duration::from_secs(1);

/// Runs the plan, made from `refreshes` (each provider applies its changes with what its
/// refresh read). `admit` is asked just before each resource starts (the maintenance window may
/// have closed meanwhile); a resource it turns away is left untouched and reported in
/// [`ApplyReport::left`].
pub async fn run(
    workspace: &mut Workspace,
    plan: &Plan,
    refreshes: &Refreshes,
    parallelism: usize,
    rollout: Option<&crate::config::Rollout>,
    admit: &(dyn Fn(&ResourceChange) -> bool + Sync),
    progress: Arc<dyn Progress>,
) -> Result<ApplyReport, ApplyError> {
    let refused = refusals(plan);
    if !refused.is_empty() {
        return Err(ApplyError::Refused(refused));
    }
    let work: Vec<&ResourceChange> = plan
        .changes
        .iter()
        .filter(|c| needs_apply(c, workspace))
        .collect();
    let total = work.len();
    let mut state = workspace.state.clone();
    if !workspace.moved().is_empty() {
        // The config's moves first, before any cloud call: a run killed on its way leaves
        // the state and its journal naming every moved resource by its new address.
        workspace
            .store
            .save(&mut state)
            .map_err(WorkspaceError::from)?;
    }
    let mut report = ApplyReport::default();
    let mut failed = Vec::new();
    let mut last_save = Instant::now();
    let timings = Timings::default();
    let journal = workspace
        .store
        .start_journal()
        .map_err(WorkspaceError::from)?
        .observed_by(operation_events(progress.clone(), timings.clone()));
    let order = |address: &crate::model::Address| order_dependencies(workspace, address);
    let before = waves::precedence(&work, order);
    let batches = batches(waves::waves(&work, order), rollout);
    let rollout_waves = batches.iter().filter(|b| b.wave.is_some()).count();
    let mut rollout_stopped = false;
    let mut failed_addresses: BTreeSet<crate::model::Address> = BTreeSet::new();
    let mut left_addresses: BTreeSet<crate::model::Address> = BTreeSet::new();
    for Batch {
        changes: wave,
        wave: rollout_wave,
    } in batches
    {
        if let Some(number) = rollout_wave {
            if number > 1 && !rollout_stopped {
                let pause = rollout.map(|r| r.pause).unwrap_or_default();
                tokio::time::sleep(pause).await;
            }
            // A wave starts whole or not at all: once one of its changes may no longer start
            // (the window closed meanwhile), it and every later wave are left for later.
            rollout_stopped = rollout_stopped || !wave.iter().all(|c| admit(c));
            if rollout_stopped {
                tracing::info!("wave {number} of {rollout_waves}: left for later");
                for change in wave {
                    left_addresses.insert(change.address.clone());
                    report.left.push(change.address.to_string());
                }
                continue;
            }
            let addresses: Vec<String> = wave.iter().map(|c| c.address.to_string()).collect();
            tracing::info!("wave {number} of {rollout_waves}: {}", addresses.join(", "));
        }
        let ws: &Workspace = workspace;
        let journal = &journal;
        let progress = &progress;
        let timings = &timings;
        let mut runnable = Vec::new();
        for change in wave {
            let first = before.get(&change.address).into_iter().flatten();
            let (failed_first, left_first) = first.fold((false, false), |(f, l), a| {
                (
                    f || failed_addresses.contains(a),
                    l || left_addresses.contains(a),
                )
            });
            if failed_first {
                failed_addresses.insert(change.address.clone());
                failed.push(ProviderError::new(
                    &change.address,
                    "not applied: a resource it must follow failed",
                ));
            } else if left_first {
                // What it must follow was left for later: so is it.
                left_addresses.insert(change.address.clone());
                report.left.push(change.address.to_string());
            } else {
                runnable.push(change);
            }
        }
        let mut results = futures::stream::iter(runnable)
            .map(|change| async move {
                if !admit(change) {
                    return (change, None);
                }
                let started = Instant::now();
                let prior = ws.state.resources.get(&change.address);
                let provider = ws
                    .provider(&change.provider)
                    .expect("planned providers are connected");
                let result = match refreshes.of(&change.provider) {
                    Ok(refreshed) => provider.apply(change, prior, refreshed, journal).await,
                    Err(e) => Err(e),
                };
                timings.resource_done(&change.address.to_string(), Instant::now());
                progress.event(Event::ResourceDone {
                    address: &change.address.to_string(),
                    ok: result.is_ok(),
                    elapsed: started.elapsed(),
                });
                (change, Some(result))
            })
            .buffer_unordered(parallelism.max(1));
        while let Some((change, result)) = results.next().await {
            match result {
                None => {
                    left_addresses.insert(change.address.clone());
                    report.left.push(change.address.to_string());
                }
                Some(Ok(Applied {
                    entry,
                    verification,
                })) => {
                    let entry = entry.map(|mut e| {
                        e.depends_on = dependencies(ws, &change.address);
                        e
                    });
                    record(&mut state, change, entry);
                    if let Some(verified) = verification {
                        record_verification(&mut state, &verified);
                        report.verified.push(verified);
                    }
                    if last_save.elapsed() >= SAVE_INTERVAL {
                        ws.store.save(&mut state).map_err(WorkspaceError::from)?;
                        last_save = Instant::now();
                    }
                    report.applied.push(change.address.to_string());
                    report.operations += change.operations.len();
                }
                Some(Err(e)) => {
                    if let Some(mut left) = journal.left_by(&change.address) {
                        // Written, then failed: recorded so the next plan sees it.
                        left.depends_on = dependencies(ws, &change.address);
                        record(&mut state, change, Some(left));
                    }
                    failed_addresses.insert(change.address.clone());
                    failed.push(e);
                }
            }
        }
    }
    report.verified.sort_by(|a, b| a.address.cmp(&b.address));
    record_durations(&mut state, plan, &timings);
    workspace
        .store
        .save(&mut state)
        .map_err(WorkspaceError::from)?;
    workspace.state = state;
    // The state now holds what the run did; failures are reported below, not recovered.
    journal.finish().map_err(WorkspaceError::from)?;
    if failed.is_empty() {
        Ok(report)
    } else {
        Err(ApplyError::Failed { failed, total })
    }
}

/// What apply runs side by side: a dependency layer, or with a rollout each layer's calm
/// changes and then each of its waves of disruptive ones (numbered across the run).
struct Batch<'a> {
    changes: Vec<&'a ResourceChange>,
    /// The rollout wave's number, from 1.
    wave: Option<usize>,
}

fn batches<'a>(
    layers: Vec<Vec<&'a ResourceChange>>,
    rollout: Option<&crate::config::Rollout>,
) -> Vec<Batch<'a>> {
    let Some(rollout) = rollout else {
        let whole = |changes| Batch {
            changes,
            wave: None,
        };
        return layers.into_iter().map(whole).collect();
    };
    let mut batches = Vec::new();
    let mut number = 0;
    for layer in layers {
        let calm: Vec<_> = (layer.iter().copied())
            .filter(|c| !rollout::is_disruptive(c))
            .collect();
        if !calm.is_empty() {
            batches.push(Batch {
                changes: calm,
                wave: None,
            });
        }
        for wave in rollout::cut_layer(&layer, rollout) {
            number += 1;
            batches.push(Batch {
                changes: wave,
                wave: Some(number),
            });
        }
    }
    batches
}

/// What the resource needs applied first: from the config, or from the state once the config
/// no longer declares it.
fn dependencies(
    workspace: &Workspace,
    address: &crate::model::Address,
) -> Vec<crate::model::Address> {
    match workspace.config.resource(address) {
        Some(resource) => resource.depends_on.clone(),
        None => workspace
            .state
            .resources
            .get(address)
            .map(|entry| entry.depends_on.clone())
            .unwrap_or_default(),
    }
}

/// What must be applied before the resource: its dependencies, and the node policies it
/// followed when last applied. A node policy removed from the config still changes the nodes
/// (it takes back its labels and taints), and a load balancer's members follow the nodes, so
/// the load balancer (or its controller) must see the nodes after that change, not before.
fn order_dependencies(
    workspace: &Workspace,
    address: &crate::model::Address,
) -> Vec<crate::model::Address> {
    let mut needs = dependencies(workspace, address);
    let followed = workspace
        .state
        .resources
        .get(address)
        .map(|entry| entry.depends_on.clone())
        .unwrap_or_default();
    for policy in followed {
        if policy.kind == crate::model::ResourceKind::Nodes && !needs.contains(&policy) {
            needs.push(policy);
        }
    }
    needs
}

/// Turns journal entries into operation events: started at the intent, finished at the outcome
/// with the time in between; `timings` sees them too, for the measured durations.
fn operation_events(progress: Arc<dyn Progress>, timings: Timings) -> Observer {
    let started: Mutex<HashMap<(String, String), Instant>> = Mutex::default();
    Box::new(move |entry: &Entry| {
        let address = entry.address.to_string();
        let key = (address.clone(), entry.operation.clone());
        let mut started = started.lock().unwrap_or_else(|p| p.into_inner());
        match entry.phase {
            Phase::Intent => {
                let now = Instant::now();
                started.insert(key, now);
                timings.started(&address, &entry.operation, now);
                progress.event(Event::Started {
                    address: &address,
                    operation: &entry.operation,
                });
            }
            Phase::Done | Phase::Failed => {
                if entry.phase == Phase::Done {
                    timings.done(&address, &entry.operation);
                }
                let elapsed = started
                    .remove(&key)
                    .map(|t| t.elapsed())
                    .unwrap_or_default();
                progress.event(Event::Finished {
                    address: &address,
                    operation: &entry.operation,
                    elapsed,
                });
            }
        }
    })
}

/// A verification that found a difference is kept in the state, for `skyplan show`.
fn record_verification(state: &mut State, verified: &Verification) {
    if verified.as_predicted() {
        return;
    }
    let mismatch = RecordedMismatch {
        at: jiff::Timestamp::now().to_string(),
        verification: verified.clone(),
    };
    record_mismatch(&mut state.mismatches, mismatch);
}

fn record(state: &mut State, change: &ResourceChange, entry: Option<ResourceState>) {
    match entry {
        Some(entry) => {
            state.resources.insert(change.address.clone(), entry);
        }
        None => {
            state.resources.remove(&change.address);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Downtime, Impact};
    use test_changes::change;

    #[test]
    fn with_a_rollout_each_layer_runs_its_calm_changes_then_its_waves_numbered_across_layers() {
        let pools = |name| change(name, Impact::PoolRecreate, Downtime::new(60, 120));
        let (a, b, c, calm, d) = (
            pools("a"),
            pools("b"),
            pools("c"),
            change("calm", Impact::None, Downtime::ZERO),
            pools("d"),
        );
        let layers = vec![vec![&a, &calm, &b, &c], vec![&d]];
        let rollout = crate::config::Rollout {
            max_disrupted: Some(2),
            ..Default::default()
        };
        let shown: Vec<(Option<usize>, Vec<String>)> = batches(layers.clone(), Some(&rollout))
            .into_iter()
            .map(|b| {
                let names = b.changes.iter().map(|c| c.address.name.clone()).collect();
                (b.wave, names)
            })
            .collect();
        let names = |list: &[&str]| list.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert_eq!(
            shown,
            [
                (None, names(&["calm"])),
                (Some(1), names(&["a", "b"])),
                (Some(2), names(&["c"])),
                (Some(3), names(&["d"])),
            ]
        );
        // Without a rollout, the layers as they are.
        assert_eq!(batches(layers, None).len(), 2);
    }
}
