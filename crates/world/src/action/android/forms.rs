//! Other JSON forms of Android actions, read into [`AndroidAction`].
//!
//! - our own schema, tagged by `"action"` (see the [module docs](super));
//! - AndroidWorld's `JSONAction` (google-research/android_world, `env/json_action.py`), tagged
//!   by `"action_type"`: `click`/`tap`, `long_press`, `input_text`/`type`, `keyboard_enter`,
//!   `navigate_home`/`home`, `navigate_back`/`back`, `scroll`, `swipe`, `open_app`, `wait`,
//!   with `index` or `x`/`y`, `text`, `direction`, `app_name`; `status` and `answer` are read as
//!   [`AndroidForm::Report`] (the agent reports, the screen does not change);
//! - DroidBot events (`shared/cases/trajectories/droidbot_acrylic/event_*.json`), tagged by
//!   `"event_type"`, bare or under `"event"`: `touch`, `long_touch`, `set_text`, `scroll`,
//!   `key` (`BACK`, `HOME`, `ENTER`). A view is targeted at its bounds' centre, else by its
//!   resource-id.

use serde_json::{Map, Value};

use super::{AndroidAction, Direction, Target};
use crate::action::ActionError;
use crate::action::terminal::json_type;

/// An Android action read from any accepted form.
#[derive(Debug, Clone, PartialEq)]
pub enum AndroidForm {
    /// A UI action.
    Ui(AndroidAction),
    /// AndroidWorld `status` / `answer`: a report to the user, no UI effect.
    Report {
        /// `status` or `answer`.
        kind: String,
        /// The goal status or the answer text.
        value: String,
    },
}

/// Parses an Android action from JSON text in any accepted form.
pub fn parse(text: &str) -> Result<AndroidForm, ActionError> {
    let value: Value = serde_json::from_str(text.trim()).map_err(|e| {
        ActionError::new(format!(
            "android: not JSON ({e}); an Android action is a JSON object, e.g. \
                 {{\"action\": \"toggle\", \"target\": \"#remember_me\"}} or \
                 {{\"action_type\": \"click\", \"index\": 3}}"
        ))
    })?;
    let Value::Object(obj) = value else {
        return Err(ActionError::new(format!(
            "android: expected an action object, got {}",
            json_type(&value)
        )));
    };
    if obj.contains_key("action") {
        return AndroidAction::parse(text)
            .map(AndroidForm::Ui)
            .map_err(|e| ActionError::new(format!("android: {}", strip_prefix(&e.to_string()))));
    }
    if obj.contains_key("action_type") {
        return android_world(&obj);
    }
    if let Some(Value::Object(event)) = obj.get("event") {
        return droidbot(event).map(AndroidForm::Ui);
    }
    if obj.contains_key("event_type") {
        return droidbot(&obj).map(AndroidForm::Ui);
    }
    Err(ActionError::new(
        "android: no \"action\", \"action_type\" or \"event_type\" field",
    ))
}

fn strip_prefix(s: &str) -> &str {
    s.strip_prefix("invalid action: ").unwrap_or(s)
}

fn get_str<'a>(
    obj: &'a Map<String, Value>,
    what: &str,
    key: &str,
) -> Result<Option<&'a str>, ActionError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(ActionError::new(format!(
            "{what}: {key} must be a string, got {}",
            json_type(other)
        ))),
    }
}

fn get_int(obj: &Map<String, Value>, what: &str, key: &str) -> Result<Option<i64>, ActionError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 1e15)
                    .map(|f| f as i64)
            })
            .map(Some)
            .ok_or_else(|| ActionError::new(format!("{what}: {key} must be an integer, got {n}"))),
        Some(other) => Err(ActionError::new(format!(
            "{what}: {key} must be an integer, got {}",
            json_type(other)
        ))),
    }
}

fn direction(what: &str, s: &str) -> Result<Direction, ActionError> {
    match s.to_ascii_lowercase().as_str() {
        "up" => Ok(Direction::Up),
        "down" => Ok(Direction::Down),
        "left" => Ok(Direction::Left),
        "right" => Ok(Direction::Right),
        _ => Err(ActionError::new(format!(
            "{what}: direction must be up, down, left or right, got {s:?}"
        ))),
    }
}

/// The target named by `index`, or `x` and `y`, if any.
fn aw_target(obj: &Map<String, Value>, what: &str) -> Result<Option<Target>, ActionError> {
    if let Some(i) = get_int(obj, what, "index")? {
        let i = usize::try_from(i).map_err(|_| {
            ActionError::new(format!("{what}: index must not be negative, got {i}"))
        })?;
        return Ok(Some(Target::Index(i)));
    }
    match (get_int(obj, what, "x")?, get_int(obj, what, "y")?) {
        (Some(x), Some(y)) => {
            let c = |v: i64, k: &str| {
                i32::try_from(v).map_err(|_| ActionError::new(format!("{what}: {k} out of range")))
            };
            Ok(Some(Target::Point {
                x: c(x, "x")?,
                y: c(y, "y")?,
            }))
        }
        (None, None) => Ok(None),
        (Some(_), None) => Err(ActionError::new(format!("{what}: y missing (x given)"))),
        (None, Some(_)) => Err(ActionError::new(format!("{what}: x missing (y given)"))),
    }
}

fn android_world(obj: &Map<String, Value>) -> Result<AndroidForm, ActionError> {
    let kind = get_str(obj, "android", "action_type")?.unwrap_or_default();
    let what = kind;
    let need_target = || {
        aw_target(obj, what)?
            .ok_or_else(|| ActionError::new(format!("{what}: index (or x and y) missing")))
    };
    let ui = match kind {
        "click" | "tap" => AndroidAction::Tap {
            target: need_target()?,
        },
        "long_press" => AndroidAction::LongPress {
            target: need_target()?,
        },
        "input_text" | "type" => AndroidAction::Type {
            target: aw_target(obj, what)?,
            text: get_str(obj, what, "text")?
                .ok_or_else(|| ActionError::new(format!("{what}: text missing")))?
                .to_string(),
            append: false,
        },
        "keyboard_enter" | "enter" => AndroidAction::Enter,
        "navigate_home" | "home" => AndroidAction::Home,
        "navigate_back" | "back" => AndroidAction::Back,
        "wait" => AndroidAction::Wait,
        "scroll" => AndroidAction::Scroll {
            target: aw_target(obj, what)?,
            direction: direction(
                what,
                get_str(obj, what, "direction")?
                    .ok_or_else(|| ActionError::new(format!("{what}: direction missing")))?,
            )?,
        },
        "swipe" => AndroidAction::Swipe {
            direction: Some(direction(
                what,
                get_str(obj, what, "direction")?
                    .ok_or_else(|| ActionError::new(format!("{what}: direction missing")))?,
            )?),
            from: None,
            to: None,
        },
        "open_app" => AndroidAction::OpenApp {
            app: get_str(obj, what, "app_name")?
                .or(get_str(obj, what, "app")?)
                .ok_or_else(|| ActionError::new(format!("{what}: app_name missing")))?
                .to_string(),
        },
        "status" => {
            let v = get_str(obj, what, "goal_status")?
                .ok_or_else(|| ActionError::new("status: goal_status missing"))?;
            return Ok(AndroidForm::Report {
                kind: "status".into(),
                value: v.to_string(),
            });
        }
        "answer" => {
            let v = get_str(obj, what, "text")?
                .ok_or_else(|| ActionError::new("answer: text missing"))?;
            return Ok(AndroidForm::Report {
                kind: "answer".into(),
                value: v.to_string(),
            });
        }
        other => {
            return Err(crate::action::web::unknown(
                other,
                [
                    "click",
                    "tap",
                    "long_press",
                    "input_text",
                    "type",
                    "keyboard_enter",
                    "navigate_home",
                    "navigate_back",
                    "scroll",
                    "swipe",
                    "open_app",
                    "wait",
                    "status",
                    "answer",
                ]
                .into_iter(),
            ));
        }
    };
    Ok(AndroidForm::Ui(ui))
}

/// A DroidBot view's target: its bounds' centre, else its resource-id.
fn view_target(event: &Map<String, Value>, what: &str) -> Result<Option<Target>, ActionError> {
    let Some(view) = event.get("view").filter(|v| !v.is_null()) else {
        return match (get_int(event, what, "x")?, get_int(event, what, "y")?) {
            (Some(x), Some(y)) => Ok(Some(Target::Point {
                x: x.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
                y: y.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
            })),
            _ => Ok(None),
        };
    };
    let Value::Object(view) = view else {
        return Err(ActionError::new(format!("{what}: view must be an object")));
    };
    if let Some(Value::Array(b)) = view.get("bounds") {
        let pt = |v: &Value| -> Option<(i64, i64)> {
            let a = v.as_array()?;
            Some((a.first()?.as_i64()?, a.get(1)?.as_i64()?))
        };
        if let (Some((l, t)), Some((r, bo))) = (b.first().and_then(pt), b.get(1).and_then(pt)) {
            let mid = |a: i64, b: i64| {
                let m = (i128::from(a) + i128::from(b)) / 2;
                m.clamp(i128::from(i32::MIN), i128::from(i32::MAX)) as i32
            };
            return Ok(Some(Target::Point {
                x: mid(l, r),
                y: mid(t, bo),
            }));
        }
        return Err(ActionError::new(format!(
            "{what}: view bounds must be [[l, t], [r, b]]"
        )));
    }
    Ok(get_str(view, what, "resource_id")?.map(|s| Target::Id(s.to_string())))
}

fn droidbot(event: &Map<String, Value>) -> Result<AndroidAction, ActionError> {
    let kind = get_str(event, "android", "event_type")?.unwrap_or_default();
    let what = kind;
    let need = || {
        view_target(event, what)?
            .ok_or_else(|| ActionError::new(format!("{what}: view (or x and y) missing")))
    };
    Ok(match kind {
        "touch" => AndroidAction::Tap { target: need()? },
        "long_touch" => AndroidAction::LongPress { target: need()? },
        "set_text" => AndroidAction::Type {
            target: view_target(event, what)?,
            text: get_str(event, what, "text")?
                .ok_or_else(|| ActionError::new(format!("{what}: text missing")))?
                .to_string(),
            append: false,
        },
        "scroll" => AndroidAction::Scroll {
            target: view_target(event, what)?,
            direction: direction(
                what,
                get_str(event, what, "direction")?
                    .ok_or_else(|| ActionError::new(format!("{what}: direction missing")))?,
            )?,
        },
        "key" => match get_str(event, what, "name")?.unwrap_or_default() {
            "BACK" => AndroidAction::Back,
            "HOME" => AndroidAction::Home,
            "ENTER" => AndroidAction::Enter,
            other => {
                return Err(ActionError::new(format!(
                    "key: name must be BACK, HOME or ENTER, got {other:?}"
                )));
            }
        },
        other => {
            return Err(crate::action::web::unknown(
                other,
                ["touch", "long_touch", "set_text", "scroll", "key"].into_iter(),
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ui(text: &str) -> AndroidAction {
        match parse(text).unwrap() {
            AndroidForm::Ui(a) => a,
            other => panic!("{other:?}"),
        }
    }

    fn err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn reads_all_forms() {
        assert_eq!(
            ui(r#"{"action": "tap", "target": 3}"#),
            AndroidAction::Tap {
                target: Target::Index(3)
            }
        );
        assert_eq!(
            ui(r#"{"action_type": "click", "index": 3}"#),
            AndroidAction::Tap {
                target: Target::Index(3)
            }
        );
        assert_eq!(
            ui(r#"{"action_type": "long_press", "x": 10, "y": 20}"#),
            AndroidAction::LongPress {
                target: Target::Point { x: 10, y: 20 }
            }
        );
        assert_eq!(
            ui(r#"{"action_type": "input_text", "text": "hi", "index": 2}"#),
            AndroidAction::Type {
                target: Some(Target::Index(2)),
                text: "hi".into(),
                append: false
            }
        );
        assert_eq!(
            ui(r#"{"action_type": "scroll", "direction": "down"}"#),
            AndroidAction::Scroll {
                target: None,
                direction: Direction::Down
            }
        );
        assert_eq!(
            ui(r#"{"action_type": "navigate_back"}"#),
            AndroidAction::Back
        );
        assert_eq!(ui(r#"{"action_type": "home"}"#), AndroidAction::Home);
        assert_eq!(
            ui(r#"{"action_type": "open_app", "app_name": "Clock"}"#),
            AndroidAction::OpenApp {
                app: "Clock".into()
            }
        );
        assert_eq!(
            parse(r#"{"action_type": "status", "goal_status": "complete"}"#).unwrap(),
            AndroidForm::Report {
                kind: "status".into(),
                value: "complete".into()
            }
        );
        assert_eq!(
            ui(
                r#"{"event": {"event_type": "touch", "view": {"bounds": [[0, 0], [10, 20]], "resource_id": "a"}}}"#
            ),
            AndroidAction::Tap {
                target: Target::Point { x: 5, y: 10 }
            }
        );
        assert_eq!(
            ui(r#"{"event_type": "touch", "view": {"resource_id": "android:id/button2"}}"#),
            AndroidAction::Tap {
                target: Target::Id("android:id/button2".into())
            }
        );
        assert_eq!(
            ui(r#"{"event_type": "key", "name": "BACK"}"#),
            AndroidAction::Back
        );
    }

    #[test]
    fn errors_name_the_field() {
        assert_eq!(
            err(r#"{"action_type": "click"}"#),
            "click: index (or x and y) missing"
        );
        assert_eq!(
            err(r#"{"action_type": "click", "x": 1}"#),
            "click: y missing (x given)"
        );
        assert!(
            err(r#"{"action_type": "click", "index": "3"}"#)
                .contains("index must be an integer, got a string")
        );
        assert!(
            err(r#"{"action_type": "click", "index": -1}"#).contains("index must not be negative")
        );
        assert_eq!(
            err(r#"{"action_type": "input_text"}"#),
            "input_text: text missing"
        );
        assert!(
            err(r#"{"action_type": "scroll", "direction": "sideways"}"#)
                .contains("direction must be")
        );
        assert!(err(r#"{"action_type": "clik", "index": 1}"#).contains("did you mean click?"));
        assert!(err(r#"{"action": "fly"}"#).starts_with("android: "));
        assert!(err(r#"{"event_type": "key", "name": "VOLUME_UP"}"#).contains("name must be BACK"));
        assert!(err(r#"{"event_type": "touch"}"#).contains("touch: view (or x and y) missing"));
        assert!(err(r#"{"foo": 1}"#).contains("no \"action\""));
        assert!(err("[1]").contains("expected an action object"));
        assert!(err("tap(3)").contains("not JSON"));
    }
}
