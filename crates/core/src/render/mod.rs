//! Rendering: one serializable view of a plan ([`PlanView`], the JSON contract), and every
//! other format rendered from the same view, so that none can disagree with it: the human text,
//! Markdown for a pull-request comment, GitHub annotations (with the config's [`Places`]) and a
//! self-contained HTML report (with the [`Dependencies`] its graph draws). The drift report has
//! its own formats, in `drift/`. No IO here: the CLI prints.

mod discovery;
mod drift;
mod escape;
mod github;
mod held;
mod html;
mod layout;
mod long_values;
mod markdown;
mod places;
mod svg;
mod text;
mod view;
mod wording;
mod words;

pub use discovery::{render_discovery_json, render_discovery_text, render_discovery_toml};
pub use drift::{
    render_drift_github, render_drift_json, render_drift_junit, render_drift_markdown,
    render_drift_text, DriftItem, DriftReport, DriftResource, DriftStatus,
};
pub use github::render_plan_github;
pub use html::render_plan_html;
pub use layout::Dependencies;
pub use markdown::{render_plan_markdown, render_plan_markdown_within, GITHUB_COMMENT_LIMIT};
pub use places::{Place, Places, ResourcePlaces};
pub use svg::impact_colour;
pub use text::{render_text, Style};
pub use view::{AttributeView, ChangeView, DowntimeStep, PlanView, Summary, WindowView};
pub use words::counted;

#[cfg(test)]
mod fixture;
#[cfg(test)]
mod tests;
