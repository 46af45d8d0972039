//! `skyplan drift`: what changed in the cloud outside skyplan, in the format CI reads.

use miette::Report;

use super::super::args::{DriftFormat, Locking};
use super::super::report::Reported;
use super::super::repository::RepositoryPaths;
use super::super::{colour, exit};
use super::plan::style;
use super::{load, open, ConfigSource};
use crate::model::Impact;
use crate::plan::Action;
use crate::provider::DriftCheck;
use crate::render::{
    render_drift_github, render_drift_json, render_drift_junit, render_drift_markdown,
    render_drift_text, DriftItem, DriftReport, DriftResource, DriftStatus, Places,
};
use crate::workspace::DriftOutcome;

pub(super) async fn drift(
    source: &ConfigSource,
    format: DriftFormat,
    unmanaged: bool,
    locking: &Locking,
) -> Result<u8, Report> {
    let config = load(source)?;
    let workspace = open(config, "drift", locking).await?;
    let checked = match unmanaged {
        true => (workspace.drift_and_discover().await).map(|(o, found)| (o, Some(found))),
        false => workspace.drift().await.map(|o| (o, None)),
    };
    let paths = RepositoryPaths::for_config(&workspace.config.root);
    // Only the GitHub format points at keys: a large config's positions are not copied else.
    let places = match format {
        DriftFormat::Github => Places::from_config(&workspace.config, |file| paths.relative(file)),
        _ => Places::default(),
    };
    workspace.close().await.reported()?;
    let (outcomes, found) = checked.reported()?;
    let mut report = drift_report(outcomes, &paths);
    report.unmanaged = found;
    let text = match format {
        DriftFormat::Text => render_drift_text(&report, style()),
        DriftFormat::Json => render_drift_json(&report),
        DriftFormat::Markdown => render_drift_markdown(&report),
        DriftFormat::Junit => render_drift_junit(&report),
        DriftFormat::Github => render_drift_github(&report, &places),
    };
    colour::print(text);
    Ok(if report.has_drift() {
        exit::CHANGES
    } else {
        exit::SUCCESS
    })
}

/// What applying a resource never applied does, as the whole resource's item: the cloud may
/// already hold an object apply takes over (and changes, or is refused to change).
fn first_apply((action, impact): (Action, Impact)) -> DriftItem {
    let reason = match (action, impact) {
        (Action::Update | Action::Replace, Impact::Forbidden) => {
            "the cloud already has it, and changing it as configured is forbidden: apply holds it back (`skyplan plan` says why)"
        }
        (Action::Create, _) => "apply creates it",
        (Action::NoOp, _) => "the cloud already has it as configured: apply records it in the state",
        (Action::Update, _) => "the cloud already has it: apply takes it over and changes it in place",
        (Action::Replace, _) => "the cloud already has it: apply replaces it",
        (Action::Delete, _) => "apply deletes it",
    };
    DriftItem {
        path: String::new(),
        expected: serde_json::Value::Null,
        actual: serde_json::Value::Null,
        impact,
        reason: reason.to_string(),
    }
}

/// The report of every resource in the config or the state, located in the config where it
/// still is, by its path in the repository (what GitHub annotations resolve).
fn drift_report(outcomes: Vec<DriftOutcome>, paths: &RepositoryPaths) -> DriftReport {
    let resources = outcomes
        .into_iter()
        .map(|outcome| {
            let (status, items) = match outcome.check {
                DriftCheck::NotApplied => {
                    let items = outcome.first_apply.map(first_apply).into_iter().collect();
                    (DriftStatus::NotApplied, items)
                }
                DriftCheck::Missing => (DriftStatus::Missing, vec![]),
                DriftCheck::Compared(attributes) => {
                    let items: Vec<DriftItem> = attributes
                        .into_iter()
                        .map(|a| DriftItem {
                            path: a.path,
                            expected: a.after,
                            actual: a.before,
                            impact: a.impact,
                            reason: a.reason,
                        })
                        .collect();
                    let status = if items.is_empty() {
                        DriftStatus::InSync
                    } else {
                        DriftStatus::Drifted
                    };
                    (status, items)
                }
            };
            let (file, line, column) = match outcome.location {
                Some(at) => (paths.relative(&at.file), at.line, at.column),
                None => (std::path::PathBuf::new(), 1, 1),
            };
            DriftResource {
                address: outcome.address.to_string(),
                provider: outcome.provider,
                file,
                line,
                column,
                status,
                items,
            }
        })
        .collect();
    DriftReport {
        resources,
        unmanaged: None,
    }
}
