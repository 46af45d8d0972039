//! Finding and reading the config files: the only IO of the config stage.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use miette::NamedSource;

use super::diagnostics::{ConfigError, Problem, Problems};
use super::types::SourceLocation;

/// One config file's text, kept for positions and for showing snippets in errors.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Shared with every location in the file (a large config records tens of thousands).
    pub path: Arc<Path>,
    pub text: Arc<str>,
    /// The byte offset where each line starts, so that a position costs a binary search
    /// instead of a scan from the top of the file (every resource asks for one).
    line_starts: Arc<[usize]>,
    /// The config's files, for spans of values this file's tables inherit from another table
    /// (`[defaults.…]`): such a span is placed past [`INHERITED_SPAN_BASE`] (see
    /// [`SourceFile::inherited_span`]) and resolved back to its own file where it is shown.
    others: Arc<[SourceFile]>,
}

/// Where the spans of inherited values start: far past the end of any config file, so a
/// span tells which file it is in without the values carrying one.
pub(super) const INHERITED_SPAN_BASE: usize = 1 << (usize::BITS / 2 + 8);

impl SourceFile {
    pub fn new(path: impl Into<PathBuf>, text: &str) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        SourceFile {
            path: Arc::from(path.into()),
            text: text.into(),
            line_starts,
            others: Arc::from([]),
        }
    }

    /// The files with each other: each can show a span of a value inherited from any of them.
    pub(super) fn with_each_other(files: Vec<SourceFile>) -> Vec<SourceFile> {
        let others: Arc<[SourceFile]> = files.iter().cloned().collect();
        files
            .into_iter()
            .map(|file| SourceFile {
                others: others.clone(),
                ..file
            })
            .collect()
    }

    /// The span `span` of the file at `index` (in the order [`with_each_other`] was given)
    /// takes when a table of another file (or another table of this one) inherits it.
    ///
    /// [`with_each_other`]: Self::with_each_other
    pub(super) fn inherited_span(index: usize, span: Range<usize>) -> Range<usize> {
        let base = (index + 1) * INHERITED_SPAN_BASE;
        span.start + base..span.end + base
    }

    /// The file a span is in and the span in it: this file, or for an inherited value the file
    /// it is written in; `inherited` says which.
    pub(super) fn resolve(&self, span: &Range<usize>) -> Resolved<'_> {
        let index = span.start / INHERITED_SPAN_BASE;
        match index.checked_sub(1).and_then(|i| self.others.get(i)) {
            Some(file) => {
                let base = index * INHERITED_SPAN_BASE;
                Resolved {
                    file,
                    span: span.start - base..span.end.saturating_sub(base),
                    inherited: true,
                }
            }
            None => Resolved {
                file: self,
                span: span.clone(),
                inherited: false,
            },
        }
    }

    /// The text of a span (of this file or inherited), if it is in a file.
    pub(super) fn slice(&self, span: &Range<usize>) -> Option<&str> {
        let resolved = self.resolve(span);
        resolved.file.text.get(resolved.span)
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn position(&self, offset: usize) -> (usize, usize) {
        let resolved = self.resolve(&(offset..offset));
        resolved.file.own_position(resolved.span.start)
    }

    fn own_position(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&start| start <= offset);
        let line_start = self.line_starts[line - 1];
        let column = self.text[line_start..offset].chars().count() + 1;
        (line, column)
    }

    pub fn location(&self, span: &Range<usize>) -> SourceLocation {
        let resolved = self.resolve(span);
        let (line, column) = resolved.file.own_position(resolved.span.start);
        SourceLocation {
            file: resolved.file.path.clone(),
            line,
            column,
        }
    }

    /// Where the key of the value at `value` is written: for `zone = "zz9"` or
    /// `{ subnet = "…" }` the key's first character, found by reading back over ` = `; a list
    /// element has no key of its own and is its own position.
    pub fn key_location(&self, value: &Range<usize>) -> SourceLocation {
        self.location(&self.key_span(value))
    }

    /// The span of `key = value` for the value at `value` (the value's own span when it has no
    /// key): a problem about the key's setting points at the key and underlines both.
    pub fn key_span(&self, value: &Range<usize>) -> Range<usize> {
        let resolved = self.resolve(value);
        let own = resolved.file.own_key_span(&resolved.span);
        let shift = value.start - resolved.span.start;
        own.start + shift..own.end + shift
    }

    fn own_key_span(&self, value: &Range<usize>) -> Range<usize> {
        let before = &self.text[..value.start.min(self.text.len())];
        let Some(assign) = before.trim_end_matches([' ', '\t']).strip_suffix('=') else {
            return value.clone();
        };
        let key = assign.trim_end_matches([' ', '\t']);
        let is_key_char =
            |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '"' | '\'');
        let start = key.trim_end_matches(is_key_char).len();
        start..value.end
    }

    pub fn named_source(&self) -> NamedSource<Arc<str>> {
        NamedSource::new(self.path.display().to_string(), self.text.clone()).with_language("toml")
    }
}

/// A span resolved to the file it is written in.
pub(super) struct Resolved<'a> {
    pub file: &'a SourceFile,
    pub span: Range<usize>,
    /// Whether the span is a value inherited from another table.
    pub inherited: bool,
}

/// The config root (a file's directory, or the directory itself) and the files to merge:
/// the file itself, or every `*.toml` in the directory sorted by name.
pub(super) fn read_sources(path: &Path) -> Result<(PathBuf, Vec<SourceFile>), ConfigError> {
    let fail = |message: String| ConfigError::new(vec![Problem::in_file(path, message)]);
    let (root, paths) = if path.is_dir() {
        let paths =
            toml_files_in(path).map_err(|e| fail(format!("cannot list the directory: {e}")))?;
        if paths.is_empty() {
            return Err(fail("no *.toml files in this directory".into()));
        }
        (path.to_path_buf(), paths)
    } else {
        (directory_of(path), vec![path.to_path_buf()])
    };
    let mut files = Vec::new();
    let mut problems = Problems::default();
    for path in paths {
        match std::fs::read_to_string(&path) {
            Ok(text) => files.push(SourceFile::new(path, &text)),
            Err(e) => problems.push(Problem::in_file(&path, unreadable(&e))),
        }
    }
    problems.into_result((root, files))
}

fn unreadable(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::InvalidData => {
            "cannot read the file: it is not UTF-8 text (TOML files are UTF-8)".into()
        }
        _ => format!("cannot read the file: {error}"),
    }
}

fn toml_files_in(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_file() && path.extension().is_some_and(|ext| ext == "toml") {
            paths.push(path);
        }
    }
    paths.sort();
    Ok(paths)
}

/// `Path::parent` of a bare file name is "", which is not a usable directory.
fn directory_of(file: &Path) -> PathBuf {
    match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based_and_count_characters() {
        let file = SourceFile::new("a.toml", "x = 1\nzone = \"zürich\" # ü\n");
        assert_eq!(file.position(0), (1, 1));
        assert_eq!(file.position(6), (2, 1));
        let hash = file.text.find('#').unwrap();
        assert_eq!(file.position(hash), (2, 17));
        let end = file.text.len();
        assert_eq!(
            file.position(end),
            (3, 1),
            "the end of a file ending in a newline"
        );
        assert_eq!(file.position(end + 10), (3, 1));
    }

    #[test]
    fn a_key_is_found_before_its_value() {
        let text = "zone = \"zz9\"\nvip-addresses = [{ subnet = \"s\" }]\nips = [\"a\", \"b\"]\n";
        let file = SourceFile::new("a.toml", text);
        let at = |needle: &str| {
            let start = text.find(needle).unwrap();
            let location = file.key_location(&(start..start + needle.len()));
            (location.line, location.column)
        };
        assert_eq!(at("\"zz9\""), (1, 1));
        assert_eq!(at("\"s\""), (2, 20), "the key inside an inline table");
        assert_eq!(at("\"b\""), (3, 13), "a list element is its own position");
    }

    #[test]
    fn a_directory_yields_its_toml_files_sorted_by_name() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["b.toml", "a.toml", "notes.md"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let (root, files) = read_sources(dir.path()).unwrap();
        assert_eq!(root, dir.path());
        let names: Vec<_> = files.iter().map(|f| f.path.file_name().unwrap()).collect();
        assert_eq!(names, ["a.toml", "b.toml"]);
    }

    #[test]
    fn a_file_is_rooted_in_its_directory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sky.toml");
        std::fs::write(&path, "[settings]\n").unwrap();
        let (root, files) = read_sources(&path).unwrap();
        assert_eq!(root, dir.path());
        assert_eq!(&*files[0].text, "[settings]\n");
        assert_eq!(directory_of(Path::new("sky.toml")), PathBuf::from("."));
    }

    #[test]
    fn missing_files_and_empty_directories_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let empty = read_sources(dir.path()).unwrap_err();
        assert!(empty.lines()[0].ends_with(": no *.toml files in this directory"));
        let missing = read_sources(&dir.path().join("nope.toml")).unwrap_err();
        assert!(missing.lines()[0].contains("nope.toml: cannot read the file"));
        let latin1 = dir.path().join("latin1.toml");
        std::fs::write(&latin1, b"zone = \"z\xfcrich\"\n").unwrap();
        let error = read_sources(&latin1).unwrap_err();
        let shown = error.problems()[0].to_string();
        assert!(
            shown.contains("latin1.toml: cannot read the file: it is not UTF-8"),
            "{shown}"
        );
    }
}
