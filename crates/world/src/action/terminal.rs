//! Terminal actions: a JSON list of keystroke batches, `[{"keystrokes": "ls\n", "duration": 0.5}]`.
//!
//! Source: the spec's terminal row (`shared/spec/agentworld.md`) and the Terminus agent of
//! Terminal-Bench that it follows: `keystrokes` is sent to tmux as written (`\n` presses
//! Enter; a whole batch that is a tmux key name such as `C-c`, `C-d`, `Escape` sends that key),
//! `duration` is how long to wait afterwards in seconds (default 1.0). `""` keystrokes only
//! wait; `[]` means the agent has finished. A bare JSON string `""` is read as one wait.

use serde_json::Value;

use super::ActionError;

/// Durations above this are refused as implausible (one hour).
pub const MAX_DURATION: f64 = 3600.0;

/// One batch of keystrokes and the wait after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Keystrokes {
    /// Keys as written (`"ls\n"`, `"C-c"`, `""`).
    pub keys: String,
    /// Seconds to wait after sending.
    pub duration: f64,
}

/// tmux's names for keys that are not text (tmux(1), "KEY BINDINGS"), as `send-keys` takes them.
const KEY_NAMES: [&str; 34] = [
    "Up", "Down", "Left", "Right", "BSpace", "BTab", "DC", "End", "Enter", "Escape", "Home", "IC",
    "NPage", "PageDown", "PgDn", "PPage", "PageUp", "PgUp", "Space", "Tab", "F1", "F2", "F3", "F4",
    "F5", "F6", "F7", "F8", "F9", "F10", "F11", "F12", "Delete", "Insert",
];

impl Keystrokes {
    /// Whether the whole batch is one tmux key rather than text: a key name (`Escape`, `Up`,
    /// `Enter`, `F5`, …; case ignored, as tmux does) or a character or key name under
    /// modifiers (`C-c`, `M-x`, `C-S-Left`, `^D`). tmux sends such a batch as that key, so the
    /// shell echoes nothing of its text.
    pub fn is_key_name(&self) -> bool {
        let mut rest = self.keys.as_str();
        let mut modified = false;
        loop {
            let next = ["C-", "M-", "S-", "^"]
                .iter()
                .find_map(|m| rest.strip_prefix(m).filter(|r| !r.is_empty()));
            match next {
                Some(r) => (rest, modified) = (r, true),
                None => break,
            }
        }
        (modified && rest.chars().count() == 1)
            || KEY_NAMES.iter().any(|k| k.eq_ignore_ascii_case(rest))
    }
}

/// A parsed terminal action: the batches in order; empty means the agent has finished.
#[derive(Debug, Clone, PartialEq)]
pub struct TerminalAction {
    /// The batches.
    pub batches: Vec<Keystrokes>,
}

impl TerminalAction {
    /// Whether this is `[]`, the agent's "finished".
    pub fn is_done(&self) -> bool {
        self.batches.is_empty()
    }
}

/// Parses a terminal action from JSON text.
pub fn parse(text: &str) -> Result<TerminalAction, ActionError> {
    let value: Value = serde_json::from_str(text.trim()).map_err(|e| {
        ActionError::new(format!(
            "terminal: not JSON ({e}); a terminal action is a list of keystroke batches, \
                 e.g. [{{\"keystrokes\": \"ls -l\\n\", \"duration\": 0.5}}]"
        ))
    })?;
    let items = match value {
        Value::Array(items) => items,
        Value::String(s) if s.is_empty() => {
            return Ok(TerminalAction {
                batches: vec![Keystrokes {
                    keys: String::new(),
                    duration: 1.0,
                }],
            });
        }
        other => {
            return Err(ActionError::new(format!(
                "terminal: expected a list of {{\"keystrokes\", \"duration\"}} objects, got {}",
                json_type(&other)
            )));
        }
    };
    let mut batches = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let n = i + 1;
        let Value::Object(obj) = item else {
            return Err(ActionError::new(format!(
                "terminal: item {n} must be an object, got {}",
                json_type(item)
            )));
        };
        if let Some(k) = obj
            .keys()
            .find(|k| !matches!(k.as_str(), "keystrokes" | "duration"))
        {
            return Err(ActionError::new(format!(
                "terminal: item {n} has an unknown field '{k}' (fields: keystrokes, duration)"
            )));
        }
        let keys = match obj.get("keystrokes") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                return Err(ActionError::new(format!(
                    "terminal: item {n} keystrokes must be a string, got {}",
                    json_type(other)
                )));
            }
            None => {
                return Err(ActionError::new(format!(
                    "terminal: item {n} keystrokes missing"
                )));
            }
        };
        let duration = match obj.get("duration") {
            None | Some(Value::Null) => 1.0,
            Some(Value::Number(x)) => x.as_f64().unwrap_or(f64::NAN),
            Some(other) => {
                return Err(ActionError::new(format!(
                    "terminal: item {n} duration must be a number of seconds, got {}",
                    json_type(other)
                )));
            }
        };
        if !(0.0..=MAX_DURATION).contains(&duration) {
            return Err(ActionError::new(format!(
                "terminal: item {n} duration must be between 0 and {MAX_DURATION} seconds, got {duration}"
            )));
        }
        batches.push(Keystrokes { keys, duration });
    }
    Ok(TerminalAction { batches })
}

/// A JSON value's type, for error messages.
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn parses_batches_control_keys_wait_and_done() {
        let a =
            parse(r#"[{"keystrokes": "ls\n", "duration": 0.5}, {"keystrokes": "C-c"}]"#).unwrap();
        assert_eq!(a.batches.len(), 2);
        assert_eq!(a.batches[0].keys, "ls\n");
        assert_eq!(a.batches[0].duration, 0.5);
        assert_eq!(a.batches[1].duration, 1.0);
        assert!(a.batches[1].is_key_name());
        assert!(!a.batches[0].is_key_name());
        assert!(
            parse(r#"[{"keystrokes": "C-d", "duration": 0}]"#)
                .unwrap()
                .batches[0]
                .is_key_name()
        );
        let key = |k: &str| {
            Keystrokes {
                keys: k.into(),
                duration: 1.0,
            }
            .is_key_name()
        };
        for k in [
            "Escape", "Up", "enter", "F5", "C-S-Left", "M-x", "^D", "BSpace",
        ] {
            assert!(key(k), "{k}");
        }
        for k in ["C-xyz rest\n", "Upgrade", "C-", "ls", "", "^"] {
            assert!(!key(k), "{k}");
        }
        assert!(parse("[]").unwrap().is_done());
        assert_eq!(parse(r#""""#).unwrap().batches[0].keys, "");
        assert_eq!(
            parse(r#"[{"keystrokes": "", "duration": 10}]"#)
                .unwrap()
                .batches[0]
                .keys,
            ""
        );
    }

    #[test]
    fn errors_name_the_item_and_field() {
        assert!(err("ls").contains("not JSON"));
        assert!(err(r#""ls""#).contains("expected a list"));
        assert!(err(r#"{"keystrokes": "ls"}"#).contains("got an object"));
        assert_eq!(
            err(r#"[{"duration": 1}]"#),
            "terminal: item 1 keystrokes missing"
        );
        assert!(
            err(r#"[{"keystrokes": "a"}, {"keystrokes": 5}]"#)
                .contains("item 2 keystrokes must be a string")
        );
        assert!(
            err(r#"[{"keystrokes": "a", "duration": "1"}]"#)
                .contains("item 1 duration must be a number")
        );
        assert!(
            err(r#"[{"keystrokes": "a", "duration": -1}]"#)
                .contains("item 1 duration must be between")
        );
        assert!(err(r#"[{"keystrokes": "a", "duration": 1e9}]"#).contains("between 0 and"));
        assert!(err(r#"[{"keystrokes": "a", "wait": 1}]"#).contains("unknown field 'wait'"));
        assert!(err(r#"["ls"]"#).contains("item 1 must be an object"));
    }
}
