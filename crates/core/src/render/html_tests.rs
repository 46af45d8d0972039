use super::super::fixture::{dependencies, reviewed};
use super::*;

#[test]
fn plan_page() {
    insta::assert_snapshot!(render_plan_html(&reviewed(), &dependencies()));
}

#[test]
fn the_page_is_self_contained() {
    let page = render_plan_html(&reviewed(), &dependencies());
    for outside in [
        "<script", "<link", "src=", "@import", "url(http", "https://",
    ] {
        assert!(!page.contains(outside), "{outside} in the page");
    }
    // The one URL is the SVG namespace, which is a name and never fetched.
    assert_eq!(page.matches("http://").count(), 1);
}

#[test]
fn every_text_is_escaped() {
    let mut view = reviewed();
    view.changes[0].address = "load-balancer.<b>\"x\"&".to_string();
    view.changes[0].operations[0] = "<img src=x onerror=alert(1)>".to_string();
    let page = render_plan_html(&view, &dependencies());
    assert!(
        !page.contains("<b>\"x\"") && !page.contains("<img"),
        "{page}"
    );
    assert!(page.contains("load-balancer.&lt;b&gt;&quot;x&quot;&amp;"));
    assert!(page.contains("&lt;img src=x onerror=alert(1)&gt;"));
}

#[test]
fn every_change_has_its_details_and_a_no_op_only_its_node() {
    let page = render_plan_html(&reviewed(), &dependencies());
    assert_eq!(page.matches("<details data-address=").count(), 3);
    assert!(!page.contains("<details data-address=\"load-balancer.docs\""));
    assert!(page.contains("data-address=\"load-balancer.docs\" data-action=\"no-op\""));
}
