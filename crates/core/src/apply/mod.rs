//! Apply: runs a plan's changes, one task per resource (operations of one load balancer are
//! serialised, load balancers run side by side up to `parallelism`), and records finished
//! resources in the state as it goes.

pub mod gate;
pub mod hold;
pub mod interrupt;
pub mod progress;
pub mod rollout;
mod runner;
pub mod saved;
#[cfg(test)]
pub(crate) mod test_changes;
mod timing;
mod waves;
pub mod window;
pub mod window_check;

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use runner::{Runner, Tally, Untouched};

use futures::StreamExt;

use progress::{Event, Progress};
use timing::{record_durations, Timings};

use crate::plan::verification::{record_mismatch, RecordedMismatch};
use crate::plan::{Action, Plan, ResourceChange, Verification};
use crate::provider::ProviderError;
use crate::state::journal::{Entry, Observer, Phase};
use crate::state::{ResourceState, State};
use crate::workspace::{Refreshes, Workspace, WorkspaceError};

#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("apply refuses forbidden changes: {}", .0.join("; "))]
    Refused(Vec<String>),
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    #[error("{} of {} failed: {}{}{}", .failed.len(), crate::render::counted(*.total, "resource"), summarize(.failed), stopped(*.not_started), interrupted_too(*.interrupted))]
    Failed {
        failed: Vec<ProviderError>,
        total: usize,
        /// Not started because a failure stopped the rollout.
        not_started: usize,
        /// Not started because apply was interrupted.
        interrupted: usize,
    },
}

/// What an interrupt left undone beside a failure.
fn interrupted_too(not_started: usize) -> String {
    match not_started {
        0 => String::new(),
        n => format!(" (apply was interrupted: {n} not started)"),
    }
}

/// What a failure that stopped the rollout left undone.
fn stopped(not_started: usize) -> String {
    match not_started {
        0 => String::new(),
        n => format!(" (the rollout stopped: {n} not started)"),
    }
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
    /// Why the rollout stopped (empty: it did not): each change that failed its health gate,
    /// did more than the plan said, or failed.
    pub halts: Vec<Halt>,
    /// Not started because the rollout stopped.
    pub not_started: Vec<String>,
    /// Not started because apply was interrupted ([`interrupt::Interrupt`]).
    pub interrupted: Vec<String>,
}

/// Why a rollout stopped starting changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Halt {
    /// Still unhealthy when its health gate's time ran out: what the cloud last reported.
    Unhealthy {
        address: String,
        problems: Vec<String>,
    },
    /// The cloud did more than the plan's class said.
    UnderPredicted { address: String, summary: String },
    /// The change failed (the error is among apply's failures).
    Failed { address: String },
}

impl Halt {
    pub fn address(&self) -> &str {
        match self {
            Halt::Unhealthy { address, .. }
            | Halt::UnderPredicted { address, .. }
            | Halt::Failed { address } => address,
        }
    }
}

impl std::fmt::Display for Halt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Halt::Unhealthy { address, problems } => {
                write!(
                    f,
                    "{address} was not healthy in time: {}",
                    problems.join("; ")
                )
            }
            Halt::UnderPredicted { address, summary } => {
                write!(f, "{address} did more than the plan said: {summary}")
            }
            Halt::Failed { address } => write!(f, "{address} failed"),
        }
    }
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

/// What apply orders a resource after, read from a config and a state: a workspace's, or the
/// stored ones where no workspace is opened (`show PLANFILE`).
#[derive(Clone, Copy)]
pub struct Dependencies<'a> {
    pub config: &'a crate::config::Config,
    pub state: &'a State,
}

impl<'a> Dependencies<'a> {
    pub fn of(workspace: &'a Workspace) -> Dependencies<'a> {
        Dependencies {
            config: &workspace.config,
            state: &workspace.state,
        }
    }

    /// What the resource needs applied first: from the config, or from the state once the
    /// config no longer declares it.
    fn declared(&self, address: &crate::model::Address) -> Vec<crate::model::Address> {
        match self.config.resource(address) {
            Some(resource) => resource.depends_on.clone(),
            None => (self.state.resources.get(address))
                .map(|entry| entry.depends_on.clone())
                .unwrap_or_default(),
        }
    }

    /// What must be applied before the resource: its dependencies, and the node policies it
    /// followed when last applied. A node policy removed from the config still changes the
    /// nodes (it takes back its labels and taints), and a load balancer's members follow the
    /// nodes, so the load balancer (or its controller) must see the nodes after that change,
    /// not before.
    fn order(&self, address: &crate::model::Address) -> Vec<crate::model::Address> {
        let mut needs = self.declared(address);
        let followed = (self.state.resources.get(address))
            .map(|entry| entry.depends_on.clone())
            .unwrap_or_default();
        for policy in followed {
            if policy.kind == crate::model::ResourceKind::Nodes && !needs.contains(&policy) {
                needs.push(policy);
            }
        }
        needs
    }
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

/// What apply holds back (see [`hold::hold_back`]), and with a rollout its waves (see
/// [`rollout`]): the first wave that does not fit the window when it would start is held back
/// with every later wave (and what must follow them). The waves are those of the changes apply
/// would run without them. `earlier`: what a saved plan held back when it was made
/// ([`saved::held_then`]), held back again whatever the window says now; empty for a plan
/// made now.
pub fn hold_back_rolled_out(
    dependencies: Dependencies<'_>,
    plan: &Plan,
    excluded: &[crate::model::Address],
    window: &window_check::WindowCheck,
    rollout: Option<&crate::config::Rollout>,
    earlier: &std::collections::BTreeMap<crate::model::Address, hold::HeldReason>,
) -> (hold::HoldBack, Option<rollout::RolloutPlan>) {
    let order = |address: &crate::model::Address| dependencies.order(address);
    let holds = hold::hold_back_with(plan, excluded, window, earlier, order);
    let Some(rollout) = rollout else {
        return (holds, None);
    };
    let waves = rollout::plan_rollout(&holds.runnable.changes, rollout, window, order);
    let Some(first) = waves.first_unfit() else {
        return (holds, Some(waves));
    };
    let count = waves.waves.len();
    let mut more = earlier.clone();
    for (i, wave) in waves.waves.iter().enumerate().skip(first) {
        for address in &wave.addresses {
            let reason = hold::HeldReason::Rollout {
                wave: i + 1,
                waves: count,
            };
            more.entry(address.clone()).or_insert(reason);
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
///
/// With a rollout, disruptive changes run in its waves, each change gated on its health (see
/// [`gate`]); a change that fails its gate, does more than predicted or fails stops the
/// rollout: what is in flight finishes, nothing new starts ([`ApplyReport::not_started`]).
///
/// Once `interrupt` is asked, likewise: the changes in flight finish whole, no other starts
/// ([`ApplyReport::interrupted`]), and the state is saved and the journal finished as at any
/// end — the run ended, nothing is left to recover.
#[allow(clippy::too_many_arguments)] // each is one thing the caller decides; a struct of them would only rename them
pub async fn run(
    workspace: &mut Workspace,
    plan: &Plan,
    refreshes: &Refreshes,
    parallelism: usize,
    rollout: Option<&crate::config::Rollout>,
    admit: &(dyn Fn(&ResourceChange) -> bool + Sync),
    interrupt: &interrupt::Interrupt,
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
    let timings = Timings::default();
    let journal = workspace
        .store
        .start_journal()
        .map_err(WorkspaceError::from)?
        .observed_by(operation_events(progress.clone(), timings.clone()));
    let ws: &Workspace = workspace;
    let order = |address: &crate::model::Address| order_dependencies(ws, address);
    let before = waves::precedence(&work, order);
    let batches = batches(waves::waves(&work, order), rollout);
    let runner = Runner {
        workspace: ws,
        refreshes,
        journal: &journal,
        progress: &progress,
        timings: &timings,
        admit,
        rollout,
        interrupt,
        halted: AtomicBool::new(false),
        window_closed: AtomicBool::new(false),
    };
    let mut tally = Tally::new(state);
    let rollout_waves = batches.iter().filter(|b| b.wave.is_some()).count();
    for batch in batches {
        if let Some(number) = batch.wave {
            if !runner
                .start_wave(&batch.changes, number, rollout_waves)
                .await
            {
                for change in batch.changes {
                    tally.untouched(change, runner.untouched_as());
                }
                continue;
            }
        }
        let mut runnable = Vec::new();
        for change in batch.changes {
            let first = before.get(&change.address).into_iter().flatten();
            match tally.what_it_follows(first) {
                Some(Untouched::Failed) => tally.failed_first(change),
                Some(untouched) => tally.untouched(change, untouched),
                None if runner.interrupted() => tally.untouched(change, Untouched::Interrupted),
                None if runner.halted() => tally.untouched(change, Untouched::NotStarted),
                None => runnable.push(change),
            }
        }
        let runner = &runner;
        let mut results = futures::stream::iter(runnable)
            .map(|change| async move { (change, runner.run_one(change).await) })
            .buffer_unordered(parallelism.max(1));
        while let Some((change, outcome)) = results.next().await {
            tally.record(ws, change, outcome, &journal)?;
        }
    }
    let Tally {
        mut state,
        mut report,
        failed,
        ..
    } = tally;
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
        Err(ApplyError::Failed {
            failed,
            total,
            not_started: report.not_started.len(),
            interrupted: report.interrupted.len(),
        })
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

/// What the resource needs applied first (see [`Dependencies::declared`]).
fn dependencies(
    workspace: &Workspace,
    address: &crate::model::Address,
) -> Vec<crate::model::Address> {
    Dependencies::of(workspace).declared(address)
}

/// What must be applied before the resource (see [`Dependencies::order`]).
fn order_dependencies(
    workspace: &Workspace,
    address: &crate::model::Address,
) -> Vec<crate::model::Address> {
    Dependencies::of(workspace).order(address)
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
