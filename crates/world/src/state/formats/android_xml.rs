//! Android XML (uiautomator dumps and Appium page source) into the common tree, through the
//! existing strict reader ([`parse_xml`]) and, when the XML is not well formed, a lenient one.
//!
//! A well-formed dump goes through [`parse_xml`] and [`AndroidTree::to_state_tree`], so the
//! common tree is exactly the Android tree (its warnings kept). A malformed dump (cut short,
//! unbalanced, broken attributes) is re-read with the tolerant XML reader: the error becomes the
//! first warning, every element that could be read is kept, `<hierarchy>` elements are
//! containers, and attributes are mapped as the strict reader maps them.

use super::super::read::xml::{self, XmlElement};
use crate::Result;
use crate::state::android::{AndroidNode, AndroidTree, Bounds, SourceFormat, parse_xml};
use crate::state::{ParsedState, Warning};

/// Reads a uiautomator dump or Appium page source; the tree's format says which it was.
pub fn parse_android_xml(text: &str) -> Result<ParsedState> {
    match parse_xml(text) {
        Ok(parsed) => ParsedState::new(
            parsed.tree.to_state_tree(),
            parsed.warnings,
            text,
            "no UI node",
        ),
        Err(strict) => {
            let doc = xml::read(text);
            let mut warnings = vec![Warning::at_start(format!(
                "not well-formed ({strict}); read leniently"
            ))];
            warnings.extend(doc.warnings);
            let tree = lenient_tree(&doc.elements, &mut warnings);
            ParsedState::new(tree.to_state_tree(), warnings, text, "no UI node")
        }
    }
}

/// An Android tree from leniently read elements.
fn lenient_tree(elements: &[XmlElement], warnings: &mut Vec<Warning>) -> AndroidTree {
    let mut tree = AndroidTree {
        source: SourceFormat::Uiautomator,
        ..AndroidTree::default()
    };
    // depth[i] = number of node ancestors of element i (hierarchy elements are containers).
    let mut depth: Vec<usize> = Vec::with_capacity(elements.len());
    for e in elements {
        let is_node = |e: &XmlElement| e.name != "hierarchy";
        let d = match e.parent {
            Some(p) => depth[p] + usize::from(is_node(&elements[p])),
            None => 0,
        };
        depth.push(d);
        if !is_node(e) {
            if tree.root_attributes.is_empty() {
                tree.root_attributes = e.attrs.clone();
            }
            continue;
        }
        if e.name != "node" {
            tree.source = SourceFormat::Appium;
        }
        tree.nodes.push(node(e, d, warnings));
    }
    tree
}

/// One node, with the attribute mapping of the strict reader.
fn node(e: &XmlElement, depth: usize, warnings: &mut Vec<Warning>) -> AndroidNode {
    let mut n = AndroidNode {
        depth,
        ..AndroidNode::default()
    };
    let mut warn = |message: String| {
        warnings.push(Warning {
            line: e.line,
            column: 0,
            message,
        })
    };
    for (key, value) in &e.attrs {
        match key.as_str() {
            "class" => n.class = value.clone(),
            "text" => n.text = value.clone(),
            "content-desc" => n.content_desc = value.clone(),
            "resource-id" => n.resource_id = value.clone(),
            "package" => n.package = value.clone(),
            "bounds" => match Bounds::parse(value) {
                Some(b) => n.bounds = Some(b),
                None => warn(format!("malformed bounds {value:?} dropped")),
            },
            _ => {
                let parsed = match value.as_str() {
                    "true" => Some(true),
                    "false" => Some(false),
                    _ => None,
                };
                match (n.flags.get_mut(key), parsed) {
                    (Some(flag), Some(v)) => *flag = v,
                    (Some(_), None) => {
                        warn(format!("{key}={value:?} is not a boolean; default kept"))
                    }
                    (None, _) => n.extra.push((key.clone(), value.clone())),
                }
            }
        }
    }
    if n.class.is_empty() && e.name != "node" {
        n.class = e.name.clone();
    }
    n
}

/// Detection shared by the two Android XML parsers: (has `<hierarchy`, has `<node `, has
/// class-name tags such as `<android.widget.`), looked for in the first 4 KiB.
pub(crate) fn markers(text: &str) -> (bool, bool, bool) {
    let h = super::head(text, 4096);
    (
        h.contains("<hierarchy"),
        h.contains("<node ") || h.contains("<node>"),
        h.contains("<android.") || h.contains("<androidx."),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_then_lenient() {
        let ok =
            parse_android_xml(r#"<hierarchy><node class="A"><node class="B"/></node></hierarchy>"#)
                .unwrap();
        assert_eq!((ok.tree.format.as_str(), ok.tree.len()), ("uiautomator", 2));
        assert!(ok.warnings.is_empty());
        let cut = parse_android_xml(r#"<hierarchy rotation="1"><node class="A" bounds="[0,0][5,5]"><node class="B" checked="maybe"/><node class="C" tex"#).unwrap();
        assert_eq!(cut.tree.len(), 2);
        assert_eq!(
            cut.tree.attributes,
            [("rotation".to_string(), "1".to_string())]
        );
        assert!(cut.warnings[0].message.contains("read leniently"));
        assert!(
            cut.warnings
                .iter()
                .any(|w| w.message.contains("not a boolean"))
        );
        let appium = parse_android_xml(
            "<hierarchy><android.widget.FrameLayout><android.widget.Button text=\"OK\">",
        )
        .unwrap();
        assert_eq!(appium.tree.format, "appium");
        assert_eq!(appium.tree.nodes[1].role, "android.widget.Button");
        assert_eq!(appium.tree.nodes[1].depth, 1);
        assert!(parse_android_xml("garbage").is_err());
    }
}
