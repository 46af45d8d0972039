//! The four patch types of `PATCH` (research §2.3), chosen by Content-Type (`;charset=…`
//! stripped, as the apiserver does; any other type is a 415): RFC 6902 JSON patch, RFC 7386
//! merge patch, strategic merge patch with the core types' list strategies, and server-side
//! apply (simplified, see `apply.rs`).

pub mod apply;
pub mod json;
pub mod merge;
pub mod strategic;

use serde_json::Value;

use super::kinds::Kind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
    Strategic,
    Apply,
}

impl PatchType {
    pub fn from_content_type(content_type: &str) -> Option<PatchType> {
        let media = content_type.split(';').next().unwrap_or("").trim();
        match media.to_ascii_lowercase().as_str() {
            "application/json-patch+json" => Some(PatchType::Json),
            "application/merge-patch+json" => Some(PatchType::Merge),
            "application/strategic-merge-patch+json" => Some(PatchType::Strategic),
            "application/apply-patch+yaml" => Some(PatchType::Apply),
            _ => None,
        }
    }
}

/// Applies `patch` to the existing `original`. Err: why the patch cannot be applied (the
/// apiserver answers 422 then).
pub fn apply_to(
    kind: Kind,
    original: &Value,
    patch_type: PatchType,
    patch: &Value,
) -> Result<Value, String> {
    match patch_type {
        PatchType::Json => json::apply(original, patch),
        PatchType::Merge => Ok(merge::apply(original, patch)),
        PatchType::Strategic => strategic::apply(kind, original, patch),
        PatchType::Apply => apply::apply(kind, original, patch),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_are_recognised_without_parameters_and_others_are_not() {
        assert_eq!(
            PatchType::from_content_type("application/merge-patch+json; charset=utf-8"),
            Some(PatchType::Merge)
        );
        assert_eq!(
            PatchType::from_content_type("application/strategic-merge-patch+json"),
            Some(PatchType::Strategic)
        );
        assert_eq!(
            PatchType::from_content_type("application/json-patch+json"),
            Some(PatchType::Json)
        );
        assert_eq!(
            PatchType::from_content_type("application/apply-patch+yaml"),
            Some(PatchType::Apply)
        );
        assert_eq!(PatchType::from_content_type("application/json"), None);
        assert_eq!(PatchType::from_content_type(""), None);
    }
}
