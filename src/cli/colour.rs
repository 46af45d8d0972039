//! Whether to colour, decided once when the command starts and followed by every writer: the
//! plan and drift text, error reports (miette), log lines (tracing), clap's usage and help, and
//! the progress view. One rule per stream: `NO_COLOR` (any non-empty value) turns colour off;
//! else `CLICOLOR_FORCE` (non-empty, not "0") turns it on; else a stream is coloured when it
//! is a terminal.

use std::ffi::OsStr;
use std::fmt::Display;
use std::io::{IsTerminal, Write};
use std::sync::OnceLock;

use anstream::{AutoStream, ColorChoice};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Colour {
    pub stdout: bool,
    pub stderr: bool,
}

static DECIDED: OnceLock<Colour> = OnceLock::new();

/// The decision for this process (made on the first call).
pub fn decided() -> Colour {
    *DECIDED.get_or_init(|| {
        let no_color = std::env::var_os("NO_COLOR");
        let force = std::env::var_os("CLICOLOR_FORCE");
        let on = |terminal| rule(no_color.as_deref(), force.as_deref(), terminal);
        Colour {
            stdout: on(std::io::stdout().is_terminal()),
            stderr: on(std::io::stderr().is_terminal()),
        }
    })
}

fn rule(no_color: Option<&OsStr>, force: Option<&OsStr>, terminal: bool) -> bool {
    if no_color.is_some_and(|value| !value.is_empty()) {
        return false;
    }
    if force.is_some_and(|value| !value.is_empty() && value != "0") {
        return true;
    }
    terminal
}

/// Writes `text` to stdout. Escapes are stripped when stdout is not to be coloured, so that
/// text from elsewhere (an API's message) cannot colour it either.
pub fn print(text: impl Display) {
    let _ = write!(stream(std::io::stdout(), decided().stdout), "{text}");
}

/// Writes `text` and a newline to stderr, stripped as [`print`] is.
pub fn eprintln(text: impl Display) {
    let _ = writeln!(stream(std::io::stderr(), decided().stderr), "{text}");
}

fn stream<W: std::io::Write + anstream::stream::RawStream>(raw: W, colour: bool) -> AutoStream<W> {
    let choice = match colour {
        true => ColorChoice::Always,
        false => ColorChoice::Never,
    };
    AutoStream::new(raw, choice)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(value: &str) -> Option<&OsStr> {
        Some(OsStr::new(value))
    }

    #[test]
    fn a_terminal_is_coloured_and_a_pipe_is_not() {
        assert!(rule(None, None, true));
        assert!(!rule(None, None, false));
    }

    #[test]
    fn no_color_turns_colour_off_whatever_else_says() {
        assert!(!rule(os("1"), None, true));
        assert!(!rule(os("false"), os("1"), true), "any non-empty value");
        assert!(rule(os(""), None, true), "an empty NO_COLOR is not set");
    }

    #[test]
    fn clicolor_force_colours_a_pipe_unless_empty_or_zero() {
        assert!(rule(None, os("1"), false));
        assert!(rule(None, os("yes"), false));
        assert!(!rule(None, os("0"), false));
        assert!(!rule(None, os(""), false));
    }
}
