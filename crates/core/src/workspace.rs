//! A workspace ties one invocation together: the config, its state store (locked for the
//! duration), and a connected provider per configured cloud. It runs the refresh and plan
//! stages; `apply` runs the rest. The config's `[[moved]]` entries are applied to the state it
//! starts from (`follow_moves`, in memory): every stage after sees each moved resource under
//! its new address with its old entry, and apply saves the state with the moves.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::future::BoxFuture;

use crate::config::{Config, SourceLocation};
use crate::model::{Address, Impact};
use crate::parallel::map_in_parallel;
use crate::plan::file::StateRef;
use crate::plan::{Action, Plan, ResourceChange};
use crate::provider::{
    DriftCheck, ErrorKind, PlanOptions, Provider, ProviderError, Refreshed, Target,
};
use crate::state::{
    journal, Blocked, MoveError, ResourceState, State, StateBackend, StateError, StateLock,
};

#[path = "workspace_adopt.rs"]
mod adopt;
#[path = "workspace_ignore.rs"]
mod ignore;
#[path = "workspace_import.rs"]
mod import;
#[path = "workspace_refresh_only.rs"]
mod refresh_only;

pub use adopt::{Generation, Survey};

use ignore::{drift_without_ignored, without_ignored};

#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error(transparent)]
    State(#[from] StateError),
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error("{address} uses provider `{provider}`, which is not configured: add a [provider.{provider}] table")]
    UnknownProvider { address: Address, provider: String },
    /// Several resources could not be planned: one line each.
    #[error("{}", .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))]
    Plan(Vec<ProviderError>),
    #[error(transparent)]
    Move(#[from] MoveError),
    /// The config's moves that cannot apply to the state: one line each.
    #[error("{}", .0.iter().map(|b| b.to_string()).collect::<Vec<_>>().join("\n"))]
    MovesBlocked(Vec<Blocked>),
    /// `--target` leaves out resources the config's moves renamed in the state.
    #[error(
        "--target leaves out {}, which the config's [[moved]] entries rename in the state: add --target for each, or plan them all",
        .0.iter().map(|(to, from)| format!("{to} (moved from {from})")).collect::<Vec<_>>().join(", ")
    )]
    MovesNotTargeted(Vec<(Address, Address)>),
}

/// One error as it was; several as one, in config order (by file and position).
fn plan_errors(mut errors: Vec<ProviderError>) -> WorkspaceError {
    if errors.len() == 1 {
        return WorkspaceError::Provider(errors.remove(0));
    }
    errors.sort_by(|a, b| {
        let at = |e: &ProviderError| {
            e.location
                .as_ref()
                .map(|l| (l.file.clone(), l.line, l.column))
        };
        (at(a), &a.address).cmp(&(at(b), &b.address))
    });
    WorkspaceError::Plan(errors)
}

/// What an interrupted apply left, said so the operator knows why the plan looks as it does.
fn recovery_notice(interrupted: &journal::Interrupted) -> String {
    let in_flight: Vec<String> = interrupted
        .in_flight()
        .iter()
        .map(|e| format!("{}: {}", e.address, e.operation))
        .collect();
    let unknown = if in_flight.is_empty() {
        String::new()
    } else {
        format!("; its outcome unknown: {}", in_flight.join(", "))
    };
    format!(
        "an earlier apply was interrupted after {} operations{unknown}. This plan starts from the live state and adopts what that run created.",
        interrupted.done()
    )
}

/// Records in `state` what an interrupted apply wrote and never recorded (a Service written
/// before the run was killed in its wait for the controller): never an object skyplan made and
/// forgot. Returns a notice for each.
fn adopt_left(state: &mut State, interrupted: &journal::Interrupted) -> Vec<String> {
    let mut notices = Vec::new();
    for (address, entry) in interrupted.left() {
        if let std::collections::btree_map::Entry::Vacant(slot) =
            state.resources.entry(address.clone())
        {
            notices.push(format!(
                "{address}: recorded from the interrupted apply's journal (written before it ended)"
            ));
            slot.insert(entry);
        }
    }
    notices
}

/// What each provider's refresh read, by provider name: its targets are planned from it, and
/// apply hands it back to the provider with each change planned from it.
#[derive(Debug, Default)]
pub struct Refreshes(BTreeMap<String, Refreshed>);

impl Refreshes {
    /// What `provider`'s refresh read. Every planned change's provider was refreshed: missing,
    /// the pipeline broke its own rule.
    pub fn of(&self, provider: &str) -> Result<&Refreshed, ProviderError> {
        self.0.get(provider).ok_or_else(|| {
            ProviderError::new(
                provider,
                "was not refreshed before it was asked about its resources",
            )
            .kind(ErrorKind::Internal)
        })
    }

    /// The refreshes by provider, taken out (a `Refreshes` frees its own off the path).
    fn into_inner(mut self) -> BTreeMap<String, Refreshed> {
        std::mem::take(&mut self.0)
    }
}

impl Drop for Refreshes {
    /// A large account's live state is millions of small objects: it is freed on a thread of
    /// its own, so that the command does not wait for it (as [`Workspace::close`] does with
    /// the config and the state).
    fn drop(&mut self) {
        let read = std::mem::take(&mut self.0);
        if !read.is_empty() {
            std::thread::spawn(move || drop(read));
        }
    }
}

/// A plan, and the refresh it was made from, which apply hands back to the providers.
#[derive(Debug)]
pub struct Planned {
    pub plan: Plan,
    pub refreshes: Refreshes,
}

/// Each provider's targets, by provider name.
type TargetsByProvider<'w> = BTreeMap<String, Vec<Target<'w>>>;

/// One resource's drift check, with where the config declares it (if it still does).
#[derive(Debug, Clone)]
pub struct DriftOutcome {
    pub address: Address,
    pub provider: String,
    pub location: Option<SourceLocation>,
    pub check: DriftCheck,
    /// For a resource never applied, what a plan would do with it now (the cloud may already
    /// hold an object it adopts and changes): its action and class, as `plan` says them.
    /// `None` when it was applied, or its plan fails (the plan reports why).
    pub first_apply: Option<(Action, Impact)>,
}

pub struct Workspace {
    pub config: Config,
    /// Where state, lock and journal are kept: the state directory or PostgreSQL.
    pub store: Box<dyn StateBackend>,
    pub state: State,
    /// Things the user should know before the plan: an interrupted apply that was recovered, a
    /// stale lock that was taken over.
    pub notices: Vec<String>,
    /// Whether the state exists on disk (a new one gets its lineage when first saved).
    saved_state: bool,
    /// The resources the config's `[[moved]]` entries renamed in `state` (see
    /// [`Workspace::follow_moves`]): each new address with the address its entry was at.
    moved: BTreeMap<Address, Address>,
    providers: BTreeMap<String, Box<dyn Provider>>,
    _lock: StateLock,
}

/// The connected providers, by name.
pub type Providers = BTreeMap<String, Box<dyn Provider>>;

/// Connects every provider a config names: the registry, which knows them all.
pub type Connect = for<'a> fn(&'a Config) -> BoxFuture<'a, Result<Providers, ProviderError>>;

impl Workspace {
    /// Locks the state in `store` (the backend the config names, as the registry opened it)
    /// for `operation` and connects the configured providers.
    pub async fn open(
        config: Config,
        store: Box<dyn StateBackend>,
        operation: &str,
        lock_wait: Option<Duration>,
        connect: Connect,
    ) -> Result<Workspace, WorkspaceError> {
        let lock = store.lock(operation, lock_wait)?;
        let mut notices = Vec::new();
        if let Some(stale) = lock.taken_over() {
            notices.push(format!(
                "took over a lock left by `{}` (pid {}, no longer running) from {}",
                stale.operation, stale.pid, stale.created
            ));
        }
        let interrupted = store.interrupted()?;
        if let Some(interrupted) = &interrupted {
            notices.push(recovery_notice(interrupted));
            // Only an apply takes the record over (it starts a journal of its own); a plan
            // before it leaves it, so that the apply still knows what the killed run did.
            if operation == "apply" {
                store.archive_journal()?;
            }
        }
        let loaded = store.load()?;
        let saved_state = loaded.is_some();
        let mut state = loaded.unwrap_or_else(State::new);
        if let Some(interrupted) = &interrupted {
            notices.extend(adopt_left(&mut state, interrupted));
        }
        let providers = connect(&config).await?;
        if let Some(interrupted) = &interrupted {
            for provider in providers.values() {
                provider.recover(interrupted);
            }
        }
        Ok(Workspace {
            config,
            store,
            state,
            notices,
            saved_state,
            moved: BTreeMap::new(),
            providers,
            _lock: lock,
        })
    }

    /// The connected providers' names, sorted.
    pub fn provider_names(&self) -> Vec<&str> {
        self.providers.keys().map(String::as_str).collect()
    }

    /// Applies the config's `[[moved]]` entries to the state this run starts from, in memory:
    /// each resource moved is then refreshed, planned, drift-checked and applied under its new
    /// address from its old entry (a pure rename plans as a no-op), and the state is saved
    /// with the moves when apply saves it. A move whose entry is gone does nothing; one onto
    /// an address the state also holds is an error naming both. Not for the commands that
    /// edit the state as stored (`state rm`, `state mv`, `import`).
    pub fn follow_moves(&mut self) -> Result<(), WorkspaceError> {
        let moved = (self.state)
            .apply_moves(&self.config.moves)
            .map_err(WorkspaceError::MovesBlocked)?;
        self.moved = moved;
        Ok(())
    }

    /// The resources the config's moves renamed in this run's state: each new address with the
    /// address its entry was at.
    pub fn moved(&self) -> &BTreeMap<Address, Address> {
        &self.moved
    }

    /// Sets each planned change's `moved_from`.
    fn mark_moves(&self, changes: &mut [ResourceChange]) {
        if self.moved.is_empty() {
            return;
        }
        for change in changes {
            change.moved_from = self.moved.get(&change.address).cloned();
        }
    }

    pub fn provider(&self, name: &str) -> Option<&dyn Provider> {
        self.providers.get(name).map(|p| p.as_ref())
    }

    /// The provider `address` uses, or the error naming the table the config lacks.
    fn provider_named(
        &self,
        name: &str,
        address: &Address,
    ) -> Result<&dyn Provider, WorkspaceError> {
        self.provider(name)
            .ok_or_else(|| WorkspaceError::UnknownProvider {
                address: address.clone(),
                provider: name.to_string(),
            })
    }

    /// Every address in the config or the state (removed resources still need a plan).
    fn addresses(&self) -> Vec<&Address> {
        let mut addresses: Vec<&Address> = self
            .config
            .resources
            .iter()
            .map(|r| &r.address)
            .chain(self.state.resources.keys())
            .collect();
        addresses.sort();
        addresses.dedup();
        addresses
    }

    fn targets_by_provider(
        &self,
        only: &[Address],
    ) -> Result<TargetsByProvider<'_>, WorkspaceError> {
        let mut by_provider: BTreeMap<String, Vec<Target>> = BTreeMap::new();
        for address in self.addresses() {
            if !only.is_empty() && !only.contains(address) {
                continue;
            }
            let resource = self.config.resource(address);
            let prior = self.state.resources.get(address);
            let provider = resource
                .map(|r| r.provider.clone())
                .or_else(|| prior.map(|p| p.provider.clone()))
                .expect("an address comes from the config or the state");
            if !self.providers.contains_key(&provider) {
                return Err(WorkspaceError::UnknownProvider {
                    address: address.clone(),
                    provider,
                });
            }
            by_provider.entry(provider).or_default().push(Target {
                address,
                resource,
                prior,
            });
        }
        Ok(by_provider)
    }

    /// Refreshes every provider concurrently, for the targets (all when `only` is empty).
    async fn refresh(
        &self,
        only: &[Address],
    ) -> Result<(TargetsByProvider<'_>, Refreshes), WorkspaceError> {
        let by_provider = self.targets_by_provider(only)?;
        let refreshes = by_provider.iter().map(|(name, targets)| async move {
            let read = self.providers[name].refresh(targets).await?;
            Ok::<_, ProviderError>((name.clone(), read))
        });
        let read = futures::future::try_join_all(refreshes).await?;
        Ok((by_provider, Refreshes(read.into_iter().collect())))
    }

    /// Refreshes and plans every target; `only` restricts the plan to those addresses
    /// (`--target`).
    pub async fn plan(
        &self,
        options: &PlanOptions,
        only: &[Address],
    ) -> Result<Planned, WorkspaceError> {
        let mut changes: Vec<ResourceChange> = Vec::new();
        // Every resource's error at once, so a user fixes a config in one round.
        let mut errors = Vec::new();
        if !only.is_empty() {
            // As Terraform: a move is part of the plan, and a plan that leaves one out would
            // not show what apply writes to the state.
            let left_out: Vec<(Address, Address)> = (self.moved.iter())
                .filter(|(to, _)| !only.contains(to))
                .map(|(to, from)| (to.clone(), from.clone()))
                .collect();
            if !left_out.is_empty() {
                return Err(WorkspaceError::MovesNotTargeted(left_out));
            }
        }
        let started = std::time::Instant::now();
        let (by_provider, refreshes) = self.refresh(only).await?;
        tracing::info!(ms = started.elapsed().as_millis(), "refreshed");
        let mut ignored = Vec::new();
        for (name, targets) in &by_provider {
            let provider = self.providers[name].as_ref();
            let refreshed = refreshes.of(name)?;
            let outcomes = plan_targets(provider, targets, refreshed, options);
            for (target, outcome) in targets.iter().zip(outcomes) {
                let outcome = outcome.and_then(|change| {
                    let config = &self.config;
                    without_ignored(config, provider, target, refreshed, options, change)
                });
                match outcome {
                    Ok((change, left_out)) => {
                        changes.push(change);
                        ignored.extend(left_out);
                    }
                    Err(e) => errors.push(e),
                }
            }
        }
        tracing::info!(ms = started.elapsed().as_millis(), "refreshed and compared");
        if !errors.is_empty() {
            return Err(plan_errors(errors));
        }
        changes.sort_by(|a, b| a.address.cmp(&b.address));
        self.mark_moves(&mut changes);
        ignored.sort_by(|a, b| a.address.cmp(&b.address));
        Ok(Planned {
            plan: Plan {
                changes,
                ignored,
                drift: vec![],
            },
            refreshes,
        })
    }

    /// Refreshes and compares every target with what was last applied.
    pub async fn drift(&self) -> Result<Vec<DriftOutcome>, WorkspaceError> {
        let (by_provider, refreshes) = self.refresh(&[]).await?;
        self.drift_of(&by_provider, &refreshes)
    }

    /// Each target compared with what was last applied, from what `refreshes` read.
    fn drift_of(
        &self,
        by_provider: &TargetsByProvider<'_>,
        refreshes: &Refreshes,
    ) -> Result<Vec<DriftOutcome>, WorkspaceError> {
        let mut outcomes = Vec::new();
        for (name, targets) in by_provider {
            let refreshed = refreshes.of(name)?;
            for target in targets {
                let provider = self.providers[name].as_ref();
                let mut first_apply = None;
                let check = match (target.resource, target.prior) {
                    // Configured but never applied: nothing skyplan made to compare, and never
                    // "in sync" (whatever the cloud happens to hold). What applying it does is
                    // read as `plan` reads it, so drift never says less than plan.
                    (Some(_), None) => {
                        first_apply = self.first_apply(provider, target, refreshed);
                        DriftCheck::NotApplied
                    }
                    _ => drift_without_ignored(target.resource, provider.drift(target, refreshed)?),
                };
                // Gone from the config with nothing to compare: the plan's business (a
                // removal), not drift.
                if target.resource.is_none() && check == DriftCheck::NotApplied {
                    continue;
                }
                outcomes.push(DriftOutcome {
                    address: target.address.clone(),
                    provider: name.clone(),
                    location: target.resource.map(|r| r.location.clone()),
                    check,
                    first_apply,
                });
            }
        }
        outcomes.sort_by(|a, b| a.address.cmp(&b.address));
        Ok(outcomes)
    }

    /// The action and class of the plan of a target never applied, with its `ignore-changes`.
    fn first_apply(
        &self,
        provider: &dyn Provider,
        target: &Target<'_>,
        refreshed: &Refreshed,
    ) -> Option<(Action, Impact)> {
        let options = PlanOptions::default();
        let change = (provider.plan(target, refreshed, &options))
            .and_then(|change| {
                without_ignored(&self.config, provider, target, refreshed, &options, change)
            })
            .ok()?
            .0;
        Some((change.action, change.impact()))
    }

    /// Takes the cloud object `id` under management as `address` (which the config declares):
    /// records it in the state as the cloud holds it (`workspace_import.rs`), so drift finds
    /// nothing and the next plan shows where the config differs.
    pub async fn import(&mut self, address: &Address, id: &str) -> Result<(), WorkspaceError> {
        let resource = self.config.resource(address).ok_or_else(|| {
            ProviderError::new(
                address,
                "is not in the config: declare it before importing it",
            )
        })?;
        if self.state.resources.contains_key(address) {
            let remove = crate::invocation::skyplan("state rm");
            return Err(ProviderError::new(
                address,
                format!("is already in the state (`{remove}` it first)"),
            )
            .into());
        }
        let provider = self.provider_named(&resource.provider, address)?;
        let claimed = ResourceState {
            provider: resource.provider.clone(),
            id: id.to_string(),
            ids: serde_json::Value::Null,
            attributes: serde_json::Value::Null,
            depends_on: vec![],
        };
        let target = Target {
            address,
            resource: Some(resource),
            prior: Some(&claimed),
        };
        let refreshed = provider.refresh(std::slice::from_ref(&target)).await?;
        let entry = import::imported(&self.config, provider, &target, &refreshed)?;
        self.state.resources.insert(address.clone(), entry);
        self.store.save(&mut self.state)?;
        Ok(())
    }

    /// A managed cluster's kubeconfig: its provider reads it from the cloud.
    pub async fn kubeconfig(
        &self,
        address: &Address,
    ) -> Result<crate::model::Secret, WorkspaceError> {
        let resource = self.config.resource(address);
        let prior = self.state.resources.get(address);
        let provider_name = resource
            .map(|r| r.provider.clone())
            .or_else(|| prior.map(|p| p.provider.clone()))
            .ok_or_else(|| {
                ProviderError::new(address, "is neither in the config nor in the state")
            })?;
        let provider = self.provider_named(&provider_name, address)?;
        let target = Target {
            address,
            resource,
            prior,
        };
        let refreshed = provider.refresh(std::slice::from_ref(&target)).await?;
        Ok(provider.kubeconfig(&target, &refreshed).await?)
    }

    /// Renames the state entry at `from` to `to` (`state mv`), and `from` wherever other
    /// entries name it, then saves the state: nothing in the cloud changes.
    pub fn move_entry(&mut self, from: &Address, to: &Address) -> Result<(), WorkspaceError> {
        self.state.rename(from, to)?;
        self.store.save(&mut self.state)?;
        Ok(())
    }

    /// Forgets `address`: skyplan no longer manages it; the cloud object stays as it is.
    pub fn forget(&mut self, address: &Address) -> Result<(), WorkspaceError> {
        if self.state.resources.remove(address).is_none() {
            return Err(ProviderError::new(address, "is not in the state").into());
        }
        self.store.save(&mut self.state)?;
        Ok(())
    }

    /// Which state this is, for a saved plan to be checked against.
    pub fn state_ref(&self) -> StateRef {
        StateRef {
            lineage: self.state.lineage.clone(),
            serial: self.state.serial,
            content_hash: self.state.content_hash(),
        }
    }

    /// Saves a state that exists only in memory, so that its lineage is fixed before a plan
    /// file refers to it.
    pub fn save_new_state(&mut self) -> Result<(), WorkspaceError> {
        if !self.saved_state {
            self.store.save(&mut self.state)?;
            self.saved_state = true;
        }
        Ok(())
    }

    pub fn request_count(&self) -> u64 {
        self.providers.values().map(|p| p.request_count()).sum()
    }

    /// Closes the providers (the embedded simulator saves its world) and releases the lock.
    pub async fn close(self) -> Result<(), WorkspaceError> {
        for provider in self.providers.values() {
            provider.close().await?;
        }
        let Workspace {
            config,
            store,
            state,
            providers,
            _lock,
            ..
        } = self;
        drop(store);
        drop(_lock);
        // A workspace of thousands of resources holds millions of small objects (the config,
        // the state): they are freed on a thread of their own, so the command does not wait
        // for it before it goes on or exits.
        std::thread::spawn(move || drop((config, state, providers)));
        Ok(())
    }
}

/// Targets compared on one thread before the work is split: a thread costs more than a few
/// comparisons.
const TARGETS_PER_THREAD: usize = 256;

/// Each target's change or error, in the targets' order. A comparison reads only what refresh
/// read, so the targets are compared on every core: on one, the comparisons of 5,000 load
/// balancers took a tenth of the plan.
fn plan_targets(
    provider: &dyn Provider,
    targets: &[Target],
    refreshed: &Refreshed,
    options: &PlanOptions,
) -> Vec<Result<ResourceChange, ProviderError>> {
    let targets: Vec<&Target> = targets.iter().collect();
    map_in_parallel(targets, TARGETS_PER_THREAD, |target| {
        provider.plan(target, refreshed, options)
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::model::ResourceKind;
    use crate::provider::fake::Fake;

    fn addresses(names: impl Iterator<Item = String>) -> Vec<Address> {
        names
            .map(|name| Address::new(ResourceKind::LoadBalancer, name))
            .collect()
    }

    fn targets(addresses: &[Address]) -> Vec<Target<'_>> {
        addresses
            .iter()
            .map(|address| Target {
                address,
                resource: None,
                prior: None,
            })
            .collect()
    }

    #[test]
    fn many_targets_are_planned_in_their_order_on_every_core() {
        let addresses = addresses((0..3 * TARGETS_PER_THREAD).map(|i| format!("lb{i:05}")));
        let fake = Fake::default();
        let outcomes = plan_targets(
            &fake,
            &targets(&addresses),
            &Fake::refreshed(),
            &PlanOptions::default(),
        );
        let planned: Vec<&Address> = outcomes
            .iter()
            .map(|c| &c.as_ref().unwrap().address)
            .collect();
        assert_eq!(planned, addresses.iter().collect::<Vec<_>>());
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        assert_eq!(fake.threads.lock().unwrap().len(), cores.min(3));
    }

    #[test]
    fn every_failure_is_reported_in_target_order() {
        let names = (0..3 * TARGETS_PER_THREAD).map(|i| match i {
            i if i == TARGETS_PER_THREAD + 1 => "bad-first".to_string(),
            i if i == 3 * TARGETS_PER_THREAD - 1 => "bad-last".to_string(),
            i => format!("lb{i:05}"),
        });
        let addresses = addresses(names);
        let outcomes = plan_targets(
            &Fake::default(),
            &targets(&addresses),
            &Fake::refreshed(),
            &PlanOptions::default(),
        );
        let failures: Vec<String> = outcomes
            .iter()
            .filter_map(|o| o.as_ref().err().map(ToString::to_string))
            .collect();
        assert_eq!(failures.len(), 2, "{failures:?}");
        assert!(failures[0].contains("bad-first"), "{failures:?}");
        assert!(failures[1].contains("bad-last"), "{failures:?}");
    }

    #[test]
    fn a_provider_that_was_not_refreshed_is_an_internal_error() {
        let error = Refreshes::default().of("echo").unwrap_err();
        assert_eq!(error.kind, ErrorKind::Internal);
        assert_eq!(
            error.to_string(),
            "echo: was not refreshed before it was asked about its resources"
        );
    }

    #[test]
    fn a_few_targets_stay_on_the_calling_thread() {
        let addresses = addresses((0..3).map(|i| format!("lb{i}")));
        let fake = Fake::default();
        plan_targets(
            &fake,
            &targets(&addresses),
            &Fake::refreshed(),
            &PlanOptions::default(),
        );
        let threads = fake.threads.lock().unwrap().clone();
        assert_eq!(threads, HashSet::from([std::thread::current().id()]));
    }
}
