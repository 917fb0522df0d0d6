//! Agent actions: one parser per domain behind [`parse_action`], target checks against the
//! current state ([`check_targets`]), and the Android actions the world layer can apply exactly.
//!
//! | domain | file | form |
//! |---|---|---|
//! | web | [`web`] | BrowserGym calls `click('12')`, or WebArena brackets `click [12]` |
//! | android | [`android`] | JSON: our `"action"` schema, AndroidWorld `"action_type"`, DroidBot `"event_type"` |
//! | os | [`os`] | pyautogui statements, or `WAIT` / `DONE` / `FAIL` |
//! | terminal | [`terminal`] | `[{"keystrokes", "duration"}]`, `[]`, `""` |
//! | mcp, search, swe | [`tool`] | `{"name", "arguments"}` |
//!
//! Parsing only reads text: nothing is executed. Errors name the action and the argument.
//! Target checks only warn: what an action on a missing element does is for the world model
//! to predict.

pub mod android;
pub mod in_prompt;
pub mod named;
pub mod os;
pub mod pycall;
pub mod terminal;
pub mod tool;
pub mod web;

use std::fmt;

use crate::Domain;
use crate::state::{KeyKind, StateTree};

pub use android::forms::AndroidForm;
pub use android::{AndroidAction, Target};
pub use in_prompt::{CopySources, PromptState, copy_sources_in_prompt, state_in_prompt};
pub use named::{
    MarkedPrompt, TARGET_LEAD, mark_named_in_prompt, named_in_prompt, named_lines, named_nodes,
    target_lead, typed_in_prompt, typed_text,
};
pub use os::{OsAction, OsStep};
pub use terminal::{Keystrokes, TerminalAction};
pub use tool::ToolCall;
pub use web::{WebAction, WebSyntax};

/// Why an action text could not be read: names the action and the argument when it can
/// (`fill: argument 2 (value) missing`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionError {
    /// The message.
    pub message: String,
}

impl ActionError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> ActionError {
        ActionError {
            message: message.into(),
        }
    }

    /// The same error with `prefix: ` in front.
    pub fn prefixed(self, prefix: &str) -> ActionError {
        ActionError::new(format!("{prefix}: {}", self.message))
    }
}

impl fmt::Display for ActionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ActionError {}

impl From<ActionError> for crate::Error {
    fn from(e: ActionError) -> Self {
        crate::Error::Action(e.message)
    }
}

/// A parsed action of any domain.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A web action.
    Web(WebAction),
    /// An Android action, from any accepted JSON form.
    Android(AndroidForm),
    /// An OS action.
    Os(OsAction),
    /// A terminal action.
    Terminal(TerminalAction),
    /// A tool call (mcp, search, swe).
    Tool(ToolCall),
}

/// Parses `text` as an action of `domain`.
pub fn parse_action(domain: Domain, text: &str) -> Result<Action, ActionError> {
    match domain {
        Domain::Web => web::parse(text).map(Action::Web),
        Domain::Android => android::forms::parse(text).map(Action::Android),
        Domain::Os => os::parse(text).map(Action::Os),
        Domain::Terminal => terminal::parse(text).map(Action::Terminal),
        Domain::Search | Domain::Mcp | Domain::Swe => tool::parse(text).map(Action::Tool),
    }
}

/// Warnings for the elements `action` names that `state` does not have: a web bid with no node
/// of that id, an Android index past the end / resource-id / text not found, a point (web mouse,
/// Android, os pyautogui) inside no node's bounds (checked only when some node has bounds).
/// Empty when every target is found or the action names none.
pub fn check_targets(action: &Action, state: &StateTree) -> Vec<String> {
    let mut out = Vec::new();
    match action {
        Action::Web(a) => {
            for bid in a.bids() {
                let found = state.nodes.iter().any(|n| {
                    n.key.value == bid && matches!(n.key.kind, KeyKind::Bid | KeyKind::ElementId)
                });
                if !found {
                    out.push(format!(
                        "{}: no element with id '{bid}' in the current state",
                        a.name
                    ));
                }
            }
            for (x, y) in a.points() {
                check_point(&mut out, &a.name, state, x, y);
            }
        }
        Action::Android(AndroidForm::Ui(a)) => {
            if let Some(t) = android_target(a) {
                check_android(&mut out, a.name(), state, t);
            }
        }
        Action::Os(OsAction::Code(steps)) => {
            for step in steps {
                if let (OsStep::Call { name, .. }, Some((x, y))) = (step, step.point()) {
                    check_point(&mut out, name, state, x, y);
                }
            }
        }
        _ => {}
    }
    out
}

fn android_target(a: &AndroidAction) -> Option<&Target> {
    match a {
        AndroidAction::Tap { target }
        | AndroidAction::LongPress { target }
        | AndroidAction::Toggle { target } => Some(target),
        AndroidAction::Type { target, .. } | AndroidAction::Scroll { target, .. } => {
            target.as_ref()
        }
        _ => None,
    }
}

/// The first node whose resource-id is `id`, full (`com.x:id/ok`) or short (`ok`).
pub(crate) fn find_resource_id(state: &StateTree, id: &str) -> Option<usize> {
    state.nodes.iter().position(|n| {
        n.key.kind == KeyKind::ResourceId
            && (n.key.value == id
                || n.key
                    .value
                    .rsplit_once(":id/")
                    .is_some_and(|(_, s)| s == id))
    })
}

fn check_android(out: &mut Vec<String>, name: &str, state: &StateTree, target: &Target) {
    match target {
        Target::Index(i) if *i >= state.len() => out.push(format!(
            "{name}: no node with index {i} (the state has {})",
            state.len()
        )),
        Target::Index(_) => {}
        Target::Id(id) => {
            if find_resource_id(state, id).is_none() {
                out.push(format!(
                    "{name}: no node with resource-id '{id}' in the current state"
                ));
            }
        }
        Target::Text(t) => {
            if state.find_text(t).is_none() {
                out.push(format!(
                    "{name}: no node with text {t:?} in the current state"
                ));
            }
        }
        Target::Point { x, y } => check_point(out, name, state, f64::from(*x), f64::from(*y)),
    }
}

fn check_point(out: &mut Vec<String>, name: &str, state: &StateTree, x: f64, y: f64) {
    let mut any = false;
    let (xi, yi) = (x.floor() as i32, y.floor() as i32);
    for b in state.nodes.iter().filter_map(|n| n.bounds) {
        any = true;
        if b.width() > 0 && b.height() > 0 && b.contains(xi, yi) {
            return;
        }
    }
    if any {
        out.push(format!(
            "{name}: no element at ({x}, {y}) in the current state"
        ));
    }
}

/// Scans Python-like code a character at a time, tracking whether it is inside a `'…'` or
/// `"…"` literal (backslash escapes). Shared by the OS action reader and the renaming of
/// training rows (`agentworld-data`), which must both ignore what the literals hold.
#[derive(Debug, Default)]
pub struct Literals {
    quote: Option<char>,
    escaped: bool,
}

impl Literals {
    /// Feeds `c`; true when it is inside a literal (the opening and closing quotes are not).
    pub fn inside(&mut self, c: char) -> bool {
        match self.quote {
            Some(_) if self.escaped => {
                self.escaped = false;
                true
            }
            Some(_) if c == '\\' => {
                self.escaped = true;
                true
            }
            Some(q) if c == q => {
                self.quote = None;
                false
            }
            Some(_) => true,
            None => {
                if c == '\'' || c == '"' {
                    self.quote = Some(c);
                }
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{NodeKey, Rect, StateNode, TreeBuilder};

    fn tree() -> StateTree {
        let mut b = TreeBuilder::new("test");
        let mut root = StateNode::new("root");
        root.key = NodeKey::new(KeyKind::Bid, "1");
        root.bounds = Some(Rect::from_corners(0, 0, 100, 100));
        b.open(root);
        let mut leaf = StateNode::new("button");
        leaf.key = NodeKey::new(KeyKind::ResourceId, "com.x:id/ok");
        leaf.text = "OK".into();
        leaf.bounds = Some(Rect::from_corners(10, 10, 20, 20));
        b.leaf(leaf);
        b.close();
        b.finish()
    }

    fn warn(domain: Domain, text: &str) -> Vec<String> {
        check_targets(&parse_action(domain, text).unwrap(), &tree())
    }

    #[test]
    fn dispatches_by_domain() {
        assert!(matches!(
            parse_action(Domain::Web, "click('1')"),
            Ok(Action::Web(_))
        ));
        assert!(matches!(
            parse_action(Domain::Os, "DONE"),
            Ok(Action::Os(OsAction::Done))
        ));
        assert!(matches!(
            parse_action(Domain::Terminal, "[]"),
            Ok(Action::Terminal(_))
        ));
        for d in [Domain::Mcp, Domain::Search, Domain::Swe] {
            assert!(matches!(
                parse_action(d, r#"{"name": "x"}"#),
                Ok(Action::Tool(_))
            ));
        }
        assert!(matches!(
            parse_action(Domain::Android, r#"{"action_type": "navigate_back"}"#),
            Ok(Action::Android(AndroidForm::Ui(AndroidAction::Back)))
        ));
        let e: crate::Error = parse_action(Domain::Web, "fill('1')").unwrap_err().into();
        assert!(
            e.to_string().contains("fill: argument 2 (value) missing"),
            "{e}"
        );
    }

    #[test]
    fn warns_on_missing_targets_only() {
        assert!(warn(Domain::Web, "click('1')").is_empty());
        assert_eq!(
            warn(Domain::Web, "click('99')"),
            ["click: no element with id '99' in the current state"]
        );
        assert_eq!(warn(Domain::Web, "drag_and_drop('1', '7')").len(), 1);
        assert!(warn(Domain::Web, "mouse_click(50, 50)").is_empty());
        assert_eq!(warn(Domain::Web, "mouse_click(500, 50)").len(), 1);
        assert!(warn(Domain::Web, "goto('http://x')").is_empty());
        assert!(warn(Domain::Android, r#"{"action_type": "click", "index": 1}"#).is_empty());
        assert!(
            warn(Domain::Android, r#"{"action_type": "click", "index": 2}"#)[0].contains("index 2")
        );
        assert!(warn(Domain::Android, r##"{"action": "tap", "target": "#ok"}"##).is_empty());
        assert!(
            warn(Domain::Android, r##"{"action": "tap", "target": "#no"}"##)[0]
                .contains("resource-id 'no'")
        );
        assert!(warn(Domain::Android, r#"{"action": "tap", "target": "OK"}"#).is_empty());
        assert!(
            warn(Domain::Android, r#"{"action": "tap", "target": "Cancel"}"#)[0].contains("text")
        );
        assert!(warn(Domain::Os, "pyautogui.click(15, 15)").is_empty());
        assert_eq!(
            warn(
                Domain::Os,
                "pyautogui.click(150, 15)\npyautogui.typewrite('x')"
            ),
            ["click: no element at (150, 15) in the current state"]
        );
        assert!(warn(Domain::Terminal, "[]").is_empty());
    }
}
