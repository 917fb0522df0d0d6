//! `androidworld`: the UI element list AndroidWorld agents show a model, one element per line,
//! in either form:
//!
//! ```text
//! UI element 3: UIElement(text='Wi-Fi', content_description=None, class_name='android.widget.Switch', bbox=None, bbox_pixels=BoundingBox(x_min=900, x_max=1040, y_min=200, y_max=260), …, is_checked=True, …, resource_name='com.android.settings:id/switch_widget', …)
//! [3] Wi-Fi (clickable, checked)
//! ```
//!
//! The first is T3A/M3A's `f'UI element {index}: {str(ui_element)}'` (a Python dataclass repr);
//! the second the short `[i] label (flags)` form. The list is flat: every element is a
//! top-level node, key = its index ([`KeyKind::ElementId`], what `{"action_type": "click",
//! "index": 3}` targets). From the repr: role = `class_name`, text = `text`, name =
//! `content_description`, bounds = `bbox_pixels` (x_min, y_min, x_max, y_max; floats rounded),
//! every other field an attribute as written (`is_checked=True`, `resource_name=…`, normalised
//! `bbox` as `x_min=…, x_max=…, …`; `None` fields left out). From the short form: role
//! `element`, text = the label (unquoted when quoted), each flag an attribute `flag=true`.
//! Lines in neither form are skipped with a warning; a repr cut short keeps the fields before
//! the cut.

use super::super::read::pyrepr;
use super::super::read::{LineIndex, clip, lines_with_offsets};
use crate::Result;
use crate::state::{KeyKind, NodeKey, ParsedState, Rect, StateNode, StateParser, TreeBuilder};

/// The `androidworld` parser.
#[derive(Debug, Clone, Copy, Default)]
pub struct AndroidWorld;

/// `UI element N: UIElement(` → (N, rest after the parenthesis).
fn repr_line(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix("UI element ")?;
    let (n, rest) = rest.split_once(':')?;
    let n = n.trim();
    (!n.is_empty() && n.chars().all(|c| c.is_ascii_digit())).then_some(())?;
    Some((n, rest.trim_start().strip_prefix("UIElement(")?))
}

/// `[N] label` → (N, label part).
fn short_line(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix('[')?;
    let (n, rest) = rest.split_once(']')?;
    let ok = !n.is_empty() && n.chars().all(|c| c.is_ascii_digit());
    (ok && !rest.trim_start().starts_with('[')).then_some((n, rest.trim()))
}

const FLAGS: [&str; 14] = [
    "checkable",
    "checked",
    "clickable",
    "editable",
    "enabled",
    "disabled",
    "focusable",
    "focused",
    "long-clickable",
    "long_clickable",
    "scrollable",
    "selected",
    "visible",
    "invisible",
];

impl StateParser for AndroidWorld {
    fn name(&self) -> &'static str {
        "androidworld"
    }

    fn description(&self) -> &'static str {
        "AndroidWorld element list: `UI element 3: UIElement(text=…, bbox_pixels=BoundingBox(…), …)` or `[3] label (clickable)`"
    }

    /// 0.95 × the fraction of `UI element N: UIElement(` lines; 0.5 × the fraction of
    /// `[N] label` lines (axtree and Set-of-Marks lines score higher in their own parsers).
    fn detect(&self, text: &str) -> f32 {
        let repr = super::line_fraction(text, |_| false, |l| repr_line(l).is_some());
        if repr > 0.0 {
            return 0.95 * repr.max(0.5);
        }
        0.5 * super::line_fraction(text, |_| false, |l| short_line(l).is_some())
    }

    fn parse(&self, text: &str) -> Result<ParsedState> {
        let ix = LineIndex::new(text);
        let mut warnings = Vec::new();
        let mut b = TreeBuilder::new(self.name());
        for (at, line) in lines_with_offsets(text) {
            if line.trim().is_empty() {
                continue;
            }
            let mut node = if let Some((n, rest)) = repr_line(line) {
                let (node, problem) = from_repr(rest);
                if let Some(p) = problem {
                    warnings.push(ix.warning(at, format!("element {n}: {p}")));
                }
                StateNode {
                    key: NodeKey::new(KeyKind::ElementId, n),
                    ..node
                }
            } else if let Some((n, rest)) = short_line(line) {
                StateNode {
                    key: NodeKey::new(KeyKind::ElementId, n),
                    ..from_short(rest)
                }
            } else {
                warnings.push(ix.warning(
                    at,
                    format!("not an element line, skipped: {:?}", clip(line.trim())),
                ));
                continue;
            };
            node.line = ix.line(at);
            b.leaf(node);
        }
        ParsedState::new(b.finish(), warnings, text, "no element line")
    }
}

/// The short form after the index: `label (flag, flag)`.
fn from_short(rest: &str) -> StateNode {
    let mut node = StateNode::new("element");
    let mut label = rest;
    if let Some(open) = rest.rfind('(').filter(|_| rest.ends_with(')')) {
        let inside = &rest[open + 1..rest.len() - 1];
        let words: Vec<&str> = inside
            .split([',', ' '])
            .map(str::trim)
            .filter(|w| !w.is_empty())
            .collect();
        if !words.is_empty() && words.iter().all(|w| FLAGS.contains(w)) {
            for w in words {
                node.attributes.push((w.replace('_', "-"), "true".into()));
            }
            label = rest[..open].trim_end();
        }
    }
    node.text = match pyrepr::read_str(label) {
        Some(s) if s.complete && s.len == label.len() => s.value,
        _ => label.to_string(),
    };
    node
}

/// Fields of a `UIElement(…)` repr (the text after the opening parenthesis). Returns the node
/// and what was wrong, if anything.
fn from_repr(mut s: &str) -> (StateNode, Option<String>) {
    let mut node = StateNode::new("UIElement");
    loop {
        s = s.trim_start_matches([',', ' ']);
        if s.is_empty() {
            return (node, Some("cut short; fields before the cut kept".into()));
        }
        if s.starts_with(')') {
            return (node, None);
        }
        let Some((key, rest)) = s.split_once('=') else {
            return (
                node,
                Some(format!("unreadable field {:?}; rest dropped", clip(s))),
            );
        };
        let key = key.trim();
        let rest = rest.trim_start();
        let (value, used, quoted) = match pyrepr::read_str(rest) {
            Some(p) => (p.value, p.len, true),
            None => {
                // A bare value (None, True, 12, 0.5) or BoundingBox(…): up to the next `,` or
                // `)` outside parentheses.
                let mut level = 0i32;
                let end = rest
                    .char_indices()
                    .find(|&(_, c)| {
                        match c {
                            '(' => level += 1,
                            ')' if level > 0 => level -= 1,
                            ',' | ')' if level == 0 => return true,
                            _ => {}
                        }
                        false
                    })
                    .map_or(rest.len(), |(i, _)| i);
                (rest[..end].trim().to_string(), end, false)
            }
        };
        s = &rest[used..];
        if !quoted && value == "None" {
            continue;
        }
        match key {
            "text" => node.text = value,
            "content_description" => node.name = value,
            "class_name" => node.role = value,
            "bbox_pixels" => match bounding_box(&value) {
                Some(r) => node.bounds = Some(r),
                None => node.attributes.push((key.into(), value)),
            },
            "bbox" => node.attributes.push((
                key.into(),
                value
                    .trim_start_matches("BoundingBox(")
                    .trim_end_matches(')')
                    .into(),
            )),
            _ => node.attributes.push((key.into(), value)),
        }
    }
}

/// `BoundingBox(x_min=0, x_max=10, y_min=5, y_max=20)` → a rect.
fn bounding_box(s: &str) -> Option<Rect> {
    let inner = s.strip_prefix("BoundingBox(")?.strip_suffix(')')?;
    let mut v = [None; 4];
    for part in inner.split(',') {
        let (k, x) = part.split_once('=')?;
        let x = x.trim().parse::<f64>().ok()?.round() as i32;
        let slot = ["x_min", "y_min", "x_max", "y_max"]
            .iter()
            .position(|n| *n == k.trim())?;
        v[slot] = Some(x);
    }
    Some(Rect::from_corners(v[0]?, v[1]?, v[2]?, v[3]?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repr_form() {
        let line = "UI element 3: UIElement(text='Wi-Fi', content_description=None, class_name='android.widget.Switch', bbox=BoundingBox(x_min=0.8, x_max=0.9, y_min=0.1, y_max=0.2), bbox_pixels=BoundingBox(x_min=900, x_max=1040, y_min=200, y_max=260.4), hint_text=None, is_checked=True, resource_name='com.android.settings:id/switch_widget', tooltip=None)";
        let p = AndroidWorld.parse(line).unwrap();
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let n = &p.tree.nodes[0];
        assert_eq!(
            (n.role.as_str(), n.text.as_str(), n.key.value.as_str()),
            ("android.widget.Switch", "Wi-Fi", "3")
        );
        assert_eq!(n.bounds, Some(Rect::from_corners(900, 200, 1040, 260)));
        assert_eq!(n.attr("is_checked"), Some("True"));
        assert_eq!(
            n.attr("bbox"),
            Some("x_min=0.8, x_max=0.9, y_min=0.1, y_max=0.2")
        );
        assert_eq!(n.attr("hint_text"), None);
        assert!(AndroidWorld.detect(line) > 0.9);
        let cut = AndroidWorld.parse(&line[..60]).unwrap();
        assert_eq!(cut.tree.nodes[0].text, "Wi-Fi");
        assert_eq!(cut.warnings.len(), 1);
    }

    #[test]
    fn short_form() {
        let p = AndroidWorld
            .parse("[0] 'Settings'\n[1] Wi-Fi (clickable, checked)\nnoise\n[2] Ratio (1:2)")
            .unwrap();
        let t = &p.tree;
        assert_eq!(t.len(), 3);
        assert_eq!(t.nodes[0].text, "Settings");
        assert_eq!(t.nodes[1].attr("checked"), Some("true"));
        assert_eq!(t.nodes[1].text, "Wi-Fi");
        assert_eq!(t.nodes[2].text, "Ratio (1:2)");
        assert_eq!(p.warnings.len(), 1);
        assert_eq!(p.warnings[0].line, 3);
    }
}
