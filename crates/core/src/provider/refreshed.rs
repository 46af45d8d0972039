//! What one provider's refresh read, handed back to it by the pipeline: the provider keeps
//! nothing of a refresh in itself, so plan, drift, import and apply see exactly the live state
//! they are given, and a second refresh cannot change what an earlier plan is applied with.

use std::any::{type_name, Any};

use super::{ErrorKind, ProviderError};

/// One provider's live state as its refresh read it, opaque to the pipeline: only the
/// provider that made it knows its type, and reads it back with [`Refreshed::downcast_ref`].
pub struct Refreshed {
    value: Box<dyn Any + Send + Sync>,
    /// The value's type, for the error when another type is asked for.
    type_name: &'static str,
}

impl Refreshed {
    pub fn new<T: Any + Send + Sync>(value: T) -> Refreshed {
        Refreshed {
            value: Box::new(value),
            type_name: type_name::<T>(),
        }
    }

    /// The value as the type `provider` made it. Another type means the pipeline handed one
    /// provider's refresh to another: a bug in skyplan, reported rather than a panic.
    pub fn downcast_ref<T: Any>(&self, provider: &str) -> Result<&T, ProviderError> {
        self.value.downcast_ref::<T>().ok_or_else(|| {
            let message = format!(
                "was handed the refresh of a {} where it made a {}",
                self.type_name,
                type_name::<T>()
            );
            ProviderError::new(provider, message).kind(ErrorKind::Internal)
        })
    }
}

impl std::fmt::Debug for Refreshed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Refreshed({})", self.type_name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Snapshot(u32);

    #[test]
    fn a_provider_reads_back_what_it_made() {
        let refreshed = Refreshed::new(Snapshot(7));
        assert_eq!(refreshed.downcast_ref::<Snapshot>("echo").unwrap().0, 7);
    }

    #[test]
    fn another_providers_refresh_is_an_internal_error_naming_both_types() {
        let refreshed = Refreshed::new(Snapshot(7));
        let error = refreshed.downcast_ref::<String>("echo").unwrap_err();
        assert_eq!(error.kind, ErrorKind::Internal);
        let text = error.to_string();
        assert!(
            text.starts_with("echo: was handed the refresh of a "),
            "{text}"
        );
        assert!(
            text.contains("Snapshot") && text.contains("String"),
            "{text}"
        );
    }
}
