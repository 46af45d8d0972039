//! `skyplan plan`: refresh, diff, print; and what `apply` shares with it (the selection, the
//! plan made from the config, how a plan is printed).

use crate::invocation::skyplan;
use miette::{miette, IntoDiagnostic, Report};

use super::super::args::{PlanArgs, Selection};
use super::super::report::{workspace_report, Reported};
use super::super::{colour, exit};
use super::plan_formats::{print_plan_as, Surroundings};
use super::{load, open, ConfigSource};
use std::collections::BTreeMap;

use crate::apply::hold::{HeldReason, HoldBack};
use crate::apply::window::MaintenancePolicy;
use crate::apply::window_check::WindowCheck;
use crate::apply::{saved, Dependencies};
use crate::model::Address;
use crate::plan::file::{PlanFile, PlanRequest};
use crate::plan::{Action, Plan};
use crate::provider::PlanOptions;
use crate::render::{render_text, PlanView, Style};
use crate::workspace::{Planned, Workspace};

fn options(selection: &Selection) -> PlanOptions {
    PlanOptions {
        replace: selection.replace.iter().cloned().collect(),
        allow_delete: selection.allow_delete.iter().cloned().collect(),
    }
}

/// Every address named on the command line must be in the config or the state.
fn check_selection(workspace: &Workspace, selection: &Selection) -> Result<(), Report> {
    let named = selection
        .targets
        .iter()
        .chain(&selection.replace)
        .chain(&selection.allow_delete)
        .chain(&selection.exclude);
    for address in named {
        let known = workspace.config.resource(address).is_some()
            || workspace.state.resources.contains_key(address);
        if !known {
            return Err(miette!(
                "{address} is neither in the config nor in the state"
            ));
        }
    }
    Ok(())
}

/// The plan, and the refresh it was made from (for apply).
pub(super) async fn make_plan(
    workspace: &Workspace,
    selection: &Selection,
) -> Result<Planned, Report> {
    check_selection(workspace, selection)?;
    let planned = workspace
        .plan(&options(selection), &selection.targets)
        .await
        .map_err(plan_error)?;
    tracing::info!(
        requests = workspace.request_count(),
        "refresh and plan done"
    );
    Ok(planned)
}

/// Plan errors about values the config names are printed one `file:line:col: address:
/// message` line each, unwrapped, so editors and CI can jump to them; the report says how many.
fn plan_error(error: crate::workspace::WorkspaceError) -> Report {
    use crate::workspace::WorkspaceError;
    let errors = match &error {
        WorkspaceError::Provider(e) if e.location.is_some() => std::slice::from_ref(e),
        WorkspaceError::Plan(errors) => errors.as_slice(),
        _ => return workspace_report(error),
    };
    for e in errors {
        colour::eprintln(e);
    }
    miette!(
        "cannot plan {}: each is listed above",
        crate::render::counted(errors.len(), "resource")
    )
}

/// The plan as apply sees it at `now`: what it holds back (forbidden, `excluded`, outside the
/// maintenance window, or after one of those) and, per change, what the window allows. Plan
/// and apply both show this, so they can never disagree.
pub(super) fn outlook(
    dependencies: Dependencies<'_>,
    plan: &Plan,
    excluded: &[Address],
    earlier: &BTreeMap<Address, HeldReason>,
    now: jiff::Timestamp,
    rollout: Option<&crate::config::Rollout>,
) -> Result<(PlanView, HoldBack), Report> {
    let maintenance = dependencies.config.maintenance.as_ref();
    let policy = MaintenancePolicy::from_config(maintenance).into_diagnostic()?;
    let durations = &dependencies.state.durations;
    let window = WindowCheck {
        policy: &policy,
        now,
        durations,
    };
    let (holds, waves) =
        crate::apply::hold_back_rolled_out(dependencies, plan, excluded, &window, rollout, earlier);
    for address in excluded_without_change(plan, excluded) {
        eprintln!(
            "note: {address} is excluded with --exclude, but its plan has no change: nothing is held back for it"
        );
    }
    let mut view = PlanView::measured(plan, durations)
        .with_holds(&holds)
        .with_windows(plan, &window);
    if let Some(waves) = &waves {
        view = view.with_rollout(waves);
    }
    Ok((view, holds))
}

/// The excluded resources whose plan has nothing to do: an exclusion that holds nothing back
/// is said, not silently taken.
fn excluded_without_change<'a>(plan: &'a Plan, excluded: &'a [Address]) -> Vec<&'a Address> {
    let unchanged = |address: &Address| {
        (plan.changes.iter())
            .any(|c| &c.address == address && c.action == Action::NoOp && c.moved_from.is_none())
    };
    excluded.iter().filter(|a| unchanged(a)).collect()
}

pub(super) fn style() -> Style {
    match colour::decided().stdout {
        true => Style::Colour,
        false => Style::Plain,
    }
}

pub(super) fn print_plan(view: &PlanView) {
    colour::print(render_text(view, style()));
}

pub(super) async fn plan(source: &ConfigSource, args: PlanArgs) -> Result<u8, Report> {
    if args.refresh_only {
        return super::refresh_only::plan(source, args).await;
    }
    let config = load(source)?;
    let mut workspace = open(config, "plan", &args.locking).await?;
    let result = plan_in(&mut workspace, &args).await;
    let around = match &result {
        Ok((plan, _)) => Surroundings::gather(&workspace, plan, args.format()),
        Err(_) => Surroundings::default(),
    };
    workspace.close().await.reported()?;
    let (plan, view) = result?;
    print_plan_as(&view, args.format(), &around)?;
    if let Some(out) = &args.out {
        let apply = skyplan(&format!("apply {}", out.display()));
        eprintln!(
            "Saved the plan to {}; `{apply}` applies exactly this plan.",
            out.display()
        );
    }
    let code = plan_exit_code(&plan, &args);
    // The process ends with this command, and the system takes its memory back at once:
    // freeing a plan of 5,000 load balancers object by object (each change records its spec
    // as JSON) took a good part of the 80 ms between the plan and the exit.
    std::mem::forget(view);
    std::mem::forget(plan);
    Ok(code)
}

async fn plan_in(workspace: &mut Workspace, args: &PlanArgs) -> Result<(Plan, PlanView), Report> {
    if args.out.is_some() {
        workspace.save_new_state().reported()?;
    }
    let plan = make_plan(workspace, &args.selection).await?.plan;
    let now = args.now.unwrap_or_else(jiff::Timestamp::now);
    let rollout = args.rollout.over(workspace.config.rollout.as_ref());
    let (view, holds) = outlook(
        Dependencies::of(workspace),
        &plan,
        &args.selection.exclude,
        &BTreeMap::new(),
        now,
        rollout.as_ref(),
    )?;
    if let Some(out) = &args.out {
        let request = PlanRequest {
            targets: args.selection.targets.clone(),
            replace: args.selection.replace.clone(),
            allow_delete: args.selection.allow_delete.clone(),
            exclude: args.selection.exclude.clone(),
        };
        // With the decisions just printed: applied, the file holds back no less.
        let decided = saved::outlook_of(&holds, now);
        PlanFile::new(plan.clone(), request, workspace.state_ref(), decided)
            .write(out)
            .into_diagnostic()?;
    }
    Ok((plan, view))
}

fn plan_exit_code(plan: &Plan, args: &PlanArgs) -> u8 {
    if args.fail_on.is_some_and(|class| {
        plan.changes
            .iter()
            .any(|c| c.action != crate::plan::Action::NoOp && c.impact() >= class)
    }) {
        exit::FAIL_ON
    } else if args.detailed_exitcode && plan.has_changes() {
        exit::CHANGES
    } else {
        exit::SUCCESS
    }
}
