//! The human plan, rendered from [`PlanView`]. Colour is ANSI, added only when the CLI asks
//! for it (`cli::colour` decides, once, for each stream).

use std::fmt::Write;

use anstyle::{AnsiColor, Effects, Style as Ansi};
use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use super::view::{AttributeView, ChangeView, PlanView};
use crate::model::{Downtime, Impact};
use crate::plan::durations::seconds;
use crate::plan::{unknown_reason, Action, Effect};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    Colour,
}

/// Shared with the drift report, which paints the same way.
pub(super) struct Painter(pub(super) Style);

impl Painter {
    pub(super) fn paint(&self, style: Ansi, text: impl std::fmt::Display) -> String {
        match self.0 {
            Style::Plain => text.to_string(),
            Style::Colour => format!("{style}{text}{style:#}"),
        }
    }

    pub(super) fn impact(&self, impact: Impact) -> String {
        let colour = match impact {
            Impact::None => AnsiColor::Green,
            Impact::Minimal => AnsiColor::Cyan,
            Impact::PoolRecreate => AnsiColor::Yellow,
            Impact::Forbidden => AnsiColor::Red,
        };
        self.paint(Ansi::new().fg_color(Some(colour.into())).bold(), impact)
    }

    pub(super) fn dim(&self, text: impl std::fmt::Display) -> String {
        self.paint(Ansi::new().effects(Effects::DIMMED), text)
    }
}

fn symbol(action: Action) -> &'static str {
    match action {
        Action::Create => "+",
        Action::Update => "~",
        Action::Replace => "-/+",
        Action::Delete => "-",
        Action::NoOp => " ",
    }
}

pub fn render_text(view: &PlanView, style: Style) -> String {
    let paint = Painter(style);
    let mut out = String::new();
    let shown = |c: &&ChangeView| c.action != Action::NoOp || c.moved_from.is_some();
    let changed: Vec<&ChangeView> = view.changes.iter().filter(shown).collect();
    if changed.is_empty() {
        let _ = writeln!(
            out,
            "No changes. The infrastructure matches the configuration ({}).",
            super::counted(view.changes.len(), "resource")
        );
        render_ignored(&mut out, &paint, view);
        return out;
    }
    for change in &changed {
        match (change.action, &change.moved_from) {
            (Action::NoOp, Some(from)) => render_move(&mut out, &paint, from, change),
            _ => render_change(&mut out, &paint, change),
        }
    }
    render_summary(&mut out, &paint, view);
    render_ignored(&mut out, &paint, view);
    out
}

/// What `ignore-changes` left as the cloud has it, one line per attribute.
fn render_ignored(out: &mut String, paint: &Painter, view: &PlanView) {
    for change in &view.changes {
        for ignored in &change.ignored {
            let line = format!(
                "ignored: {} {}: cloud {}, config {} (ignore-changes)",
                change.address,
                ignored.path,
                compact(&ignored.before),
                compact(&ignored.after)
            );
            let _ = writeln!(out, "{}", paint.dim(line));
        }
    }
}

/// A resource only renamed by a `[[moved]]` entry: apply records the new address in the state.
fn render_move(out: &mut String, paint: &Painter, from: &str, change: &ChangeView) {
    let header = paint.paint(
        Ansi::new().bold(),
        format!("# {from} has moved to {}", change.address),
    );
    let _ = writeln!(out, "{header}");
    let _ = writeln!(
        out,
        "    {}",
        paint.dim("renamed in the state ([[moved]]); nothing in the cloud changes")
    );
    out.push('\n');
}

fn render_change(out: &mut String, paint: &Painter, change: &ChangeView) {
    let mut downtime = if change.impact >= Impact::Minimal {
        format!(", {}", downtime_phrase(change.estimated_downtime_s))
    } else {
        String::new()
    };
    if let Some(measured) = &change.measured_duration {
        downtime.push_str(&format!(
            "; measured typically {}, at most {} (last {})",
            seconds(measured.typical_ms),
            seconds(measured.worst_ms),
            super::counted(measured.runs, "run")
        ));
    }
    let header = paint.paint(
        Ansi::new().bold(),
        format!("{} {}", symbol(change.action), change.address),
    );
    let verb = if change.refused {
        "cannot be changed"
    } else {
        past_tense(change.action)
    };
    let _ = writeln!(
        out,
        "{header} {verb}: {}{downtime}",
        paint.impact(change.impact)
    );
    if let Some(from) = &change.moved_from {
        let _ = writeln!(out, "    {}", paint.dim(format!("# (moved from {from})")));
    }
    render_downtime_steps(out, paint, change);
    for attribute in &change.attributes {
        render_attribute(out, paint, attribute);
    }
    if !change.operations.is_empty() {
        let _ = writeln!(out, "    {}", paint.dim("operations, in order:"));
        for (i, op) in change.operations.iter().enumerate() {
            let _ = writeln!(out, "      {:>2}. {op}", i + 1);
        }
    }
    if let Some(line) = super::held::held_line(change) {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
}

/// `downtime 60-120 s`, or `no downtime` (never `downtime no downtime`).
fn downtime_phrase(downtime: Downtime) -> String {
    match downtime.max {
        0 => "no downtime".to_string(),
        _ => format!("downtime {downtime}"),
    }
}

/// Why a resource's downtime is more than any one row's: its disruptions add up.
fn render_downtime_steps(out: &mut String, paint: &Painter, change: &ChangeView) {
    if change.downtime_adds_up.is_empty() {
        return;
    }
    let steps: Vec<String> = change
        .downtime_adds_up
        .iter()
        .map(|step| format!("{} {}", step.what, step.estimated_downtime_s))
        .collect();
    let _ = writeln!(
        out,
        "    {}",
        paint.dim(format!(
            "downtime {}: one disruption after another, {}",
            change.estimated_downtime_s,
            steps.join(", then ")
        ))
    );
}

fn past_tense(action: Action) -> &'static str {
    match action {
        Action::Create => "will be created",
        Action::Update => "will be updated in place",
        Action::Replace => "will be destroyed and created again",
        Action::Delete => "will be deleted",
        Action::NoOp => "is left alone",
    }
}

fn render_attribute(out: &mut String, paint: &Painter, attribute: &AttributeView) {
    if attribute.path.is_empty() {
        // The whole resource is created, replaced or deleted: the reason says it all.
        let _ = writeln!(out, "    {}", paint.dim(&attribute.reason));
        return;
    }
    let path = &attribute.path;
    let downtime = attribute
        .estimated_downtime_s
        .map(|d| format!(", {d}"))
        .unwrap_or_default();
    let (before, after) = (compact(&attribute.before), compact(&attribute.after));
    if before.len() + after.len() > 60 && is_multiline(&attribute.before, &attribute.after) {
        let _ = writeln!(
            out,
            "    ~ {path}  [{}{downtime}]",
            paint.impact(attribute.impact)
        );
        render_value_diff(out, paint, &attribute.before, &attribute.after);
    } else {
        let _ = writeln!(
            out,
            "    ~ {path}: {before} → {after}  [{}{downtime}]",
            paint.impact(attribute.impact)
        );
    }
    let _ = writeln!(out, "        {}", paint.dim(&attribute.reason));
    for effect in &attribute.effects {
        render_effect(out, paint, effect, &attribute.reason);
    }
}

/// A predicted effect, under the attribute that causes it; its reason only where it says more
/// than the attribute's (not the same reading on one object: `<object>: <the attribute's>`).
fn render_effect(out: &mut String, paint: &Painter, effect: &Effect, cause: &str) {
    let what = match effect.path.is_empty() {
        true => effect.reason.clone(),
        false => format!(
            "{}: {} → {}",
            effect.path,
            compact(&effect.before),
            compact(&effect.after)
        ),
    };
    let _ = writeln!(out, "        ↳ {what}  [{}]", paint.impact(effect.impact));
    if !effect.path.is_empty() && !effect.reason.ends_with(cause) {
        let _ = writeln!(out, "            {}", paint.dim(&effect.reason));
    }
}

/// A value on one line; one known only after apply says who decides it, never a number.
pub(super) fn compact(value: &Value) -> String {
    if let Some(why) = unknown_reason(value) {
        return format!("({why})");
    }
    match value {
        Value::Null => "(none)".to_string(),
        Value::Array(items) if items.iter().any(|i| unknown_reason(i).is_some()) => {
            let items: Vec<String> = items.iter().map(compact).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

/// Whether a change is shown as a line diff: a list or object against another value, never one
/// known only after apply (nothing to diff it against).
pub(super) fn is_multiline(before: &Value, after: &Value) -> bool {
    if unknown_reason(before).is_some() || unknown_reason(after).is_some() {
        return false;
    }
    let structured = |v: &Value| (v.is_array() || v.is_object()) && unknown_reason(v).is_none();
    structured(before) || structured(after)
}

/// Lists and objects are shown as a line diff of their pretty JSON.
pub(super) fn render_value_diff(out: &mut String, paint: &Painter, before: &Value, after: &Value) {
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default() + "\n";
    let (old, new) = (pretty(before), pretty(after));
    for change in TextDiff::from_lines(&old, &new).iter_all_changes() {
        let (sign, style) = match change.tag() {
            ChangeTag::Delete => ("-", Ansi::new().fg_color(Some(AnsiColor::Red.into()))),
            ChangeTag::Insert => ("+", Ansi::new().fg_color(Some(AnsiColor::Green.into()))),
            ChangeTag::Equal => (" ", Ansi::new()),
        };
        let line = format!("{sign} {}", change.value().trim_end_matches('\n'));
        let _ = writeln!(out, "        {}", paint.paint(style, line));
    }
}

fn render_summary(out: &mut String, paint: &Painter, view: &PlanView) {
    let s = &view.summary;
    let _ = writeln!(out, "{}", super::wording::counts(view));
    let downtime = if view.impact >= Impact::Minimal {
        format!("; estimated {}", downtime_phrase(s.estimated_downtime_s))
    } else {
        String::new()
    };
    let _ = writeln!(out, "Impact: {}{downtime}.", paint.impact(view.impact));
    if let Some(line) = super::held::held_summary(view) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(rollout) = &view.rollout {
        render_rollout(out, paint, rollout);
    }
}

/// `Rollout: 3 waves of at most 2 disrupted (per zone)`, then each wave.
fn render_rollout(out: &mut String, paint: &Painter, rollout: &super::view::RolloutView) {
    let _ = writeln!(out, "{}", super::wording::rollout_heading(rollout));
    for (i, wave) in rollout.waves.iter().enumerate() {
        let fits = match wave.fits_window {
            true => "fits the window".to_string(),
            false => paint.paint(
                Ansi::new().fg_color(Some(AnsiColor::Yellow.into())),
                "does not fit the window: held back, with every later wave",
            ),
        };
        let _ = writeln!(
            out,
            "  wave {}: {} ({}; {fits})",
            i + 1,
            wave.addresses.join(", "),
            wave_estimate(wave.estimated_s)
        );
    }
}

/// A wave's estimate: `may take up to 120 s`, `may take 60-120 s`.
pub(super) fn wave_estimate(estimate: Downtime) -> String {
    match estimate.max {
        0 => "quick".to_string(),
        _ => format!("may take {estimate}"),
    }
}
