//! Picking one action on a desktop, with its exact next state and a one-sentence reason.

use super::build::Words;
use super::desktop::{Control, DesktopTree};
use crate::rng::Rng;

/// The kinds of step, with their weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Click a check box: it toggles.
    Toggle,
    /// Click a text field: it takes the focus.
    Focus,
    /// Type into the focused field.
    Type,
    /// Backspace in the focused field.
    Backspace,
    /// Click a launcher whose app is closed: its window opens.
    Launch,
    /// Click a launcher whose app is open: nothing.
    Relaunch,
    /// Click a close button: the window goes.
    Close,
    /// Click a disabled button: nothing.
    Disabled,
    /// Click empty desktop space: nothing.
    Empty,
    /// Click a frame, label, list item or real-tree node: nothing.
    Static,
    /// Type with no focused field: nothing.
    TypeNowhere,
    /// Move the pointer, copy, or wait: nothing.
    Idle,
}

const KINDS: [(Kind, u32); 12] = [
    (Kind::Toggle, 4),
    (Kind::Focus, 3),
    (Kind::Type, 4),
    (Kind::Backspace, 1),
    (Kind::Launch, 4),
    (Kind::Relaunch, 1),
    (Kind::Close, 3),
    (Kind::Disabled, 1),
    (Kind::Empty, 1),
    (Kind::Static, 1),
    (Kind::TypeNowhere, 1),
    (Kind::Idle, 1),
];

/// A step: the action text, its reason and the next state.
#[derive(Debug, Clone)]
pub struct Step {
    /// The kind picked.
    pub kind: Kind,
    /// pyautogui code (or `WAIT`).
    pub action: String,
    /// One sentence on the effect.
    pub thinking: String,
    /// The state after the action.
    pub after: DesktopTree,
}

fn click(rng: &mut Rng, (x, y): (i32, i32)) -> String {
    if rng.chance(0.2) {
        format!("pyautogui.click(x={x}, y={y})")
    } else {
        format!("pyautogui.click({x}, {y})")
    }
}

/// Nodes with `pred` whose centre hits them (not covered by a later node).
fn clickable(t: &DesktopTree, pred: impl Fn(usize) -> bool) -> Vec<usize> {
    (0..t.nodes.len())
        .filter(|&i| pred(i))
        .filter(|&i| {
            t.nodes[i]
                .center()
                .is_some_and(|(x, y)| t.hit(x, y) == Some(i))
        })
        .collect()
}

fn is_interactive_role(tag: &str) -> bool {
    [
        "button", "check", "text", "entry", "menu", "link", "toggle", "combo", "radio", "tab",
    ]
    .iter()
    .any(|r| tag.contains(r))
}

/// Whether a kind never changes the state.
pub fn is_noop(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Relaunch
            | Kind::Disabled
            | Kind::Empty
            | Kind::Static
            | Kind::TypeNowhere
            | Kind::Idle
    )
}

/// Picks a step of a kind that applies, preferring `favour` (the natural follow-up of the
/// previous step) with probability 0.7; with `allow_noop` false, only steps that change the
/// state.
pub fn pick_step(
    t: &DesktopTree,
    favour: Option<Kind>,
    allow_noop: bool,
    words: &Words,
    rng: &mut Rng,
) -> Option<Step> {
    pick_of(&KINDS, t, favour, allow_noop, words, rng)
}

/// The kinds of a drill: steps on a control of a window.
const EDIT_KINDS: [(Kind, u32); 5] = [
    (Kind::Toggle, 4),
    (Kind::Focus, 3),
    (Kind::Type, 4),
    (Kind::Backspace, 1),
    (Kind::Disabled, 1),
];

/// Picks a step on a control (a drill, [`super::OsDataConfig::drill_share`]): toggling a
/// check box, focusing a field, typing or backspace in the focused one, or clicking a
/// disabled button.
pub fn pick_edit_step(t: &DesktopTree, words: &Words, rng: &mut Rng) -> Option<Step> {
    pick_of(&EDIT_KINDS, t, None, true, words, rng)
}

fn pick_of(
    kinds: &[(Kind, u32)],
    t: &DesktopTree,
    favour: Option<Kind>,
    allow_noop: bool,
    words: &Words,
    rng: &mut Rng,
) -> Option<Step> {
    for attempt in 0..30 {
        let kind = match favour {
            Some(k) if attempt == 0 && rng.chance(0.7) => k,
            _ => {
                let w: Vec<u32> = kinds.iter().map(|(_, w)| *w).collect();
                kinds[rng.weighted(&w)].0
            }
        };
        if !allow_noop && is_noop(kind) {
            continue;
        }
        if let Some(s) = try_kind(t, kind, words, rng) {
            return Some(s);
        }
    }
    None
}

fn try_kind(t: &DesktopTree, kind: Kind, words: &Words, rng: &mut Rng) -> Option<Step> {
    let n = &t.nodes;
    let (action, thinking) = match kind {
        Kind::Toggle
        | Kind::Focus
        | Kind::Disabled
        | Kind::Close
        | Kind::Static
        | Kind::Launch
        | Kind::Relaunch => {
            let targets = clickable(t, |i| match (kind, n[i].control) {
                (Kind::Toggle, Control::CheckBox) => true,
                (Kind::Focus, Control::Field) => n[i].description != "focused",
                (Kind::Disabled, Control::Disabled) => true,
                (Kind::Close, Control::Close) => true,
                (Kind::Static, Control::Frame(_)) => true,
                (Kind::Static, Control::Static) => !is_interactive_role(&n[i].tag),
                (Kind::Launch, Control::Launcher(k)) => !t.is_open(k),
                (Kind::Relaunch, Control::Launcher(k)) => t.is_open(k),
                _ => false,
            });
            let &i = rng.pick(&targets)?;
            let node = &n[i];
            let title = t.window_title(i).unwrap_or("the desktop");
            let why = match kind {
                Kind::Toggle => {
                    let now = if node.description == "checked" {
                        "unchecked"
                    } else {
                        "checked"
                    };
                    format!(
                        "The click lands on the '{}' check box, so it becomes {now}.",
                        node.name
                    )
                }
                Kind::Focus => format!(
                    "The click lands on the text field of '{title}', so it takes the keyboard focus."
                ),
                Kind::Disabled => format!(
                    "The click lands on the disabled '{}' button, so nothing changes.",
                    node.name
                ),
                Kind::Close => format!(
                    "The click lands on the close button of '{title}', so that window and its elements disappear."
                ),
                Kind::Launch => format!(
                    "The click lands on the '{}' launcher, so its window opens with its default contents.",
                    node.name
                ),
                Kind::Relaunch => format!(
                    "The '{}' window is already open, so clicking its launcher changes nothing.",
                    node.name
                ),
                _ => format!(
                    "The click lands on the {} '{}', which does nothing, so the state is unchanged.",
                    node.tag, node.name
                ),
            };
            (click(rng, node.center()?), why)
        }
        Kind::Type | Kind::Backspace | Kind::TypeNowhere => {
            let focused = t.focused();
            match kind {
                Kind::Type => {
                    focused?;
                    let phrase = rng.pick(words.phrases)?;
                    let text = if rng.chance(0.5) {
                        format!(" {phrase}")
                    } else {
                        phrase.to_string()
                    };
                    let f = if rng.chance(0.5) {
                        "typewrite"
                    } else {
                        "write"
                    };
                    (
                        format!("pyautogui.{f}('{text}')"),
                        format!(
                            "The focused text field receives '{text}', so its text grows by exactly that."
                        ),
                    )
                }
                Kind::Backspace => {
                    if n[focused?].text.is_empty() {
                        return None;
                    }
                    (
                        "pyautogui.press('backspace')".to_string(),
                        "Backspace deletes the last character of the focused text field."
                            .to_string(),
                    )
                }
                _ => {
                    if focused.is_some() {
                        return None;
                    }
                    let phrase = rng.pick(words.phrases)?;
                    (
                        format!("pyautogui.typewrite('{phrase}')"),
                        "No text field has the keyboard focus, so the typed text goes nowhere and nothing changes.".to_string(),
                    )
                }
            }
        }
        Kind::Empty => {
            let (x, y) = (0..20)
                .map(|_| (rng.range(0, 1919) as i32, rng.range(0, 1079) as i32))
                .find(|&(x, y)| t.hit(x, y).is_none())?;
            (
                click(rng, (x, y)),
                "The click hits empty desktop space, so nothing changes.".to_string(),
            )
        }
        Kind::Idle => match rng.below(3) {
            0 => (
                format!(
                    "pyautogui.moveTo({}, {})",
                    rng.range(0, 1919),
                    rng.range(0, 1079)
                ),
                "Moving the pointer changes no element, so the state is unchanged.".to_string(),
            ),
            1 => (
                "pyautogui.hotkey('ctrl', 'c')".to_string(),
                "Copying changes nothing on screen, so the state is unchanged.".to_string(),
            ),
            _ => (
                "WAIT".to_string(),
                "Waiting changes nothing on this desktop.".to_string(),
            ),
        },
    };
    let after = t.apply(&action).ok()?;
    Some(Step {
        kind,
        action,
        thinking,
        after,
    })
}

/// The natural follow-up of a step kind, for multi-turn rows.
pub fn follow_up(kind: Kind) -> Option<Kind> {
    match kind {
        Kind::Focus => Some(Kind::Type),
        Kind::Type => Some(Kind::Backspace),
        Kind::Launch => Some(Kind::Close),
        _ => None,
    }
}
