//! Taking over an existing estate: `discover` lists what the configured accounts and
//! clusters hold that no resource manages; `generate` asks each object's provider for the
//! config that adopts it; `import_generated` records the adopted objects in the state once the
//! config declares them. A provider that surveys deep enough to adopt from (`survey_deep`:
//! cloudscale reads every pool's members) is surveyed once; the others twice: the collections,
//! to discover, then with the adopted objects as targets (read as an import reads them), to
//! generate and import from.

use std::collections::BTreeMap;

use super::{DriftOutcome, Refreshes, TargetsByProvider, Workspace, WorkspaceError};
use crate::parallel::map_in_parallel;
use crate::provider::discover::{
    assign_addresses, fold_services, Adopting, Discovered, Generated, Unmanaged,
};
use crate::provider::{ProviderError, Target};
use crate::state::ResourceState;

/// What the configured providers hold that no resource manages, and the surveys deep enough
/// to adopt it from.
#[derive(Debug)]
pub struct Survey {
    pub objects: Vec<Unmanaged>,
    pub deep: Refreshes,
}

/// One object picked for adoption and what its provider wrote for it.
#[derive(Debug)]
pub struct Generation {
    pub results: Vec<(Unmanaged, Generated)>,
    /// The survey the config was generated from: the imports are read from it too.
    pub refreshes: Refreshes,
}

/// The state entry an import starts from: the object's ID, nothing else known yet.
fn claimed(object: &Unmanaged) -> ResourceState {
    ResourceState {
        provider: object.provider.clone(),
        id: object.id.clone(),
        ids: serde_json::Value::Null,
        attributes: serde_json::Value::Null,
        depends_on: vec![],
    }
}

impl Workspace {
    /// Every object of the configured providers that no resource of the config or the state
    /// manages, each with an address of its own (unique against the config, the state and
    /// each other). Every configured provider is surveyed, so that a Service bound by one
    /// provider's resource is not listed by another's.
    pub async fn discover(&self) -> Result<Vec<Unmanaged>, WorkspaceError> {
        Ok(self.survey_and_discover(false).await?.objects)
    }

    /// [`Workspace::discover`], keeping the surveys of the providers that survey deep enough
    /// to adopt from ([`crate::provider::Provider::survey_deep`]), for [`Workspace::generate`].
    pub async fn discover_to_adopt(&self) -> Result<Survey, WorkspaceError> {
        self.survey_and_discover(true).await
    }

    async fn survey_and_discover(&self, deep: bool) -> Result<Survey, WorkspaceError> {
        let by_provider = self.every_provider_targets()?;
        let surveys = by_provider.iter().map(|(name, targets)| async move {
            let provider = self.providers[name].as_ref();
            let deep_survey = if deep {
                provider.survey_deep(targets)
            } else {
                None
            };
            let (surveyed, kept) = match deep_survey {
                Some(survey) => (survey.await?, true),
                None => (provider.survey(targets).await?, false),
            };
            let found = provider.discover(targets, &surveyed)?;
            Ok::<_, ProviderError>((found, kept.then(|| (name.clone(), surveyed))))
        });
        let (found, kept): (Vec<_>, Vec<_>) = futures::future::try_join_all(surveys)
            .await?
            .into_iter()
            .unzip();
        Ok(Survey {
            objects: self.unmanaged(found),
            deep: Refreshes(kept.into_iter().flatten().collect()),
        })
    }

    /// [`Workspace::drift`] and [`Workspace::discover`] from one survey of every provider
    /// (`drift --unmanaged`): a survey is the refresh drift reads, and what discovery adds.
    pub async fn drift_and_discover(
        &self,
    ) -> Result<(Vec<DriftOutcome>, Vec<Unmanaged>), WorkspaceError> {
        let by_provider = self.every_provider_targets()?;
        let refreshes = self.survey(&by_provider).await?;
        let outcomes = self.drift_of(&by_provider, &refreshes)?;
        let found = by_provider.iter().map(|(name, targets)| {
            let surveyed = refreshes.of(name)?;
            self.providers[name].discover(targets, surveyed)
        });
        let found = found.collect::<Result<Vec<_>, _>>()?;
        Ok((outcomes, self.unmanaged(found)))
    }

    /// The objects the providers found, each Service once, each with an address of its own.
    fn unmanaged(&self, found: Vec<Discovered>) -> Vec<Unmanaged> {
        let mut objects = fold_services(found);
        assign_addresses(&mut objects, &self.addresses());
        objects
    }

    /// The config for each of `picks` (objects `discover` listed, under the address each is to
    /// get): read from `deep` where its provider surveyed deep enough, else from one more
    /// survey per provider with them among its targets. Generated on every core.
    pub async fn generate(
        &self,
        picks: Vec<Unmanaged>,
        deep: Refreshes,
    ) -> Result<Generation, WorkspaceError> {
        let entries: Vec<ResourceState> = picks.iter().map(claimed).collect();
        let mut adopting = Adopting::default();
        for object in &picks {
            adopting.insert(&object.provider, &object.id, object.address.clone());
        }
        let resurveyed = picks.iter().map(|o| &o.provider);
        let resurveyed = resurveyed.filter(|p| !deep.0.contains_key(*p));
        let mut by_provider = self.targets_of_providers(resurveyed)?;
        for (object, entry) in picks.iter().zip(&entries) {
            if deep.0.contains_key(&object.provider) {
                continue;
            }
            let targets = by_provider.entry(object.provider.clone()).or_default();
            targets.push(Target {
                address: &object.address,
                resource: None,
                prior: Some(entry),
            });
        }
        let started = std::time::Instant::now();
        let mut refreshes = self.survey(&by_provider).await?;
        drop(by_provider);
        tracing::info!(
            ms = started.elapsed().as_millis(),
            "surveyed with the picked objects"
        );
        refreshes.0.extend(deep.into_inner());
        let generate = |object: &Unmanaged| {
            let provider = self.provider_named(&object.provider, &object.address)?;
            let entry = claimed(object);
            let target = Target {
                address: &object.address,
                resource: None,
                prior: Some(&entry),
            };
            let surveyed = refreshes.of(&object.provider)?;
            Ok::<_, WorkspaceError>(provider.generate(&target, surveyed, &adopting)?)
        };
        let results = map_in_parallel(picks.iter().collect(), 64, generate);
        let results = results.into_iter().collect::<Result<Vec<_>, _>>()?;
        Ok(Generation {
            results: picks.into_iter().zip(results).collect(),
            refreshes,
        })
    }

    /// Records each adopted object in the state (not saved: [`Workspace::save_state`]) as its
    /// provider imports it, once the config declares it: read from the survey it was
    /// generated from, so that nothing is read twice.
    pub fn import_generated(
        &mut self,
        adopted: &[&Unmanaged],
        refreshes: &Refreshes,
    ) -> Result<(), WorkspaceError> {
        let import = |object: &&Unmanaged| {
            let address = &object.address;
            let resource = self.config.resource(address).ok_or_else(|| {
                ProviderError::new(address, "was generated but the config does not declare it")
            })?;
            let provider = self.provider_named(&object.provider, address)?;
            let entry = claimed(object);
            let target = Target {
                address,
                resource: Some(resource),
                prior: Some(&entry),
            };
            let imported = provider.import(&target, refreshes.of(&object.provider)?)?;
            Ok::<_, WorkspaceError>((address.clone(), imported))
        };
        let entries = map_in_parallel(adopted.iter().collect(), 64, import);
        let entries = entries.into_iter().collect::<Result<Vec<_>, _>>()?;
        for (address, entry) in entries {
            if self.state.resources.contains_key(&address) {
                return Err(ProviderError::new(&address, "is already in the state").into());
            }
            self.state.resources.insert(address, entry);
        }
        Ok(())
    }

    /// Saves the state as it is now (after [`Workspace::import_generated`]).
    pub fn save_state(&mut self) -> Result<(), WorkspaceError> {
        self.store.save(&mut self.state)?;
        Ok(())
    }

    /// The targets of every configured provider, an empty list for one without any.
    fn every_provider_targets(&self) -> Result<TargetsByProvider<'_>, WorkspaceError> {
        self.targets_of_providers(self.providers.keys())
    }

    /// The targets of the providers named (each configured one once).
    fn targets_of_providers<'s>(
        &self,
        names: impl Iterator<Item = &'s String>,
    ) -> Result<TargetsByProvider<'_>, WorkspaceError> {
        let mut all = self.targets_by_provider(&[])?;
        let mut chosen = BTreeMap::new();
        for name in names {
            if !self.providers.contains_key(name) || chosen.contains_key(name) {
                continue;
            }
            chosen.insert(name.clone(), all.remove(name).unwrap_or_default());
        }
        Ok(chosen)
    }

    async fn survey(
        &self,
        by_provider: &TargetsByProvider<'_>,
    ) -> Result<Refreshes, WorkspaceError> {
        let surveys = by_provider.iter().map(|(name, targets)| async move {
            let read = self.providers[name].survey(targets).await?;
            Ok::<_, ProviderError>((name.clone(), read))
        });
        let read = futures::future::try_join_all(surveys).await?;
        Ok(Refreshes(read.into_iter().collect()))
    }
}
