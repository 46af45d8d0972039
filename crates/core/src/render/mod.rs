//! Rendering: one serializable view of a plan ([`PlanView`], the JSON contract), and the human
//! text rendered from the same view, so the two can never disagree. The drift report has its
//! own formats, in `drift/`.

mod drift;
mod held;
mod text;
mod view;
mod words;

pub use drift::{
    render_drift_github, render_drift_json, render_drift_junit, render_drift_markdown,
    render_drift_text, DriftItem, DriftReport, DriftResource, DriftStatus,
};
pub use text::{render_text, Style};
pub use view::{AttributeView, ChangeView, DowntimeStep, PlanView, Summary, WindowView};
pub use words::{counted, noun_for};

#[cfg(test)]
mod tests;
