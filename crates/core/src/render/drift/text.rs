//! The human drift report, laid out like the plan: one block per drifted or missing resource,
//! then the summary line. Resources in sync are only counted.

use std::fmt::Write;

use anstyle::Style as Ansi;

use super::{compact, summary, DriftItem, DriftReport, DriftResource, DriftStatus};
use crate::render::discovery::unmanaged_text;
use crate::render::text::{is_multiline, render_value_diff, Painter, Style};

/// Above this many characters, list and object values are shown as a line diff instead.
const ONE_LINE_LIMIT: usize = 60;

pub fn render_drift_text(report: &DriftReport, style: Style) -> String {
    let paint = Painter(style);
    let mut out = String::new();
    for resource in report.drifted() {
        render_resource(&mut out, &paint, resource);
    }
    if !report.unmanaged().is_empty() {
        let _ = writeln!(
            out,
            "{}",
            paint.paint(Ansi::new().bold(), "Not managed by the config:")
        );
        out.push_str(&unmanaged_text(report.unmanaged(), paint.0));
    }
    let _ = writeln!(out, "{}", summary(report));
    out
}

fn render_resource(out: &mut String, paint: &Painter, resource: &DriftResource) {
    let symbol = match resource.status {
        DriftStatus::Missing => "-",
        DriftStatus::NotApplied => "+",
        DriftStatus::Drifted | DriftStatus::InSync => "~",
    };
    let header = paint.paint(Ansi::new().bold(), format!("{symbol} {}", resource.address));
    let _ = writeln!(
        out,
        "{header} {}: {}; {}",
        paint.dim(format!("({})", resource.location())),
        resource.verdict(),
        restoring(paint, resource)
    );
    for item in &resource.items {
        render_item(out, paint, item);
    }
    out.push('\n');
}

/// `restoring it is CLASS` with the class painted, or the words for a class not known here.
fn restoring(paint: &Painter, resource: &DriftResource) -> String {
    match resource.class_unknown() {
        true => super::PLAN_SAYS.to_string(),
        false => format!("restoring it is {}", paint.impact(resource.impact())),
    }
}

fn render_item(out: &mut String, paint: &Painter, item: &DriftItem) {
    if item.is_whole_resource() {
        let _ = writeln!(out, "    {}", paint.dim(&item.reason));
        return;
    }
    let (expected, actual) = (compact(&item.expected), compact(&item.actual));
    let class = paint.impact(item.impact);
    if expected.len() + actual.len() > ONE_LINE_LIMIT && is_multiline(&item.expected, &item.actual)
    {
        let _ = writeln!(out, "    ~ {}  [{class}]", item.path);
        let _ = writeln!(out, "        {}", paint.dim("(- expected, + actual)"));
        render_value_diff(out, paint, &item.expected, &item.actual);
    } else {
        let _ = writeln!(
            out,
            "    ~ {}: expected {expected}, actual {actual}  [{class}]",
            item.path
        );
    }
    let _ = writeln!(out, "        {}", paint.dim(&item.reason));
}
