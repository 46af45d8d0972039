//! The plan as GitHub Actions workflow commands: one annotation per changed attribute, on the
//! config key that changes it (an inherited key where the holder writes it; for a default, the
//! nearest key around it, else the resource's table header), so the pull request's "Files
//! changed" view shows each change's class where it is made. A resource the config no longer has (a deletion) is annotated without a file.
//!
//! The level is the class: `::error` for `forbidden` (apply holds it back), `::warning` for
//! `pool-recreate` (downtime), `::notice` for the rest. A last notice without a file carries
//! the plan's summary. Paths are relative to the repository root, as the caller made them in
//! [`Places`]. GitHub shows at most 10 annotations of each level per step; the Markdown plan
//! lists everything.

use std::fmt::Write;

use super::escape::{workflow_data as data, workflow_property as property};
use super::places::{Place, Places};
use super::text::compact;
use super::view::{AttributeView, ChangeView, PlanView};
use super::wording::{self, changed};
use crate::model::Impact;

pub fn render_plan_github(view: &PlanView, places: &Places) -> String {
    let mut out = String::new();
    for change in changed(view) {
        if change.attributes.is_empty() {
            let place = places.of_resource(&change.address);
            let message = with_refusal(change, wording::verdict(change).to_string());
            annotate(&mut out, change.impact, place, &title(change), &message);
        }
        for attribute in &change.attributes {
            let place = places.of_attribute(&change.address, &attribute.path);
            let message = with_refusal(change, describe(change, attribute));
            annotate(&mut out, attribute.impact, place, &title(change), &message);
        }
    }
    let summary = format!("{} {}", wording::counts(view), wording::impact(view));
    annotate(&mut out, Impact::None, None, "skyplan plan", &summary);
    out
}

fn title(change: &ChangeView) -> String {
    format!(
        "{} {}: {}",
        change.address,
        change.action.as_str(),
        change.impact
    )
}

/// `path: before → after [CLASS, downtime]. reason`, as the text plan writes an attribute; for
/// the whole resource, what happens to it instead of the values.
fn describe(change: &ChangeView, attribute: &AttributeView) -> String {
    let downtime = attribute
        .estimated_downtime_s
        .and_then(|d| wording::downtime(attribute.impact, &d))
        .map(|d| format!(", {d}"))
        .unwrap_or_default();
    if attribute.path.is_empty() {
        return format!(
            "{} {} [{}{downtime}]. {}",
            change.address,
            wording::verdict(change),
            attribute.impact,
            attribute.reason
        );
    }
    format!(
        "{}: {} → {} [{}{downtime}]. {}",
        attribute.path,
        compact(&attribute.before),
        compact(&attribute.after),
        attribute.impact,
        attribute.reason
    )
}

fn with_refusal(change: &ChangeView, message: String) -> String {
    match change.refused {
        true => format!("{message}\n{}.", wording::refusal(change)),
        false => message,
    }
}

fn level(impact: Impact) -> &'static str {
    match impact {
        Impact::Forbidden => "error",
        Impact::PoolRecreate => "warning",
        Impact::None | Impact::Minimal => "notice",
    }
}

fn annotate(out: &mut String, impact: Impact, place: Option<&Place>, title: &str, message: &str) {
    let _ = write!(out, "::{} ", level(impact));
    if let Some(place) = place {
        let _ = write!(
            out,
            "file={},line={},col={},",
            property(&place.file.to_string_lossy()),
            place.line,
            place.column
        );
    }
    let _ = writeln!(out, "title={}::{}", property(title), data(message));
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{places, reviewed};
    use super::*;

    #[test]
    fn plan_annotations() {
        insta::assert_snapshot!(render_plan_github(&reviewed(), &places()));
    }

    #[test]
    fn the_level_is_the_class_and_the_line_the_key() {
        let out = render_plan_github(&reviewed(), &places());
        let line = |needle: &str| {
            out.lines()
                .find(|l| l.contains(needle))
                .unwrap_or_else(|| panic!("no {needle} in {out}"))
                .to_string()
        };
        assert!(line("flavor").starts_with(
            "::error file=infra/skyplan.toml,line=23,col=1,title=load-balancer.shop update%3A forbidden::"
        ));
        assert!(line("ports.http.algorithm")
            .starts_with("::warning file=infra/skyplan.toml,line=30,col=1,"));
        assert!(line("allowed-cidrs").starts_with("::notice file=infra/skyplan.toml,line=30,"));
        assert!(
            !out.contains("load-balancer.docs"),
            "a no-op is not annotated"
        );
        assert!(line("flavor").contains("%0Aapply holds this back; name it with --replace"));
    }

    #[test]
    fn a_resource_gone_from_the_config_is_annotated_without_a_file() {
        let out = render_plan_github(&reviewed(), &Places::default());
        assert!(out.lines().all(|l| !l.contains("file=")), "{out}");
        assert_eq!(
            out.lines().count(),
            5,
            "four attributes and the summary: {out}"
        );
    }

    #[test]
    fn messages_cannot_end_the_command() {
        let mut view = reviewed();
        view.changes[0].attributes[0].reason = "50%\nnext::line".to_string();
        let out = render_plan_github(&view, &places());
        assert!(out.contains("50%25%0Anext::line"), "{out}");
        assert_eq!(out.lines().count(), 5, "{out}");
    }
}
