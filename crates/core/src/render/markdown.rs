//! The plan as a pull-request comment (GitHub-flavoured Markdown), read alike with the drift
//! report's (`drift/markdown.rs`): a heading with the verdict, the summary, one table row per
//! changed resource (action, class, downtime, window fit), then one collapsible `<details>` per
//! changed resource with its attributes, operations and refusal. Everything that comes from
//! the config or the cloud is escaped.
//!
//! A comment holds at most 65,536 characters: a longer plan loses whole `<details>` blocks from
//! the end, then (only if still too long) table rows from the end, with a note saying how many.

use std::fmt::Write;

use super::escape::{cell, code, html, markdown_text as text};
use super::long_values::{fold, is_long, value_cell};
use super::text::compact;
use super::view::{AttributeView, ChangeView, PlanView, WindowView};
use super::wording::{self, changed, window_fit};
use super::words::counted;
use crate::model::Impact;
use crate::plan::durations::seconds;
use crate::plan::Action;

/// GitHub's limit on a comment's body. Measured in bytes here: a character is at least one
/// byte, so a body within this many bytes is within the limit however GitHub counts.
pub const GITHUB_COMMENT_LIMIT: usize = 65_536;

/// Unchanged resources are named up to this many; beyond, they are only counted.
const UNCHANGED_NAMED: usize = 50;

pub fn render_plan_markdown(view: &PlanView) -> String {
    render_plan_markdown_within(view, GITHUB_COMMENT_LIMIT)
}

/// The comment, cut to at most `limit` bytes (see the module doc).
pub fn render_plan_markdown_within(view: &PlanView, limit: usize) -> String {
    let changes: Vec<&ChangeView> = changed(view).collect();
    let comment = Comment {
        head: head(view),
        rows: changes.iter().map(|c| row(c)).collect(),
        tail: unchanged(view),
        details: changes.iter().map(|c| details(c)).collect(),
    };
    comment.within(limit)
}

/// The parts of a comment, each whole so that a cut never breaks the Markdown.
struct Comment {
    head: String,
    rows: Vec<String>,
    tail: String,
    details: Vec<String>,
}

impl Comment {
    fn within(&self, limit: usize) -> String {
        let (rows, details) = (self.rows.len(), self.details.len());
        let all_rows: usize = self.rows.iter().map(String::len).sum();
        let fixed = self.head.len() + table_header(rows).len() + self.tail.len();
        // As many details as fit, every row kept…
        let mut budget = limit.saturating_sub(fixed + all_rows);
        if let Some(kept) = most_that_fit(&self.details, budget, |kept| {
            cut_note(details - kept, details, rows, rows).len()
        }) {
            return self.assemble(rows, kept);
        }
        // …else no details, and as many rows as fit.
        budget = limit.saturating_sub(fixed);
        let kept = most_that_fit(&self.rows, budget, |kept| {
            cut_note(details, details, rows - kept, rows).len()
        })
        .unwrap_or(0);
        self.assemble(kept, 0)
    }

    fn assemble(&self, rows: usize, details: usize) -> String {
        let mut out = self.head.clone();
        out.push_str(table_header(self.rows.len()));
        for row in &self.rows[..rows] {
            out.push_str(row);
        }
        out.push_str(&self.tail);
        for block in &self.details[..details] {
            out.push_str(block);
        }
        out.push_str(&cut_note(
            self.details.len() - details,
            self.details.len(),
            self.rows.len() - rows,
            self.rows.len(),
        ));
        out
    }
}

/// The most leading `parts` that fit in `budget` bytes beside the note their cut needs.
fn most_that_fit(parts: &[String], budget: usize, note: impl Fn(usize) -> usize) -> Option<usize> {
    let mut used = 0;
    let mut fitting = None;
    for kept in 0..=parts.len() {
        if kept > 0 {
            used += parts[kept - 1].len();
        }
        if used + note(kept) > budget {
            break;
        }
        fitting = Some(kept);
    }
    fitting
}

fn table_header(rows: usize) -> &'static str {
    match rows {
        0 => "",
        _ => "| resource | action | class | downtime | window |\n|---|---|---|---|---|\n",
    }
}

fn head(view: &PlanView) -> String {
    let mut out = String::new();
    let changes = changed(view).count();
    if changes == 0 {
        let _ = writeln!(out, "## ✅ skyplan plan: no changes\n");
        let _ = writeln!(
            out,
            "The infrastructure matches the configuration ({}).\n",
            counted(view.changes.len(), "resource")
        );
        return out;
    }
    let _ = writeln!(
        out,
        "## {} skyplan plan: {}, impact {}\n",
        icon(view.impact),
        counted(changes, "change"),
        view.impact
    );
    let downtime = wording::downtime(view.impact, &view.summary.estimated_downtime_s)
        .map(|d| format!("; estimated downtime {d}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{} Impact: **{}**{downtime}.\n",
        wording::counts(view),
        view.impact
    );
    let refused: Vec<String> = changed(view)
        .filter(|c| c.refused)
        .map(|c| code(&c.address))
        .collect();
    if !refused.is_empty() {
        let _ = writeln!(out, "⛔ {}.\n", wording::refused_sentence(&refused));
    }
    let waiting = changed(view)
        .filter(|c| {
            let waits = |w: &WindowView| !w.now && w.next_window.is_some();
            c.window.as_ref().is_some_and(waits)
        })
        .count();
    if waiting > 0 {
        let _ = writeln!(
            out,
            "🕒 {} for a maintenance window (see the window column).\n",
            match waiting {
                1 => "1 change waits".to_string(),
                n => format!("{n} changes wait"),
            }
        );
    }
    if let Some(rollout) = &view.rollout {
        rollout_table(&mut out, rollout);
    }
    out
}

/// The rollout's waves: one row each, with its resources, estimate and window fit.
fn rollout_table(out: &mut String, rollout: &super::view::RolloutView) {
    let _ = writeln!(out, "{}\n", wording::rollout_heading(rollout));
    if rollout.waves.is_empty() {
        return;
    }
    let _ = writeln!(out, "| wave | resources | estimate | window |");
    let _ = writeln!(out, "|---|---|---|---|");
    for (i, wave) in rollout.waves.iter().enumerate() {
        let addresses: Vec<String> = wave.addresses.iter().map(|a| code(a)).collect();
        let fits = match wave.fits_window {
            true => "fits",
            false => "🕒 held back",
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {fits} |",
            i + 1,
            addresses.join(", "),
            super::text::wave_estimate(wave.estimated_s)
        );
    }
    out.push('\n');
}

fn icon(impact: Impact) -> &'static str {
    match impact {
        Impact::None => "✅",
        Impact::Minimal => "ℹ️",
        Impact::PoolRecreate => "⚠️",
        Impact::Forbidden => "⛔",
    }
}

fn row(change: &ChangeView) -> String {
    format!(
        "| {} | {} | **{}** | {} | {} |\n",
        cell(&code(&change.address)),
        change.action.as_str(),
        change.impact,
        wording::downtime(change.impact, &change.estimated_downtime_s)
            .unwrap_or_else(|| "—".to_string()),
        cell(&text(&window_fit(change.window.as_ref())))
    )
}

fn unchanged(view: &PlanView) -> String {
    let names: Vec<String> = view
        .changes
        .iter()
        .filter(|c| c.action == Action::NoOp)
        .map(|c| code(&c.address))
        .collect();
    let table_end = if changed(view).next().is_some() {
        "\n"
    } else {
        ""
    };
    let unchanged = match names.len() {
        0 => table_end.to_string(),
        n if n > UNCHANGED_NAMED => format!("{table_end}Unchanged: {n} resources.\n\n"),
        _ => format!("{table_end}Unchanged: {}.\n\n", names.join(", ")),
    };
    unchanged + &moved(view)
}

/// The renames `[[moved]]` entries make in the state, when there are any.
fn moved(view: &PlanView) -> String {
    let moves: Vec<String> = (view.changes.iter())
        .filter_map(|c| {
            let from = c.moved_from.as_ref()?;
            Some(format!("{} → {}", code(from), code(&c.address)))
        })
        .collect();
    match moves.is_empty() {
        true => String::new(),
        false => format!(
            "Moved in the state (`[[moved]]`, nothing in the cloud changes): {}.\n\n",
            moves.join(", ")
        ),
    }
}

fn details(change: &ChangeView) -> String {
    let mut out = String::new();
    let downtime = wording::downtime(change.impact, &change.estimated_downtime_s)
        .map(|d| format!(", downtime {d}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "<details><summary><code>{}</code> {}: <b>{}</b>{downtime}</summary>\n",
        html(&change.address),
        wording::verdict(change),
        change.impact
    );
    if let Some(from) = &change.moved_from {
        let _ = writeln!(out, "Moved from {} (`[[moved]]`).\n", code(from));
    }
    let (whole, attributes): (Vec<&AttributeView>, Vec<&AttributeView>) =
        change.attributes.iter().partition(|a| a.path.is_empty());
    for attribute in whole {
        let _ = writeln!(out, "{}\n", text(&attribute.reason));
    }
    if let Some(steps) = wording::downtime_steps(change) {
        let _ = writeln!(out, "{}.\n", text(&steps));
    }
    attribute_table(&mut out, &attributes);
    for ignored in &change.ignored {
        let _ = writeln!(
            out,
            "Ignored (`ignore-changes`): {}: the cloud has {}, the config says {}.\n",
            code(&ignored.path),
            code(&compact(&ignored.before)),
            code(&compact(&ignored.after))
        );
    }
    if let Some(measured) = &change.measured_duration {
        let _ = writeln!(
            out,
            "Measured in recent applies: typically {}, at most {} ({}).\n",
            seconds(measured.typical_ms),
            seconds(measured.worst_ms),
            counted(measured.runs, "run")
        );
    }
    if !change.operations.is_empty() {
        let _ = writeln!(out, "Operations, in order:\n");
        for (i, operation) in change.operations.iter().enumerate() {
            let _ = writeln!(out, "{}. {}", i + 1, text(operation));
        }
        out.push('\n');
    }
    if change.refused {
        let _ = writeln!(
            out,
            "> ⛔ apply holds this back; name it with {} to do it anyway.\n",
            code(&wording::refusal_flag(change))
        );
    } else if let Some(reason) = &change.held_back {
        let _ = writeln!(out, "> 🕒 apply holds this back: {}.\n", text(reason));
    }
    let _ = writeln!(out, "</details>\n");
    out
}

fn attribute_table(out: &mut String, attributes: &[&AttributeView]) {
    if attributes.is_empty() {
        return;
    }
    let _ = writeln!(out, "| attribute | before → after | class | reason |");
    let _ = writeln!(out, "|---|---|---|---|");
    for attribute in attributes {
        let downtime = attribute
            .estimated_downtime_s
            .and_then(|d| wording::downtime(attribute.impact, &d))
            .map(|d| format!(", {d}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "| {} | {} → {} | **{}**{downtime} | {} |",
            cell(&code(&attribute.path)),
            value_cell(&attribute.before),
            value_cell(&attribute.after),
            attribute.impact,
            cell(&text(&attribute.reason))
        );
        for effect in &attribute.effects {
            let what = match effect.path.is_empty() {
                true => "↳".to_string(),
                false => format!("↳ {}", code(&effect.path)),
            };
            let _ = writeln!(
                out,
                "| {} | {} → {} | **{}** | {} |",
                cell(&what),
                value_cell(&effect.before),
                value_cell(&effect.after),
                effect.impact,
                cell(&text(&effect.reason))
            );
        }
    }
    out.push('\n');
    for attribute in attributes.iter().filter(|a| is_long(&a.before, &a.after)) {
        let values = [("before", &attribute.before), ("after", &attribute.after)];
        fold(out, &attribute.path, "before and after", values);
    }
}

/// Says what a cut left out; empty when nothing was cut.
fn cut_note(details_cut: usize, details: usize, rows_cut: usize, rows: usize) -> String {
    if details_cut == 0 && rows_cut == 0 {
        return String::new();
    }
    let mut note = format!(
        "> ✂️ Cut to stay within GitHub's 65,536-character comment limit: \
         the details of {details_cut} of {details} changed resources"
    );
    if rows_cut > 0 {
        let _ = write!(note, " and {rows_cut} of {rows} table rows");
    }
    let plan = crate::invocation::skyplan("plan");
    let _ = writeln!(note, " are left out; `{plan}` shows everything.");
    note
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
