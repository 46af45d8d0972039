//! `skyplan apply`: plan (or read a saved plan), hold back what may not be done now (forbidden,
//! excluded, outside the maintenance window, and what must wait for those), confirm, run the
//! rest, verify, and list what was held back: exit 4 when some was applied and some held.

use crate::invocation::skyplan;
use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};

use miette::{miette, IntoDiagnostic, Report};

use super::super::args::{ApplyArgs, Selection};
use super::super::progress::{progress_for_stderr, Progress};
use super::super::report::Reported;
use super::super::{colour, exit};
use super::plan::{make_plan, outlook, print_plan};
use super::{apply_interrupt, load, open, ConfigSource};
use crate::apply::hold::{Held, HeldReason};
use crate::apply::interrupt::Interrupt;
use crate::apply::window::{time_until, MaintenancePolicy};
use crate::apply::window_check::WindowCheck;
use crate::apply::{saved, Dependencies};
use crate::apply::{ApplyReport, Halt};
use crate::config::Config;
use crate::plan::file::{PlanFile, PlanRequest, SavedOutlook};
use crate::plan::{Action, Plan};
use crate::render::{counted, PlanView};
use crate::workspace::{Planned, Workspace};
use jiff::tz::TimeZone;

pub(super) async fn apply(source: &ConfigSource, args: ApplyArgs) -> Result<u8, Report> {
    if args.refresh_only {
        return super::refresh_only::apply(source, args).await;
    }
    let config = load(source)?;
    refuse_a_pretended_time(args.now, &config)?;
    let mut workspace = open(config, "apply", &args.locking).await?;
    let result = apply_in(&mut workspace, &args).await;
    workspace.close().await.reported()?;
    result
}

/// How far `--now` may be from the clock on a real cloud: the time a command line takes to
/// type, not a day of the week.
const PRETENDED_TIME_TOLERANCE: jiff::SignedDuration = jiff::SignedDuration::from_secs(60);

/// `--now` makes the maintenance windows judge by a pretended time, but apply changes the cloud
/// at the real one: on a real cloud that would do on a Monday what only Saturday's window
/// allows. So apply takes it only where everything is embedded (simulated); `plan` and `show`
/// keep it, to preview another time.
fn refuse_a_pretended_time(now: Option<jiff::Timestamp>, config: &Config) -> Result<(), Report> {
    let Some(now) = now else {
        return Ok(());
    };
    let clock = jiff::Timestamp::now();
    if now.duration_since(clock).abs() <= PRETENDED_TIME_TOLERANCE
        || crate::registry::only_embedded(config)
    {
        return Ok(());
    }
    Err(miette!(
        help = format!(
            "to see what apply would do then, run {}; apply without --now holds back what the window does not allow yet",
            skyplan(&format!("plan --now {now}"))
        ),
        "--now {now} is {} from the clock: apply changes a real cloud at the real time, so it takes --now only when every cloud and cluster is embedded",
        apart(now, clock)
    ))
}

/// `4 days 3 hours`: between two instants, either way round.
fn apart(a: jiff::Timestamp, b: jiff::Timestamp) -> String {
    let (from, to) = (a.min(b), a.max(b));
    time_until(&from.to_zoned(TimeZone::UTC), &to.to_zoned(TimeZone::UTC))
}

async fn apply_in(workspace: &mut Workspace, args: &ApplyArgs) -> Result<u8, Report> {
    let (Planned { plan, refreshes }, approved, excluded, earlier) = match &args.plan_file {
        Some(file) => {
            let (planned, request, decided) = saved_plan(workspace, file, &args.selection).await?;
            (planned, true, request.exclude, saved::held_then(&decided))
        }
        None => (
            make_plan(workspace, &args.selection).await?,
            args.auto_approve,
            args.selection.exclude.clone(),
            BTreeMap::new(),
        ),
    };
    let started = args.now.unwrap_or_else(jiff::Timestamp::now);
    let rollout = args.rollout.over(workspace.config.rollout.as_ref());
    let (view, holds) = outlook(
        Dependencies::of(workspace),
        &plan,
        &excluded,
        &earlier,
        started,
        rollout.as_ref(),
    )?;
    if !args.json {
        print_plan(&view);
    }
    let runnable = &holds.runnable;
    if runnable.has_changes() && !approved && !confirm()? {
        println!("Apply cancelled.");
        return Ok(exit::ERROR);
    }
    let policy =
        MaintenancePolicy::from_config(workspace.config.maintenance.as_ref()).into_diagnostic()?;
    let durations = workspace.state.durations.clone();
    // The window may close while apply runs: each resource is admitted by the same check,
    // against the clock then.
    let clock = std::time::Instant::now();
    let admit = |change: &crate::plan::ResourceChange| {
        let now = started + jiff::SignedDuration::try_from(clock.elapsed()).unwrap_or_default();
        let window = WindowCheck {
            policy: &policy,
            now,
            durations: &durations,
        };
        window.check(change).is_none()
    };
    let progress: std::sync::Arc<dyn Progress> = progress_for_stderr().into();
    // From here a Ctrl-C interrupts the run (before, nothing was started: it ends skyplan).
    let interrupt = std::sync::Arc::new(Interrupt::default());
    let listening = apply_interrupt::listen(interrupt.clone())?;
    let result = crate::apply::run(
        workspace,
        runnable,
        &refreshes,
        args.parallelism,
        rollout.as_ref(),
        &admit,
        &interrupt,
        progress.clone(),
    )
    .await;
    drop(listening);
    progress.finish();
    let report = result.reported()?;
    if args.json {
        let document = apply_json(&view, &holds.held, &report, workspace.request_count());
        println!(
            "{}",
            serde_json::to_string_pretty(&document).into_diagnostic()?
        );
    } else {
        let changed = (report.applied.iter())
            .filter(|address| changes(runnable, address))
            .count();
        // A resource new to the state with nothing to change (a cluster skyplan connects to)
        // is recorded, not changed; one a `[[moved]]` entry renamed is moved in the state
        // (saved with it, whatever else was done): each counted apart, so the count matches
        // the plan's.
        let recorded = in_the_state(report.applied.len() - changed, plan.moves().count());
        let outcome = if !report.interrupted.is_empty() {
            "Apply interrupted"
        } else if !report.halts.is_empty() {
            "Apply stopped"
        } else {
            "Apply complete"
        };
        // Nothing done and something held back: the error below says nothing was applied,
        // and "Apply complete" before it would say the opposite.
        let did_nothing = report.applied.is_empty() && plan.moves().count() == 0;
        let waiting = !holds.held.is_empty() || !report.left.is_empty();
        if !(did_nothing && waiting && report.halts.is_empty() && report.interrupted.is_empty()) {
            println!(
                "{outcome}: {}{recorded}, {}, {}.",
                counted(changed, "change"),
                counted(report.operations, "operation"),
                counted(workspace.request_count() as usize, "API request")
            );
        }
        print_verification(&report);
    }
    if !report.halts.is_empty() {
        return Ok(rollout_stopped(&holds.held, &report));
    }
    if !report.interrupted.is_empty() {
        return Ok(interrupted(&holds.held, &report));
    }
    let under: Vec<String> = report
        .under_predicted()
        .map(|v| format!("{}: {}", v.address, v.summary()))
        .collect();
    if !under.is_empty() {
        return Err(miette!(
            help = format!("the plan under-predicted: the difference is recorded in the state (`{}`); please report it with the plan", skyplan("show")),
            "the cloud did more than the plan said for {}: {}",
            counted(under.len(), "resource"),
            under.join("; ")
        ));
    }
    held_back_outcome(runnable, &holds.held, &report, plan.moves().count())
}

/// After a rollout stopped: what stopped it and what was not started, on stderr; exit 5. The
/// next apply makes a new plan of what is left.
fn rollout_stopped(held: &[Held], report: &ApplyReport) -> u8 {
    for halt in &report.halts {
        colour::eprintln(format_args!("rollout stopped: {halt}"));
    }
    print_untouched(held, report);
    colour::eprintln(format_args!(
        "Stopped by a health gate: {} applied, {} not started. Once the cause is fixed, run apply again for the rest.",
        counted(report.applied.len(), "resource"),
        held.len() + report.not_started.len() + report.left.len()
    ));
    exit::STOPPED_BY_GATE
}

/// After an interrupt: what was applied and what was not started, on stderr; exit 1. The state
/// records what was applied, so the next apply makes a new plan of what is left.
fn interrupted(held: &[Held], report: &ApplyReport) -> u8 {
    print_untouched(held, report);
    let applied = match report.applied.is_empty() {
        true => String::new(),
        false => format!(" ({})", report.applied.join(", ")),
    };
    colour::eprintln(format_args!(
        "Interrupted: {} applied{applied}, {} not started, each listed above; the state records what was applied. Run apply again for the rest.",
        counted(report.applied.len(), "resource"),
        held.len() + report.not_started.len() + report.left.len() + report.interrupted.len()
    ));
    exit::ERROR
}

/// Each change apply did not make, with why, on stderr.
fn print_untouched(held: &[Held], report: &ApplyReport) {
    for held in held {
        colour::eprintln(format_args!(
            "held back: {} ({}): {}",
            held.address, held.impact, held.reason
        ));
    }
    for address in &report.not_started {
        colour::eprintln(format_args!(
            "not started: {address}: the rollout stopped before it"
        ));
    }
    for address in &report.left {
        colour::eprintln(format_args!(
            "left for later: {address}: the maintenance window closed before it could start"
        ));
    }
    for address in &report.interrupted {
        colour::eprintln(format_args!(
            "not started: {address}: apply was interrupted before it"
        ));
    }
}

/// ` (and 1 resource recorded, 2 moved in the state)`: what apply wrote to the state beside
/// the changes; empty when nothing.
fn in_the_state(recorded: usize, moved: usize) -> String {
    let mut parts = Vec::new();
    if recorded > 0 {
        parts.push(format!("{} recorded", counted(recorded, "resource")));
    }
    if moved > 0 {
        parts.push(match parts.is_empty() {
            true => format!("{} moved", counted(moved, "resource")),
            false => format!("{moved} moved"),
        });
    }
    match parts.is_empty() {
        true => String::new(),
        false => format!(" (and {} in the state)", parts.join(", ")),
    }
}

/// After the run: 0 when nothing was held back, 4 when some changes were applied (or moves
/// recorded in the state) and others held back (each listed with why), an error when nothing
/// was applied.
fn held_back_outcome(
    runnable: &Plan,
    held: &[Held],
    report: &ApplyReport,
    moved: usize,
) -> Result<u8, Report> {
    if held.is_empty() && report.left.is_empty() {
        return Ok(exit::SUCCESS);
    }
    print_untouched(held, report);
    let untouched = held.len() + report.left.len();
    let applied = report
        .applied
        .iter()
        .filter(|address| changes(runnable, address))
        .count();
    if applied > 0 || moved > 0 {
        let moves = match moved {
            0 => String::new(),
            n => format!(" (and recorded {} in the state)", counted(n, "move")),
        };
        colour::eprintln(format_args!(
            "Applied {}{moves} and held back {untouched}, each listed above with why.",
            counted(applied, "change")
        ));
        return Ok(exit::HELD_BACK);
    }
    let waiting = !report.left.is_empty()
        || held
            .iter()
            .any(|h| matches!(h.reason, HeldReason::Window(_)));
    let help = if waiting {
        "run apply again inside a maintenance window (`skyplan plan --now RFC3339` shows what it would do then)"
    } else {
        "name a forbidden change with --replace ADDR (--allow-delete ADDR for a removal) to do it anyway"
    };
    Err(miette!(
        help = help,
        "nothing was applied: {} held back, each listed above",
        match untouched {
            1 => "the one change was".to_string(),
            n => format!("all {n} changes were"),
        }
    ))
}

/// Whether the plan changes the resource (rather than only recording it in the state).
fn changes(plan: &Plan, address: &str) -> bool {
    plan.changes
        .iter()
        .any(|c| c.action != Action::NoOp && c.address.to_string() == address)
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

/// `apply --json`: the plan, what was applied, what was held back and why, and each
/// resource's verification.
fn apply_json(
    view: &PlanView,
    held: &[Held],
    report: &ApplyReport,
    requests: u64,
) -> serde_json::Value {
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
    let held_back: Vec<serde_json::Value> = held
        .iter()
        .map(|h| {
            serde_json::json!({
                "address": h.address.to_string(),
                "impact": h.impact,
                "reason": h.reason.to_string(),
            })
        })
        .collect();
    let halts: Vec<serde_json::Value> = report.halts.iter().map(halt_json).collect();
    serde_json::json!({
        "plan": view,
        "applied": report.applied,
        "held_back": held_back,
        "left": report.left,
        "rollout_stopped": halts,
        "not_started": report.not_started,
        "interrupted": report.interrupted,
        "operations": report.operations,
        "requests": requests,
        "verification": verification,
    })
}

/// Why the rollout stopped, as `apply --json` reports it: `{"address", "cause", …}` with
/// `problems` for `unhealthy` and `summary` for `under-predicted`.
fn halt_json(halt: &Halt) -> serde_json::Value {
    match halt {
        Halt::Unhealthy { address, problems } => serde_json::json!({
            "address": address, "cause": "unhealthy", "problems": problems,
        }),
        Halt::UnderPredicted { address, summary } => serde_json::json!({
            "address": address, "cause": "under-predicted", "summary": summary,
        }),
        Halt::Failed { address } => serde_json::json!({"address": address, "cause": "failed"}),
    }
}

/// A saved plan, if it is still exactly the plan for this state, config and cloud, with the
/// refresh that showed it, what it was asked for and the window decisions it was printed with.
/// It was reviewed when it was made, so applying it asks nothing more.
async fn saved_plan(
    workspace: &Workspace,
    file: &std::path::Path,
    selection: &Selection,
) -> Result<(Planned, PlanRequest, SavedOutlook), Report> {
    if !(selection.targets.is_empty()
        && selection.replace.is_empty()
        && selection.allow_delete.is_empty()
        && selection.exclude.is_empty())
    {
        return Err(miette!(
            "a saved plan already says what to do: --target, --replace, --allow-delete and --exclude go with `plan --out`"
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
        exclude: saved.request.exclude.clone(),
    };
    let fresh = make_plan(workspace, &again).await?;
    saved.check_fresh(&fresh.plan).into_diagnostic()?;
    let planned = Planned {
        plan: saved.plan,
        refreshes: fresh.refreshes,
    };
    Ok((planned, saved.request, saved.outlook))
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
