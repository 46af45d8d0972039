//! The backend's errors: what it could not do, with the API server's reason (a missing RBAC
//! permission reads "secrets is forbidden: User … cannot create resource …").

use skyplan_core::provider::http::with_causes;
use skyplan_core::state::StateError;

/// The backend's name in messages.
pub(super) const BACKEND: &str = "Kubernetes";

pub(super) fn setup(message: impl Into<String>) -> StateError {
    StateError::Backend {
        backend: BACKEND,
        message: message.into(),
    }
}

/// Wraps an API error with what was being done, for `map_err`.
pub(super) fn failed(action: impl Into<String>) -> impl FnOnce(kube::Error) -> StateError {
    let action = action.into();
    move |error| setup(format!("cannot {action}: {}", reason(&error)))
}

/// The API server's own message for a refusal (its Status, once), else the error's chain.
fn reason(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) if !status.message.is_empty() => {
            format!("{} ({} {})", status.message, status.code, status.reason)
        }
        other => with_causes(other),
    }
}

fn status(error: &kube::Error) -> Option<u16> {
    match error {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

pub(super) fn is_not_found(error: &kube::Error) -> bool {
    status(error) == Some(404)
}

/// A write refused because the object changed since it was read (409 Conflict), or created
/// meanwhile by another (409 AlreadyExists).
pub(super) fn is_conflict(error: &kube::Error) -> bool {
    status(error) == Some(409)
}
