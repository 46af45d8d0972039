//! `plan --format text|json|markdown|github|html`: the plan printed in the format asked for,
//! with what a format needs beyond the plan taken from the workspace before it closes — where
//! each resource and key is written (GitHub annotations) and what each resource depends on
//! (the HTML report's graph).

use miette::{IntoDiagnostic, Report};

use super::super::args::PlanFormat;
use super::super::colour;
use super::super::repository::RepositoryPaths;
use super::plan::print_plan;
use crate::plan::Plan;
use crate::render::{
    render_plan_github, render_plan_html, render_plan_markdown, Dependencies, Places, PlanView,
};
use crate::workspace::Workspace;

/// What the plan's formats need from the workspace, besides the plan.
#[derive(Default)]
pub(super) struct Surroundings {
    places: Places,
    dependencies: Dependencies,
}

impl Surroundings {
    /// Taken only for the formats that use it: a large config's key positions are not copied
    /// for a text plan.
    pub(super) fn gather(workspace: &Workspace, plan: &Plan, format: PlanFormat) -> Surroundings {
        match format {
            PlanFormat::Github => {
                let paths = RepositoryPaths::for_config(&workspace.config.root);
                Surroundings {
                    places: Places::from_config(&workspace.config, |file| paths.relative(file)),
                    ..Surroundings::default()
                }
            }
            PlanFormat::Html => Surroundings {
                dependencies: dependencies(workspace, plan),
                ..Surroundings::default()
            },
            PlanFormat::Text | PlanFormat::Json | PlanFormat::Markdown => Surroundings::default(),
        }
    }
}

/// What each resource of the plan depends on: the config's `depends_on`, or the state's for a
/// resource the config no longer has (as apply orders them).
fn dependencies(workspace: &Workspace, plan: &Plan) -> Dependencies {
    let of = |change: &crate::plan::ResourceChange| {
        let needs = match workspace.config.resource(&change.address) {
            Some(resource) => resource.depends_on.clone(),
            None => workspace
                .state
                .resources
                .get(&change.address)
                .map(|entry| entry.depends_on.clone())
                .unwrap_or_default(),
        };
        let needs = needs.iter().map(ToString::to_string).collect();
        (change.address.to_string(), needs)
    };
    Dependencies(plan.changes.iter().map(of).collect())
}

pub(super) fn print_plan_as(
    view: &PlanView,
    format: PlanFormat,
    around: &Surroundings,
) -> Result<(), Report> {
    match format {
        PlanFormat::Text => print_plan(view),
        PlanFormat::Json => println!("{}", serde_json::to_string_pretty(view).into_diagnostic()?),
        PlanFormat::Markdown => colour::print(render_plan_markdown(view)),
        PlanFormat::Github => colour::print(render_plan_github(view, &around.places)),
        PlanFormat::Html => colour::print(render_plan_html(view, &around.dependencies)),
    }
    Ok(())
}
