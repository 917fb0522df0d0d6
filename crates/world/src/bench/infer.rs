//! The infer step: the chat request for a row, the fields its result is stored in, and the key
//! that identifies a sample across runs (for resuming).

use std::fmt;

use serde_json::Value;

use crate::{Message, Result, Row};

/// The chat messages the benchmark's infer step (`eval.py`, `run_inference`) sends for a row:
/// `[system=system_str] + (user=prompt[i], assistant=response[i]) for i < turn_idx-1 +
/// [user=current prompt]`.
///
/// Two details follow the eval code rather than [`Row::messages`]: the system message is left
/// out when `system_str` is empty, and the last user message is `current_prompt` when that is
/// non-empty (else `prompt[turn_idx-1]`, as in `Row::messages`; the two are equal in
/// well-formed rows).
///
/// # Errors
/// [`Error::Row`](crate::Error::Row) for a row whose `turn_idx` is out of range or whose
/// history is incomplete.
pub fn infer_messages(row: &Row) -> Result<Vec<Message>> {
    let history = row.history()?;
    let current = if row.current_prompt.is_empty() {
        &row.prompt[row.turn_idx - 1]
    } else {
        &row.current_prompt
    };
    let mut messages = history.messages(current);
    if row.system_str.is_empty() {
        messages.remove(0);
    }
    Ok(messages)
}

/// What identifies a sample across runs: `(task, id, turn_idx)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SampleKey {
    /// The row's `task`, as written.
    pub task: String,
    /// The row's `id`.
    pub id: String,
    /// The row's `turn_idx`.
    pub turn_idx: usize,
}

impl SampleKey {
    /// The key of a row.
    pub fn of(row: &Row) -> Self {
        SampleKey {
            task: row.task.clone(),
            id: row.id.clone(),
            turn_idx: row.turn_idx,
        }
    }
}

impl fmt::Display for SampleKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} #{} turn {}", self.task, self.id, self.turn_idx)
    }
}

/// The result of the infer step for one row.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Inference {
    /// The raw model output (`generation`): for a local model everything after the prompt
    /// (thinking, `</think>`, answer); from a server the message content (with
    /// `--reasoning-parser`, the thinking is not in it). Empty when the call failed.
    pub generation: String,
    /// The observation extracted from `generation` (`prediction`).
    pub prediction: String,
    /// Reasoning the server returned apart from the content (`reasoning`), if any.
    pub reasoning: Option<String>,
    /// Why the call failed after all retries (`infer_error`); such rows are redone on resume.
    pub error: Option<String>,
}

/// Stores an inference in `row` as `generation`, `prediction`, and `reasoning` and
/// `infer_error` when set (both removed when not).
pub fn set_inference(row: &mut Row, inference: &Inference) {
    let extra = &mut row.extra;
    extra.insert(
        "generation".into(),
        Value::String(inference.generation.clone()),
    );
    extra.insert(
        "prediction".into(),
        Value::String(inference.prediction.clone()),
    );
    for (key, value) in [
        ("reasoning", &inference.reasoning),
        ("infer_error", &inference.error),
    ] {
        match value {
            Some(v) => extra.insert(key.into(), Value::String(v.clone())),
            None => extra.remove(key),
        };
    }
}

/// The row's raw model output: `generation`, or `gen` (the field `eval.py infer` writes).
pub fn generation(row: &Row) -> Option<&str> {
    row.extra
        .get("generation")
        .or_else(|| row.extra.get("gen"))
        .and_then(Value::as_str)
}

/// The row's extracted observation (`prediction`), if stored.
pub fn prediction(row: &Row) -> Option<&str> {
    row.extra.get("prediction").and_then(Value::as_str)
}

/// Why the row's inference failed (`infer_error`), if it did.
pub fn inference_error(row: &Row) -> Option<&str> {
    row.extra.get("infer_error").and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Domain, Role};

    fn row() -> Row {
        Row::from_turns(
            Domain::Terminal,
            "t-1",
            "SYS",
            vec![("p1".into(), "r1".into()), ("p2".into(), "r2".into())],
        )
    }

    #[test]
    fn messages_follow_the_eval_code() {
        let mut r = row();
        let m = infer_messages(&r).unwrap();
        let got: Vec<(Role, &str)> = m.iter().map(|m| (m.role, m.content.as_str())).collect();
        assert_eq!(
            got,
            [
                (Role::System, "SYS"),
                (Role::User, "p1"),
                (Role::Assistant, "r1"),
                (Role::User, "p2")
            ]
        );
        assert_eq!(m, r.messages().unwrap());
        r.system_str.clear();
        r.current_prompt = "p2 as given".into();
        let m = infer_messages(&r).unwrap();
        assert_eq!(m.len(), 3);
        assert_eq!(
            (m[0].role, m[2].content.as_str()),
            (Role::User, "p2 as given")
        );
        r.current_prompt.clear();
        assert_eq!(infer_messages(&r).unwrap()[2].content, "p2");
        r.turn_idx = 3;
        assert!(infer_messages(&r).is_err());
    }

    #[test]
    fn inference_fields_round_trip() {
        let mut r = row();
        assert_eq!(generation(&r), None);
        r.extra.insert("gen".into(), "from eval.py".into());
        assert_eq!(generation(&r), Some("from eval.py"));
        let failed = Inference {
            error: Some("HTTP 500".into()),
            ..Default::default()
        };
        set_inference(&mut r, &failed);
        assert_eq!(
            (generation(&r), inference_error(&r)),
            (Some(""), Some("HTTP 500"))
        );
        let done = Inference {
            generation: "<predicted_observation>x</predicted_observation>".into(),
            prediction: "x".into(),
            reasoning: Some("because".into()),
            error: None,
        };
        set_inference(&mut r, &done);
        assert_eq!((prediction(&r), inference_error(&r)), (Some("x"), None));
        assert_eq!(r.extra["reasoning"], "because");
        let key = SampleKey::of(&r);
        assert_eq!(key.to_string(), "terminal #t-1 turn 2");
    }
}
