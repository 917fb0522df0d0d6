//! The lines of a state an action names: the node a web bid, an Android target or a screen
//! point lands on (with its subtree), else, for typing with no target, the focused node.
//!
//! A world model's next state is mostly its current state copied, and an action's effect
//! starts at the element it names; the copy prior
//! ([`CopyPrior::released`](../../agentworld_model/sampling/struct.CopyPrior.html)) weighs the
//! model more on these lines than on the rest. Nothing here predicts the effect: these are
//! only the places where one is most likely.

use std::ops::Range;

use super::pycall::PyValue;
use super::{Action, AndroidAction, AndroidForm, OsAction, OsStep, Target, parse_action};
use crate::Domain;
use crate::state::{KeyKind, StateNode, StateTree};

/// Node indices (pre-order, sorted, no repeats) that `action` names in `state`, subtrees
/// included: web bids and points, the Android target (index, resource-id, text, point), the
/// node under an OS pyautogui point; for typing with no target (web `keyboard_type` /
/// `keyboard_insert_text`, OS `typewrite` / `write`, Android `type` without a target) the
/// deepest focused node. Empty when the action names nothing found in `state`.
pub fn named_nodes(action: &Action, state: &StateTree) -> Vec<usize> {
    let mut hits = Vec::new();
    match action {
        Action::Web(a) => {
            for bid in a.bids() {
                hits.extend((0..state.len()).filter(|&i| {
                    let k = &state.nodes[i].key;
                    k.value == bid && matches!(k.kind, KeyKind::Bid | KeyKind::ElementId)
                }));
            }
            hits.extend(
                a.points()
                    .into_iter()
                    .filter_map(|(x, y)| at_point(state, x, y)),
            );
            if matches!(a.name.as_str(), "keyboard_type" | "keyboard_insert_text") {
                hits.extend(focused(state));
            }
        }
        Action::Android(AndroidForm::Ui(a)) => match a {
            AndroidAction::Tap { target }
            | AndroidAction::LongPress { target }
            | AndroidAction::Toggle { target }
            | AndroidAction::Type {
                target: Some(target),
                ..
            }
            | AndroidAction::Scroll {
                target: Some(target),
                ..
            } => hits.extend(android_target(state, target)),
            AndroidAction::Type { target: None, .. } => hits.extend(focused(state)),
            _ => {}
        },
        Action::Os(OsAction::Code(steps)) => {
            for step in steps {
                if let Some((x, y)) = step.point() {
                    hits.extend(at_point(state, x, y));
                } else if let OsStep::Call { name, .. } = step
                    && matches!(name.as_str(), "typewrite" | "write")
                {
                    hits.extend(focused(state));
                }
            }
        }
        _ => {}
    }
    let mut out: Vec<usize> = hits
        .into_iter()
        .flat_map(|i| i..state.subtree_end(i))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Byte ranges of `state_text` (each a whole line, its newline included) holding the nodes
/// [`named_nodes`] finds for `action_text`: the state is read as `format`, the action as
/// `domain`'s. A format whose reader records no lines counts one node a non-blank line. Empty
/// when the action or the state cannot be read, when node lines cannot be told, or when the
/// action names nothing: the caller then treats every line alike.
pub fn named_lines(
    domain: Domain,
    action_text: &str,
    state_text: &str,
    format: &str,
) -> Vec<Range<usize>> {
    let Ok(action) = parse_action(domain, action_text) else {
        return Vec::new();
    };
    let Ok(parsed) = crate::state::Registry::standard().parse(format, state_text) else {
        return Vec::new();
    };
    let tree = &parsed.tree;
    let mut starts = vec![0];
    starts.extend(state_text.match_indices('\n').map(|(i, _)| i + 1));
    // A reader that records no lines (android-compact) with one node a non-blank line: the
    // i-th node is on the i-th non-blank line.
    let blank = |l: usize| {
        let end = starts.get(l).copied().unwrap_or(state_text.len());
        state_text[starts[l - 1]..end].trim().is_empty()
    };
    let by_order: Vec<usize> = (1..=starts.len()).filter(|&l| !blank(l)).collect();
    let unrecorded = tree.nodes.iter().all(|n| n.line == 0) && by_order.len() == tree.len();
    let mut lines: Vec<usize> = named_nodes(&action, tree)
        .into_iter()
        .map(|i| {
            if unrecorded {
                by_order[i]
            } else {
                tree.nodes[i].line
            }
        })
        .filter(|&l| l >= 1 && l <= starts.len())
        .collect();
    lines.dedup();
    lines
        .into_iter()
        .map(|l| starts[l - 1]..starts.get(l).copied().unwrap_or(state_text.len()))
        .collect()
}

/// [`named_lines`] for a rendered world-model prompt (any chat template): the action and the
/// state are the ones [`super::state_in_prompt`] finds (the last user turn's `**Action:**`
/// fence; that turn's `**Current State:**`, else the previous observation). Byte ranges of
/// `prompt`; empty when any part is missing.
pub fn named_in_prompt(prompt: &str, domain: Domain, format: &str) -> Vec<Range<usize>> {
    let Some(found) = super::state_in_prompt(prompt) else {
        return Vec::new();
    };
    let start = found.state.start;
    named_lines(domain, &prompt[found.action], &prompt[found.state], format)
        .into_iter()
        .map(|r| r.start + start..r.end + start)
        .collect()
}

/// The text an action types into the state: the value of a web `fill`, `type`,
/// `keyboard_type`, `keyboard_insert_text` or `select_option`, an Android `type`'s text, the
/// string of an OS `typewrite` or `write`. It is what a changed line most often gains (a
/// field's `value='…'`), copied from the action instead of from the state. Empty for an
/// action that types nothing.
pub fn typed_text(action: &Action) -> Vec<String> {
    fn strings(v: &PyValue, out: &mut Vec<String>) {
        match v {
            PyValue::Str(s) if !s.is_empty() => out.push(s.clone()),
            PyValue::List(items) => items.iter().for_each(|i| strings(i, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    match action {
        Action::Web(a)
            if matches!(
                a.name.as_str(),
                "fill" | "type" | "keyboard_type" | "keyboard_insert_text" | "select_option"
            ) =>
        {
            for (k, v) in &a.args {
                if matches!(k.as_str(), "value" | "text" | "options") {
                    strings(v, &mut out);
                }
            }
        }
        Action::Android(AndroidForm::Ui(AndroidAction::Type { text, .. })) if !text.is_empty() => {
            out.push(text.clone())
        }
        Action::Os(OsAction::Code(steps)) => {
            for step in steps {
                if let OsStep::Call { name, args } = step
                    && matches!(name.as_str(), "typewrite" | "write")
                {
                    args.iter().for_each(|(_, v)| strings(v, &mut out));
                }
            }
        }
        _ => {}
    }
    out
}

/// Byte ranges of a rendered world-model prompt holding the text its last action types
/// ([`typed_text`]), each found in the action's own text (the last occurrence, so that a
/// value equal to the bid before it is not taken for it). Empty when the prompt has no
/// action, it cannot be read, or it types nothing.
pub fn typed_in_prompt(prompt: &str, domain: Domain) -> Vec<Range<usize>> {
    let Some(found) = super::state_in_prompt(prompt) else {
        return Vec::new();
    };
    let text = &prompt[found.action.clone()];
    let Ok(action) = parse_action(domain, text) else {
        return Vec::new();
    };
    let mut ranges: Vec<Range<usize>> = typed_text(&action)
        .iter()
        .filter_map(|t| text.rfind(t.as_str()).map(|i| i..i + t.len()))
        .map(|r| r.start + found.action.start..r.end + found.action.start)
        .collect();
    ranges.sort_by_key(|r| r.start);
    ranges.dedup();
    ranges
}

/// A rendered world-model prompt with a marker at the start of each line the action names
/// ([`mark_named_in_prompt`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkedPrompt {
    /// The prompt, markers inserted.
    pub text: String,
    /// Byte offsets in [`Self::text`] where a marker starts, ascending.
    pub markers: Vec<usize>,
    /// The marker's length in bytes.
    pub marker_len: usize,
}

impl MarkedPrompt {
    /// Where byte `offset` of the unmarked prompt lies in [`Self::text`]: after every marker
    /// inserted before it (not one inserted at `offset` itself, so a named line's start
    /// maps to its marker).
    pub fn map(&self, offset: usize) -> usize {
        let before = self
            .markers
            .iter()
            .enumerate()
            .take_while(|&(k, &m)| m - k * self.marker_len < offset)
            .count();
        offset + before * self.marker_len
    }
}

/// Marks the lines of a rendered world-model prompt's current state that its action names
/// ([`named_in_prompt`]) with `marker` at the start of each line, so that a model reads which
/// line the action acts on where it copies that line instead of looking the action's id up
/// across the prompt (a card's `line_marker_by_domain`; docs/demo-model-2026-12-07-line-markers.md). The
/// marker is for the model alone: no target holds it, and the copy prior skips it. Nothing
/// named, or an empty marker: the prompt unchanged.
pub fn mark_named_in_prompt(
    prompt: &str,
    domain: Domain,
    format: &str,
    marker: &str,
) -> MarkedPrompt {
    let named = if marker.is_empty() {
        Vec::new()
    } else {
        named_in_prompt(prompt, domain, format)
    };
    let mut text = String::with_capacity(prompt.len() + named.len() * marker.len());
    let mut markers = Vec::with_capacity(named.len());
    let mut from = 0;
    for line in &named {
        text.push_str(&prompt[from..line.start]);
        markers.push(text.len());
        text.push_str(marker);
        from = line.start;
    }
    text.push_str(&prompt[from..]);
    MarkedPrompt {
        text,
        markers,
        marker_len: marker.len(),
    }
}

/// What a reasoning grounded on the action's element opens with: `Target: <its line>\n`, the
/// line (trimmed) of the node the last action of a rendered world-model prompt names (the
/// first of [`named_in_prompt`]), or `Target: none\n` when it names nothing in the state (a
/// missing bid, a point on empty space). `None` when the prompt has no action or no state.
///
/// The demo model misreads which element an action hits (on Web tune rows it called a
/// checkbox a link; on OS nearly every click "lands on a launcher"): a lookup of two hops
/// (action to element, element to its attributes) that the world layer does exactly, so a card
/// can have the engine write it at the top of the reasoning and the model read it there
/// (`target_in_thinking`; docs/demo-model-research-log.md).
pub fn target_lead(prompt: &str, domain: Domain, format: &str) -> Option<String> {
    super::state_in_prompt(prompt)?;
    let named = named_in_prompt(prompt, domain, format);
    let line = named.first().map_or("none", |r| prompt[r.clone()].trim());
    Some(format!("{TARGET_LEAD}{line}\n"))
}

/// The words a grounded reasoning opens with ([`target_lead`]).
pub const TARGET_LEAD: &str = "Target: ";

/// The deepest node with positive-area bounds holding the point (pixels).
fn at_point(state: &StateTree, x: f64, y: f64) -> Option<usize> {
    let (x, y) = (x.floor() as i32, y.floor() as i32);
    (0..state.len()).rev().find(|&i| {
        state.nodes[i]
            .bounds
            .is_some_and(|b| b.width() > 0 && b.height() > 0 && b.contains(x, y))
    })
}

/// The deepest focused node: `focused` set (axtree, Android), or an OS table's description
/// `focused`.
fn focused(state: &StateTree) -> Option<usize> {
    let is = |n: &StateNode| {
        n.attributes.iter().any(|(k, v)| {
            (k == "focused" && v != "false") || (k == "description" && v == "focused")
        })
    };
    (0..state.len()).rev().find(|&i| is(&state.nodes[i]))
}

fn android_target(state: &StateTree, target: &Target) -> Option<usize> {
    match target {
        Target::Index(i) => (*i < state.len()).then_some(*i),
        Target::Id(id) => super::find_resource_id(state, id),
        Target::Text(t) => state.find_text(t),
        Target::Point { x, y } => at_point(state, f64::from(*x), f64::from(*y)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines<'a>(domain: Domain, action: &str, state: &'a str, format: &str) -> Vec<&'a str> {
        named_lines(domain, action, state, format)
            .into_iter()
            .map(|r| &state[r])
            .collect()
    }

    const PAGE: &str = "RootWebArea 'Booking', focused\n\t[12] combobox 'Time', value='18:00'\n\t\t[14] option '18:00', selected=True\n\t\t[15] option '19:00'\n\t[18] textbox 'Guest name', focused\n\t[19] checkbox 'Quiet table', checked='false'\n";

    #[test]
    fn a_web_bid_names_its_line_and_subtree() {
        assert_eq!(
            lines(Domain::Web, "select_option('12', '19:00')", PAGE, "axtree"),
            [
                "\t[12] combobox 'Time', value='18:00'\n",
                "\t\t[14] option '18:00', selected=True\n",
                "\t\t[15] option '19:00'\n"
            ]
        );
        assert_eq!(
            lines(Domain::Web, "click('19')", PAGE, "axtree"),
            ["\t[19] checkbox 'Quiet table', checked='false'\n"],
            "the last line, newline included"
        );
        assert_eq!(
            lines(Domain::Web, "keyboard_type('Ada')", PAGE, "axtree"),
            ["\t[18] textbox 'Guest name', focused\n"],
            "typing: the deepest focused node, not the page"
        );
        assert!(lines(Domain::Web, "click('99')", PAGE, "axtree").is_empty());
        assert!(lines(Domain::Web, "go_back()", PAGE, "axtree").is_empty());
        assert!(
            lines(Domain::Web, "click(", PAGE, "axtree").is_empty(),
            "unreadable"
        );
    }

    #[test]
    fn a_rendered_prompt_names_the_lines_of_its_current_state() {
        let turn1 = crate::messages::turn_prompt(1, "click('19')", Some(PAGE));
        let prompt = format!(
            "<|im_start|>system\nYou are a Web World Model.<|im_end|>\n<|im_start|>user\n{turn1}<|im_end|>\n<|im_start|>assistant\n<think>\n"
        );
        let named: Vec<&str> = named_in_prompt(&prompt, Domain::Web, "axtree")
            .into_iter()
            .map(|r| &prompt[r])
            .collect();
        assert_eq!(named, ["\t[19] checkbox 'Quiet table', checked='false'\n"]);
        // A later turn without a state acts on the previous observation.
        let turn2 = crate::messages::turn_prompt(2, "click('18')", None);
        let observed = PAGE.replace("checked='false'", "checked='true'");
        let prompt = format!(
            "<|im_start|>user\n{turn1}<|im_end|>\n<|im_start|>assistant\n**Environment Observation:**\n{observed}<|im_end|>\n<|im_start|>user\n{turn2}<|im_end|>\n"
        );
        let named: Vec<std::ops::Range<usize>> = named_in_prompt(&prompt, Domain::Web, "axtree");
        assert_eq!(named.len(), 1);
        assert_eq!(
            &prompt[named[0].clone()],
            "\t[18] textbox 'Guest name', focused\n"
        );
        assert!(
            named[0].start > prompt.find("assistant").unwrap(),
            "in the observation"
        );
        assert!(named_in_prompt("no turn here", Domain::Web, "axtree").is_empty());
    }

    #[test]
    fn the_typed_text_is_found_in_the_action_not_in_the_state() {
        let typed = |action: &str| {
            let turn = crate::messages::turn_prompt(1, action, Some(PAGE));
            let prompt = format!("<|im_start|>user\n{turn}<|im_end|>\n");
            let ranges = typed_in_prompt(&prompt, Domain::Web);
            let action_at = prompt.find(action).unwrap();
            for r in &ranges {
                assert!(
                    r.start >= action_at && r.end <= action_at + action.len(),
                    "{action}"
                );
            }
            ranges
                .into_iter()
                .map(|r| prompt[r].to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(typed("fill('18', 'Ada Lovelace')"), ["Ada Lovelace"]);
        // The value equals the bid: the value's place, not the bid's.
        let turn = crate::messages::turn_prompt(1, "fill('18', '18')", Some(PAGE));
        let prompt = format!("<|im_start|>user\n{turn}<|im_end|>\n");
        let r = &typed_in_prompt(&prompt, Domain::Web)[0];
        assert_eq!(&prompt[r.start - 1..r.end + 1], "'18'");
        assert_eq!(&prompt[r.start - 7..r.start], "'18', '");
        assert_eq!(typed("select_option('12', '19:00')"), ["19:00"]);
        assert_eq!(typed("keyboard_type('Ada')"), ["Ada"]);
        assert!(typed("click('19')").is_empty(), "a click types nothing");
        assert!(
            typed("send_msg_to_user('done')").is_empty(),
            "nothing typed into the page"
        );
        let android = crate::messages::turn_prompt(
            1,
            r##"{"action": "type", "target": "#search", "text": "bluetooth"}"##,
            Some("FrameLayout [0,0][1080,2400]\n  EditText #search [0,0][1080,200]\n"),
        );
        let prompt = format!("<|im_start|>user\n{android}<|im_end|>\n");
        let found: Vec<&str> = typed_in_prompt(&prompt, Domain::Android)
            .into_iter()
            .map(|r| &prompt[r])
            .collect();
        assert_eq!(found, ["bluetooth"]);
        assert!(typed_in_prompt("no turn here", Domain::Web).is_empty());
    }

    #[test]
    fn a_marked_prompt_has_the_marker_before_each_named_line_only() {
        let turn = crate::messages::turn_prompt(1, "select_option('12', '19:00')", Some(PAGE));
        let prompt = format!("<|im_start|>user\n{turn}<|im_end|>\n<|im_start|>assistant\n");
        let marked = mark_named_in_prompt(&prompt, Domain::Web, "axtree", "^");
        assert_eq!(marked.markers.len(), 3, "the combobox and its two options");
        assert!(marked.text.contains("\n^\t[12] combobox 'Time'"));
        assert!(marked.text.contains("\n^\t\t[15] option '19:00'\n\t[18]"));
        assert_eq!(marked.text.replace('^', ""), prompt, "nothing else changes");
        for (k, &m) in marked.markers.iter().enumerate() {
            assert_eq!(&marked.text[m..m + 1], "^");
            assert_eq!(
                marked.map(m - k),
                m,
                "a named line's start maps to its marker"
            );
        }
        let after = prompt.find("[18]").unwrap();
        assert_eq!(&marked.text[marked.map(after)..][..4], "[18]");
        assert_eq!(marked.map(0), 0);
        let none = mark_named_in_prompt(&prompt, Domain::Web, "axtree", "");
        assert_eq!(
            (none.text.as_str(), none.markers.len()),
            (prompt.as_str(), 0)
        );
        let unnamed = prompt.replace("select_option('12', '19:00')", "go_back()");
        assert_eq!(
            mark_named_in_prompt(&unnamed, Domain::Web, "axtree", "^").text,
            unnamed
        );
    }

    #[test]
    fn an_os_point_names_the_node_under_it() {
        let table = "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)\n\
frame\tFind\t\"\"\t\t\t(100, 100)\t(400, 200)\n\
text\tSearch\t\"\"\t\tfocused\t(110, 140)\t(300, 28)\n\
check-box\tMatch case\t\"\"\t\tunchecked\t(110, 180)\t(160, 24)\n";
        assert_eq!(
            lines(
                Domain::Os,
                "pyautogui.click(120, 190)",
                table,
                "osworld-tsv"
            ),
            ["check-box\tMatch case\t\"\"\t\tunchecked\t(110, 180)\t(160, 24)\n"]
        );
        assert_eq!(
            lines(
                Domain::Os,
                "pyautogui.typewrite('hi')",
                table,
                "osworld-tsv"
            ),
            ["text\tSearch\t\"\"\t\tfocused\t(110, 140)\t(300, 28)\n"]
        );
        assert!(lines(Domain::Os, "pyautogui.click(5, 5)", table, "osworld-tsv").is_empty());
    }

    #[test]
    fn an_android_target_names_its_node() {
        let screen = "FrameLayout [0,0][1080,2400]\n  EditText #email \"\" focused [0,100][1080,200]\n  Switch #wifi_switch \"Wi-Fi\" checkable clickable [0,300][1080,400]\n";
        let named = |a: &str| lines(Domain::Android, a, screen, "android-compact");
        assert_eq!(
            named(r##"{"action": "toggle", "target": "#wifi_switch"}"##),
            ["  Switch #wifi_switch \"Wi-Fi\" checkable clickable [0,300][1080,400]\n"]
        );
        assert_eq!(
            named(r#"{"action": "type", "text": "a"}"#),
            ["  EditText #email \"\" focused [0,100][1080,200]\n"]
        );
    }
}
