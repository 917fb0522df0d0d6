//! Lossless conversion between an [`AndroidTree`] and the common [`StateTree`].
//!
//! Each node becomes: role = class, text = `text`, name = `content-desc`, key = the
//! `resource-id` ([`KeyKind::ResourceId`]) or the positional path when it has none, bounds as
//! they are, attributes = `package` (when not empty), then the flags that differ from their
//! default (`enabled` true, the rest false) in dump order as `true`/`false`, then every extra
//! attribute in order. The tree's `format` names the source (`uiautomator`,
//! `appium`, `android-compact`, `android` for a tree built in code) and its attributes are the
//! `<hierarchy>` attributes. [`StateTree::to_android`] gives back the same tree.

use super::{AndroidNode, AndroidTree, Bounds, NodeFlags, SourceFormat};
use crate::Result;
use crate::state::tree::{KeyKind, NodeKey, Rect, StateNode, StateTree, TreeBuilder};

impl From<Bounds> for Rect {
    fn from(b: Bounds) -> Rect {
        Rect::from_corners(b.left, b.top, b.right, b.bottom)
    }
}

impl From<Rect> for Bounds {
    fn from(r: Rect) -> Bounds {
        Bounds {
            left: r.left,
            top: r.top,
            right: r.right,
            bottom: r.bottom,
        }
    }
}

/// The `format` name of a source.
fn format_name(source: SourceFormat) -> &'static str {
    match source {
        SourceFormat::Uiautomator => "uiautomator",
        SourceFormat::Appium => "appium",
        SourceFormat::Compact => "android-compact",
        SourceFormat::Built => "android",
    }
}

impl AndroidTree {
    /// The tree in the common form (see the module docs); [`StateTree::to_android`] inverts it.
    pub fn to_state_tree(&self) -> StateTree {
        let mut b = TreeBuilder::new(format_name(self.source));
        for (k, v) in &self.root_attributes {
            b.doc_attr(k.clone(), v.clone());
        }
        for n in &self.nodes {
            let mut attributes = Vec::with_capacity(4 + n.extra.len());
            if !n.package.is_empty() {
                attributes.push(("package".to_string(), n.package.clone()));
            }
            let defaults = NodeFlags::default().entries();
            for ((name, v), (_, default)) in n.flags.entries().into_iter().zip(defaults) {
                if v != default {
                    attributes.push((name.to_string(), v.to_string()));
                }
            }
            attributes.extend(n.extra.iter().cloned());
            let key = if n.resource_id.is_empty() {
                NodeKey::default()
            } else {
                NodeKey::new(KeyKind::ResourceId, n.resource_id.clone())
            };
            b.push_at(
                n.depth,
                StateNode {
                    role: n.class.clone(),
                    name: n.content_desc.clone(),
                    text: n.text.clone(),
                    key,
                    bounds: n.bounds.map(Rect::from),
                    attributes,
                    ..StateNode::default()
                },
            );
        }
        b.finish()
    }
}

impl From<&AndroidTree> for StateTree {
    fn from(t: &AndroidTree) -> StateTree {
        t.to_state_tree()
    }
}

impl StateTree {
    /// Reads the common form back into an [`AndroidTree`]: the inverse of
    /// [`AndroidTree::to_state_tree`]. For a tree from another format it is a best effort:
    /// role → class, name → content-desc, a resource-id key → resource-id, `package` and the
    /// flag attributes (`true`/`false`) → fields, every other attribute → extra.
    pub fn to_android(&self) -> Result<AndroidTree> {
        let source = match self.format.as_str() {
            "uiautomator" => SourceFormat::Uiautomator,
            "appium" => SourceFormat::Appium,
            "android-compact" => SourceFormat::Compact,
            _ => SourceFormat::Built,
        };
        let nodes = self
            .nodes
            .iter()
            .map(|n| {
                let mut a = AndroidNode {
                    depth: n.depth,
                    class: n.role.clone(),
                    text: n.text.clone(),
                    content_desc: n.name.clone(),
                    resource_id: match n.key.kind {
                        KeyKind::ResourceId => n.key.value.clone(),
                        _ => String::new(),
                    },
                    bounds: n.bounds.map(Bounds::from),
                    flags: NodeFlags::default(),
                    ..AndroidNode::default()
                };
                for (k, v) in &n.attributes {
                    if k == "package" {
                        a.package = v.clone();
                        continue;
                    }
                    let parsed = match v.as_str() {
                        "true" => Some(true),
                        "false" => Some(false),
                        _ => None,
                    };
                    match (a.flags.get_mut(k), parsed) {
                        (Some(flag), Some(v)) => *flag = v,
                        _ => a.extra.push((k.clone(), v.clone())),
                    }
                }
                a
            })
            .collect();
        let mut tree = AndroidTree::new(nodes)?;
        tree.source = source;
        tree.root_attributes = self.attributes.clone();
        Ok(tree)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::android::parse_xml;

    #[test]
    fn round_trip() {
        let src = r#"<hierarchy rotation="0"><node class="A" resource-id="p:id/a" package="p" bounds="[0,0][10,10]" clickable="true"><node class="B" text="hi" content-desc="d" NAF="true" enabled="false"/></node><node class="C"/></hierarchy>"#;
        let tree = parse_xml(src).unwrap().tree;
        let common = tree.to_state_tree();
        common.check().unwrap();
        assert_eq!(common.format, "uiautomator");
        assert_eq!(
            common.nodes[0].key,
            NodeKey::new(KeyKind::ResourceId, "p:id/a")
        );
        assert_eq!(common.nodes[1].key.value, "/0/0");
        assert_eq!(common.nodes[1].name, "d");
        assert_eq!(common.nodes[1].attr("enabled"), Some("false"));
        assert_eq!(common.nodes[1].attr("NAF"), Some("true"));
        assert_eq!(
            common.nodes[1].attr("clickable"),
            None,
            "default flags are left out"
        );
        assert_eq!(common.nodes[0].attr("clickable"), Some("true"));
        assert_eq!(
            common.nodes[0].bounds,
            Some(Rect::from_corners(0, 0, 10, 10))
        );
        assert_eq!(common.to_android().unwrap(), tree);
    }
}
