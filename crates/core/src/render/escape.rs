//! Escaping shared by the formats that embed text from the config or the cloud: Markdown (drift
//! and plan comments), HTML, and GitHub workflow commands. One place, so that a value cannot
//! break a table, inject markup or end a workflow command in one format and not another.

/// An inline Markdown code span that holds any text: its fence is longer than any run of
/// backticks in it, and a space keeps a leading or trailing backtick from joining the fence.
pub(super) fn code(s: &str) -> String {
    let fence = "`".repeat(longest_backtick_run(s) + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// A fenced Markdown code block around `s`: the fence is longer than any backtick run inside.
pub(super) fn code_block(language: &str, s: &str) -> String {
    let fence = "`".repeat(longest_backtick_run(s).max(2) + 1);
    format!("{fence}{language}\n{s}\n{fence}")
}

fn longest_backtick_run(s: &str) -> usize {
    s.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// A Markdown table cell: GFM splits cells at `|` even inside code spans, and a line break
/// ends the row.
pub(super) fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\r', '\n'], " ")
}

/// Plain text that Markdown and the HTML inside it leave as it is.
pub(super) fn markdown_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Text inside an HTML element or attribute value, where Markdown does not apply.
pub(super) fn html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// The message of a GitHub workflow command: `%`, CR and LF would end or garble the command.
pub(super) fn workflow_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value, where `:` and `,` would also end the value early.
pub(super) fn workflow_property(s: &str) -> String {
    workflow_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_hold_backticks() {
        assert_eq!(code("plain"), "`plain`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x`"), "`` `x` ``");
    }

    #[test]
    fn code_blocks_outlast_the_backticks_inside() {
        assert_eq!(code_block("json", "1"), "```json\n1\n```");
        assert_eq!(code_block("", "a ```` b"), "`````\na ```` b\n`````");
    }

    #[test]
    fn cells_cannot_split_the_row() {
        assert_eq!(cell("a|b\nc"), "a\\|b c");
    }

    #[test]
    fn text_is_not_markup() {
        assert_eq!(
            markdown_text("<b>*x*</b> & _y_"),
            "&lt;b&gt;\\*x\\*&lt;/b&gt; &amp; \\_y\\_"
        );
        assert_eq!(
            html("<a href=\"x\" title='y'>&"),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;"
        );
    }

    #[test]
    fn workflow_escaping_follows_the_runner() {
        assert_eq!(workflow_data("50%\r\n: ,"), "50%25%0D%0A: ,");
        assert_eq!(workflow_property("a%b:c,d\n"), "a%25b%3Ac%2Cd%0A");
    }
}
