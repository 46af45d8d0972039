//! Taking over an existing estate: `discover` lists what the configured accounts and
//! clusters hold that no resource manages; `generate` asks each object's provider for the
//! config that adopts it; `import_generated` records the adopted objects in the state once the
//! config declares them. A provider that surveys deep enough to adopt from (`survey_deep`:
//! cloudscale reads every pool's members) is surveyed once; the others twice: the collections,
//! to discover, then with the adopted objects as targets (read as an import reads them), to
//! generate and import from.
//!
//! Discovery and import share one judgement: what `discover` lists as importable is what its
//! provider's `generate` writes a config for, so each listing (`discover`, `drift --unmanaged`,
//! `import --generate-config`) generates for every object its provider offers and lists a
//! refused one as not importable, with the refusal as the reason. That costs discovery what
//! generating costs — the reads an import needs (a pool's members, a rule's instances) — and
//! spares the user an object listed as importable that the import then refuses.

use std::collections::BTreeMap;

use super::{DriftOutcome, Refreshes, TargetsByProvider, Workspace, WorkspaceError};
use crate::parallel::map_in_parallel;
use crate::provider::discover::{
    assign_addresses, fold_services, refuse_as_generated, Adopting, Discovered, Generated,
    Unmanaged,
};
use crate::provider::{ProviderError, Target};
use crate::state::ResourceState;

/// What the configured providers hold that no resource manages, each judged by its
/// provider's generation, and that generation.
#[derive(Debug)]
pub struct Survey {
    pub objects: Vec<Unmanaged>,
    /// The config of each object its provider offered (`importable` before the judgement),
    /// under the address it is listed with; the refused ones are listed not importable.
    pub generation: Generation,
}

/// One object picked for adoption and what its provider wrote for it.
#[derive(Debug)]
pub struct Generation {
    pub results: Vec<(Unmanaged, Generated)>,
    /// The survey the config was generated from: the imports are read from it too, and a
    /// generation again under other addresses (`Workspace::generate_from`).
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
        Ok(self.discover_to_adopt().await?.objects)
    }

    /// [`Workspace::discover`] with the generation it judged the objects by, for
    /// `import --generate-config`: read from the surveys of the providers that survey deep
    /// enough to adopt from ([`crate::provider::Provider::survey_deep`]), else from one more
    /// survey with the objects among the targets.
    pub async fn discover_to_adopt(&self) -> Result<Survey, WorkspaceError> {
        let by_provider = self.every_provider_targets()?;
        let surveys = by_provider.iter().map(|(name, targets)| async move {
            let provider = self.providers[name].as_ref();
            let (surveyed, kept) = match provider.survey_deep(targets) {
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
        let deep = Refreshes(kept.into_iter().flatten().collect());
        self.judged(self.unmanaged(found), deep).await
    }

    /// `objects` with each one its provider offers generated (from `deep` where its provider
    /// surveyed deep enough): one the generation refuses is not importable, the refusal saying
    /// why.
    async fn judged(
        &self,
        mut objects: Vec<Unmanaged>,
        deep: Refreshes,
    ) -> Result<Survey, WorkspaceError> {
        let offered: Vec<Unmanaged> = objects.iter().filter(|o| o.importable).cloned().collect();
        let generation = self.generate(offered, deep).await?;
        refuse_as_generated(&mut objects, &generation.results);
        Ok(Survey {
            objects,
            generation,
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
        drop(by_provider);
        // Judged as `discover` judges them: the objects offered are surveyed once more, as
        // their import would read them (nothing more when nothing is unmanaged).
        let judged = self.judged(self.unmanaged(found), Refreshes::default());
        Ok((outcomes, judged.await?.objects))
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
    async fn generate(
        &self,
        picks: Vec<Unmanaged>,
        deep: Refreshes,
    ) -> Result<Generation, WorkspaceError> {
        let entries: Vec<ResourceState> = picks.iter().map(claimed).collect();
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
        let results = self.generate_from(&picks, &refreshes)?;
        Ok(Generation {
            results: picks.into_iter().zip(results).collect(),
            refreshes,
        })
    }

    /// The config for each of `picks` from `refreshes`, a survey that read each of them (a
    /// [`Generation`]'s): under the addresses they have now, each naming the others'. Pure,
    /// on every core.
    pub fn generate_from(
        &self,
        picks: &[Unmanaged],
        refreshes: &Refreshes,
    ) -> Result<Vec<Generated>, WorkspaceError> {
        let mut adopting = Adopting::default();
        for object in picks {
            adopting.insert(&object.provider, &object.id, object.address.clone());
        }
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
        results.into_iter().collect()
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
