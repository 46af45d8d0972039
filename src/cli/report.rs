//! The pipeline's errors as miette reports. A provider's error already ends its one line with
//! its causes (`http::with_causes`), so that a URL or a certificate error can be searched for
//! and copied whole; its source chain is there for callers that act on the failure. Handed
//! that chain, miette would print each cause a second time below the line, so a provider's
//! error is reported by its text alone. Every other error keeps its chain, as before.

use miette::{miette, IntoDiagnostic, Report};

use crate::apply::ApplyError;
use crate::provider::ProviderError;
use crate::workspace::WorkspaceError;

/// `into_diagnostic` for the results of the workspace and of apply.
pub trait Reported<T> {
    fn reported(self) -> Result<T, Report>;
}

impl<T> Reported<T> for Result<T, WorkspaceError> {
    fn reported(self) -> Result<T, Report> {
        self.map_err(workspace_report)
    }
}

impl<T> Reported<T> for Result<T, ApplyError> {
    fn reported(self) -> Result<T, Report> {
        self.map_err(|error| match error {
            ApplyError::Workspace(error) => workspace_report(error),
            other => Err::<(), _>(other).into_diagnostic().unwrap_err(),
        })
    }
}

pub fn workspace_report(error: WorkspaceError) -> Report {
    match error {
        WorkspaceError::Provider(error) => provider_report(&error),
        other => Err::<(), _>(other).into_diagnostic().unwrap_err(),
    }
}

fn provider_report(error: &ProviderError) -> Report {
    miette!("{error}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ErrorKind;

    fn causes(report: &Report) -> usize {
        report.chain().count() - 1
    }

    #[test]
    fn a_provider_error_is_reported_by_its_line_without_its_causes_again() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let error = ProviderError::new("cloudscale", "listing servers: refused")
            .kind(ErrorKind::Transport)
            .caused_by(io);
        let report = workspace_report(WorkspaceError::Provider(error));
        assert_eq!(report.to_string(), "cloudscale: listing servers: refused");
        assert_eq!(causes(&report), 0);
    }

    #[test]
    fn a_state_error_keeps_its_chain() {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let state = crate::state::StateError::Io {
            action: "read",
            path: "state/skyplan.state.json".into(),
            source: io,
        };
        let report = workspace_report(WorkspaceError::State(state));
        assert_eq!(causes(&report), 1);
    }
}
