//! The plan as one self-contained HTML file, to attach to a review or a change ticket: the
//! summary, the dependency graph (inline SVG, `svg.rs`), and each change's details in a
//! `<details>` element. No script, no network, no external asset: the style sheet is inline and
//! the file renders the same offline. Every text is escaped as HTML.

use std::fmt::Write;

use serde_json::Value;

use super::escape::html;
use super::layout::Dependencies;
use super::svg::{graph, impact_colour};
use super::text::{compact, is_multiline};
use super::view::{AttributeView, ChangeView, PlanView};
use super::wording::{self, changed, window_fit};
use super::words::counted;
use crate::model::Impact;
use crate::plan::durations::seconds;

pub fn render_plan_html(view: &PlanView, dependencies: &Dependencies) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>skyplan plan: {}</title>\n<style>\n{}</style>\n</head>\n<body>\n",
        view.impact,
        style()
    );
    summary(&mut out, view);
    let _ = writeln!(
        out,
        "<section id=\"graph\">\n<h2>Dependencies</h2>\n<p class=\"legend\">{}; an arrow points \
         from a resource to what it depends on, a dashed outline is a resource left alone.</p>\n{}</section>",
        legend(),
        graph(view, dependencies)
    );
    out.push_str("<section id=\"details\">\n<h2>Changes</h2>\n");
    for change in changed(view) {
        details(&mut out, change);
    }
    if changed(view).next().is_none() {
        out.push_str("<p>No changes.</p>\n");
    }
    out.push_str("</section>\n</body>\n</html>\n");
    out
}

fn style() -> String {
    let mut css = String::from(
        "body { font: 15px/1.5 system-ui, sans-serif; color: #24292f; margin: 2rem auto; \
         max-width: 72rem; padding: 0 1rem; }\n\
         table { border-collapse: collapse; margin: 0.5rem 0 1rem; }\n\
         th, td { border: 1px solid #d0d7de; padding: 0.25rem 0.5rem; text-align: left; \
         vertical-align: top; }\n\
         code, pre, svg text.address { font-family: ui-monospace, monospace; }\n\
         pre { background: #f6f8fa; padding: 0.5rem; overflow-x: auto; }\n\
         .badge { padding: 0 0.4rem; border-radius: 0.3rem; font-weight: 600; }\n\
         td code, .badge { white-space: nowrap; }\n\
         .refused { color: #a40e26; font-weight: 600; }\n\
         details { border: 1px solid #d0d7de; border-radius: 0.4rem; padding: 0.5rem 1rem; \
         margin: 0.5rem 0; }\n\
         summary { cursor: pointer; }\n\
         #graph { overflow-x: auto; }\n\
         svg text { font-size: 13px; fill: #24292f; }\n\
         svg text.action { font-size: 11px; }\n",
    );
    for impact in Impact::ALL {
        let _ = writeln!(
            css,
            ".badge.impact-{impact} {{ background: {}; }}",
            impact_colour(impact)
        );
    }
    css
}

fn badge(impact: Impact) -> String {
    format!("<span class=\"badge impact-{impact}\">{impact}</span>")
}

fn legend() -> String {
    let classes: Vec<String> = Impact::ALL.into_iter().map(badge).collect();
    format!("Classes: {}", classes.join(" "))
}

fn summary(out: &mut String, view: &PlanView) {
    let _ = writeln!(out, "<header>\n<h1>skyplan plan</h1>");
    let downtime = wording::downtime(view.impact, &view.summary.estimated_downtime_s)
        .map(|d| format!("; estimated downtime {}", html(&d)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "<p id=\"summary\">{} Impact: {}{downtime}.</p>",
        html(&wording::counts(view)),
        badge(view.impact)
    );
    let refused: Vec<String> = changed(view)
        .filter(|c| c.refused)
        .map(|c| format!("<code>{}</code>", html(&c.address)))
        .collect();
    if !refused.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"refused\">{}.</p>",
            wording::refused_sentence(&refused)
        );
    }
    out.push_str("</header>\n");
    if changed(view).next().is_none() {
        return;
    }
    out.push_str(
        "<table id=\"changes\">\n<tr><th>resource</th><th>action</th><th>class</th>\
         <th>downtime</th><th>window</th></tr>\n",
    );
    for change in changed(view) {
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            html(&change.address),
            change.action.as_str(),
            badge(change.impact),
            html(
                &wording::downtime(change.impact, &change.estimated_downtime_s)
                    .unwrap_or_else(|| "—".to_string())
            ),
            html(&window_fit(change.window.as_ref()))
        );
    }
    out.push_str("</table>\n");
}

fn details(out: &mut String, change: &ChangeView) {
    let downtime = wording::downtime(change.impact, &change.estimated_downtime_s)
        .map(|d| format!(", downtime {}", html(&d)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "<details data-address=\"{address}\">\n<summary><code>{address}</code> {}: {}{downtime}</summary>",
        wording::verdict(change),
        badge(change.impact),
        address = html(&change.address)
    );
    let (whole, attributes): (Vec<&AttributeView>, Vec<&AttributeView>) =
        change.attributes.iter().partition(|a| a.path.is_empty());
    for attribute in whole {
        let _ = writeln!(out, "<p>{}</p>", html(&attribute.reason));
    }
    if let Some(steps) = wording::downtime_steps(change) {
        let _ = writeln!(out, "<p>{}.</p>", html(&steps));
    }
    attribute_table(out, &attributes);
    for ignored in &change.ignored {
        let _ = writeln!(
            out,
            "<p>Ignored (<code>ignore-changes</code>): <code>{}</code>: the cloud has <code>{}</code>, \
             the config says <code>{}</code>.</p>",
            html(&ignored.path),
            html(&compact(&ignored.before)),
            html(&compact(&ignored.after))
        );
    }
    if let Some(measured) = &change.measured_duration {
        let _ = writeln!(
            out,
            "<p>Measured in recent applies: typically {}, at most {} (last {}).</p>",
            seconds(measured.typical_ms),
            seconds(measured.worst_ms),
            counted(measured.runs, "run")
        );
    }
    if !change.operations.is_empty() {
        out.push_str("<p>Operations, in order:</p>\n<ol>\n");
        for operation in &change.operations {
            let _ = writeln!(out, "<li>{}</li>", html(operation));
        }
        out.push_str("</ol>\n");
    }
    if change.refused {
        let _ = writeln!(
            out,
            "<p class=\"refused\">apply holds this back; name it with <code>{}</code> to do it \
             anyway.</p>",
            html(&wording::refusal_flag(change))
        );
    } else if let Some(reason) = &change.held_back {
        let _ = writeln!(
            out,
            "<p class=\"held\">apply holds this back: {}.</p>",
            html(reason)
        );
    }
    out.push_str("</details>\n");
}

fn attribute_table(out: &mut String, attributes: &[&AttributeView]) {
    if attributes.is_empty() {
        return;
    }
    out.push_str(
        "<table class=\"attributes\">\n<tr><th>attribute</th><th>before</th><th>after</th>\
         <th>class</th><th>reason</th></tr>\n",
    );
    for attribute in attributes {
        let downtime = attribute
            .estimated_downtime_s
            .and_then(|d| wording::downtime(attribute.impact, &d))
            .map(|d| format!(", {}", html(&d)))
            .unwrap_or_default();
        let multiline = is_multiline(&attribute.before, &attribute.after);
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}{downtime}</td><td>{}</td></tr>",
            html(&attribute.path),
            value(&attribute.before, multiline),
            value(&attribute.after, multiline),
            badge(attribute.impact),
            html(&attribute.reason)
        );
        for effect in &attribute.effects {
            let multiline = is_multiline(&effect.before, &effect.after);
            let _ = writeln!(
                out,
                "<tr class=\"effect\"><td>↳ <code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                html(&effect.path),
                value(&effect.before, multiline),
                value(&effect.after, multiline),
                badge(effect.impact),
                html(&effect.reason)
            );
        }
    }
    out.push_str("</table>\n");
}

/// A scalar inline; a list or object as pretty JSON, one element a line.
fn value(value: &Value, multiline: bool) -> String {
    if multiline && !value.is_null() {
        let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
        return format!("<pre>{}</pre>", html(&pretty));
    }
    format!("<code>{}</code>", html(&compact(value)))
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
