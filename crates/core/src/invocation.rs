//! How to run skyplan again on this run's config, for the hints that print a command
//! ("`skyplan apply d.json` applies exactly this plan", "`skyplan state rm` it first"): with
//! its `-c` flags unless the config is the one read without them, so that the command printed
//! is one that works. The CLI notes the config once at its start; a library user that does not
//! gets plain `skyplan ARGS`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The `-c` flags of this run, as they are to be typed (empty for the default config).
static CONFIG_FLAGS: OnceLock<String> = OnceLock::new();

/// Notes the config of this run (once, at the start).
pub fn remember(layers: &[PathBuf]) {
    let default =
        std::env::var_os("SKYPLAN_CONFIG").map_or_else(|| PathBuf::from("."), PathBuf::from);
    let _ = CONFIG_FLAGS.set(config_flags(layers, &default));
}

/// `skyplan ARGS`, with this run's `-c` flags when they are needed.
pub fn skyplan(args: &str) -> String {
    match CONFIG_FLAGS.get().map(String::as_str) {
        None | Some("") => format!("skyplan {args}"),
        Some(flags) => format!("skyplan {flags} {args}"),
    }
}

/// `-c A -c B`, or nothing when the config is the one read without a `-c` (`default`).
fn config_flags(layers: &[PathBuf], default: &Path) -> String {
    if let [only] = layers {
        if only == default {
            return String::new();
        }
    }
    let flags: Vec<_> = (layers.iter())
        .map(|layer| format!("-c {}", shell_word(&layer.to_string_lossy())))
        .collect();
    flags.join(" ")
}

/// The text as one shell word: single-quoted when it holds anything a shell would read.
fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./,:@%+=".contains(c);
    match !text.is_empty() && text.chars().all(plain) {
        true => text.to_string(),
        false => format!("'{}'", text.replace('\'', r"'\''")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_config_needs_no_flag_and_any_other_names_each_layer() {
        let dot = Path::new(".");
        assert_eq!(config_flags(&[PathBuf::from(".")], dot), "");
        assert_eq!(
            config_flags(&[PathBuf::from("infra")], Path::new("infra")),
            ""
        );
        assert_eq!(config_flags(&[PathBuf::from("infra")], dot), "-c infra");
        let layers = [PathBuf::from("base"), PathBuf::from("env/my prod")];
        assert_eq!(config_flags(&layers, dot), "-c base -c 'env/my prod'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
    }
}
