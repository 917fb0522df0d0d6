//! Android UI actions: a small JSON schema, and the exact effect of local edits.
//!
//! One JSON object per action, tagged by `"action"`:
//!
//! ```json
//! {"action": "tap", "target": T}
//! {"action": "long_press", "target": T}
//! {"action": "toggle", "target": T}
//! {"action": "type", "target": T, "text": "hello"}         // target optional: the focused field
//! {"action": "type", "target": T, "text": "!", "append": true}
//! {"action": "scroll", "target": T, "direction": "down"}   // target optional
//! {"action": "swipe", "direction": "left"}                 // or "from": [x, y], "to": [x, y]
//! {"action": "back"}  {"action": "home"}  {"action": "enter"}  {"action": "wait"}
//! {"action": "open_app", "app": "Settings"}
//! ```
//!
//! A target `T` is a node index in pre-order (`3`; the line number, from 0, of the
//! `android-compact` form), a resource-id written `"#wifi"` (short or full id), a text
//! (`"Wi-Fi"`: the node whose text, else content-desc, equals it), or an object: `{"index": 3}`,
//! `{"id": "wifi"}`, `{"text": "#hashtag"}`, `{"x": 540, "y": 1200}` (the node a touch there
//! lands on). When several nodes match, the first in pre-order is taken. Directions are
//! `up`, `down`, `left`, `right`.
//!
//! [`apply`] computes local edits exactly and reports everything else as not computable.

mod apply;
pub mod forms;
mod target;

pub use apply::{NoEffect, Outcome, apply};
pub use target::Target;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// A swipe or scroll direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Towards the top.
    Up,
    /// Towards the bottom.
    Down,
    /// Towards the left.
    Left,
    /// Towards the right.
    Right,
}

/// An Android UI action (see the module docs for the JSON schema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum AndroidAction {
    /// Tap a node.
    Tap {
        /// What to tap.
        target: Target,
    },
    /// Press and hold a node.
    LongPress {
        /// What to press.
        target: Target,
    },
    /// Tap a checkable node to flip it (an error-free no-op on anything else).
    Toggle {
        /// The switch, checkbox or radio button.
        target: Target,
    },
    /// Type text into an editable node.
    Type {
        /// The field; the focused editable node when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<Target>,
        /// The text to type.
        text: String,
        /// Append to the current text instead of replacing it.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        append: bool,
    },
    /// Scroll a container (or the screen).
    Scroll {
        /// The container; the screen when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<Target>,
        /// Which way the content moves into view.
        direction: Direction,
    },
    /// Swipe across the screen, by direction or between two points.
    Swipe {
        /// A direction, when not given by points.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        direction: Option<Direction>,
        /// Start point.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<[i32; 2]>,
        /// End point.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<[i32; 2]>,
    },
    /// The system back button.
    Back,
    /// The system home button.
    Home,
    /// The keyboard's enter / IME action.
    Enter,
    /// Wait for the screen to settle.
    Wait,
    /// Launch an app by name.
    OpenApp {
        /// The app's name.
        app: String,
    },
}

impl AndroidAction {
    /// Reads an action from JSON text.
    pub fn parse(json: &str) -> Result<Self> {
        serde_json::from_str(json).map_err(|e| Error::Action(e.to_string()))
    }

    /// The action as compact JSON, `"action"` first.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The action's name as written in the schema (`tap`, `long_press`, …).
    pub fn name(&self) -> &'static str {
        match self {
            AndroidAction::Tap { .. } => "tap",
            AndroidAction::LongPress { .. } => "long_press",
            AndroidAction::Toggle { .. } => "toggle",
            AndroidAction::Type { .. } => "type",
            AndroidAction::Scroll { .. } => "scroll",
            AndroidAction::Swipe { .. } => "swipe",
            AndroidAction::Back => "back",
            AndroidAction::Home => "home",
            AndroidAction::Enter => "enter",
            AndroidAction::Wait => "wait",
            AndroidAction::OpenApp { .. } => "open_app",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        let cases = [
            (
                r##"{"action":"tap","target":"#wifi"}"##,
                AndroidAction::Tap {
                    target: Target::Id("wifi".into()),
                },
            ),
            (
                r#"{"action":"tap","target":3}"#,
                AndroidAction::Tap {
                    target: Target::Index(3),
                },
            ),
            (
                r#"{"action":"long_press","target":{"x":5,"y":6}}"#,
                AndroidAction::LongPress {
                    target: Target::Point { x: 5, y: 6 },
                },
            ),
            (
                r#"{"action":"toggle","target":"Wi-Fi"}"#,
                AndroidAction::Toggle {
                    target: Target::Text("Wi-Fi".into()),
                },
            ),
            (
                r##"{"action":"type","target":{"text":"#tag"},"text":"hi","append":true}"##,
                AndroidAction::Type {
                    target: Some(Target::Text("#tag".into())),
                    text: "hi".into(),
                    append: true,
                },
            ),
            (
                r#"{"action":"type","text":"hi"}"#,
                AndroidAction::Type {
                    target: None,
                    text: "hi".into(),
                    append: false,
                },
            ),
            (
                r#"{"action":"scroll","direction":"down"}"#,
                AndroidAction::Scroll {
                    target: None,
                    direction: Direction::Down,
                },
            ),
            (
                r#"{"action":"swipe","from":[1,2],"to":[3,4]}"#,
                AndroidAction::Swipe {
                    direction: None,
                    from: Some([1, 2]),
                    to: Some([3, 4]),
                },
            ),
            (r#"{"action":"back"}"#, AndroidAction::Back),
            (
                r#"{"action":"open_app","app":"Clock"}"#,
                AndroidAction::OpenApp {
                    app: "Clock".into(),
                },
            ),
        ];
        for (json, want) in cases {
            let got = AndroidAction::parse(json).unwrap();
            assert_eq!(got, want, "{json}");
            assert_eq!(
                AndroidAction::parse(&got.to_json()).unwrap(),
                want,
                "{json}"
            );
        }
    }

    #[test]
    fn writes_action_first_and_skips_defaults() {
        let a = AndroidAction::Type {
            target: Some(Target::Id("q".into())),
            text: "tea".into(),
            append: false,
        };
        assert_eq!(
            a.to_json(),
            r##"{"action":"type","target":"#q","text":"tea"}"##
        );
        assert_eq!(a.name(), "type");
        assert_eq!(AndroidAction::Home.to_json(), r#"{"action":"home"}"#);
    }

    #[test]
    fn rejects_bad_actions() {
        for bad in [
            r#"{"action":"fly"}"#,
            r#"{"action":"tap"}"#,
            r#"{"action":"tap","target":true}"#,
            r#"{"action":"tap","target":-1}"#,
            r#"{"action":"type","target":1}"#,
            r#"{"action":"scroll","direction":"sideways"}"#,
            r#"{"action":"tap","target":1,"extra":1}"#,
            "tap(3)",
        ] {
            assert!(AndroidAction::parse(bad).is_err(), "{bad}");
        }
    }
}
