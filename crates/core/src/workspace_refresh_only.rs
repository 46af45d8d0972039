//! `--refresh-only`: what changed outside skyplan, shown as a plan whose every change is a
//! no-op, then accepted into the state — no cloud object is touched.
//!
//! A drifted resource's new state entry is its provider's `import` of the object (what import
//! records for a live object, so each provider keeps one way of making an entry) with the spec
//! the resource would have if its config said what the cloud has: every difference the
//! provider's plan finds between config and cloud, its `before` written into the table and
//! resolved by the section (`Origin::with_values`). The entry is then checked with the
//! provider's drift check: a resource whose cloud values cannot all be written as config is
//! said so and left as it was, never recorded half-true.

use super::ignore::drift_without_ignored;
use super::{Planned, Workspace, WorkspaceError};
use crate::config::Resource;
use crate::model::Address;
use crate::plan::{Drifted, DriftedAttribute, DriftedStatus, Plan, ResourceChange};
use crate::provider::{DriftCheck, PlanOptions, Provider, ProviderError, Refreshed, Target};
use crate::state::ResourceState;

impl Workspace {
    /// Refreshes every resource once: the plan has a no-op for each and, in its `drift`, each
    /// resource that changed outside skyplan with the state entry that would record it.
    pub async fn refresh_only(&self) -> Result<Planned, WorkspaceError> {
        let (by_provider, refreshes) = self.refresh(&[]).await?;
        let mut changes = Vec::new();
        let mut drift = Vec::new();
        for (name, targets) in &by_provider {
            let provider = self.providers[name].as_ref();
            let refreshed = refreshes.of(name)?;
            for target in targets {
                changes.push(ResourceChange::no_op(target.address.clone(), name, None));
                drift.extend(self.drifted(provider, target, refreshed)?);
            }
        }
        changes.sort_by(|a, b| a.address.cmp(&b.address));
        self.mark_moves(&mut changes);
        drift.sort_by(|a, b| a.address.cmp(&b.address));
        let plan = Plan {
            changes,
            ignored: vec![],
            drift,
        };
        Ok(Planned { plan, refreshes })
    }

    /// Records each accepted entry of a refresh-only plan in the state, and saves it (with the
    /// config's moves, as apply does): the addresses recorded.
    pub fn accept_drift(&mut self, plan: &Plan) -> Result<Vec<Address>, WorkspaceError> {
        let mut accepted = Vec::new();
        for drifted in &plan.drift {
            if let Some(entry) = &drifted.accepted {
                let address = drifted.address.clone();
                self.state.resources.insert(address.clone(), entry.clone());
                accepted.push(address);
            }
        }
        // The config's moves are in this run's state: saved with what was accepted, or alone.
        if !accepted.is_empty() || !self.moved.is_empty() {
            self.store.save(&mut self.state)?;
        }
        Ok(accepted)
    }

    /// The target as its drift check finds it; `None` when in sync (or gone from the config
    /// with nothing to compare, which is a plan's business).
    fn drifted(
        &self,
        provider: &dyn Provider,
        target: &Target,
        refreshed: &Refreshed,
    ) -> Result<Option<Drifted>, ProviderError> {
        let check = match (target.resource, target.prior) {
            (_, None) => DriftCheck::NotApplied,
            _ => drift_without_ignored(target.resource, provider.drift(target, refreshed)?),
        };
        let found = |status, attributes| Drifted {
            address: target.address.clone(),
            provider: provider.name().to_string(),
            status,
            attributes,
            accepted: None,
            unaccepted: None,
        };
        Ok(match check {
            DriftCheck::NotApplied if target.resource.is_none() => None,
            DriftCheck::NotApplied => Some(found(DriftedStatus::NotApplied, vec![])),
            DriftCheck::Missing => Some(found(DriftedStatus::Missing, vec![])),
            DriftCheck::Compared(attributes) if attributes.is_empty() => None,
            DriftCheck::Compared(attributes) => {
                // A drift check's change restores the state: its `after` is the state's value.
                let attributes = (attributes.into_iter())
                    .map(|a| DriftedAttribute {
                        path: a.path,
                        before: a.after,
                        after: a.before,
                        impact: a.impact,
                        reason: a.reason,
                    })
                    .collect();
                let mut drifted = found(DriftedStatus::Drifted, attributes);
                match self.accepted(provider, target, refreshed) {
                    Ok(entry) => drifted.accepted = Some(entry),
                    Err(why) => drifted.unaccepted = Some(why),
                }
                Some(drifted)
            }
        })
    }

    /// The state entry that records the target's cloud object as it is, checked by a drift
    /// check against it.
    fn accepted(
        &self,
        provider: &dyn Provider,
        target: &Target,
        refreshed: &Refreshed,
    ) -> Result<ResourceState, String> {
        let (Some(resource), Some(prior)) = (target.resource, target.prior) else {
            return Err("no longer in the config: its table says how to record it".into());
        };
        let to_cloud = provider
            .plan(target, refreshed, &PlanOptions::default())
            .map_err(|e| e.to_string())?;
        let values: Vec<(&str, &serde_json::Value)> = (to_cloud.attributes.iter())
            .map(|a| (a.path.as_str(), &a.before))
            .collect();
        let spec = (resource.origin)
            .with_values(&self.config, target.address, &values)
            .map_err(|why| format!("the cloud's values cannot be written as config: {why}"))?;
        let as_live = Resource {
            spec,
            ..resource.clone()
        };
        let import = Target {
            resource: Some(&as_live),
            ..*target
        };
        let mut entry = provider
            .import(&import, refreshed)
            .map_err(|e| e.to_string())?;
        entry.depends_on = prior.depends_on.clone();
        let check = Target {
            prior: Some(&entry),
            ..*target
        };
        match provider
            .drift(&check, refreshed)
            .map_err(|e| e.to_string())?
        {
            DriftCheck::Compared(left) if left.is_empty() => Ok(entry),
            DriftCheck::Compared(left) => {
                let paths: Vec<&str> = left.iter().map(|a| a.path.as_str()).collect();
                Err(format!(
                    "{} cannot be recorded as the cloud has it",
                    paths.join(", ")
                ))
            }
            _ => Err("the cloud's object was not found again".into()),
        }
    }
}
