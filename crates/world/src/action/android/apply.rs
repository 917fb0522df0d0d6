//! The exact effect of an Android action on a tree, when it is a local edit.
//!
//! Rules (a node's "interactive" means clickable, long-clickable, checkable or editable):
//! - The target must resolve and be enabled; otherwise nothing happens ([`NoEffect`]).
//! - `tap`/`toggle` on a checkable node flips `checked`. A `RadioButton` only turns on: tapping
//!   a checked one does nothing, tapping an unchecked one checks it and unchecks the checked
//!   radio buttons among its siblings. `toggle` on a non-checkable node does nothing.
//! - `tap` on an editable node that is not focused moves focus to it (every other node loses
//!   `focused`); on a focused one it does nothing.
//! - `type` replaces (or, with `append`, extends) an editable node's text and focuses it, as
//!   above; in a `password` node the text shows as one `•` per character. Typing into a
//!   non-editable node does nothing.
//! - `tap`/`long_press` on a node that is neither interactive itself nor inside a clickable or
//!   long-clickable ancestor does nothing.
//! - Everything else (a tap that reaches a clickable node, long presses on interactive nodes,
//!   scroll, swipe, back, home, enter, wait, open_app) may change the screen and is
//!   [`Outcome::NotComputable`].

use serde::{Deserialize, Serialize};

use super::{AndroidAction, Target};
use crate::state::android::{AndroidTree, KeptFields};

/// Why an action leaves the state unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoEffect {
    /// No node matches the target.
    TargetNotFound,
    /// `type` without a target and no focused editable node.
    NoFocusedField,
    /// The target (this node) is disabled.
    Disabled(usize),
    /// A tap or long press on a node with nothing interactive at or above it.
    NonInteractive(usize),
    /// `type` into a node that is not editable.
    NotEditable(usize),
    /// `toggle` on a node that is not checkable.
    NotCheckable(usize),
    /// The action is valid but changes nothing (a checked radio button, a focused field,
    /// the same text typed again).
    AlreadySo(usize),
}

/// What an action does to a tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A local edit, computed exactly.
    Edited {
        /// The new tree.
        tree: AndroidTree,
        /// Indices (same in both trees) of the nodes whose kept fields changed, ascending.
        changed: Vec<usize>,
        /// The node the action was aimed at.
        target: usize,
    },
    /// The state stays exactly as it was.
    Unchanged(NoEffect),
    /// The action may change the screen; its effect cannot be computed from the tree.
    NotComputable(String),
}

impl Outcome {
    /// The tree after the action, when known: the edited tree, or `before` when unchanged.
    pub fn tree_after<'a>(&'a self, before: &'a AndroidTree) -> Option<&'a AndroidTree> {
        match self {
            Outcome::Edited { tree, .. } => Some(tree),
            Outcome::Unchanged(_) => Some(before),
            Outcome::NotComputable(_) => None,
        }
    }
}

/// Applies `action` to `tree` (see the module docs for the rules).
pub fn apply(tree: &AndroidTree, action: &AndroidAction) -> Outcome {
    match action {
        AndroidAction::Tap { target } => with_target(tree, target, |i| tap(tree, i, false)),
        AndroidAction::Toggle { target } => with_target(tree, target, |i| tap(tree, i, true)),
        AndroidAction::LongPress { target } => with_target(tree, target, |i| long_press(tree, i)),
        AndroidAction::Type {
            target,
            text,
            append,
        } => {
            let resolved = match target {
                Some(t) => t.resolve(tree).ok_or(NoEffect::TargetNotFound),
                None => (0..tree.len())
                    .find(|&i| tree.nodes[i].flags.focused && tree.nodes[i].is_editable())
                    .ok_or(NoEffect::NoFocusedField),
            };
            match resolved {
                Err(why) => Outcome::Unchanged(why),
                Ok(i) if !tree.nodes[i].flags.enabled => Outcome::Unchanged(NoEffect::Disabled(i)),
                Ok(i) => type_text(tree, i, text, *append),
            }
        }
        AndroidAction::Scroll {
            target: Some(t), ..
        } => match t.resolve(tree) {
            None => Outcome::Unchanged(NoEffect::TargetNotFound),
            Some(i) if !tree.nodes[i].flags.enabled => Outcome::Unchanged(NoEffect::Disabled(i)),
            Some(_) => {
                Outcome::NotComputable("scrolling reveals content the tree does not hold".into())
            }
        },
        other => Outcome::NotComputable(format!("`{}` changes the screen", other.name())),
    }
}

fn with_target(tree: &AndroidTree, target: &Target, f: impl FnOnce(usize) -> Outcome) -> Outcome {
    match target.resolve(tree) {
        None => Outcome::Unchanged(NoEffect::TargetNotFound),
        Some(i) if !tree.nodes[i].flags.enabled => Outcome::Unchanged(NoEffect::Disabled(i)),
        Some(i) => f(i),
    }
}

fn is_radio(tree: &AndroidTree, i: usize) -> bool {
    tree.nodes[i].simple_class().ends_with("RadioButton")
}

fn tap(tree: &AndroidTree, i: usize, toggle_only: bool) -> Outcome {
    let node = &tree.nodes[i];
    if node.flags.checkable {
        let mut after = tree.clone();
        if is_radio(tree, i) {
            if node.flags.checked {
                return Outcome::Unchanged(NoEffect::AlreadySo(i));
            }
            if let Some(p) = tree.parent(i) {
                for s in tree.children(p) {
                    if s != i && is_radio(tree, s) && tree.nodes[s].flags.checkable {
                        after.nodes[s].flags.checked = false;
                    }
                }
            }
            after.nodes[i].flags.checked = true;
        } else {
            after.nodes[i].flags.checked = !node.flags.checked;
        }
        return edited(tree, after, i);
    }
    if toggle_only {
        return Outcome::Unchanged(NoEffect::NotCheckable(i));
    }
    if node.is_editable() {
        if node.flags.focused {
            return Outcome::Unchanged(NoEffect::AlreadySo(i));
        }
        return edited(tree, focus(tree, i), i);
    }
    if node.flags.clickable || node.flags.long_clickable {
        return Outcome::NotComputable(format!(
            "tapping clickable {} may open another screen",
            node.label()
        ));
    }
    match tree
        .ancestors(i)
        .into_iter()
        .find(|&a| tree.nodes[a].flags.clickable)
    {
        Some(a) => Outcome::NotComputable(format!(
            "the tap reaches clickable {}",
            tree.nodes[a].label()
        )),
        None => Outcome::Unchanged(NoEffect::NonInteractive(i)),
    }
}

fn long_press(tree: &AndroidTree, i: usize) -> Outcome {
    let touchable = |j: usize| tree.nodes[j].flags.clickable || tree.nodes[j].flags.long_clickable;
    if tree.nodes[i].is_interactive() || tree.ancestors(i).into_iter().any(touchable) {
        Outcome::NotComputable(format!(
            "a long press on {} may open a menu or another screen",
            tree.nodes[i].label()
        ))
    } else {
        Outcome::Unchanged(NoEffect::NonInteractive(i))
    }
}

fn type_text(tree: &AndroidTree, i: usize, text: &str, append: bool) -> Outcome {
    let node = &tree.nodes[i];
    if !node.is_editable() {
        return Outcome::Unchanged(NoEffect::NotEditable(i));
    }
    let mut after = focus(tree, i);
    let typed = if node.flags.password {
        "•".repeat(text.chars().count())
    } else {
        text.to_string()
    };
    after.nodes[i].text = if append {
        format!("{}{typed}", node.text)
    } else {
        typed
    };
    edited(tree, after, i)
}

/// `tree` with focus on `i` only.
fn focus(tree: &AndroidTree, i: usize) -> AndroidTree {
    let mut after = tree.clone();
    for (j, n) in after.nodes.iter_mut().enumerate() {
        n.flags.focused = j == i;
    }
    after
}

fn edited(before: &AndroidTree, after: AndroidTree, target: usize) -> Outcome {
    let changed: Vec<usize> = (0..before.len())
        .filter(|&j| KeptFields::of(&before.nodes[j]) != KeptFields::of(&after.nodes[j]))
        .collect();
    if changed.is_empty() {
        return Outcome::Unchanged(NoEffect::AlreadySo(target));
    }
    Outcome::Edited {
        tree: after,
        changed,
        target,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::android::{parse_compact, render_compact};

    const SCREEN: &str = "\
FrameLayout [0,0][1080,1920]
  LinearLayout #row clickable [0,200][1080,300]
    TextView \"Wi-Fi\" [40,220][600,280]
    Switch #wifi checkable [900,220][1040,280]
  EditText #search \"Search\" [0,400][1080,500]
  EditText #pin password focused [0,500][1080,600]
  Button #save \"Save\" disabled clickable [0,600][540,700]
  Button #next \"Next\" clickable [540,600][1080,700]
  TextView #title \"Network\" [0,100][1080,200]
  RadioGroup
    RadioButton #a \"A\" checkable checked clickable
    RadioButton #b \"B\" checkable clickable";

    fn run(json: &str) -> (AndroidTree, Outcome) {
        let tree = parse_compact(SCREEN).unwrap().tree;
        let out = apply(&tree, &AndroidAction::parse(json).unwrap());
        (tree, out)
    }

    fn edited_tree(out: &Outcome) -> (&AndroidTree, &[usize]) {
        match out {
            Outcome::Edited { tree, changed, .. } => (tree, changed),
            other => panic!("expected an edit, got {other:?}"),
        }
    }

    #[test]
    fn toggle_flips_checked() {
        let (before, out) = run(r##"{"action":"tap","target":"#wifi"}"##);
        let (after, changed) = edited_tree(&out);
        assert_eq!(changed, [3]);
        assert!(after.nodes[3].flags.checked);
        let back = apply(
            after,
            &AndroidAction::parse(r##"{"action":"toggle","target":3}"##).unwrap(),
        );
        assert_eq!(
            back.tree_after(after).map(render_compact),
            Some(render_compact(&before))
        );
    }

    #[test]
    fn typing_sets_text_and_moves_focus() {
        let (_, out) = run(r##"{"action":"type","target":"#search","text":"tea"}"##);
        let (after, changed) = edited_tree(&out);
        assert_eq!(changed, [4, 5]);
        assert_eq!(after.nodes[4].text, "tea");
        assert!(after.nodes[4].flags.focused && !after.nodes[5].flags.focused);
        let (_, out) = run(r##"{"action":"type","text":"12"}"##);
        let (after, changed) = edited_tree(&out);
        assert_eq!((changed, after.nodes[5].text.as_str()), (&[5][..], "••"));
        let (_, out) = run(r##"{"action":"type","target":"#search","text":" now","append":true}"##);
        assert_eq!(edited_tree(&out).0.nodes[4].text, "Search now");
    }

    #[test]
    fn radio_buttons_only_turn_on() {
        let (_, out) = run(r##"{"action":"tap","target":"#b"}"##);
        let (after, changed) = edited_tree(&out);
        assert_eq!(changed, [10, 11]);
        assert!(!after.nodes[10].flags.checked && after.nodes[11].flags.checked);
        assert_eq!(
            run(r##"{"action":"tap","target":"#a"}"##).1,
            Outcome::Unchanged(NoEffect::AlreadySo(10))
        );
    }

    #[test]
    fn no_ops() {
        let cases = [
            (
                r##"{"action":"tap","target":"#save"}"##,
                NoEffect::Disabled(6),
            ),
            (
                r##"{"action":"type","target":"#save","text":"x"}"##,
                NoEffect::Disabled(6),
            ),
            (
                r##"{"action":"tap","target":"#title"}"##,
                NoEffect::NonInteractive(8),
            ),
            (
                r##"{"action":"long_press","target":"Network"}"##,
                NoEffect::NonInteractive(8),
            ),
            (
                r##"{"action":"tap","target":"#missing"}"##,
                NoEffect::TargetNotFound,
            ),
            (
                r##"{"action":"type","target":"#title","text":"x"}"##,
                NoEffect::NotEditable(8),
            ),
            (
                r##"{"action":"toggle","target":"#next"}"##,
                NoEffect::NotCheckable(7),
            ),
            (
                r##"{"action":"tap","target":"#pin"}"##,
                NoEffect::AlreadySo(5),
            ),
            (
                r##"{"action":"type","target":"#pin","text":""}"##,
                NoEffect::AlreadySo(5),
            ),
            (
                r##"{"action":"scroll","target":"#save","direction":"down"}"##,
                NoEffect::Disabled(6),
            ),
        ];
        for (json, why) in cases {
            assert_eq!(run(json).1, Outcome::Unchanged(why), "{json}");
        }
        let tree = parse_compact("EditText #e").unwrap().tree;
        let out = apply(
            &tree,
            &AndroidAction::parse(r#"{"action":"type","text":"x"}"#).unwrap(),
        );
        assert_eq!(out, Outcome::Unchanged(NoEffect::NoFocusedField));
    }

    #[test]
    fn screen_changes_are_not_computable() {
        for json in [
            r##"{"action":"tap","target":"#next"}"##,
            r#"{"action":"tap","target":"Wi-Fi"}"#,
            r##"{"action":"long_press","target":"#search"}"##,
            r#"{"action":"back"}"#,
            r#"{"action":"swipe","direction":"up"}"#,
            r#"{"action":"scroll","direction":"down"}"#,
            r#"{"action":"open_app","app":"Settings"}"#,
        ] {
            let (before, out) = run(json);
            assert!(matches!(out, Outcome::NotComputable(_)), "{json}: {out:?}");
            assert!(out.tree_after(&before).is_none());
        }
    }
}
