//! Where a large config file can be cut so that its pieces parse on every core.
//!
//! A TOML parser reads a file from its first byte to its last on one thread, and this one
//! first lexes the whole file into a vector of tokens and then of events: for a file of
//! thousands of load balancers that was the largest part of loading it (issue 9), most of it
//! the kernel handing out fresh pages for those vectors as they grew. Cut into pieces of a few
//! tens of kilobytes, the file parses on every core, and each thread reuses the memory of its
//! previous piece. A piece starts at a table header of a named section,
//! `[load-balancer.NAME]`: everything up to the next cut belongs to that entry or to another
//! top-level table. The scan here only finds the cuts; the parser (`parse::parse_in_pieces`)
//! checks that no table is split between two pieces and otherwise parses the file whole, so a
//! cut in the wrong place can cost time but never change meaning.

use std::ops::Range;

use serde_spanned::Spanned;
use toml::de::{DeTable, DeValue};

/// About how long a piece is: small enough that its token vectors stay in memory the
/// allocator already has, large enough that a piece's fixed costs do not count.
const PIECE_BYTES: usize = 32 * 1024;

/// The byte ranges of the pieces `text` is cut into, each but the first starting at a header
/// of a `named_sections` entry. One range (the whole text) when it should not be cut: it is
/// short, or a header names a named section itself (`[load-balancer]`), whose entries could
/// then be written in any piece.
pub fn cut(text: &str, named_sections: &[&str]) -> Vec<Range<usize>> {
    let whole = std::iter::once(0..text.len()).collect();
    let pieces = text.len() / PIECE_BYTES;
    if pieces < 2 {
        return whole;
    }
    let Some(headers) = table_headers(text) else {
        return whole;
    };
    let mut candidates = Vec::new();
    for &start in &headers {
        let path = header_path(text, start);
        match path.as_slice() {
            [section] if named_sections.contains(section) => return whole,
            [section, _, ..] if named_sections.contains(section) => candidates.push(start),
            _ => {}
        }
    }
    let mut starts = vec![0];
    for k in 1..pieces {
        let target = text.len() * k / pieces;
        let at = candidates.partition_point(|&start| start < target);
        if let Some(&start) = candidates.get(at) {
            if start > *starts.last().expect("starts with 0") {
                starts.push(start);
            }
        }
    }
    let ends = starts.iter().skip(1).copied().chain([text.len()]);
    starts.iter().zip(ends).map(|(&s, e)| s..e).collect()
}

/// A table parsed from the piece that starts `offset` bytes into the file, with every span
/// moved by `offset`: the parser counts from the start of the piece, errors and locations
/// from the start of the file.
pub fn placed_at(table: DeTable<'_>, offset: usize) -> DeTable<'_> {
    table
        .into_iter()
        .map(|(key, value)| (moved(key, offset), value_placed_at(value, offset)))
        .collect()
}

fn value_placed_at(value: Spanned<DeValue<'_>>, offset: usize) -> Spanned<DeValue<'_>> {
    let span = value.span();
    let inner = match value.into_inner() {
        DeValue::Table(table) => DeValue::Table(placed_at(table, offset)),
        DeValue::Array(mut items) => {
            // In place: the array keeps whether it is an array of tables.
            for item in items.iter_mut() {
                let taken = std::mem::replace(item, Spanned::new(0..0, DeValue::Boolean(false)));
                *item = value_placed_at(taken, offset);
            }
            DeValue::Array(items)
        }
        scalar => scalar,
    };
    Spanned::new(span.start + offset..span.end + offset, inner)
}

fn moved<T>(spanned: Spanned<T>, offset: usize) -> Spanned<T> {
    let span = spanned.span();
    Spanned::new(span.start + offset..span.end + offset, spanned.into_inner())
}

/// The offsets of the lines that start a standard table header (`[a.b]`, not `[[a.b]]`).
/// None when the text ends inside a string or with brackets unbalanced (the parser will say
/// what is wrong).
fn table_headers(text: &str) -> Option<Vec<usize>> {
    let bytes = text.as_bytes();
    let starts = statement_starts(text)?;
    let is_header = |&at: &usize| {
        let first = at + indent(&bytes[at..]);
        bytes.get(first) == Some(&b'[') && bytes.get(first + 1) != Some(&b'[')
    };
    Some(starts.into_iter().filter(is_header).collect())
}

/// The offsets of the lines that start a statement (a header, `key = value`, a comment or
/// nothing): every line but those inside a string or inside an array or inline table left
/// open by an earlier line. None when the text ends inside a string or with brackets
/// unbalanced.
fn statement_starts(text: &str) -> Option<Vec<usize>> {
    let bytes = text.as_bytes();
    let mut starts = Vec::new();
    let mut depth: i64 = 0;
    let mut i = 0;
    let mut line_start = true;
    while i < bytes.len() {
        if line_start {
            line_start = false;
            if depth == 0 {
                starts.push(i);
            }
            i += indent(&bytes[i..]);
            continue;
        }
        match bytes[i] {
            b'\n' => {
                line_start = true;
                i += 1;
            }
            b'#' => i = end_of_line(bytes, i),
            b'"' if bytes[i..].starts_with(b"\"\"\"") => i = end_of_multiline(bytes, i, b'"')?,
            b'\'' if bytes[i..].starts_with(b"\'\'\'") => i = end_of_multiline(bytes, i, b'\'')?,
            b'"' => i = end_of_string(bytes, i, true)?,
            b'\'' => i = end_of_string(bytes, i, false)?,
            b'[' | b'{' => {
                depth += 1;
                i += 1;
            }
            b']' | b'}' => {
                depth -= 1;
                if depth < 0 {
                    return None;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    (depth == 0).then_some(starts)
}

/// The spaces and tabs a line starts with.
fn indent(line: &[u8]) -> usize {
    line.iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count()
}

/// The first key of every top-level table and key the text writes: `package` for
/// `[package]`, `[[package.metadata]]` or `package.name = …` before any header; `tool` for
/// `[tool.poetry]`. Read by a scan, not a parse, so that deciding whether a file is
/// skyplan's costs little beside parsing it. None when the scan cannot tell (the text ends
/// inside a string or with brackets unbalanced).
pub fn top_level_names(text: &str) -> Option<Vec<String>> {
    let mut names = Vec::new();
    let mut in_root = true;
    for start in statement_starts(text)? {
        let line = text[start..].trim_start_matches([' ', '\t']);
        let line = &line[..line.find('\n').unwrap_or(line.len())];
        if let Some(header) = line.strip_prefix('[') {
            in_root = false;
            let header = header.strip_prefix('[').unwrap_or(header);
            names.extend(first_key(header));
        } else if in_root && !line.starts_with('#') {
            names.extend(first_key(line));
        }
    }
    let mut seen = std::collections::HashSet::new();
    names.retain(|name| seen.insert(name.clone()));
    Some(names)
}

/// The first key of a dotted key at the start of `text` (`a` of `"a".b = 1`, of `a.b]`),
/// unquoted; None for a line without one.
fn first_key(text: &str) -> Option<String> {
    let text = text.trim_start_matches([' ', '\t']);
    for quote in ['"', '\''] {
        if let Some(rest) = text.strip_prefix(quote) {
            return rest.split(quote).next().map(str::to_string);
        }
    }
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .unwrap_or(text.len());
    (end > 0).then(|| text[..end].to_string())
}

/// The offset of the newline ending the line at `from` (or the end of the text).
fn end_of_line(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |at| from + at)
}

/// Past the closing quote of the one-line string opening at `from`; a basic string (`"`)
/// has escapes. None if the line ends first.
fn end_of_string(bytes: &[u8], from: usize, escapes: bool) -> Option<usize> {
    let quote = bytes[from];
    let mut i = from + 1;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' if escapes => i += 2,
            b'\n' => return None,
            _ if b == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Past the closing delimiter of the multi-line string opening at `from` (`"""` or `'''`):
/// the first run of three or more quotes, of which up to two more belong to the string.
fn end_of_multiline(bytes: &[u8], from: usize, quote: u8) -> Option<usize> {
    let mut i = from + 3;
    while let Some(&b) = bytes.get(i) {
        if b == b'\\' && quote == b'"' {
            i += 2;
            continue;
        }
        if b == quote {
            let run = bytes[i..].iter().take_while(|&&c| c == quote).count();
            if run >= 3 {
                return Some(i + run);
            }
            i += run;
            continue;
        }
        i += 1;
    }
    None
}

/// The dotted key of the header at `line`, for a header of bare keys (`[load-balancer.web]`);
/// empty for any other (quoted keys, spaces): such a header is never a cut.
fn header_path(text: &str, line: usize) -> Vec<&str> {
    let header = text[line..].trim_start_matches([' ', '\t']);
    let Some(inner) = header.strip_prefix('[').and_then(|h| h.split(']').next()) else {
        return Vec::new();
    };
    let bare = |key: &&str| {
        !key.is_empty()
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    let path: Vec<&str> = inner.split('.').collect();
    if path.iter().all(bare) {
        path
    } else {
        loose_path(inner)
    }
}

/// A header written with quotes or spaces (`[ "load-balancer" ]`), read loosely: enough to
/// recognise a named section's own header, never used as a cut.
fn loose_path(inner: &str) -> Vec<&str> {
    let key = inner.trim().trim_matches(['"', '\'']);
    if key.contains(['.', '"', '\'']) {
        Vec::new()
    } else {
        vec![key]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMED: [&str; 2] = ["load-balancer", "cluster"];

    fn whole(text: &str) -> Vec<std::ops::Range<usize>> {
        std::iter::once(0..text.len()).collect()
    }

    fn entries(count: usize, extra: &str) -> String {
        let mut text = String::from("[settings]\nstate-dir = \"state\"\n");
        for i in 0..count {
            text.push_str(&format!(
                "[load-balancer.lb{i}]\nzone = \"lpg1\"\n{extra}\n[[load-balancer.lb{i}.ports]]\nport = 80\n"
            ));
        }
        text
    }

    #[test]
    fn the_top_level_names_are_read_from_headers_and_root_keys() {
        let text = "name = \"x\"\n\"quoted\".key = 1\n# comment = 2\n\
                    [package]\nedition = \"2021\"\n[[bin]]\npath = \"a\"\n\
                    [ tool.poetry ]\nlist = [\n  \"[settings]\",\n]\n\
                    text = \"\"\"\n[cluster.x]\n\"\"\"\n[tool.black]\n";
        let names = top_level_names(text).unwrap();
        assert_eq!(names, ["name", "quoted", "package", "bin", "tool"]);
        assert_eq!(top_level_names(""), Some(vec![]));
        assert_eq!(top_level_names("a = \"open\n"), None);
    }

    #[test]
    fn a_small_file_is_one_piece() {
        let text = entries(10, "");
        assert_eq!(cut(&text, &NAMED), whole(&text));
    }

    #[test]
    fn a_large_file_is_cut_at_entry_headers_into_pieces_of_tens_of_kilobytes() {
        let text = entries(10_000, "");
        let pieces = cut(&text, &NAMED);
        assert_eq!(pieces.len(), text.len() / PIECE_BYTES);
        assert_eq!(pieces[0].start, 0);
        assert_eq!(pieces.last().unwrap().end, text.len());
        for pair in pieces.windows(2) {
            assert_eq!(pair[0].end, pair[1].start);
            assert!(text[pair[1].start..].starts_with("[load-balancer.lb"));
        }
    }

    #[test]
    fn headers_inside_strings_and_open_arrays_are_not_cuts() {
        let inside = "note = \"\"\"\n[load-balancer.fake]\n\"\"\"\nlit = '''\n[load-balancer.fake]'''\nxs = [\n[1],\n]\nq = \"[x]\" # [load-balancer.fake]\n";
        let text = entries(10_000, inside);
        let headers = table_headers(&text).unwrap();
        assert!(headers
            .iter()
            .all(|&h| !text[h..].starts_with("[load-balancer.fake]")
                && !text[h..].starts_with("[1]")));
        for piece in cut(&text, &NAMED).iter().skip(1) {
            assert!(text[piece.start..].starts_with("[load-balancer.lb"));
        }
    }

    #[test]
    fn quotes_at_the_end_of_a_multiline_string_belong_to_it() {
        let text = "a = \"\"\"x\"\"\"\"\"\n[b.c]\nd = '''y'''''\n[e.f]\n";
        let headers = table_headers(text).unwrap();
        assert_eq!(
            headers
                .iter()
                .map(|&h| header_path(text, h))
                .collect::<Vec<_>>(),
            [vec!["b", "c"], vec!["e", "f"]]
        );
    }

    #[test]
    fn a_named_section_header_of_its_own_keeps_the_file_whole() {
        for header in ["[load-balancer]", "[ \"load-balancer\" ]"] {
            let text = format!("{}{header}\nx.zone = \"lpg1\"\n", entries(10_000, ""));
            assert_eq!(cut(&text, &NAMED), whole(&text), "{header}");
        }
    }

    #[test]
    fn an_unterminated_string_or_bracket_keeps_the_file_whole() {
        for broken in ["x = \"open\n", "x = '''open\n", "x = [1, 2\n", "x = 1]\n"] {
            let text = format!("{}{broken}", entries(10_000, ""));
            assert_eq!(cut(&text, &NAMED), whole(&text), "{broken}");
        }
    }
}
