//! serde's "unknown field `membrs`, expected one of `provider`, `name`, … (23 names)" said as a
//! user wants it: the key that is unknown, and the one meant when one is close (`did you mean
//! `members`?`), as cargo and git suggest a mistyped command — not the whole list.

/// The message and help for serde's unknown-field or unknown-variant `message`; `None` when it
/// is neither.
pub fn reword(message: &str) -> Option<(String, String)> {
    let (what, rest) = ["unknown field `", "unknown variant `"]
        .iter()
        .find_map(|prefix| Some((*prefix, message.strip_prefix(prefix)?)))?;
    let (unknown, expected) = rest.split_once('`')?;
    let names: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let kind = match what {
        "unknown field `" => "key",
        _ => "value",
    };
    let help = match closest(unknown, &names) {
        Some(name) => format!("did you mean `{name}`?"),
        None if names.is_empty() => format!("this table takes no {kind}s"),
        None => format!(
            "no {kind} here is like it; `skyplan schema` lists every {kind} this table takes"
        ),
    };
    Some((format!("unknown {kind} `{unknown}`"), help))
}

/// The name most like `unknown`, if any is close enough to be what was meant: a typo, a
/// letter swapped or missing, a different case or separator.
fn closest<'a>(unknown: &str, names: &[&'a str]) -> Option<&'a str> {
    let folded = |s: &str| s.to_lowercase().replace('_', "-");
    let typed = folded(unknown);
    names
        .iter()
        .map(|name| (strsim::jaro_winkler(&typed, &folded(name)), *name))
        .filter(|(score, _)| *score >= 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIELDS: &str = "unknown field `membrs`, expected one of `provider`, `name`, `members`, `cluster`, `service`, `mode`";

    #[test]
    fn a_typo_gets_the_key_it_meant() {
        assert_eq!(
            reword(FIELDS),
            Some((
                "unknown key `membrs`".into(),
                "did you mean `members`?".into()
            ))
        );
        let snake = "unknown field `node_port`, expected one of `name`, `port`, `node-port`";
        assert_eq!(reword(snake).unwrap().1, "did you mean `node-port`?");
    }

    #[test]
    fn nothing_close_says_where_the_keys_are_listed() {
        let far = FIELDS.replace("membrs", "colour");
        let (message, help) = reword(&far).unwrap();
        assert_eq!(message, "unknown key `colour`");
        assert!(help.starts_with("no key here is like it"), "{help}");
        assert!(!help.contains("provider"), "not the list: {help}");
    }

    #[test]
    fn values_too_and_other_messages_are_left_alone() {
        let variant = "unknown variant `round-robin`, expected `round_robin` or `source_ip`";
        assert_eq!(
            reword(variant),
            Some((
                "unknown value `round-robin`".into(),
                "did you mean `round_robin`?".into()
            ))
        );
        assert_eq!(reword("invalid type: integer, expected a string"), None);
    }
}
