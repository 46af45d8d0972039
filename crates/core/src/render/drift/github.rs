//! The drift report as GitHub Actions workflow commands: one annotation per drifted item,
//! pointing at the key that sets the item in the config (as the plan's annotations do, with
//! the config's [`Places`]), else at the resource's table, so the run's summary and the file
//! view show the drift where it is configured.
//!
//! The level says how urgent restoring is, not whether the job fails (the exit code does):
//! - `::error` for a missing resource and for an item whose restoration is `pool-recreate` or
//!   `forbidden` — setting it right takes downtime or a `--replace`, so someone must decide;
//! - `::warning` for `none` and `minimal`, which the next `skyplan apply` restores harmlessly.
//!
//! The `file` property is the config path relative to the repository root (the CLI finds it),
//! so that GitHub links it to the file whichever directory skyplan ran in. GitHub shows at
//! most 10 annotations of each level per step; the JUnit and Markdown reports list everything.

use std::fmt::Write;

use super::{DriftItem, DriftReport, DriftResource, DriftStatus};
use crate::model::Impact;
use crate::render::discovery::one_line;
use crate::render::escape::{workflow_data as data, workflow_property as property};
use crate::render::places::{Place, Places};

pub fn render_drift_github(report: &DriftReport, places: &Places) -> String {
    let mut out = String::new();
    for resource in report.drifted() {
        if resource.items.is_empty() {
            // Nothing more specific to point at: the resource itself is the finding.
            let place = places.of_resource(&resource.address);
            annotate(
                &mut out,
                resource,
                place,
                resource.impact(),
                &resource.verdict(),
            );
        }
        for item in &resource.items {
            let place = places.of_attribute(&resource.address, &item.path);
            annotate(
                &mut out,
                resource,
                place,
                item.impact,
                &message(resource, item),
            );
        }
    }
    // Nothing in the config to point at: a warning on the run, titled by the object.
    for object in report.unmanaged() {
        let title = format!("unmanaged: {} {}", object.address.kind, object.name);
        let _ = writeln!(
            out,
            "::warning title={}::{}",
            property(&title),
            data(&one_line(object))
        );
    }
    out
}

fn message(resource: &DriftResource, item: &DriftItem) -> String {
    match resource.status {
        DriftStatus::Missing | DriftStatus::NotApplied => {
            format!("{}: {}", resource.verdict(), item.one_line())
        }
        DriftStatus::Drifted | DriftStatus::InSync => item.one_line(),
    }
}

/// One annotation at `place`, else (no places taken) at the resource's table as the report
/// has it.
fn annotate(
    out: &mut String,
    resource: &DriftResource,
    place: Option<&Place>,
    impact: Impact,
    message: &str,
) {
    let level = if resource.status == DriftStatus::Missing || impact >= Impact::PoolRecreate {
        "error"
    } else {
        "warning"
    };
    let (file, line, column) = match place {
        Some(place) => (&place.file, place.line, place.column),
        None => (&resource.file, resource.line, resource.column),
    };
    let title = format!("drift: {}", resource.address);
    let _ = writeln!(
        out,
        "::{level} file={},line={},col={},title={}::{}",
        property(&file.display().to_string()),
        line,
        column,
        property(&title),
        data(message)
    );
}
