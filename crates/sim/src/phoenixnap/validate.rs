//! The field formats the specs impose, checked as the real API would before anything changes.

/// The locations the specs enumerate (`IpBlockCreate.location`, `PublicNetworkCreate.location`,
/// `ServerCreate.location`); a world may have address space in only some of them.
pub const LOCATIONS: [&str; 7] = ["PHX", "ASH", "SGP", "NLD", "CHI", "SEA", "AUS"];

/// Tag names and values: `[A-zÀ-ú0-9_-]{1,100}`, taken literally. `A-z` also admits the six
/// ASCII characters between `Z` and `a` (`[ \ ] ^ _` and the backtick), as the real pattern
/// does; `.` and `/` stay out, so `name.value` filters split unambiguously.
pub fn is_tag_text(text: &str) -> bool {
    let length = text.chars().count();
    (1..=100).contains(&length)
        && text.chars().all(|c| {
            ('A'..='z').contains(&c) || ('À'..='ú').contains(&c) || c.is_ascii_digit() || c == '-'
        })
}

/// Public network names: `^(?=.*[a-zA-Z])([a-zA-Z0-9(). -])+$`, at most 100 characters.
pub fn is_network_name(name: &str) -> bool {
    name.chars().count() <= 100
        && name.chars().any(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "(). -".contains(c))
}

/// Server hostnames: `^(?=.*[a-zA-Z])([a-zA-Z0-9().-])+$`.
pub fn is_hostname(name: &str) -> bool {
    name.chars().count() <= 100
        && name.chars().any(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "().-".contains(c))
}

pub fn is_location(code: &str) -> bool {
    LOCATIONS.contains(&code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_text_follows_the_spec_pattern() {
        for good in [
            "usage",
            "cloud-provider-phoenixnap-auto",
            "a_b",
            "Genève",
            "x".repeat(100).as_str(),
        ] {
            assert!(is_tag_text(good), "{good}");
        }
        for bad in [
            "",
            "a.b",
            "ns/name",
            "with space",
            "ü!",
            "x".repeat(101).as_str(),
        ] {
            assert!(!is_tag_text(bad), "{bad}");
        }
        // The literal ranges: `A-z` lets `^` through, and `À-ú` stops before `û`, `ü`.
        assert!(is_tag_text("a^b"));
        assert!(!is_tag_text("Zürich"));
    }

    #[test]
    fn network_names_and_hostnames() {
        assert!(is_network_name("k8s-public (PHX).1"));
        assert!(!is_network_name("1234"));
        assert!(!is_network_name("a_b"));
        assert!(is_hostname("node-1"));
        assert!(!is_hostname("node 1"));
        assert!(!is_hostname("42"));
    }
}
