//! Choosing a step for a state (a local edit, a no-op, a scroll or a back), writing its target,
//! and the thinking sentence.

use super::augment::{Synthetic, TYPED, insert_synthetic};
use super::moves::{
    OVERLAY_ID, close_overlay, made_up_text, scroll_action, scroll_amount, scroll_list,
    scroll_lists,
};
use crate::rng::Rng;
use agentworld_world::action::android::{AndroidAction, NoEffect, Outcome, Target, apply};
use agentworld_world::state::android::AndroidTree;

/// The kinds of step the generator makes, with their weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Type into an editable node.
    Type,
    /// Tap or toggle a checkable node.
    Toggle,
    /// Any action on a disabled node.
    Disabled,
    /// A tap or long press on a node with nothing interactive at or above it.
    NonInteractive,
    /// An invalid action (typing into a label, toggling a button, a missing id).
    Invalid,
    /// Scroll a list down ([`super::moves`]: the list shifts by half its items).
    Scroll,
    /// Back with a dialog on screen ([`super::moves`]: the dialog closes).
    Back,
}

/// Kinds and weights.
pub const KINDS: [(Kind, u32); 7] = [
    (Kind::Type, 22),
    (Kind::Toggle, 22),
    (Kind::Disabled, 16),
    (Kind::NonInteractive, 18),
    (Kind::Invalid, 7),
    (Kind::Scroll, 10),
    (Kind::Back, 5),
];

/// A chosen step: the action, its outcome on the (possibly extended) tree, and the exact
/// next state.
pub struct Step {
    /// The action.
    pub action: AndroidAction,
    /// Its outcome by [`apply`]: an edit or a no-op, or [`Outcome::NotComputable`] for the
    /// generator-defined moves (scroll, back) whose effect is fixed by [`super::moves`].
    pub outcome: Outcome,
    /// The state after the step.
    pub after: AndroidTree,
}

/// Picks a step of `kind` on `tree`. With `allow_insert`, a synthetic node is inserted when
/// the tree lacks a suitable one (and sometimes anyway), so `tree` may grow; scroll and back
/// never insert (the episode prepares their list or dialog). `None` when no exact step was
/// found.
pub fn pick_step(
    tree: &mut AndroidTree,
    kind: Kind,
    rng: &mut Rng,
    allow_insert: bool,
) -> Option<Step> {
    match kind {
        Kind::Scroll => {
            let list = *rng.pick(&scroll_lists(tree))?;
            let after = scroll_list(tree, list, &mut |old| made_up_text(rng, old))?;
            let action = scroll_action(target_for(tree, list, rng));
            // the target must name the list itself
            (action_target(&action)?.resolve(tree) == Some(list)).then_some(())?;
            let outcome = apply(tree, &action);
            return Some(Step {
                action,
                outcome,
                after,
            });
        }
        Kind::Back => {
            let after = close_overlay(tree)?;
            let action = AndroidAction::Back;
            let outcome = apply(tree, &action);
            return Some(Step {
                action,
                outcome,
                after,
            });
        }
        _ => {}
    }
    let candidate =
        |tree: &mut AndroidTree,
         rng: &mut Rng,
         ok: &dyn Fn(&AndroidTree, usize) -> bool,
         make: Synthetic| { candidate(tree, rng, ok, make, allow_insert) };
    let action = match kind {
        Kind::Type => {
            let i = candidate(
                tree,
                rng,
                &|t, i| t.nodes[i].is_editable() && t.nodes[i].flags.enabled,
                Synthetic::Field,
            )?;
            let text = rng.pick(&TYPED)?.to_string();
            // append only to text typed earlier (a focused field), never to a hint
            let append =
                tree.nodes[i].flags.focused && !tree.nodes[i].text.is_empty() && rng.chance(0.3);
            let target = if tree.nodes[i].flags.focused && rng.chance(0.5) {
                None
            } else {
                Some(target_for(tree, i, rng))
            };
            AndroidAction::Type {
                target,
                text,
                append,
            }
        }
        Kind::Toggle => {
            let i = candidate(
                tree,
                rng,
                &|t, i| t.nodes[i].flags.checkable && t.nodes[i].flags.enabled,
                Synthetic::Checkable,
            )?;
            let target = target_for(tree, i, rng);
            if rng.chance(0.5) {
                AndroidAction::Tap { target }
            } else {
                AndroidAction::Toggle { target }
            }
        }
        Kind::Disabled => {
            let i = candidate(
                tree,
                rng,
                &|t, i| !t.nodes[i].flags.enabled,
                Synthetic::DisabledButton,
            )?;
            let target = target_for(tree, i, rng);
            match rng.below(3) {
                0 => AndroidAction::Toggle { target },
                1 => AndroidAction::Type {
                    target: Some(target),
                    text: rng.pick(&TYPED)?.to_string(),
                    append: false,
                },
                _ => AndroidAction::Tap { target },
            }
        }
        Kind::NonInteractive => {
            let quiet = |t: &AndroidTree, i: usize| {
                let n = &t.nodes[i];
                n.flags.enabled
                    && !n.is_interactive()
                    && (!n.text.is_empty() || !n.content_desc.is_empty())
                    && t.ancestors(i)
                        .iter()
                        .all(|&a| !t.nodes[a].flags.clickable && !t.nodes[a].flags.long_clickable)
            };
            let i = candidate(tree, rng, &quiet, Synthetic::Label)?;
            let target = target_for(tree, i, rng);
            if rng.chance(0.8) {
                AndroidAction::Tap { target }
            } else {
                AndroidAction::LongPress { target }
            }
        }
        Kind::Invalid => match rng.below(3) {
            0 => {
                let i = candidate(
                    tree,
                    rng,
                    &|t, i| {
                        !t.nodes[i].is_editable()
                            && t.nodes[i].flags.enabled
                            && !t.nodes[i].text.is_empty()
                    },
                    Synthetic::Label,
                )?;
                AndroidAction::Type {
                    target: Some(target_for(tree, i, rng)),
                    text: rng.pick(&TYPED)?.to_string(),
                    append: false,
                }
            }
            1 => {
                let i = candidate(
                    tree,
                    rng,
                    &|t, i| !t.nodes[i].flags.checkable && t.nodes[i].flags.enabled,
                    Synthetic::Label,
                )?;
                AndroidAction::Toggle {
                    target: target_for(tree, i, rng),
                }
            }
            _ => AndroidAction::Tap {
                target: Target::Id(["close_button", "menu_more", "fab_add"][rng.below(3)].into()),
            },
        },
        Kind::Scroll | Kind::Back => return None,
    };
    let outcome = apply(tree, &action);
    let expected = match (&outcome, kind) {
        (Outcome::NotComputable(_), _) => false,
        (Outcome::Edited { .. }, Kind::Type | Kind::Toggle) => true,
        (Outcome::Unchanged(NoEffect::AlreadySo(_)), Kind::Type | Kind::Toggle) => false,
        (Outcome::Unchanged(NoEffect::Disabled(_)), Kind::Disabled) => true,
        (Outcome::Unchanged(NoEffect::NonInteractive(_)), Kind::NonInteractive) => true,
        (
            Outcome::Unchanged(
                NoEffect::NotEditable(_) | NoEffect::NotCheckable(_) | NoEffect::TargetNotFound,
            ),
            Kind::Invalid,
        ) => true,
        _ => false,
    };
    let after = outcome.tree_after(tree)?.clone();
    expected.then_some(Step {
        action,
        outcome,
        after,
    })
}

fn action_target(action: &AndroidAction) -> Option<&Target> {
    match action {
        AndroidAction::Scroll { target, .. } => target.as_ref(),
        _ => None,
    }
}

/// A node satisfying `ok`, or (with `allow_insert`) a synthetic one inserted for the purpose
/// (always 30% of the time, to vary the states).
fn candidate(
    tree: &mut AndroidTree,
    rng: &mut Rng,
    ok: &dyn Fn(&AndroidTree, usize) -> bool,
    make: Synthetic,
    allow_insert: bool,
) -> Option<usize> {
    let found: Vec<usize> = (0..tree.len()).filter(|&i| ok(tree, i)).collect();
    if allow_insert && (found.is_empty() || rng.chance(0.3)) {
        let i = insert_synthetic(tree, make, rng)?;
        return ok(tree, i).then_some(i);
    }
    rng.pick(&found).copied()
}

/// How to name node `i`: a unique `#id`, a unique text or content-desc, its index, or its
/// centre point when a touch there lands on it.
pub fn target_for(tree: &AndroidTree, i: usize, rng: &mut Rng) -> Target {
    let n = &tree.nodes[i];
    let mut options = vec![Target::Index(i)];
    let id = n.short_id();
    if !n.resource_id.is_empty() && tree.find_by_id(&id) == [i] {
        options.extend([Target::Id(id.clone()), Target::Id(id)]);
    }
    let label = if n.text.is_empty() {
        &n.content_desc
    } else {
        &n.text
    };
    if !label.is_empty() && !label.starts_with('#') && tree.find_by_text(label) == [i] {
        options.push(Target::Text(label.clone()));
    }
    if let Some(b) = n.bounds {
        let (x, y) = b.center();
        if b.area() > 0 && tree.hit_test(x, y) == Some(i) && rng.chance(0.5) {
            options.push(Target::Point { x, y });
        }
    }
    rng.pick(&options).cloned().unwrap_or(Target::Index(i))
}

/// One sentence of world-model reasoning for a step on `before`.
pub fn thinking(before: &AndroidTree, action: &AndroidAction, outcome: &Outcome) -> String {
    let label = |i: usize| before.nodes[i].label();
    match action {
        AndroidAction::Scroll {
            target: Some(t), ..
        } => {
            if let Some(list) = t.resolve(before) {
                let n = before.children(list).len();
                let k = scroll_amount(n);
                return format!(
                    "Scroll: list {} has {n} items, so scrolling down moves it by {k}: the first {k} leave, the rest move up {k} slot(s) and {k} new item(s) appear at the end; nothing else changes.",
                    label(list)
                );
            }
        }
        AndroidAction::Back => {
            if let Some(&d) = before.find_by_id(OVERLAY_ID).last() {
                let title = before
                    .children(d)
                    .into_iter()
                    .map(|c| before.nodes[c].text.clone())
                    .find(|t| !t.is_empty())
                    .unwrap_or_default();
                return format!(
                    "Back: the dialog {title:?} is open, so back closes it and removes its subtree; the screen beneath is unchanged."
                );
            }
        }
        _ => {}
    }
    let verb = match action {
        AndroidAction::Type { .. } => "typing",
        AndroidAction::Toggle { .. } => "toggle",
        AndroidAction::LongPress { .. } => "long press",
        _ => "tap",
    };
    match outcome {
        Outcome::Edited { tree, target, changed } => {
            let (t, after) = (&before.nodes[*target], &tree.nodes[*target]);
            match action {
                AndroidAction::Type { text, .. } => format!(
                    "Local edit: typing {text:?} into field {} sets its text to {:?} and gives it focus; every other node stays as it was.",
                    label(*target),
                    after.text
                ),
                _ if t.flags.checkable && changed.len() > 1 => format!(
                    "Local edit: selecting {} checks it and unchecks the other choice in its group; the rest is unchanged.",
                    label(*target)
                ),
                _ if t.flags.checkable => format!(
                    "Local edit: {} is checkable, so the {verb} turns it {} (checked {} -> {}); every other node stays as it was.",
                    label(*target),
                    if after.flags.checked { "on" } else { "off" },
                    t.flags.checked,
                    after.flags.checked
                ),
                _ => format!("Local edit: the {verb} moves focus to field {}; nothing else changes.", label(*target)),
            }
        }
        Outcome::Unchanged(NoEffect::Disabled(i)) => {
            format!("{} is disabled, so the {verb} has no effect and the screen is returned unchanged.", label(*i))
        }
        Outcome::Unchanged(NoEffect::NonInteractive(i)) => format!(
            "{} is not interactive and nothing above it is clickable, so the {verb} changes nothing.",
            label(*i)
        ),
        Outcome::Unchanged(NoEffect::NotEditable(i)) => {
            format!("{} is not a text field, so typing into it has no effect; the state stays the same.", label(*i))
        }
        Outcome::Unchanged(NoEffect::NotCheckable(i)) => {
            format!("{} is not checkable, so the toggle does nothing; the state stays the same.", label(*i))
        }
        Outcome::Unchanged(NoEffect::TargetNotFound) => {
            "No node on this screen matches the target, so the action is invalid and the screen stays as it is.".into()
        }
        Outcome::Unchanged(NoEffect::NoFocusedField) => "No text field has focus, so the typed text goes nowhere; the state is unchanged.".into(),
        Outcome::Unchanged(NoEffect::AlreadySo(i)) => format!("{} is already in that state, so nothing changes.", label(*i)),
        Outcome::NotComputable(why) => format!("Screen change: {why}."),
    }
}
