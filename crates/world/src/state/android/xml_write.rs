//! Writing a tree back as a uiautomator dump.

use super::AndroidTree;

/// Writes `tree` as a one-line uiautomator dump (`<hierarchy>` with `<node>` elements).
///
/// Attributes come in uiautomator's order: `index` (the node's own `index` extra, else its
/// position among its siblings), text, resource-id, class, package, content-desc, the ten
/// flags, bounds (omitted when unknown), then the remaining extras in their order. Newlines,
/// tabs and carriage returns in values are written as character references so that they survive
/// attribute-value normalisation when read back. Trees read from Appium page source come out
/// in uiautomator form.
pub fn to_uiautomator_xml(tree: &AndroidTree) -> String {
    let mut out =
        String::from("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy");
    if tree.root_attributes.is_empty() {
        out.push_str(" rotation=\"0\"");
    }
    for (k, v) in &tree.root_attributes {
        push_attr(&mut out, k, v);
    }
    out.push('>');
    // sibling counters per depth, for computed `index` values
    let mut counters: Vec<usize> = Vec::new();
    let mut open = 0usize;
    for (i, n) in tree.nodes.iter().enumerate() {
        while open > n.depth {
            out.push_str("</node>");
            open -= 1;
        }
        counters.truncate(n.depth + 1);
        if counters.len() <= n.depth {
            counters.resize(n.depth + 1, 0);
        }
        let position = counters[n.depth];
        counters[n.depth] += 1;
        out.push_str("<node");
        let index = n
            .extra("index")
            .map(str::to_string)
            .unwrap_or_else(|| position.to_string());
        push_attr(&mut out, "index", &index);
        push_attr(&mut out, "text", &n.text);
        push_attr(&mut out, "resource-id", &n.resource_id);
        push_attr(&mut out, "class", &n.class);
        push_attr(&mut out, "package", &n.package);
        push_attr(&mut out, "content-desc", &n.content_desc);
        for (name, value) in n.flags.entries() {
            push_attr(&mut out, name, if value { "true" } else { "false" });
        }
        if let Some(b) = n.bounds {
            push_attr(&mut out, "bounds", &b.to_string());
        }
        for (k, v) in n.extra.iter().filter(|(k, _)| k != "index") {
            push_attr(&mut out, k, v);
        }
        let has_children = tree
            .nodes
            .get(i + 1)
            .is_some_and(|next| next.depth > n.depth);
        if has_children {
            out.push('>');
            open += 1;
        } else {
            out.push_str(" />");
        }
    }
    for _ in 0..open {
        out.push_str("</node>");
    }
    out.push_str("</hierarchy>");
    out
}

fn push_attr(out: &mut String, key: &str, value: &str) {
    out.push(' ');
    out.push_str(key);
    out.push_str("=\"");
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::super::{AndroidNode, Bounds, parse_xml};
    use super::*;

    #[test]
    fn round_trips_values_and_structure() {
        let mut a = AndroidNode {
            depth: 0,
            class: "android.widget.FrameLayout".into(),
            ..Default::default()
        };
        a.bounds = Some(Bounds {
            left: 0,
            top: 0,
            right: 100,
            bottom: 50,
        });
        let mut b = AndroidNode {
            depth: 1,
            class: "android.widget.TextView".into(),
            ..Default::default()
        };
        b.text = "say \"hi\" & <bye>\n\ttab 🌿".into();
        b.flags.enabled = false;
        b.extra.push(("NAF".into(), "true".into()));
        let c = AndroidNode {
            depth: 1,
            class: "android.view.View".into(),
            ..Default::default()
        };
        let d = AndroidNode {
            depth: 0,
            class: "android.widget.FrameLayout".into(),
            ..Default::default()
        };
        let tree = AndroidTree::new(vec![a, b, c, d]).unwrap();
        let xml = to_uiautomator_xml(&tree);
        assert!(
            xml.contains("text=\"say &quot;hi&quot; &amp; &lt;bye&gt;&#10;&#9;tab 🌿\""),
            "{xml}"
        );
        assert!(
            xml.contains("<hierarchy rotation=\"0\"><node index=\"0\""),
            "{xml}"
        );
        let back = parse_xml(&xml).unwrap();
        assert!(back.warnings.is_empty());
        let indexes: Vec<_> = back
            .tree
            .nodes
            .iter()
            .map(|n| n.extra("index").unwrap().to_string())
            .collect();
        assert_eq!(indexes, ["0", "0", "1", "1"]);
        let mut stripped = back.tree.clone();
        for n in &mut stripped.nodes {
            n.extra.retain(|(k, _)| k != "index");
        }
        assert_eq!(stripped.nodes, tree.nodes);
    }
}
