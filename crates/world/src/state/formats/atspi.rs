//! `atspi`: AT-SPI accessible trees as XML, the form of GNOME at-spi2-core's test fixtures:
//!
//! ```text
//! <accessible description="Root of the accessible tree" name="root_object" role="accelerator label">
//!   <accessible_component description="third child" name="obj3" role="push button">
//!     <component x="250" y="250" width="350" height="200" layer="3" zorder="2" alpha="2.5"/>
//!     <state state_enum="selected"/>
//! ```
//!
//! Elements whose tag starts with `accessible` are nodes (role = `role`, role names with
//! spaces as written; name = `name`; key = an `id` attribute ([`KeyKind::AtspiId`]) or the
//! positional path; attributes: `tag` = the element name (it says which interfaces the object
//! implements), then every other attribute in order). Any other element describes its nearest
//! accessible ancestor: `<component x y width height …>` gives the bounds (x, y, w, h) and
//! `component.layer`, `component.zorder`, …; each `<state state_enum=…>` adds to the attribute
//! `states` (comma separated); `<text>` character data is the node's text; anything else
//! becomes `element.attribute` attributes (`table_cell.cell_x`). The tolerant XML reader
//! recovers from malformed input (see its warnings).

use super::super::read::xml::{self, XmlElement};
use crate::Result;
use crate::state::{
    KeyKind, NodeKey, ParsedState, Rect, StateNode, StateParser, TreeBuilder, Warning,
};

/// The `atspi` parser.
#[derive(Debug, Clone, Copy, Default)]
pub struct Atspi;

fn is_accessible(e: &XmlElement) -> bool {
    e.name.starts_with("accessible")
}

impl StateParser for Atspi {
    fn name(&self) -> &'static str {
        "atspi"
    }

    fn description(&self) -> &'static str {
        "AT-SPI tree XML (at-spi2-core fixtures): <accessible role=\"push button\"> with <component x y width height>"
    }

    /// 0.9 with `<accessible` elements carrying `role=`.
    fn detect(&self, text: &str) -> f32 {
        let h = super::head(text, 4096);
        if h.contains("<accessible") && h.contains("role=") {
            0.9
        } else {
            0.0
        }
    }

    fn parse(&self, text: &str) -> Result<ParsedState> {
        let doc = xml::read(text);
        let mut warnings = doc.warnings;
        let els = &doc.elements;
        let mut b = TreeBuilder::new(self.name());
        // depth[i]: accessible ancestors of element i; owner[i]: the tree node element i is (an
        // accessible) or describes (its nearest accessible ancestor).
        let mut depth: Vec<usize> = Vec::with_capacity(els.len());
        let mut owner: Vec<Option<usize>> = Vec::with_capacity(els.len());
        for e in els {
            let (d, up) = match e.parent {
                Some(p) => (depth[p] + usize::from(is_accessible(&els[p])), owner[p]),
                None => (0, None),
            };
            depth.push(d);
            if is_accessible(e) {
                let (i, _) = b.push_at(d, accessible(e));
                owner.push(Some(i));
                continue;
            }
            owner.push(up);
            match up.and_then(|i| b.node_mut(i)) {
                Some(node) => describe(node, e, &mut warnings),
                None => warnings.push(Warning {
                    line: e.line,
                    column: 0,
                    message: format!("<{}> outside any <accessible> ignored", e.name),
                }),
            }
        }
        ParsedState::new(b.finish(), warnings, text, "no <accessible> element")
    }
}

fn accessible(e: &XmlElement) -> StateNode {
    let mut n = StateNode {
        line: e.line,
        text: e.text.trim().to_string(),
        ..StateNode::default()
    };
    n.attributes.push(("tag".into(), e.name.clone()));
    for (k, v) in &e.attrs {
        match k.as_str() {
            "role" => n.role = v.clone(),
            "name" => n.name = v.clone(),
            "id" if !v.is_empty() => n.key = NodeKey::new(KeyKind::AtspiId, v.clone()),
            _ => n.attributes.push((k.clone(), v.clone())),
        }
    }
    n
}

/// Folds a describing element into its accessible node.
fn describe(node: &mut StateNode, e: &XmlElement, warnings: &mut Vec<Warning>) {
    match e.name.as_str() {
        "component" => {
            let num = |k: &str| {
                e.attr(k)
                    .and_then(|v| v.trim().parse::<f64>().ok())
                    .map(|f| f.round() as i32)
            };
            match (num("x"), num("y"), num("width"), num("height")) {
                (Some(x), Some(y), Some(w), Some(h)) => {
                    node.bounds = Some(Rect::from_xywh(x, y, w, h))
                }
                _ => warnings.push(Warning {
                    line: e.line,
                    column: 0,
                    message: "component without readable x, y, width, height: no bounds".into(),
                }),
            }
            for (k, v) in &e.attrs {
                if !matches!(k.as_str(), "x" | "y" | "width" | "height") {
                    node.attributes.push((format!("component.{k}"), v.clone()));
                }
            }
        }
        "state" => {
            let s = e.attr("state_enum").unwrap_or_default().to_string();
            match node.attributes.iter_mut().find(|(k, _)| k == "states") {
                Some((_, v)) => {
                    v.push(',');
                    v.push_str(&s);
                }
                None => node.attributes.push(("states".into(), s)),
            }
        }
        "text" => node.text.push_str(e.text.trim()),
        other => {
            for (k, v) in &e.attrs {
                node.attributes.push((format!("{other}.{k}"), v.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_component_and_state() {
        let text = r#"<accessible name="root" role="frame"><accessible_component name="ok" role="push button" id="7"><component x="1" y="2" width="3" height="4" layer="5"/><state state_enum="focused"/><state state_enum="selected"/><table_cell cell_x="0"/></accessible_component><component x="a"/></accessible>"#;
        let p = Atspi.parse(text).unwrap();
        let t = &p.tree;
        assert_eq!(t.len(), 2);
        let ok = &t.nodes[1];
        assert_eq!(
            (ok.role.as_str(), ok.key.value.as_str()),
            ("push button", "7")
        );
        assert_eq!(ok.bounds, Some(Rect::from_corners(1, 2, 4, 6)));
        assert_eq!(ok.attr("states"), Some("focused,selected"));
        assert_eq!(ok.attr("component.layer"), Some("5"));
        assert_eq!(ok.attr("table_cell.cell_x"), Some("0"));
        assert_eq!(p.warnings.len(), 1);
    }
}
