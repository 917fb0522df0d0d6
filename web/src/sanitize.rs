//! Predicted pages are untrusted model output. They are shown only inside `<iframe sandbox="">`
//! (no scripts, an opaque origin) as `srcdoc`, and before that they are rebuilt here from the
//! parsed DOM, so that even a browser that ignored the sandbox would run nothing:
//!
//! - elements that run or embed code or other documents (`script`, `iframe`, `object`,
//!   `embed`, `frame`, `base`, `link`, `meta`, …) are dropped with their subtrees;
//! - `on*` event handlers, `srcdoc`, `formaction` and `http-equiv` attributes are dropped;
//! - URL attributes whose scheme is not `http`, `https`, `mailto`, `#…` or relative (so
//!   `javascript:`, `vbscript:`, `data:` other than images) are dropped;
//! - attributes longer than [`MAX_ATTR`] bytes are dropped, text runs are cut at [`MAX_TEXT`];
//! - a Content-Security-Policy `<meta>` that forbids every fetch and script leads the output.
//!
//! The output is written from the tree, every text and attribute value escaped, so nothing of
//! the input's markup survives as markup.

use std::collections::HashMap;

use agentworld_world::state::StateTree;

/// Attribute values longer than this (bytes) are dropped.
pub const MAX_ATTR: usize = 2048;
/// Text runs longer than this (bytes) are cut.
pub const MAX_TEXT: usize = 20_000;

/// Leads every sanitised document: no fetches, no scripts, inline styles allowed.
const CSP: &str = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
style-src 'unsafe-inline'; img-src data:; form-action 'none'\">";

/// Elements dropped with everything under them.
const DROPPED: &[&str] = &[
    "script", "noscript", "iframe", "frame", "frameset", "object", "embed", "applet", "base",
    "link", "meta", "portal", "template", "svg", "math", "audio", "video", "source", "track",
];

/// Elements with no closing tag.
const VOID: &[&str] = &[
    "area", "br", "col", "hr", "img", "input", "wbr", "param", "keygen",
];

/// Attributes whose value is a URL.
const URL_ATTRS: &[&str] = &[
    "href",
    "src",
    "action",
    "formaction",
    "xlink:href",
    "poster",
    "background",
    "cite",
    "longdesc",
    "ping",
    "srcset",
    "data",
    "codebase",
];

/// Why the page was changed, shown beside it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Elements removed (with their subtrees), by tag.
    pub dropped_elements: Vec<String>,
    /// Attributes removed, as `tag[attr]`.
    pub dropped_attributes: Vec<String>,
}

impl Report {
    /// Whether nothing was removed.
    pub fn is_clean(&self) -> bool {
        self.dropped_elements.is_empty() && self.dropped_attributes.is_empty()
    }

    /// One line for the page: `removed: script ×2, a[onclick]`.
    pub fn summary(&self) -> String {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for s in self.dropped_elements.iter().chain(&self.dropped_attributes) {
            match counts.iter_mut().find(|(k, _)| k == s) {
                Some((_, n)) => *n += 1,
                None => counts.push((s.clone(), 1)),
            }
        }
        let parts: Vec<String> = counts
            .into_iter()
            .map(|(k, n)| if n > 1 { format!("{k} ×{n}") } else { k })
            .collect();
        format!("made inert: {}", parts.join(", "))
    }
}

/// Escapes text for an HTML text node.
fn escape_text(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
}

/// Escapes text for a double-quoted attribute value.
fn escape_attr(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
}

/// Whether a URL attribute's value is safe to keep.
fn safe_url(name: &str, value: &str) -> bool {
    // Browsers ignore ASCII whitespace and control characters inside a scheme.
    let squeezed: String = value
        .chars()
        .filter(|c| !c.is_ascii_whitespace() && !c.is_control())
        .take(16)
        .collect::<String>()
        .to_ascii_lowercase();
    if name == "src" && squeezed.starts_with("data:image/") {
        return true;
    }
    match squeezed.find(':') {
        None => true,
        Some(colon) => {
            let scheme = &squeezed[..colon];
            // A colon after `/`, `?` or `#` is not a scheme.
            scheme.contains(['/', '?', '#'])
                || matches!(scheme, "http" | "https" | "mailto" | "tel")
        }
    }
}

/// Whether an attribute is kept.
fn keep_attr(name: &str, value: &str) -> bool {
    let n = name.to_ascii_lowercase();
    if n.starts_with("on")
        || matches!(n.as_str(), "srcdoc" | "http-equiv" | "formaction" | "is")
        || value.len() > MAX_ATTR
        || !n
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
    {
        return false;
    }
    if URL_ATTRS.contains(&n.as_str()) {
        return safe_url(&n, value);
    }
    if n == "style" {
        let v = value.to_ascii_lowercase();
        return !(v.contains("url(") || v.contains("expression(") || v.contains("javascript:"));
    }
    true
}

/// Per node of the tree, a change mark (`data-aw-change` value) to highlight it.
pub type Marks = HashMap<usize, &'static str>;

/// The CSS that shows change marks.
const MARK_CSS: &str = "<style>[data-aw-change]{outline:3px solid #e8a400!important;\
outline-offset:1px}[data-aw-change=inserted]{outline-color:#1a9c4a!important}\
[data-aw-change=removed]{outline-color:#d23c3c!important;opacity:.75}\
[data-aw-selected]{outline:3px dashed #2f6fdf!important}</style>";

/// Rebuilds the page in `tree` (an `html` state) as a safe `srcdoc` document. Nodes in `marks`
/// get a `data-aw-change` attribute (drawn by a built-in style); `selected` gets
/// `data-aw-selected`.
pub fn srcdoc(tree: &StateTree, marks: &Marks, selected: Option<usize>) -> (String, Report) {
    let mut out = String::with_capacity(4096);
    let mut report = Report::default();
    out.push_str("<!DOCTYPE html>");
    out.push_str(CSP);
    out.push_str(MARK_CSS);
    // Open elements: (depth, tag).
    let mut open: Vec<(usize, String)> = Vec::new();
    let mut skip_below: Option<usize> = None;
    let mut raw_text: Option<usize> = None;
    let mut verbatim: Option<usize> = None;
    for (i, n) in tree.nodes.iter().enumerate() {
        if let Some(d) = skip_below {
            if n.depth > d {
                continue;
            }
            skip_below = None;
        }
        while open.last().is_some_and(|(d, _)| *d >= n.depth) {
            let (_, tag) = open.pop().unwrap_or_default();
            out.push_str("</");
            out.push_str(&tag);
            out.push('>');
        }
        if raw_text.is_some_and(|d| n.depth <= d) {
            raw_text = None;
        }
        if verbatim.is_some_and(|d| n.depth <= d) {
            verbatim = None;
        }
        if n.role == "#text" {
            let text = cut(&n.text, MAX_TEXT);
            if raw_text.is_some() {
                // Inside <style>: the text may not close the element early.
                out.push_str(&text.replace("</", "<\\/"));
            } else if verbatim.is_some() {
                escape_text(text, &mut out);
            } else {
                // The parser trims text runs; a space between a run and an inline sibling
                // comes back (a browser drops it again at block edges).
                let (before, after) = siblings(tree, i);
                if before && !text.starts_with(['.', ',', ';', ':', '!', '?', ')']) {
                    out.push(' ');
                }
                escape_text(text, &mut out);
                if after {
                    out.push(' ');
                }
            }
            continue;
        }
        let tag = n.role.to_ascii_lowercase();
        let valid = !tag.is_empty()
            && tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && tag.starts_with(|c: char| c.is_ascii_alphabetic());
        if !valid || DROPPED.contains(&tag.as_str()) {
            report.dropped_elements.push(tag);
            skip_below = Some(n.depth);
            continue;
        }
        if matches!(tag.as_str(), "html" | "head" | "body") {
            // The document shell is ours; keep its attributes out (they could be handlers).
            open.push((n.depth, tag.clone()));
            out.push('<');
            out.push_str(&tag);
            out.push('>');
            continue;
        }
        out.push('<');
        out.push_str(&tag);
        for (k, v) in &n.attributes {
            if k.starts_with("data-aw-") {
                continue;
            }
            if keep_attr(k, v) {
                out.push(' ');
                out.push_str(&k.to_ascii_lowercase());
                out.push_str("=\"");
                escape_attr(v, &mut out);
                out.push('"');
            } else {
                report.dropped_attributes.push(format!("{tag}[{k}]"));
            }
        }
        if let Some(m) = marks.get(&i) {
            out.push_str(" data-aw-change=\"");
            out.push_str(m);
            out.push('"');
        }
        if selected == Some(i) {
            out.push_str(" data-aw-selected=\"\"");
        }
        out.push('>');
        if VOID.contains(&tag.as_str()) {
            skip_below = Some(n.depth);
            continue;
        }
        if tag == "style" {
            raw_text = Some(n.depth);
        }
        if verbatim.is_none()
            && matches!(tag.as_str(), "pre" | "textarea" | "listing" | "plaintext")
        {
            verbatim = Some(n.depth);
        }
        open.push((n.depth, tag));
    }
    while let Some((_, tag)) = open.pop() {
        out.push_str("</");
        out.push_str(&tag);
        out.push('>');
    }
    (out, report)
}

/// Whether leaf node `i` has a sibling before it and one after it.
fn siblings(tree: &StateTree, i: usize) -> (bool, bool) {
    let parent = tree.nodes[i].parent;
    let before = i > 0 && parent != Some(i - 1);
    let after = tree.nodes.get(i + 1).is_some_and(|m| m.parent == parent);
    (before, after)
}

/// `s` cut to at most `max` bytes on a character boundary.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentworld_world::state::Registry;

    fn clean(html: &str) -> (String, Report) {
        let tree = Registry::standard().parse("html", html).unwrap().tree;
        srcdoc(&tree, &Marks::new(), None)
    }

    #[test]
    fn scripts_handlers_and_urls_are_inert() {
        let (out, report) = clean(
            "<html><head><script>alert(1)</script><base href='http://x'></head><body>\
             <p onclick=\"alert(2)\" ONMOUSEOVER=x>hi <b>there</b></p>\
             <a href=\" java\tscript:alert(3)\">a</a><a href=\"/ok\">b</a>\
             <iframe srcdoc=\"<script>alert(4)</script>\"></iframe>\
             <img src=\"data:image/png;base64,AA\" onerror=\"alert(5)\">\
             <div style=\"background:url(javascript:alert(6))\">s</div>\
             <form action=\"javascript:alert(7)\"><button formaction=\"javascript:1\">go</button></form>\
             <svg><script>alert(8)</script></svg></body></html>",
        );
        for bad in [
            "alert",
            "script",
            "onclick",
            "onmouseover",
            "onerror",
            "javascript",
            "<iframe",
        ] {
            assert!(!out.to_ascii_lowercase().contains(bad), "{bad} in {out}");
        }
        assert!(out.contains("<p>hi <b>there</b></p>"), "{out}");
        let (spaced, _) = clean("<p><b>a</b> and <i>b</i>. <pre>  x\n y </pre>");
        assert!(
            spaced.contains("<p><b>a</b> and <i>b</i>.</p><pre>  x\n y </pre>"),
            "{spaced}"
        );
        assert!(out.contains("<a href=\"/ok\">b</a>"), "{out}");
        assert!(out.contains("src=\"data:image/png;base64,AA\""), "{out}");
        assert!(out.contains("Content-Security-Policy"));
        assert!(report.dropped_elements.contains(&"script".to_string()));
        assert!(
            report.summary().contains("p[onclick]"),
            "{}",
            report.summary()
        );
    }

    #[test]
    fn huge_attributes_dropped_and_text_escaped() {
        let big = "x".repeat(MAX_ATTR + 1);
        let (out, report) = clean(&format!(
            "<div title=\"{big}\" bid=\"7\">&lt;script&gt; &amp; \"q\"</div><style>p{{color:red}}</style>"
        ));
        assert!(!out.contains(&big));
        assert!(out.contains("bid=\"7\""));
        assert!(out.contains("&lt;script&gt; &amp; \"q\""), "{out}");
        assert!(out.contains("<style>p{color:red}</style>"), "{out}");
        assert_eq!(report.dropped_attributes, ["div[title]"]);
    }

    #[test]
    fn marks_and_void_elements() {
        let tree = Registry::standard()
            .parse("html", "<p>a<br>b<input bid=\"3\" value=\"v\">c</p>")
            .unwrap()
            .tree;
        let input = tree.find_key("3")[0];
        let marks = Marks::from([(input, "inserted")]);
        let (out, _) = srcdoc(&tree, &marks, Some(input));
        assert!(
            out.contains("<p>a <br> b <input bid=\"3\" value=\"v\" data-aw-change=\"inserted\" data-aw-selected=\"\"> c</p>"),
            "{out}"
        );
    }
}
