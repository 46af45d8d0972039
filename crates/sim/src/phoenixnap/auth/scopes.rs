//! The four scopes and which one each operation needs: reads need `bmc.read` (`tags.read` for
//! the tag manager), changes `bmc` (`tags`). Choice: the full scope also allows reads, as
//! "full access" says; the read scope never allows a change.

use axum::http::Method;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    Bmc,
    BmcRead,
    Tags,
    TagsRead,
}

pub const ALL: [Scope; 4] = [Scope::Bmc, Scope::BmcRead, Scope::Tags, Scope::TagsRead];

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Bmc => "bmc",
            Scope::BmcRead => "bmc.read",
            Scope::Tags => "tags",
            Scope::TagsRead => "tags.read",
        }
    }

    fn parse(text: &str) -> Option<Scope> {
        ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// The scopes of a token request's `scope` field (space separated); no field, or an empty
/// one, asks for all four. `Err` names the first unknown scope.
pub fn requested(field: Option<&str>) -> Result<Vec<Scope>, String> {
    let words: Vec<&str> = field.unwrap_or("").split_whitespace().collect();
    if words.is_empty() {
        return Ok(ALL.to_vec());
    }
    let mut scopes = Vec::new();
    for word in words {
        let scope = Scope::parse(word).ok_or_else(|| word.to_owned())?;
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    Ok(scopes)
}

/// The scopes that allow `method` on `path`: either is enough.
pub fn needed(path: &str, method: &Method) -> [Scope; 2] {
    let tags = path.starts_with("/tag-manager/");
    match (tags, method.is_safe()) {
        (true, true) => [Scope::TagsRead, Scope::Tags],
        (true, false) => [Scope::Tags, Scope::Tags],
        (false, true) => [Scope::BmcRead, Scope::Bmc],
        (false, false) => [Scope::Bmc, Scope::Bmc],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requested_scopes_default_to_all_and_unknown_ones_are_named() {
        assert_eq!(requested(None).unwrap(), ALL);
        assert_eq!(requested(Some("  ")).unwrap(), ALL);
        assert_eq!(
            requested(Some("bmc bmc.read bmc")).unwrap(),
            [Scope::Bmc, Scope::BmcRead]
        );
        assert_eq!(requested(Some("bmc openid")).unwrap_err(), "openid");
    }

    #[test]
    fn reads_take_either_scope_and_changes_only_the_full_one() {
        assert_eq!(
            needed("/tag-manager/v1/tags", &Method::GET),
            [Scope::TagsRead, Scope::Tags]
        );
        assert!(!needed("/tag-manager/v1/tags", &Method::POST).contains(&Scope::TagsRead));
        assert!(needed("/ips/v1/ip-blocks", &Method::GET).contains(&Scope::BmcRead));
        assert_eq!(
            needed("/networks/v1/public-networks/x/ip-blocks", &Method::POST),
            [Scope::Bmc; 2]
        );
    }
}
