//! One apply run's moving parts: [`Runner`] starts the changes (admitted by the window, gated
//! on their health in a rollout) and [`Tally`] keeps what they came to — the state as it goes,
//! the report, the failures, what was left untouched and why.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::gate::{wait_until_healthy, Gate};
use super::interrupt::Interrupt;
use super::progress::{Event, Progress};
use super::rollout::is_disruptive;
use super::timing::Timings;
use super::SAVE_INTERVAL;
use super::{dependencies, record, record_verification, ApplyError, ApplyReport, Halt};
use crate::config::Rollout;
use crate::model::Address;
use crate::plan::ResourceChange;
use crate::provider::{Applied, Provider, ProviderError};
use crate::state::journal::Journal;
use crate::state::State;
use crate::workspace::{Refreshes, Workspace, WorkspaceError};

/// What became of a change that was handed to the runner.
pub(super) enum Outcome {
    /// `admit` turned it away: the window closed.
    NotAdmitted,
    /// The rollout had stopped before it could start.
    NotStarted,
    /// Apply was interrupted before it could start.
    Interrupted,
    Ran {
        result: Result<Applied, ProviderError>,
        /// Why it stopped the rollout, if it did (boxed: most changes do not).
        halt: Box<Option<Halt>>,
    },
}

/// Why a change was not applied though it was planned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Untouched {
    /// The window closed before it could start.
    Left,
    /// The rollout stopped before it could start.
    NotStarted,
    /// Apply was interrupted before it could start.
    Interrupted,
    /// It failed, or something it must follow did.
    Failed,
}

pub(super) struct Runner<'a> {
    pub workspace: &'a Workspace,
    pub refreshes: &'a Refreshes,
    pub journal: &'a Journal,
    pub progress: &'a Arc<dyn Progress>,
    pub timings: &'a Timings,
    pub admit: &'a (dyn Fn(&ResourceChange) -> bool + Sync),
    pub rollout: Option<&'a Rollout>,
    /// Asked (on Ctrl-C) to start nothing new; read before each change and wave starts.
    pub interrupt: &'a Interrupt,
    /// Set by the first change that stops the rollout; read before each change starts.
    pub halted: AtomicBool,
    /// Set once a wave could not start within the window: every later wave is left too.
    pub window_closed: AtomicBool,
}

impl Runner<'_> {
    pub fn halted(&self) -> bool {
        self.halted.load(Ordering::SeqCst)
    }

    pub fn interrupted(&self) -> bool {
        self.interrupt.asked()
    }

    /// Why a wave that did not start is untouched.
    pub fn untouched_as(&self) -> Untouched {
        if self.interrupted() {
            Untouched::Interrupted
        } else if self.halted() {
            Untouched::NotStarted
        } else {
            Untouched::Left
        }
    }

    /// Whether wave `number` (of `count`) starts: after the pause, if the rollout has not
    /// stopped and the whole wave still fits the window — a wave starts whole or not at all.
    pub async fn start_wave(&self, wave: &[&ResourceChange], number: usize, count: usize) -> bool {
        let pause = self.rollout.map(|r| r.pause).unwrap_or_default();
        let going = !self.halted() && !self.window_closed.load(Ordering::SeqCst);
        if number > 1 && going {
            // An interrupt ends the pause: the next wave will not start anyway.
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                () = self.interrupt.wait() => {}
            }
        }
        if self.interrupted() {
            tracing::info!("wave {number} of {count}: not started, apply was interrupted");
            return false;
        }
        if self.halted() {
            tracing::info!("wave {number} of {count}: not started, the rollout stopped");
            return false;
        }
        if self.window_closed.load(Ordering::SeqCst) || !wave.iter().all(|c| (self.admit)(c)) {
            self.window_closed.store(true, Ordering::SeqCst);
            tracing::info!("wave {number} of {count}: left for later");
            return false;
        }
        let addresses: Vec<String> = wave.iter().map(|c| c.address.to_string()).collect();
        tracing::info!("wave {number} of {count}: {}", addresses.join(", "));
        true
    }

    /// Applies one change, unless the rollout stopped or the window closed first; in a
    /// rollout, then holds it to the plan and gates it on its health.
    pub async fn run_one(&self, change: &ResourceChange) -> Outcome {
        // Checked here, as the change would start, not when it was queued: with parallelism,
        // changes queued before the interrupt are still waiting for a slot.
        if self.interrupted() {
            return Outcome::Interrupted;
        }
        if self.halted() {
            return Outcome::NotStarted;
        }
        if !(self.admit)(change) {
            return Outcome::NotAdmitted;
        }
        let started = Instant::now();
        let prior = self.workspace.state.resources.get(&change.address);
        let provider = (self.workspace)
            .provider(&change.provider)
            .expect("planned providers are connected");
        let result = match self.refreshes.of(&change.provider) {
            Ok(refreshed) => (provider.apply(change, prior, refreshed, self.journal)).await,
            Err(e) => Err(e),
        };
        let address = change.address.to_string();
        self.timings.resource_done(&address, Instant::now());
        self.progress.event(Event::ResourceDone {
            address: &address,
            ok: result.is_ok(),
            elapsed: started.elapsed(),
        });
        let halt = self.halt(provider, change, &result).await;
        if halt.is_some() {
            self.halted.store(true, Ordering::SeqCst);
        }
        Outcome::Ran {
            result,
            halt: Box::new(halt),
        }
    }

    /// Whether the change stops the rollout: it did more than the plan said (any change), or
    /// — a disruptive one — failed or did not become healthy in time.
    async fn halt(
        &self,
        provider: &dyn Provider,
        change: &ResourceChange,
        result: &Result<Applied, ProviderError>,
    ) -> Option<Halt> {
        let rollout = self.rollout?;
        let address = change.address.to_string();
        let applied = match result {
            Err(_) if is_disruptive(change) => return Some(Halt::Failed { address }),
            Err(_) => return None,
            Ok(applied) => applied,
        };
        let verified = applied.verification.as_ref();
        if let Some(under) = verified.filter(|v| v.under_predicted()) {
            let summary = under.summary();
            return Some(Halt::UnderPredicted { address, summary });
        }
        if !(rollout.health_gate && is_disruptive(change)) {
            return None;
        }
        self.progress.event(Event::Waiting {
            address: &address,
            what: "healthy",
        });
        let entry = applied.entry.as_ref();
        match wait_until_healthy(provider, change, entry, rollout.health_timeout).await {
            Gate::Passed => None,
            Gate::Failed(problems) => Some(Halt::Unhealthy { address, problems }),
        }
    }
}

/// What the run's changes came to so far.
pub(super) struct Tally {
    pub state: State,
    pub report: ApplyReport,
    pub failed: Vec<ProviderError>,
    last_save: Instant,
    untouched: BTreeMap<Address, Untouched>,
}

impl Tally {
    pub fn new(state: State) -> Tally {
        Tally {
            state,
            report: ApplyReport::default(),
            failed: Vec::new(),
            last_save: Instant::now(),
            untouched: BTreeMap::new(),
        }
    }

    /// The worst of what became of what a change must follow (failed over not started over
    /// left), or `None` when all of it was applied.
    pub fn what_it_follows<'a>(
        &self,
        first: impl Iterator<Item = &'a Address>,
    ) -> Option<Untouched> {
        first.filter_map(|a| self.untouched.get(a).copied()).max()
    }

    /// A change not applied because something it must follow failed.
    pub fn failed_first(&mut self, change: &ResourceChange) {
        self.untouched
            .insert(change.address.clone(), Untouched::Failed);
        self.failed.push(ProviderError::new(
            &change.address,
            "not applied: a resource it must follow failed",
        ));
    }

    pub fn untouched(&mut self, change: &ResourceChange, why: Untouched) {
        self.untouched.insert(change.address.clone(), why);
        let address = change.address.to_string();
        match why {
            Untouched::Left => self.report.left.push(address),
            Untouched::NotStarted => self.report.not_started.push(address),
            Untouched::Interrupted => self.report.interrupted.push(address),
            Untouched::Failed => unreachable!("a failure is recorded with its error"),
        }
    }

    /// Records what the runner did with `change`: in the state (saved now and then), the
    /// report, or the failures.
    pub fn record(
        &mut self,
        workspace: &Workspace,
        change: &ResourceChange,
        outcome: Outcome,
        journal: &Journal,
    ) -> Result<(), ApplyError> {
        let (result, halt) = match outcome {
            Outcome::NotAdmitted | Outcome::NotStarted | Outcome::Interrupted => {
                let why = match outcome {
                    Outcome::NotAdmitted => Untouched::Left,
                    Outcome::Interrupted => Untouched::Interrupted,
                    _ => Untouched::NotStarted,
                };
                self.untouched(change, why);
                return Ok(());
            }
            Outcome::Ran { result, halt } => (result, *halt),
        };
        self.report.halts.extend(halt);
        match result {
            Ok(applied) => self.applied(workspace, change, applied),
            Err(e) => {
                if let Some(mut left) = journal.left_by(&change.address) {
                    // Written, then failed: recorded so the next plan sees it.
                    left.depends_on = dependencies(workspace, &change.address);
                    record(&mut self.state, change, Some(left));
                }
                self.untouched
                    .insert(change.address.clone(), Untouched::Failed);
                self.failed.push(e);
                Ok(())
            }
        }
    }

    fn applied(
        &mut self,
        workspace: &Workspace,
        change: &ResourceChange,
        Applied {
            entry,
            verification,
        }: Applied,
    ) -> Result<(), ApplyError> {
        let entry = entry.map(|mut e| {
            e.depends_on = dependencies(workspace, &change.address);
            e
        });
        record(&mut self.state, change, entry);
        if let Some(verified) = verification {
            record_verification(&mut self.state, &verified);
            self.report.verified.push(verified);
        }
        if self.last_save.elapsed() >= SAVE_INTERVAL {
            let saved = workspace.store.save(&mut self.state);
            saved.map_err(WorkspaceError::from)?;
            self.last_save = Instant::now();
        }
        self.report.applied.push(change.address.to_string());
        self.report.operations += change.operations.len();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::test_changes::change;
    use crate::model::{Downtime, Impact};

    fn minimal(name: &str) -> ResourceChange {
        change(name, Impact::Minimal, Downtime::new(0, 5))
    }

    #[test]
    fn what_an_interrupt_kept_from_starting_is_reported_as_interrupted() {
        let mut tally = Tally::new(State::default());
        let (a, b) = (minimal("a"), minimal("b"));
        tally.untouched(&a, Untouched::Interrupted);
        tally.untouched(&b, Untouched::NotStarted);
        assert_eq!(tally.report.interrupted, ["load-balancer.a"]);
        assert_eq!(tally.report.not_started, ["load-balancer.b"]);
        assert!(tally.report.applied.is_empty());
    }

    /// A change that must follow an interrupted one is interrupted too — but a failure among
    /// what it follows is the worse, and said as such.
    #[test]
    fn a_change_after_an_interrupted_one_is_interrupted_unless_one_before_it_failed() {
        let mut tally = Tally::new(State::default());
        let (left, interrupted, stopped) = (minimal("left"), minimal("cut"), minimal("stopped"));
        tally.untouched(&left, Untouched::Left);
        tally.untouched(&interrupted, Untouched::Interrupted);
        tally.untouched(&stopped, Untouched::NotStarted);
        let follows = [&left.address, &interrupted.address, &stopped.address];
        assert_eq!(
            tally.what_it_follows(follows.into_iter()),
            Some(Untouched::Interrupted)
        );
        tally.failed_first(&minimal("failed"));
        let failed = minimal("failed").address;
        let follows = [&interrupted.address, &failed];
        assert_eq!(
            tally.what_it_follows(follows.into_iter()),
            Some(Untouched::Failed)
        );
    }
}
