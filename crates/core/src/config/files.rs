//! Finding and reading the config files: the only IO of the config stage.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use miette::NamedSource;

use super::diagnostics::{ConfigError, Problem, Problems};
use super::raw::TOP_LEVEL_NAMES;
use super::types::SourceLocation;

/// One config file's text, kept for positions and for showing snippets in errors. Or the
/// texts of several files joined (a config of layers, `-c base -c env/prod`), whose tables
/// hold keys of several files: a span then falls in one of them, and a place, a snippet or
/// a relative path is that file's.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Shared with every location in the file (a large config records tens of thousands).
    /// For joined files, the first one's.
    pub path: Arc<Path>,
    pub text: Arc<str>,
    /// The byte offset where each line starts, so that a position costs a binary search
    /// instead of a scan from the top of the file (every resource asks for one).
    line_starts: Arc<[usize]>,
    /// The directory relative paths written in the file resolve against.
    root: Arc<Path>,
    /// For joined files: each file, after the offset its text starts at. Empty for one file.
    joined: Arc<[(usize, SourceFile)]>,
    /// The config's files, for spans of values this file's tables inherit from another table
    /// (`[defaults.…]`): such a span is placed past [`INHERITED_SPAN_BASE`] (see
    /// [`SourceFile::inherited_span`]) and resolved back to its own file where it is shown.
    /// One layer's files each; for layers, the joined file alone (whose parts then place it).
    others: Arc<[SourceFile]>,
}

/// Where the spans of inherited values start: far past the end of any config file, so a
/// span tells which file it is in without the values carrying one.
pub(super) const INHERITED_SPAN_BASE: usize = 1 << (usize::BITS / 2 + 8);

impl SourceFile {
    pub fn new(path: impl Into<PathBuf>, text: &str) -> Self {
        let path: PathBuf = path.into();
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        SourceFile {
            root: Arc::from(directory_of(&path)),
            path: Arc::from(path),
            text: text.into(),
            line_starts,
            joined: Arc::from([]),
            others: Arc::from([]),
        }
    }

    /// The file, its relative paths resolving against `root` (a config directory's files
    /// against the directory) instead of the file's own directory.
    pub fn with_root(mut self, root: &Path) -> Self {
        self.root = Arc::from(root);
        self
    }

    /// The texts of `files` joined, each after a newline of its own; with where each starts.
    pub(super) fn joined(files: Vec<SourceFile>) -> SourceFile {
        let mut text = String::new();
        let mut parts = Vec::with_capacity(files.len());
        for file in files {
            parts.push((text.len(), file.clone()));
            text.push_str(&file.text);
            text.push('\n');
        }
        let first = parts.first().map(|(_, f)| f.path.clone());
        let mut joined = SourceFile::new(first.as_deref().unwrap_or(Path::new(".")), &text);
        joined.joined = parts.into();
        joined
    }

    /// The files of joined files, with the offset each starts at; else the file at 0.
    pub(super) fn parts(&self) -> Vec<(usize, &SourceFile)> {
        match self.joined.is_empty() {
            true => vec![(0, self)],
            false => self.joined.iter().map(|(at, file)| (*at, file)).collect(),
        }
    }

    /// The file that holds `offset`, and where its text starts.
    fn part_at(&self, offset: usize) -> (&SourceFile, usize) {
        if self.joined.is_empty() {
            return (self, 0);
        }
        let after = self.joined.partition_point(|(start, _)| *start <= offset);
        let (start, file) = &self.joined[after.max(1) - 1];
        (file, *start)
    }

    /// The directory a relative path written at `offset` resolves against (the file of
    /// `offset`, inherited or a part of joined files, as [`resolve`](Self::resolve) finds it).
    pub fn root_at(&self, offset: usize) -> &Path {
        &self.resolve(&(offset..offset)).file.root
    }

    /// A path-valued key's value: `~/` is the home directory, and a relative path is relative
    /// to the directory of the file that writes it.
    pub fn path_value(&self, value: &serde_spanned::Spanned<String>) -> PathBuf {
        super::values::expand_path(self.root_at(value.span().start), value.get_ref())
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

    /// The file a span is in and the span in that file's text. Two steps, one way of placing
    /// values written elsewhere: an inherited span (past [`INHERITED_SPAN_BASE`]) names the
    /// config file it is written in, and a span of joined files (layers) falls in one of
    /// them. `inherited` says whether the first step was taken.
    pub(super) fn resolve(&self, span: &Range<usize>) -> Resolved<'_> {
        let index = span.start / INHERITED_SPAN_BASE;
        let (file, span, inherited) = match index.checked_sub(1).and_then(|i| self.others.get(i)) {
            Some(file) => {
                let base = index * INHERITED_SPAN_BASE;
                (file, span.start - base..span.end.saturating_sub(base), true)
            }
            None => (self, span.clone(), false),
        };
        let (file, start) = file.part_at(span.start);
        let local = span.start - start..span.end.saturating_sub(start).max(span.start - start);
        Resolved {
            file,
            span: local,
            inherited,
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
/// the file itself (always, whatever it holds), or the directory's skyplan files — every
/// `*.toml` in it sorted by name, but those of other tools (see [`skyplan_file`]).
pub(super) fn read_sources(path: &Path) -> Result<(PathBuf, Vec<SourceFile>), ConfigError> {
    if !path.is_dir() {
        let root = directory_of(path);
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::new(vec![Problem::in_file(path, unreadable(&e))]))?;
        let file = SourceFile::new(path, &text).with_root(&root);
        return Ok((root, vec![file]));
    }
    let fail = |message: String| ConfigError::new(vec![Problem::in_file(path, message)]);
    let paths = toml_files_in(path).map_err(|e| fail(format!("cannot list the directory: {e}")))?;
    if paths.is_empty() {
        return Err(fail("no *.toml files in this directory".into()));
    }
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let mut problems = Problems::default();
    for file in paths {
        match std::fs::read_to_string(&file) {
            Ok(text) => match skyplan_file(&text) {
                Ok(()) => files.push(SourceFile::new(file, &text).with_root(path)),
                Err(names) => skipped.push(skip(file, names)),
            },
            Err(e) => problems.push(Problem::in_file(&file, unreadable(&e))),
        }
    }
    if files.is_empty() && !skipped.is_empty() {
        let problem = Problem::in_file(path, no_skyplan_file(&skipped))
            .with_help("name the config's file or directory with -c PATH, or set SKYPLAN_CONFIG");
        return Err(ConfigError::new(vec![problem]));
    }
    problems.into_result((path.to_path_buf(), files))
}

/// A file of another tool in a config directory, not read: `-v` says which and why.
fn skip(file: PathBuf, names: Vec<String>) -> (PathBuf, Vec<String>) {
    tracing::info!(
        file = %file.display(),
        tables = names.join(", "),
        "config: skipped a file that is not skyplan's (none of its top-level tables is)"
    );
    (file, names)
}

/// Whether a file of a config directory is skyplan's: one of its top-level tables or keys is
/// one of skyplan's, or it writes none (an empty file). Else the names it writes, for saying
/// why it is skipped. A file mixing skyplan's tables with others is skyplan's, so that the
/// parser reports the others: a misspelt table is never silently skipped.
fn skyplan_file(text: &str) -> Result<(), Vec<String>> {
    // A text the scan cannot read is read, and the parser says what is wrong with it.
    let Some(names) = super::pieces::top_level_names(text) else {
        return Ok(());
    };
    let ours = |name: &String| TOP_LEVEL_NAMES.contains(&name.as_str());
    match names.is_empty() || names.iter().any(ours) {
        true => Ok(()),
        false => Err(names),
    }
}

fn no_skyplan_file(skipped: &[(PathBuf, Vec<String>)]) -> String {
    let files: Vec<_> = (skipped.iter())
        .map(|(path, names)| {
            let name = path.file_name().unwrap_or(path.as_os_str());
            format!("{} ([{}])", name.to_string_lossy(), names.join("], ["))
        })
        .collect();
    format!(
        "no skyplan file in this directory: {} {} another tool's (none of its top-level tables is skyplan's: {})",
        files.join(", "),
        if skipped.len() == 1 { "is" } else { "are each" },
        TOP_LEVEL_NAMES.join(", ")
    )
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
    fn a_directory_skips_the_files_of_other_tools_but_not_one_mixing_tables() {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            ("Cargo.toml", "[package]\nname = \"x\"\n[dependencies]\n"),
            ("pyproject.toml", "[tool.black]\nline-length = 99\n"),
            ("netlify.toml", "[build]\ncommand = \"make\"\n"),
            ("sky.toml", "[settings]\n"),
            ("typo.toml", "[package]\n[load-balancer.x]\n"),
        ];
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let (_, files) = read_sources(dir.path()).unwrap();
        let names: Vec<_> = files.iter().map(|f| f.path.file_name().unwrap()).collect();
        assert_eq!(names, ["sky.toml", "typo.toml"]);
    }

    #[test]
    fn a_directory_of_other_tools_files_only_is_an_error_naming_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "[package]\n[lib]\n").unwrap();
        let error = read_sources(dir.path()).unwrap_err();
        let line = &error.lines()[0];
        assert!(
            line.contains(": no skyplan file in this directory: Cargo.toml ([package], [lib]) is another tool's"),
            "{line}"
        );
        let named = dir.path().join("Cargo.toml");
        let (_, files) = read_sources(&named).unwrap();
        assert_eq!(files.len(), 1, "a file named explicitly is always read");
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
