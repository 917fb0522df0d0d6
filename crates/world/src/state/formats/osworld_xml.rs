//! `osworld-xml`: the desktop accessibility tree OSWorld's VM server returns (built from
//! AT-SPI on Ubuntu, UIA on Windows):
//!
//! ```text
//! <desktop-frame xmlns:st="https://accessibility.ubuntu.example.org/ns/state"
//!     xmlns:cp="https://accessibility.ubuntu.example.org/ns/component" … name="main">
//!   <application name="gedit">
//!     <push-button name="Save" st:enabled="true" cp:screencoord="(1012, 40)" cp:size="(68, 34)">Save</push-button>
//! ```
//!
//! Every element is a node: role = the tag (AT-SPI role with dashes), name = `name`, text = the
//! element's own character data, bounds = `cp:screencoord` `"(x, y)"` + `cp:size` `"(w, h)"`,
//! key = an `id` attribute (plain or in the attributes namespace, [`KeyKind::AtspiId`]) or the
//! positional path. Attributes keep their order; namespace prefixes are rewritten to the
//! conventional ones by namespace URI (`…/ns/state` → `st:`, `…/ns/component` → `cp:`,
//! `…/ns/attributes` → `attr:`, `…/ns/value` → `val:`, `…/ns/text` → `txt:`, `…/ns/action`
//! → `act:`, `…/ns/document` → `doc:`, `…/ns/document/attributes` → `docattr:`, `…/ns/class` →
//! `class:`), so Ubuntu and Windows dumps and any prefix choice read alike; `xmlns`
//! declarations are left out. Real dumps are not always well-formed: the tolerant XML reader
//! recovers (see its warnings), and malformed geometry is dropped with a warning.

use std::collections::HashMap;

use super::super::read::xml::{self, XmlElement};
use crate::Result;
use crate::state::{
    KeyKind, NodeKey, ParsedState, Rect, StateNode, StateParser, TreeBuilder, Warning,
};

/// The `osworld-xml` parser.
#[derive(Debug, Clone, Copy, Default)]
pub struct OsworldXml;

/// Namespace URI endings and the prefix they are written with.
const NAMESPACES: [(&str, &str); 9] = [
    ("/ns/document/attributes", "docattr"),
    ("/ns/state", "st"),
    ("/ns/component", "cp"),
    ("/ns/attributes", "attr"),
    ("/ns/value", "val"),
    ("/ns/text", "txt"),
    ("/ns/action", "act"),
    ("/ns/document", "doc"),
    ("/ns/class", "class"),
];

impl StateParser for OsworldXml {
    fn name(&self) -> &'static str {
        "osworld-xml"
    }

    fn description(&self) -> &'static str {
        "OSWorld accessibility XML: <desktop-frame> with AT-SPI role tags, st:/cp:/attr: attributes, cp:screencoord=\"(x, y)\""
    }

    /// 0.95 with a `<desktop-frame` root or OSWorld's namespace URIs.
    fn detect(&self, text: &str) -> f32 {
        let h = super::head(text, 4096);
        let ns = h.contains("accessibility.ubuntu.example.org")
            || h.contains("accessibility.windows.example.org");
        if h.contains("<desktop-frame") || ns {
            0.95
        } else {
            0.0
        }
    }

    fn parse(&self, text: &str) -> Result<ParsedState> {
        let doc = xml::read(text);
        let mut warnings = doc.warnings;
        let prefixes = prefix_map(&doc.elements);
        let mut b = TreeBuilder::new(self.name());
        for e in &doc.elements {
            let node = node(e, &prefixes, &mut warnings);
            b.push_at(e.depth, node);
        }
        ParsedState::new(b.finish(), warnings, text, "no element")
    }
}

/// Declared prefix → conventional prefix, from every `xmlns:p="uri"` in the document.
fn prefix_map(elements: &[XmlElement]) -> HashMap<String, &'static str> {
    let mut map = HashMap::new();
    for e in elements {
        for (k, uri) in &e.attrs {
            if let Some(p) = k.strip_prefix("xmlns:")
                && let Some((_, conventional)) = NAMESPACES
                    .iter()
                    .find(|(end, _)| uri.trim_end_matches('/').ends_with(end))
            {
                map.insert(p.to_string(), *conventional);
            }
        }
    }
    map
}

fn node(
    e: &XmlElement,
    prefixes: &HashMap<String, &'static str>,
    warnings: &mut Vec<Warning>,
) -> StateNode {
    let mut n = StateNode {
        role: e.name.clone(),
        text: e.text.clone(),
        line: e.line,
        ..StateNode::default()
    };
    let (mut at, mut size) = (None, None);
    for (k, v) in &e.attrs {
        if k == "xmlns" || k.starts_with("xmlns:") {
            continue;
        }
        let k = match k.split_once(':') {
            Some((p, local)) => match prefixes.get(p) {
                Some(conventional) => format!("{conventional}:{local}"),
                None => k.clone(),
            },
            None => k.clone(),
        };
        match k.as_str() {
            "name" => {
                n.name = v.clone();
                continue;
            }
            "cp:screencoord" => at = Some(v.clone()),
            "cp:size" => size = Some(v.clone()),
            "id" | "attr:id" if !v.is_empty() && n.key.is_unset() => {
                n.key = NodeKey::new(KeyKind::AtspiId, v.clone())
            }
            _ => {}
        }
        n.attributes.push((k, v.clone()));
    }
    if let (Some(at), Some(size)) = (&at, &size) {
        match (pair(at), pair(size)) {
            (Some((x, y)), Some((w, h))) => n.bounds = Some(Rect::from_xywh(x, y, w, h)),
            _ => warnings.push(Warning {
                line: e.line,
                column: 0,
                message: format!("malformed geometry {at:?} {size:?} dropped"),
            }),
        }
    }
    n
}

/// `"(12, 34)"` → (12, 34); floats are rounded.
pub(crate) fn pair(s: &str) -> Option<(i32, i32)> {
    let (a, b) = s
        .trim()
        .strip_prefix('(')?
        .strip_suffix(')')?
        .split_once(',')?;
    let num = |x: &str| {
        x.trim()
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(|f| f.round() as i32)
    };
    Some((num(a)?, num(b)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"<desktop-frame xmlns:st="https://accessibility.ubuntu.example.org/ns/state" xmlns:c="https://accessibility.ubuntu.example.org/ns/component" name="main" c:screencoord="(0, 0)" c:size="(1920, 1080)">
<application name="gedit"><push-button name="Save" st:enabled="true" c:screencoord="(1012, 40)" c:size="(68, 34)">Save</push-button>
<label name="bad" c:screencoord="(1, x)" c:size="(2, 2)"/></application></desktop-frame>"#;

    #[test]
    fn nodes_geometry_and_prefixes() {
        let p = OsworldXml.parse(SAMPLE).unwrap();
        let t = &p.tree;
        assert_eq!(t.len(), 4);
        let save = &t.nodes[2];
        assert_eq!(
            (save.role.as_str(), save.name.as_str(), save.text.as_str()),
            ("push-button", "Save", "Save")
        );
        assert_eq!(save.bounds, Some(Rect::from_corners(1012, 40, 1080, 74)));
        assert_eq!(save.attr("st:enabled"), Some("true"));
        assert_eq!(save.attr("cp:size"), Some("(68, 34)"));
        assert_eq!(t.nodes[0].attr("xmlns:st"), None);
        assert_eq!(p.warnings.len(), 1);
        assert!(OsworldXml.detect(SAMPLE) > 0.9);
        assert_eq!(pair("(1.6, -2)"), Some((2, -2)));
    }
}
