//! Drift reports: what changed outside skyplan, rendered for people (text), scripts (JSON),
//! pull requests (Markdown) and CI (JUnit XML, GitHub Actions annotations). Every renderer is a
//! pure function of one [`DriftReport`], so the formats can never disagree with each other or
//! with the exit code, which [`DriftReport::has_drift`] decides from the same data.

mod github;
mod json;
mod junit;
mod markdown;
mod text;

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

use crate::model::Impact;
use crate::provider::discover::Unmanaged;
use crate::render::text::compact;

pub use github::render_drift_github;
pub use json::render_drift_json;
pub use junit::render_drift_junit;
pub use markdown::render_drift_markdown;
pub use text::render_drift_text;

/// Every resource checked, drifted or not, sorted by address.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DriftReport {
    pub resources: Vec<DriftResource>,
    /// With `--unmanaged`: the objects no resource manages (`skyplan discover`), each counted
    /// as drift; `None` when they were not looked for.
    pub unmanaged: Option<Vec<Unmanaged>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DriftResource {
    pub address: String,
    pub provider: String,
    /// Where the resource's table is in the config, as the config loader saw the path.
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
    pub status: DriftStatus,
    pub items: Vec<DriftItem>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriftStatus {
    InSync,
    Drifted,
    /// Deleted outside skyplan.
    Missing,
    /// In the config but never applied (not in the state): not "in sync", whatever the cloud
    /// happens to hold.
    NotApplied,
}

#[derive(Debug, Clone, Serialize)]
pub struct DriftItem {
    /// The attribute, as in the plan (`ports.http.algorithm`); empty for the whole resource.
    pub path: String,
    pub expected: Value,
    pub actual: Value,
    /// The class of the change that restoring the expected value would be.
    pub impact: Impact,
    pub reason: String,
}

impl DriftReport {
    pub fn has_drift(&self) -> bool {
        self.resources.iter().any(DriftResource::has_drift) || !self.unmanaged().is_empty()
    }

    /// The unmanaged objects found (none when they were not looked for).
    pub fn unmanaged(&self) -> &[Unmanaged] {
        self.unmanaged.as_deref().unwrap_or_default()
    }

    /// The highest class among all the changes that restoring the configuration would make.
    pub fn impact(&self) -> Impact {
        self.resources
            .iter()
            .map(DriftResource::impact)
            .max()
            .unwrap_or_default()
    }

    pub fn count(&self, status: DriftStatus) -> usize {
        self.resources.iter().filter(|r| r.status == status).count()
    }

    fn drifted(&self) -> impl Iterator<Item = &DriftResource> {
        self.resources.iter().filter(|r| r.has_drift())
    }
}

impl DriftResource {
    pub fn has_drift(&self) -> bool {
        self.status != DriftStatus::InSync
    }

    /// The highest class among this resource's drifted items; `none` when it has none.
    pub fn impact(&self) -> Impact {
        self.items
            .iter()
            .map(|i| i.impact)
            .max()
            .unwrap_or_default()
    }

    /// A resource never applied whose plan is not known here (a refresh-only plan reads
    /// none): the report says where to read what applying it does, never a class it might not
    /// have.
    pub(super) fn class_unknown(&self) -> bool {
        self.status == DriftStatus::NotApplied && self.items.is_empty()
    }

    /// `file:line:column`, the way compilers and editors point at a place.
    fn location(&self) -> String {
        format!("{}:{}:{}", self.file.display(), self.line, self.column)
    }

    /// One line saying what happened to the resource, shared by every format.
    fn verdict(&self) -> String {
        match self.status {
            DriftStatus::InSync => "in sync".to_string(),
            DriftStatus::Drifted => match self.items.len() {
                1 => "1 attribute drifted".to_string(),
                n => format!("{n} attributes drifted"),
            },
            DriftStatus::Missing => "missing: deleted outside skyplan".to_string(),
            DriftStatus::NotApplied => "not applied: in the config but never applied".to_string(),
        }
    }
}

impl DriftItem {
    /// An item about the whole resource (it was deleted, say) has no attribute path: its
    /// reason says everything there is to say.
    fn is_whole_resource(&self) -> bool {
        self.path.is_empty()
    }

    /// `path: expected E, actual A (restoring it is CLASS)`, the one-line form used by the
    /// formats that cannot lay values out.
    fn one_line(&self) -> String {
        if self.is_whole_resource() {
            return format!("{} (restoring it is {})", self.reason, self.impact);
        }
        format!(
            "{}: expected {}, actual {} (restoring it is {})",
            self.path,
            compact(&self.expected),
            compact(&self.actual),
            self.impact
        )
    }
}

/// What the report says instead of a class it does not know (see
/// [`DriftResource::class_unknown`]).
const PLAN_SAYS: &str = "`skyplan plan` says what applying it does";

/// The one-sentence summary every format ends or starts with.
fn summary(report: &DriftReport) -> String {
    let total = report.resources.len();
    let unmanaged = match &report.unmanaged {
        Some(objects) => format!(", {} unmanaged", objects.len()),
        None => String::new(),
    };
    if !report.has_drift() {
        let none_unmanaged = if report.unmanaged.is_some() {
            ", nothing unmanaged"
        } else {
            ""
        };
        return format!(
            "No drift: {total} of {} in sync{none_unmanaged}.",
            super::counted(total, "resource")
        );
    }
    let unknown = report
        .resources
        .iter()
        .filter(|r| r.class_unknown())
        .count();
    let restoring = match unknown {
        0 => format!("restoring the configuration is {}", report.impact()),
        1 if report.drifted().all(DriftResource::class_unknown) => PLAN_SAYS.to_string(),
        _ if report.drifted().all(DriftResource::class_unknown) => {
            "`skyplan plan` says what applying them does".to_string()
        }
        1 => format!(
            "restoring the rest is {}; `skyplan plan` says what applying the resource never applied does",
            report.impact()
        ),
        n => format!(
            "restoring the rest is {}; `skyplan plan` says what applying the {n} resources never applied does",
            report.impact()
        ),
    };
    format!(
        "Drift: {} drifted, {} missing, {} not applied, {} in sync{unmanaged}; {restoring}.",
        report.count(DriftStatus::Drifted),
        report.count(DriftStatus::Missing),
        report.count(DriftStatus::NotApplied),
        report.count(DriftStatus::InSync),
    )
}

#[cfg(test)]
mod tests;
