//! Config errors as miette diagnostics. One [`ConfigError`] carries every [`Problem`] found,
//! so a user fixes a config in one round instead of one error per run.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use miette::{Diagnostic, LabeledSpan, NamedSource};

use super::files::SourceFile;
use super::types::SourceLocation;

/// Everything wrong with a configuration. Render it with miette's graphical handler, or use
/// [`ConfigError::lines`] for plain `file:line:col: message` text.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("the configuration is invalid ({})", ProblemCount(.problems.len()))]
#[diagnostic(code(skyplan::config))]
pub struct ConfigError {
    #[related]
    problems: Vec<Problem>,
}

impl ConfigError {
    pub(super) fn new(problems: Vec<Problem>) -> Self {
        debug_assert!(!problems.is_empty(), "a ConfigError without problems");
        ConfigError { problems }
    }

    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    pub(super) fn into_problems(self) -> Vec<Problem> {
        self.problems
    }

    /// One `file:line:col: message` line per problem (`file: message` when there is no
    /// position, e.g. an unreadable file).
    pub fn lines(&self) -> Vec<String> {
        self.problems.iter().map(Problem::line).collect()
    }
}

struct ProblemCount(usize);

impl fmt::Display for ProblemCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            1 => f.write_str("1 problem"),
            n => write!(f, "{n} problems"),
        }
    }
}

/// One thing wrong with the configuration, at a place in one file.
#[derive(Debug, Diagnostic)]
pub struct Problem {
    message: String,
    #[help]
    help: Option<String>,
    #[source_code]
    source_code: Option<NamedSource<Arc<str>>>,
    #[label(collection)]
    labels: Vec<LabeledSpan>,
    /// Other places that explain this one, e.g. where a duplicate was first defined.
    #[related]
    notes: Vec<Problem>,
    file: PathBuf,
    /// 1-based line and column of the primary label.
    position: Option<(usize, usize)>,
    /// Whether the place is a value a resource inherits (from `[defaults.…]`): the problem
    /// then names the resource too ([`Problems::name_inheritor`]).
    inherited: bool,
}

impl Problem {
    /// A problem at `span` (byte offsets into the file's text).
    pub fn at(file: &SourceFile, span: Range<usize>, message: impl Into<String>) -> Self {
        let resolved = file.resolve(&span);
        let (file, span) = (resolved.file, resolved.span);
        let (line, column) = file.position(span.start);
        Problem {
            inherited: resolved.inherited,
            message: message.into(),
            help: None,
            source_code: Some(file.named_source()),
            labels: vec![LabeledSpan::new_primary_with_span(None, span)],
            notes: vec![],
            file: file.path.to_path_buf(),
            position: Some((line, column)),
        }
    }

    /// A problem with a whole file, such as failing to read it.
    pub(super) fn in_file(path: &Path, message: impl Into<String>) -> Self {
        Problem {
            inherited: false,
            message: message.into(),
            help: None,
            source_code: None,
            labels: vec![],
            notes: vec![],
            file: path.to_path_buf(),
            position: None,
        }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn with_note(mut self, note: Problem) -> Self {
        self.notes.push(note);
        self
    }

    /// Keeps the position but drops the source snippet, for lines that hold a secret.
    pub fn without_snippet(mut self) -> Self {
        self.source_code = None;
        self.labels.clear();
        self
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn help_text(&self) -> Option<&str> {
        self.help.as_deref()
    }

    /// Other places that explain this problem, e.g. where a duplicate was first defined.
    pub fn notes(&self) -> &[Problem] {
        &self.notes
    }

    pub fn location(&self) -> Option<SourceLocation> {
        self.position.map(|(line, column)| SourceLocation {
            file: self.file.as_path().into(),
            line,
            column,
        })
    }

    /// `file:line:col: message`, or `file: message` for a problem with a whole file.
    pub fn line(&self) -> String {
        let file = self.file.display();
        match self.position {
            Some((line, column)) => format!("{file}:{line}:{column}: {}", self.message),
            None => format!("{file}: {}", self.message),
        }
    }
}

/// The message; where no snippet shows the file (a file that cannot be read, a line that
/// holds a secret), the place is said first.
impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.source_code {
            Some(_) => f.write_str(&self.message),
            None => f.write_str(&self.line()),
        }
    }
}

impl std::error::Error for Problem {}

/// Problems collected while reading a configuration.
#[derive(Debug, Default)]
pub struct Problems(Vec<Problem>);

impl Problems {
    pub fn push(&mut self, problem: Problem) {
        self.0.push(problem);
    }

    /// Takes `other`'s problems (found on another thread).
    pub fn append(&mut self, mut other: Problems) {
        self.0.append(&mut other.0);
    }

    /// `value` when nothing was wrong, else every problem found, in file order.
    pub fn into_result<T>(mut self, value: T) -> Result<T, ConfigError> {
        if self.0.is_empty() {
            return Ok(value);
        }
        self.0
            .sort_by(|a, b| (&a.file, a.position).cmp(&(&b.file, b.position)));
        // One place read for several resources (the table of a for-each, a default) may be
        // wrong the same way for each: said once.
        let mut seen = std::collections::HashSet::new();
        self.0.retain(|problem| seen.insert(problem.line()));
        Err(ConfigError::new(self.0))
    }

    /// The number of problems so far, to [`name_inheritor`](Self::name_inheritor) of the
    /// problems found after it.
    pub fn count(&self) -> usize {
        self.0.len()
    }

    /// Says, in each problem found since `since` at an inherited value, which resource
    /// inherited it: the value is written once, in the defaults, for many resources.
    pub fn name_inheritor(&mut self, since: usize, address: &str) {
        for problem in self.0.iter_mut().skip(since).filter(|p| p.inherited) {
            problem.message = format!("{} (in {address}, which inherits it)", problem.message);
        }
    }

    /// Turns a TOML syntax or shape error into a problem; toml errors carry their span.
    /// An unknown key or value gets the one meant, not serde's list (`unknown_key`).
    pub fn push_toml(&mut self, file: &SourceFile, error: &toml::de::Error) {
        let message = error.message().trim_end().to_string();
        let (message, help) = match super::unknown_key::reword(&message) {
            Some((message, help)) => (message, Some(help)),
            None => (message, None),
        };
        let problem = match error.span() {
            Some(span) => Problem::at(file, span, message),
            None => Problem::in_file(&file.path, message),
        };
        self.push(match help {
            Some(help) => problem.with_help(help),
            None => problem,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> SourceFile {
        SourceFile::new("dir/a.toml", text)
    }

    #[test]
    fn lines_name_file_line_and_column() {
        let f = file("[settings]\nstate-dir = 3\n");
        let error = ConfigError::new(vec![
            Problem::at(&f, 23..24, "wrong type"),
            Problem::in_file(Path::new("dir/b.toml"), "cannot read"),
        ]);
        assert_eq!(
            error.lines(),
            ["dir/a.toml:2:13: wrong type", "dir/b.toml: cannot read"]
        );
        assert_eq!(
            error.to_string(),
            "the configuration is invalid (2 problems)"
        );
    }

    #[test]
    fn graphical_rendering_shows_every_problem_with_its_help_and_notes() {
        let f = file("a = 1\nb = 2\n");
        let error = ConfigError::new(vec![Problem::at(&f, 6..7, "b is bad")
            .with_help("remove b")
            .with_note(Problem::at(&f, 0..1, "a was first"))]);
        let mut out = String::new();
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
            .render_report(&mut out, &error)
            .unwrap();
        for expected in [
            "1 problem",
            "b is bad",
            "remove b",
            "a was first",
            "dir/a.toml:2:1",
        ] {
            assert!(out.contains(expected), "{expected:?} missing in:\n{out}");
        }
    }
}
