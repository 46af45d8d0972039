//! The drift report as a pull-request comment or job summary (GitHub-flavoured Markdown): a
//! heading with the verdict, a table per drifted resource, long values folded into `<details>`,
//! and one line naming the resources in sync. Everything that comes from the config or the
//! cloud is escaped, so a value cannot break the table or inject markup.

use std::fmt::Write;

use super::{summary, DriftItem, DriftReport, DriftResource, DriftStatus};
use crate::render::discovery::render_unmanaged_markdown;
use crate::render::escape::{cell, code, markdown_text as text};
use crate::render::long_values::{fold, is_long, value_cell};

pub fn render_drift_markdown(report: &DriftReport) -> String {
    let mut out = String::new();
    let total = report.resources.len();
    let drifted = report.drifted().count();
    if report.has_drift() {
        let _ = writeln!(
            out,
            "## ⚠️ skyplan drift: {drifted} of {} not in sync\n",
            super::super::counted(total, "resource")
        );
    } else {
        let _ = writeln!(out, "## ✅ skyplan drift: no drift\n");
    }
    let _ = writeln!(out, "{}\n", text(&summary(report)));
    for resource in report.drifted() {
        render_resource(&mut out, resource);
    }
    if !report.unmanaged().is_empty() {
        let _ = writeln!(out, "### Not managed by the config\n");
        let _ = writeln!(out, "{}", render_unmanaged_markdown(report.unmanaged()));
    }
    render_in_sync(&mut out, report);
    out
}

fn render_resource(out: &mut String, resource: &DriftResource) {
    let _ = writeln!(
        out,
        "### {}: {}\n",
        code(&resource.address),
        text(&resource.verdict())
    );
    let _ = writeln!(
        out,
        "Provider {}, defined at {}; {}.\n",
        code(&resource.provider),
        code(&resource.location()),
        match resource.class_unknown() {
            true => text(super::PLAN_SAYS),
            false => format!("restoring it is **{}**", resource.impact()),
        }
    );
    let (whole, attributes): (Vec<&DriftItem>, Vec<&DriftItem>) =
        resource.items.iter().partition(|i| i.is_whole_resource());
    for item in whole {
        let _ = writeln!(
            out,
            "{} (restoring it is **{}**)\n",
            text(&item.reason),
            item.impact
        );
    }
    if attributes.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "| attribute | expected | actual | restoring it would be |"
    );
    let _ = writeln!(out, "|---|---|---|---|");
    for item in &attributes {
        let _ = writeln!(
            out,
            "| {} | {} | {} | **{}**: {} |",
            cell(&code(&item.path)),
            value_cell(&item.expected),
            value_cell(&item.actual),
            item.impact,
            cell(&text(&item.reason))
        );
    }
    out.push('\n');
    for item in attributes
        .iter()
        .filter(|i| is_long(&i.expected, &i.actual))
    {
        let values = [("expected", &item.expected), ("actual", &item.actual)];
        fold(out, &item.path, "expected and actual values", values);
    }
}

fn render_in_sync(out: &mut String, report: &DriftReport) {
    let in_sync: Vec<String> = report
        .resources
        .iter()
        .filter(|r| r.status == DriftStatus::InSync)
        .map(|r| code(&r.address))
        .collect();
    if !in_sync.is_empty() {
        let _ = writeln!(out, "In sync: {}.", in_sync.join(", "));
    }
}
