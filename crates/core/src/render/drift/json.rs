//! The JSON drift report (`skyplan drift --format json`), a contract like the JSON plan:
//! fields are added, never renamed or dropped, and `format_version` changes when they are.
//!
//! ```json
//! {
//!   "format_version": "1.3",
//!   "skyplan_version": "0.1.0",
//!   "drift": true,
//!   "impact": "pool-recreate",
//!   "summary": { "resources": 4, "in_sync": 1, "drifted": 1, "missing": 1, "not_applied": 1 },
//!   "resources": [
//!     {
//!       "address": "load-balancer.web", "provider": "cloudscale",
//!       "file": "skyplan.toml", "line": 12, "column": 1,
//!       "status": "drifted", "impact": "pool-recreate",
//!       "items": [
//!         { "path": "ports.http.algorithm", "expected": "round_robin", "actual": "source_ip",
//!           "impact": "pool-recreate", "reason": "…" }
//!       ]
//!     }
//!   ]
//! }
//! ```
//!
//! - `drift` is true exactly when `skyplan drift` exits 2.
//! - `impact` is the highest class of the changes that restoring the configuration would make
//!   (`none` when nothing drifted); each resource has its own.
//! - `resources` lists every resource checked, in sync or not, sorted by address; `status` is
//!   `in-sync`, `drifted`, `missing` (deleted outside skyplan) or `not-applied` (in the config,
//!   never applied: not in the state).
//! - 1.1 added `summary.not_applied` and the status `not-applied`.
//! - 1.2 added, with `--unmanaged` only, `unmanaged` (the objects no resource manages, as
//!   `skyplan discover --format json` lists them) and `summary.unmanaged`; `drift` counts them.
//! - 1.3 added an unmanaged object's `why_not_importable` (discover's 1.1), judged as
//!   `import --generate-config` judges it.
//! - `file`, `line` and `column` point at the resource's table in the config (1-based).
//! - An item's `path` is empty when it concerns the whole resource; `expected` and `actual` are
//!   JSON values, `null` where there is none.

use serde::Serialize;

use super::{DriftItem, DriftReport, DriftResource, DriftStatus};
use crate::model::Impact;
use crate::provider::discover::Unmanaged;

const DRIFT_FORMAT_VERSION: &str = "1.3";

#[derive(Serialize)]
struct ReportView<'a> {
    format_version: &'static str,
    skyplan_version: &'static str,
    drift: bool,
    impact: Impact,
    summary: SummaryView,
    resources: Vec<ResourceView<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unmanaged: Option<&'a [Unmanaged]>,
}

#[derive(Serialize)]
struct SummaryView {
    resources: usize,
    in_sync: usize,
    drifted: usize,
    missing: usize,
    not_applied: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    unmanaged: Option<usize>,
}

#[derive(Serialize)]
struct ResourceView<'a> {
    address: &'a str,
    provider: &'a str,
    /// Shown, not serialized as a path, so that a non-UTF-8 path cannot fail the report.
    file: String,
    line: usize,
    column: usize,
    status: DriftStatus,
    impact: Impact,
    items: &'a [DriftItem],
}

pub fn render_drift_json(report: &DriftReport) -> String {
    let view = ReportView {
        format_version: DRIFT_FORMAT_VERSION,
        skyplan_version: env!("CARGO_PKG_VERSION"),
        drift: report.has_drift(),
        impact: report.impact(),
        summary: SummaryView {
            resources: report.resources.len(),
            in_sync: report.count(DriftStatus::InSync),
            drifted: report.count(DriftStatus::Drifted),
            missing: report.count(DriftStatus::Missing),
            not_applied: report.count(DriftStatus::NotApplied),
            unmanaged: report.unmanaged.as_ref().map(Vec::len),
        },
        resources: report.resources.iter().map(resource_view).collect(),
        unmanaged: report.unmanaged.as_deref(),
    };
    // Only maps with string keys and plain values: serializing cannot fail.
    serde_json::to_string_pretty(&view).expect("the drift view serializes") + "\n"
}

fn resource_view(resource: &DriftResource) -> ResourceView<'_> {
    ResourceView {
        address: &resource.address,
        provider: &resource.provider,
        file: resource.file.display().to_string(),
        line: resource.line,
        column: resource.column,
        status: resource.status,
        impact: resource.impact(),
        items: &resource.items,
    }
}
