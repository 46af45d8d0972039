//! The drift report as JUnit XML, the test-report format that CI dashboards read (GitHub
//! test-report actions, GitLab `artifacts:reports:junit`, Jenkins `junit`): one test suite,
//! one test case per resource (`classname` the provider, `name` the address), and a failure
//! for each resource that drifted or went missing. quick-xml escapes every attribute and text;
//! characters XML 1.0 cannot carry at all are replaced first.

use std::borrow::Cow;

use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::Writer;

use super::{DriftReport, DriftResource};
use crate::provider::discover::Unmanaged;
use crate::render::discovery::one_line;

const SUITE: &str = "skyplan drift";

pub fn render_drift_junit(report: &DriftReport) -> String {
    let mut writer = Writer::new_with_indent(Vec::new(), b' ', 2);
    // Writing into a Vec cannot fail: the io::Result is only there for other writers.
    write_report(&mut writer, report).expect("writing XML into memory");
    let mut xml = String::from_utf8(writer.into_inner()).expect("quick-xml writes UTF-8");
    xml.push('\n');
    xml
}

fn write_report(writer: &mut Writer<Vec<u8>>, report: &DriftReport) -> std::io::Result<()> {
    let unmanaged = report.unmanaged();
    let tests = (report.resources.len() + unmanaged.len()).to_string();
    let failures = (report.drifted().count() + unmanaged.len()).to_string();
    let counts = [
        ("tests", tests.as_str()),
        ("failures", failures.as_str()),
        ("errors", "0"),
        ("skipped", "0"),
    ];
    writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    writer
        .create_element("testsuites")
        .with_attribute(("name", SUITE))
        .with_attributes(counts)
        .write_inner_content(|w| {
            w.create_element("testsuite")
                .with_attribute(("name", SUITE))
                .with_attributes(counts)
                .write_inner_content(|w| {
                    report
                        .resources
                        .iter()
                        .try_for_each(|r| write_testcase(w, r))?;
                    unmanaged
                        .iter()
                        .try_for_each(|o| write_unmanaged_case(w, o))
                })?;
            Ok(())
        })?;
    Ok(())
}

fn write_testcase(writer: &mut Writer<Vec<u8>>, resource: &DriftResource) -> std::io::Result<()> {
    let file = resource.file.display().to_string();
    let line = resource.line.to_string();
    let testcase = writer
        .create_element("testcase")
        .with_attribute(("classname", xml_chars(&resource.provider).as_ref()))
        .with_attribute(("name", xml_chars(&resource.address).as_ref()))
        // Not in the old JUnit schema, but read by GitLab and the GitHub report actions to
        // link the case to the resource's table; other readers ignore unknown attributes.
        .with_attribute(("file", xml_chars(&file).as_ref()))
        .with_attribute(("line", line.as_str()));
    if !resource.has_drift() {
        testcase.write_empty()?;
        return Ok(());
    }
    let details: Vec<String> = resource
        .items
        .iter()
        .map(|i| {
            if i.is_whole_resource() {
                i.one_line()
            } else {
                format!("{}\n    {}", i.one_line(), i.reason)
            }
        })
        .collect();
    testcase.write_inner_content(|w| {
        w.create_element("failure")
            .with_attribute(("message", xml_chars(&resource.verdict()).as_ref()))
            .with_attribute(("type", "drift"))
            .write_text_content(BytesText::new(&xml_chars(&details.join("\n"))))?;
        Ok(())
    })?;
    Ok(())
}

/// An unmanaged object is a failing case of its own: classname its provider, name what it
/// would be adopted as.
fn write_unmanaged_case(writer: &mut Writer<Vec<u8>>, object: &Unmanaged) -> std::io::Result<()> {
    let name = format!("unmanaged {}", object.address);
    writer
        .create_element("testcase")
        .with_attribute(("classname", xml_chars(&object.provider).as_ref()))
        .with_attribute(("name", xml_chars(&name).as_ref()))
        .write_inner_content(|w| {
            w.create_element("failure")
                .with_attribute(("message", "not managed by the config"))
                .with_attribute(("type", "unmanaged"))
                .write_text_content(BytesText::new(&xml_chars(&one_line(object))))?;
            Ok(())
        })?;
    Ok(())
}

/// XML 1.0 has no escape for most control characters (nor for lone surrogates, which Rust
/// strings cannot hold): a report carrying one would not parse, so it becomes U+FFFD.
fn xml_chars(s: &str) -> Cow<'_, str> {
    let allowed = |c: char| {
        matches!(c, '\t' | '\n' | '\r')
            || ('\u{20}'..='\u{D7FF}').contains(&c)
            || ('\u{E000}'..='\u{FFFD}').contains(&c)
            || c >= '\u{10000}'
    };
    if s.chars().all(allowed) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .map(|c| if allowed(c) { c } else { '\u{FFFD}' })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_replaced_and_the_rest_kept() {
        assert_eq!(xml_chars("a\u{1}b\u{FFFE}"), "a\u{FFFD}b\u{FFFD}");
        assert!(matches!(xml_chars("tab\there é 🚀"), Cow::Borrowed(_)));
    }
}
