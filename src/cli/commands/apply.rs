//! `skyplan apply`: plan (or read a saved plan), hold back what the maintenance policy does not
//! allow now, confirm, run, verify.

use std::io::{BufRead, IsTerminal, Write};

use miette::{miette, IntoDiagnostic, Report};

use super::super::args::{ApplyArgs, Selection};
use super::super::progress::{progress_for_stderr, Progress};
use super::super::report::Reported;
use super::super::{colour, exit};
use super::plan::{make_plan, print_plan};
use super::{load, open};
use crate::apply::hold::hold_back;
use crate::apply::window::MaintenancePolicy;
use crate::plan::file::PlanFile;
use crate::plan::Plan;
use crate::render::PlanView;
use crate::workspace::{Planned, Workspace};

pub(super) async fn apply(path: &std::path::Path, args: ApplyArgs) -> Result<u8, Report> {
    if args.refresh_only {
        return super::refresh_only::apply(path, args).await;
    }
    let config = load(path)?;
    let mut workspace = open(config, "apply", &args.locking).await?;
    let result = apply_in(&mut workspace, &args).await;
    workspace.close().await.reported()?;
    result
}

async fn apply_in(workspace: &mut Workspace, args: &ApplyArgs) -> Result<u8, Report> {
    let (Planned { plan, refreshes }, approved) = match &args.plan_file {
        Some(file) => (saved_plan(workspace, file, &args.selection).await?, true),
        None => (
            make_plan(workspace, &args.selection).await?,
            args.auto_approve,
        ),
    };
    if !args.json {
        print_plan(&PlanView::measured(&plan, &workspace.state.durations));
    }
    if let Some(refused) = refusal(&plan) {
        return Err(refused);
    }
    let policy =
        MaintenancePolicy::from_config(workspace.config.maintenance.as_ref()).into_diagnostic()?;
    let started = args.now.unwrap_or_else(jiff::Timestamp::now);
    let (runnable, held) = hold_back(&plan, &policy, started, &workspace.state.durations);
    for held in &held {
        colour::eprintln(format_args!(
            "held back: {} ({}): {}",
            held.address, held.impact, held.reason
        ));
    }
    if runnable.has_changes() && !approved && !confirm()? {
        println!("Apply cancelled.");
        return Ok(exit::ERROR);
    }
    // The window may close while apply runs: each resource is admitted against the clock then.
    let clock = std::time::Instant::now();
    let admit = |change: &crate::plan::ResourceChange| {
        let now = started + jiff::SignedDuration::try_from(clock.elapsed()).unwrap_or_default();
        change.requested || change.impact() <= policy.allowed_at(now)
    };
    let progress: std::sync::Arc<dyn Progress> = progress_for_stderr().into();
    let result = crate::apply::run(
        workspace,
        &runnable,
        &refreshes,
        args.parallelism,
        &admit,
        progress.clone(),
    )
    .await;
    progress.finish();
    let report = result.reported()?;
    if args.json {
        let document = apply_json(&plan, &report, workspace.request_count());
        println!(
            "{}",
            serde_json::to_string_pretty(&document).into_diagnostic()?
        );
    } else {
        println!(
            "Apply complete: {} resources, {} operations, {} API requests.",
            report.applied.len(),
            report.operations,
            workspace.request_count()
        );
        print_verification(&report);
    }
    let under: Vec<String> = report
        .under_predicted()
        .map(|v| format!("{}: {}", v.address, v.summary()))
        .collect();
    if !under.is_empty() {
        return Err(miette!(
            help = "the plan under-predicted: the difference is recorded in the state (`skyplan show`); please report it with the plan",
            "the cloud did more than the plan said for {} resource(s): {}",
            under.len(),
            under.join("; ")
        ));
    }
    let untouched: Vec<String> = held
        .iter()
        .map(|h| h.address.clone())
        .chain(report.left.iter().cloned())
        .collect();
    if untouched.is_empty() {
        Ok(exit::SUCCESS)
    } else {
        for address in &report.left {
            colour::eprintln(format_args!(
                "left for later: {address}: the maintenance window closed before it started"
            ));
        }
        Err(miette!(
            help = "run apply again inside a maintenance window (or with --now to see what it would do)",
            "the maintenance policy held back {} of the planned changes: {}",
            untouched.len(),
            untouched.join(", ")
        ))
    }
}

/// Each verified resource: "as predicted" or the difference.
fn print_verification(report: &crate::apply::ApplyReport) {
    if report.verified.is_empty() {
        return;
    }
    println!("Verified against the plan:");
    for verified in &report.verified {
        println!("  {}: {}", verified.address, verified.summary());
    }
}

/// `apply --json`: the plan, what was applied and each resource's verification.
fn apply_json(plan: &Plan, report: &crate::apply::ApplyReport, requests: u64) -> serde_json::Value {
    let verification: Vec<serde_json::Value> = report
        .verified
        .iter()
        .map(|v| {
            serde_json::json!({
                "address": v.address,
                "as_predicted": v.as_predicted(),
                "under_predicted": v.under_predicted(),
                "predicted": v.predicted,
                "observed": v.observed,
                "differences": v.differences,
                "summary": v.summary(),
            })
        })
        .collect();
    serde_json::json!({
        "plan": PlanView::new(plan),
        "applied": report.applied,
        "left": report.left,
        "operations": report.operations,
        "requests": requests,
        "verification": verification,
    })
}

/// Forbidden changes nobody asked for by name: apply refuses before touching anything.
fn refusal(plan: &Plan) -> Option<Report> {
    let refused = crate::apply::refusals(plan);
    (!refused.is_empty()).then(|| {
        miette!(
            help = "name the resource with --replace ADDR (or --allow-delete ADDR for a removal) to do it anyway",
            "apply refuses forbidden changes: {}",
            refused.join("; ")
        )
    })
}

/// A saved plan, if it is still exactly the plan for this state, config and cloud, with the
/// refresh that showed it. It was reviewed when it was made, so applying it asks nothing more.
async fn saved_plan(
    workspace: &Workspace,
    file: &std::path::Path,
    selection: &Selection,
) -> Result<Planned, Report> {
    if !(selection.targets.is_empty()
        && selection.replace.is_empty()
        && selection.allow_delete.is_empty())
    {
        return Err(miette!(
            "a saved plan already says what to do: --target, --replace and --allow-delete go with `plan --out`"
        ));
    }
    let saved = PlanFile::read(file).into_diagnostic()?;
    saved
        .check_state(&workspace.state_ref())
        .into_diagnostic()?;
    let again = Selection {
        targets: saved.request.targets.clone(),
        replace: saved.request.replace.clone(),
        allow_delete: saved.request.allow_delete.clone(),
    };
    let fresh = make_plan(workspace, &again).await?;
    saved.check_fresh(&fresh.plan).into_diagnostic()?;
    Ok(Planned {
        plan: saved.plan,
        refreshes: fresh.refreshes,
    })
}

/// Asks on the terminal; without one, refuses rather than guessing.
pub(super) fn confirm() -> Result<bool, Report> {
    if !std::io::stdin().is_terminal() {
        return Err(miette!(
            help = "pass --auto-approve to apply without asking",
            "apply needs a confirmation and there is no terminal to ask on"
        ));
    }
    print!("Do you want to perform these changes? Only 'yes' is accepted: ");
    std::io::stdout().flush().into_diagnostic()?;
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .into_diagnostic()?;
    Ok(answer.trim() == "yes")
}
