//! Counted nouns, so that no message reads `1 resources` or `(1 run(s))`.

/// `1 resource`, `2 resources`: `noun` is the singular; the plural adds an `s`, which holds
/// for every noun skyplan counts (resource, run, operation, change, request…).
pub fn counted(n: usize, noun: &str) -> String {
    format!("{n} {}", noun_for(n, noun))
}

/// The noun alone, agreeing with `n`: `of 3 resources`, `of 1 resource`.
fn noun_for(n: usize, noun: &str) -> String {
    match n {
        1 => noun.to_string(),
        _ => format!("{noun}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(counted(1, "resource"), "1 resource");
        assert_eq!(counted(0, "resource"), "0 resources");
        assert_eq!(counted(2, "run"), "2 runs");
        assert_eq!(noun_for(1, "API request"), "API request");
    }
}
