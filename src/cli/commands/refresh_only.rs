//! `plan --refresh-only` and `apply --refresh-only`: what changed outside skyplan, shown as
//! `drift` shows it, then recorded in the state as the cloud has it. No cloud object is
//! written: apply only saves the state.

use crate::invocation::skyplan;
use miette::{miette, IntoDiagnostic, Report};

use clap::ValueEnum;

use super::super::args::{ApplyArgs, PlanArgs, PlanFormat, Selection};
use super::super::report::Reported;
use super::super::repository::RepositoryPaths;
use super::super::{colour, exit};
use super::apply::confirm;
use super::plan::style;
use super::{load, open, ConfigSource};
use crate::config::Config;
use crate::plan::{Drifted, DriftedStatus, Plan};
use crate::render::PlanView;
use crate::render::{render_drift_text, DriftItem, DriftReport, DriftResource, DriftStatus};

pub(super) async fn plan(source: &ConfigSource, args: PlanArgs) -> Result<u8, Report> {
    refuse_selection(&args.selection)?;
    if args.out.is_some() {
        return Err(miette!(
            help = format!(
                "run `{}` to record what changed",
                skyplan("apply --refresh-only")
            ),
            "--refresh-only cannot be saved with --out"
        ));
    }
    let json = match args.format() {
        PlanFormat::Json => true,
        PlanFormat::Text => false,
        other => {
            return Err(miette!(
                "--refresh-only prints text or JSON, not {}",
                other
                    .to_possible_value()
                    .map(|v| v.get_name().to_owned())
                    .unwrap_or_default()
            ))
        }
    };
    let config = load(source)?;
    let workspace = open(config, "plan", &args.locking).await?;
    let result = workspace.refresh_only().await;
    let shown = result
        .as_ref()
        .ok()
        .map(|p| text(&p.plan, &workspace.config));
    workspace.close().await.reported()?;
    let plan = result.reported()?.plan;
    print(&plan, shown, json)?;
    // Moves are recorded by apply --refresh-only too: something to write to the state.
    let accepted = plan.drift.iter().any(|d| d.accepted.is_some()) || plan.moves().next().is_some();
    Ok(match args.detailed_exitcode && accepted {
        true => exit::CHANGES,
        false => exit::SUCCESS,
    })
}

pub(super) async fn apply(source: &ConfigSource, args: ApplyArgs) -> Result<u8, Report> {
    refuse_selection(&args.selection)?;
    if args.plan_file.is_some() {
        return Err(miette!(
            "--refresh-only makes its own plan: it takes no PLANFILE"
        ));
    }
    let config = load(source)?;
    let mut workspace = open(config, "apply", &args.locking).await?;
    let result = accept(&mut workspace, &args).await;
    workspace.close().await.reported()?;
    result
}

async fn accept(
    workspace: &mut crate::workspace::Workspace,
    args: &ApplyArgs,
) -> Result<u8, Report> {
    let plan = workspace.refresh_only().await.reported()?.plan;
    print(&plan, Some(text(&plan, &workspace.config)), args.json)?;
    let moved = plan.moves().count();
    if !plan.drift.iter().any(|d| d.accepted.is_some()) && moved == 0 {
        println!("Nothing to record: the state already says what the cloud has.");
        return Ok(exit::SUCCESS);
    }
    if !args.auto_approve && !confirm()? {
        println!("Apply cancelled.");
        return Ok(exit::ERROR);
    }
    let recorded = workspace.accept_drift(&plan).reported()?;
    let recorded: Vec<String> = recorded.iter().map(ToString::to_string).collect();
    if !recorded.is_empty() {
        println!(
            "Recorded in the state as the cloud has it: {}. No cloud object was changed.",
            recorded.join(", ")
        );
    }
    for change in plan.moves() {
        if let Some(from) = &change.moved_from {
            println!("Moved {from} to {} in the state.", change.address);
        }
    }
    Ok(exit::SUCCESS)
}

/// A refresh-only plan looks at every resource: naming some is a plan's business.
fn refuse_selection(selection: &Selection) -> Result<(), Report> {
    let named = !(selection.targets.is_empty()
        && selection.exclude.is_empty()
        && selection.replace.is_empty()
        && selection.allow_delete.is_empty());
    match named {
        true => Err(miette!(
            "--refresh-only changes no cloud object: --target, --exclude, --replace and --allow-delete do not go with it"
        )),
        false => Ok(()),
    }
}

fn print(plan: &Plan, text: Option<String>, json: bool) -> Result<(), Report> {
    if json {
        let view = PlanView::new(plan);
        println!("{}", serde_json::to_string_pretty(&view).into_diagnostic()?);
    } else if let Some(text) = text {
        colour::print(text);
    }
    Ok(())
}

/// The drift as `skyplan drift` shows it, then what apply records of each resource.
fn text(plan: &Plan, config: &Config) -> String {
    // Every resource of the plan, so the summary counts those in sync as `skyplan drift` does.
    // Files named as `drift` names them (from the repository root), so both spell a place one way.
    let paths = RepositoryPaths::for_config(&config.root);
    let drifted: Vec<DriftResource> = (plan.drift.iter())
        .map(|d| resource(d, config, &paths))
        .collect();
    let in_sync = (plan.changes.iter())
        .filter(|c| !plan.drift.iter().any(|d| d.address == c.address))
        .map(|c| DriftResource {
            address: c.address.to_string(),
            provider: c.provider.clone(),
            file: std::path::PathBuf::new(),
            line: 1,
            column: 1,
            status: DriftStatus::InSync,
            items: Vec::new(),
        });
    let report = DriftReport {
        resources: drifted.into_iter().chain(in_sync).collect(),
        unmanaged: None,
    };
    let mut out = render_drift_text(&report, style());
    for drifted in &plan.drift {
        let outcome = match (&drifted.accepted, &drifted.unaccepted, drifted.status) {
            (Some(_), _, _) => "recorded as the cloud has it".to_string(),
            (None, Some(why), _) => format!("left as it is: {why}"),
            (None, None, DriftedStatus::Missing) => {
                "left in the state: a plan creates it again".to_string()
            }
            (None, None, _) => {
                "left: never applied, `skyplan plan` shows what apply does".to_string()
            }
        };
        out.push_str(&format!("{}: {outcome}\n", drifted.address));
    }
    for change in plan.moves() {
        if let Some(from) = &change.moved_from {
            out.push_str(&format!(
                "# {from} has moved to {} ([[moved]]): apply --refresh-only records it in the state\n",
                change.address
            ));
        }
    }
    let recordable = plan.drift.iter().filter(|d| d.accepted.is_some()).count();
    let mut records = Vec::new();
    match recordable {
        0 => {}
        1 => records.push("1 resource in the state as the cloud has it".to_string()),
        n => records.push(format!("{n} resources in the state as the cloud has them")),
    }
    match plan.moves().count() {
        0 => {}
        1 => records.push("1 move in the state".to_string()),
        n => records.push(format!("{n} moves in the state")),
    }
    out.push_str(&match records.is_empty() {
        true => {
            "Refresh-only: nothing to record in the state; no cloud object is changed.\n".into()
        }
        false => format!(
            "Refresh-only: `{}` records {}; no cloud object is changed.\n",
            skyplan("apply --refresh-only"),
            records.join(" and ")
        ),
    });
    out
}

fn resource(drifted: &Drifted, config: &Config, paths: &RepositoryPaths) -> DriftResource {
    let location = config.resource(&drifted.address).map(|r| &r.location);
    let (file, line, column) = match location {
        Some(at) => (paths.relative(&at.file), at.line, at.column),
        None => (std::path::PathBuf::new(), 1, 1),
    };
    let status = match drifted.status {
        DriftedStatus::Drifted => DriftStatus::Drifted,
        DriftedStatus::Missing => DriftStatus::Missing,
        DriftedStatus::NotApplied => DriftStatus::NotApplied,
    };
    let items = (drifted.attributes.iter())
        .map(|a| DriftItem {
            path: a.path.clone(),
            expected: a.before.clone(),
            actual: a.after.clone(),
            impact: a.impact,
            reason: a.reason.clone(),
        })
        .collect();
    DriftResource {
        address: drifted.address.to_string(),
        provider: drifted.provider.clone(),
        file,
        line,
        column,
        status,
        items,
    }
}
