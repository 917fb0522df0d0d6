//! `droidbot`: a DroidBot state JSON (`state_*.json`): device facts and a flat `views` list in
//! which each view names its `parent` and `children` by list index (`temp_id`), with bounds
//! `[[x1,y1],[x2,y2]]`.
//!
//! The tree is rebuilt from the indices in pre-order (children in their `children` order; roots
//! are views whose `parent` is -1 or missing). Role = `class`, text = `text`, name =
//! `content_description`, key = `resource_id` ([`KeyKind::ResourceId`]) or the positional path,
//! bounds from `bounds`; every other scalar field (`temp_id`, `package`, the flags, `size`,
//! `signature`, `view_str`, …) is an attribute in source order (`null` fields are left out).
//! The top-level scalar fields (`tag`, `state_str`, `foreground_activity`, `width`, `height`, …)
//! are document attributes. A bare JSON list of views is read the same way. Recovered with a
//! warning: a child index out of range or seen twice (a cycle), a child whose own `parent`
//! disagrees (the `children` list wins), a view no root reaches (read as a root), malformed
//! bounds, and everything the JSON reader repairs (a cut file keeps the views read before the
//! cut).

use crate::Result;
use crate::state::read::json::{self, JsonKind, JsonValue};
use crate::state::{
    KeyKind, NodeKey, ParsedState, Rect, StateNode, StateParser, TreeBuilder, Warning,
};

/// The `droidbot` parser.
#[derive(Debug, Clone, Copy, Default)]
pub struct DroidBot;

impl StateParser for DroidBot {
    fn name(&self) -> &'static str {
        "droidbot"
    }

    fn description(&self) -> &'static str {
        "DroidBot state JSON: flat `views` with parent/children indices and bounds [[x1,y1],[x2,y2]]"
    }

    /// 0.95 for JSON with `"views"` and DroidBot view fields (`temp_id`, `view_str`); 0.8 for
    /// a list of objects with `temp_id` and `bounds`.
    fn detect(&self, text: &str) -> f32 {
        let h = super::head(text, 8192);
        let fields = h.contains("\"temp_id\"") || h.contains("\"view_str\"");
        if !h.trim_start().starts_with(['{', '[']) || !fields {
            return 0.0;
        }
        if h.contains("\"views\"") { 0.95 } else { 0.8 }
    }

    fn parse(&self, text: &str) -> Result<ParsedState> {
        let doc = json::read(text);
        let mut warnings = doc.warnings;
        let values = &doc.values;
        let mut b = TreeBuilder::new(self.name());
        // The views array: `$.views`, or the root itself when it is an array.
        let list = match values.first().map(|v| v.kind) {
            Some(JsonKind::Array) => Some(0),
            Some(JsonKind::Object) => {
                for v in values {
                    if v.depth == 1 && is_scalar(v) {
                        b.doc_attr(v.member.clone().unwrap_or_default(), v.scalar.clone());
                    }
                }
                values
                    .iter()
                    .position(|v| v.depth == 1 && v.member.as_deref() == Some("views"))
            }
            _ => None,
        };
        let views: Vec<View> = match list {
            Some(l) => children_of(values, l)
                .filter(|&i| values[i].kind == JsonKind::Object)
                .map(|i| View::read(values, i, &mut warnings))
                .collect(),
            None => Vec::new(),
        };
        build(&views, &mut b, &mut warnings);
        ParsedState::new(b.finish(), warnings, text, "no `views` list with a view")
    }
}

fn is_scalar(v: &JsonValue) -> bool {
    !matches!(v.kind, JsonKind::Object | JsonKind::Array | JsonKind::Null)
}

/// Indices of the direct children of value `p` (a contiguous pre-order range).
fn children_of(values: &[JsonValue], p: usize) -> impl Iterator<Item = usize> + '_ {
    let d = values[p].depth;
    (p + 1..values.len())
        .take_while(move |&i| values[i].depth > d)
        .filter(move |&i| values[i].parent == Some(p))
}

/// One view as read.
#[derive(Default)]
struct View {
    node: StateNode,
    parent: Option<i64>,
    children: Vec<i64>,
}

impl View {
    fn read(values: &[JsonValue], at: usize, warnings: &mut Vec<Warning>) -> View {
        let mut v = View::default();
        v.node.line = values[at].line;
        for i in children_of(values, at) {
            let f = &values[i];
            let name = f.member.as_deref().unwrap_or("");
            match (name, f.kind) {
                ("class", JsonKind::String) => v.node.role = f.scalar.clone(),
                ("text", JsonKind::String) => v.node.text = f.scalar.clone(),
                ("content_description", JsonKind::String) => v.node.name = f.scalar.clone(),
                ("resource_id", JsonKind::String) if !f.scalar.is_empty() => {
                    v.node.key = NodeKey::new(KeyKind::ResourceId, f.scalar.clone())
                }
                ("parent", JsonKind::Number) => v.parent = f.scalar.parse().ok(),
                ("children", JsonKind::Array) => {
                    v.children = children_of(values, i)
                        .filter_map(|c| values[c].scalar.parse().ok())
                        .collect()
                }
                ("bounds", JsonKind::Array) => {
                    let nums: Vec<i32> = (i + 1..values.len())
                        .take_while(|&j| values[j].depth > f.depth)
                        .filter(|&j| values[j].kind == JsonKind::Number)
                        .filter_map(|j| values[j].scalar.parse::<f64>().ok())
                        .map(|x| x.round() as i32)
                        .collect();
                    match nums[..] {
                        [x1, y1, x2, y2] => {
                            v.node.bounds = Some(Rect::from_corners(x1, y1, x2, y2))
                        }
                        _ => warnings.push(Warning {
                            line: f.line,
                            column: 0,
                            message: format!("malformed bounds ({} numbers) dropped", nums.len()),
                        }),
                    }
                }
                (_, JsonKind::Object | JsonKind::Array | JsonKind::Null) => {}
                _ => v.node.attributes.push((name.to_string(), f.scalar.clone())),
            }
        }
        v
    }
}

/// Lays the views out in pre-order with an explicit stack.
fn build(views: &[View], b: &mut TreeBuilder, warnings: &mut Vec<Warning>) {
    let n = views.len();
    let mut seen = vec![false; n];
    let warn = |warnings: &mut Vec<Warning>, v: &View, message: String| {
        warnings.push(Warning {
            line: v.node.line,
            column: 0,
            message,
        })
    };
    let roots: Vec<usize> = (0..n)
        .filter(|&i| views[i].parent.is_none_or(|p| p < 0 || p as usize >= n))
        .collect();
    for root in roots.into_iter().chain(0..n) {
        if seen[root] {
            continue;
        }
        seen[root] = true;
        if views[root]
            .parent
            .is_some_and(|p| p >= 0 && (p as usize) < n)
        {
            warn(
                warnings,
                &views[root],
                format!("view {root} is not reached from a root; read as a root"),
            );
        }
        let mut stack = vec![(root, 0usize)];
        while let Some((i, depth)) = stack.pop() {
            b.push_at(depth, views[i].node.clone());
            for &c in views[i].children.iter().rev() {
                let ok = c >= 0 && (c as usize) < n;
                if !ok {
                    warn(
                        warnings,
                        &views[i],
                        format!("view {i}: child index {c} out of range ignored"),
                    );
                } else if seen[c as usize] {
                    warn(
                        warnings,
                        &views[i],
                        format!(
                            "view {i}: child {c} already placed (a cycle or shared child) ignored"
                        ),
                    );
                } else {
                    let c = c as usize;
                    if views[c].parent != Some(i as i64) {
                        warn(
                            warnings,
                            &views[c],
                            format!(
                                "view {c}: parent {:?} disagrees with view {i}'s children; placed under {i}",
                                views[c].parent
                            ),
                        );
                    }
                    seen[c] = true;
                    stack.push((c, depth + 1));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_become_a_tree() {
        let text = r#"{"tag": "t1", "width": 1080, "views": [
            {"class": "A", "parent": -1, "children": [2, 1], "bounds": [[0, 0], [100, 200]], "temp_id": 0},
            {"class": "B", "parent": 0, "children": [], "resource_id": "p:id/b", "text": "hi", "temp_id": 1},
            {"class": "C", "parent": 0, "children": [9, 0], "content_description": null, "temp_id": 2}
        ]}"#;
        let p = DroidBot.parse(text).unwrap();
        let t = &p.tree;
        t.check().unwrap();
        let roles: Vec<_> = t.nodes.iter().map(|n| (n.depth, n.role.as_str())).collect();
        assert_eq!(roles, [(0, "A"), (1, "C"), (1, "B")]);
        assert_eq!(t.nodes[0].bounds, Some(Rect::from_corners(0, 0, 100, 200)));
        assert_eq!(t.nodes[2].key, NodeKey::new(KeyKind::ResourceId, "p:id/b"));
        assert_eq!(t.nodes[2].attr("temp_id"), Some("1"));
        assert_eq!(t.attributes[0], ("tag".to_string(), "t1".to_string()));
        assert_eq!(p.warnings.len(), 2, "{:?}", p.warnings);
        assert!(DroidBot.detect(text) > 0.9);
    }

    #[test]
    fn cut_files_and_garbage() {
        let text = r#"{"views": [{"class": "A", "parent": -1, "children": [1], "temp_id": 0}, {"class": "B", "parent": 0, "chil"#;
        let p = DroidBot.parse(text).unwrap();
        assert_eq!(p.tree.len(), 2);
        assert!(DroidBot.parse("{}").is_err());
        assert!(DroidBot.parse("nothing").is_err());
    }
}
