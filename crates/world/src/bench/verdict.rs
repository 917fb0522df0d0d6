//! Reading the judge's answer ([`parse_verdict`]) and storing the outcome in a row
//! ([`JudgeOutcome`]), as the benchmark's `parse_judge_output` and `run_judge` do.

use serde_json::{Map, Value, json};

use super::candidates::{brace_backward, brace_forward, markdown_json};
use super::repair::{repair_json, scores_only};
use super::scores::{Dimension, Scores};
use super::think::{remove_thinking, tagged_block};
use super::{JUDGE_TAG, NO_GENERATION};
use crate::{Error, Result, Row};

/// Which search found the verdict's JSON object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// A markdown code block ([`markdown_json`]).
    Markdown,
    /// Forward brace matching ([`brace_forward`]).
    BraceForward,
    /// Backward brace matching from the last `}` ([`brace_backward`]).
    BraceBackward,
}

/// A judge's parsed answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The five scores (0 = missing).
    pub scores: Scores,
    /// The judge's `strengths` (a string becomes a one-item list; other values are written as JSON).
    pub strengths: Vec<String>,
    /// The judge's `weaknesses`, read like `strengths`.
    pub weaknesses: Vec<String>,
    /// Whether the JSON was inside a `<final_evaluation>` block.
    pub tagged: bool,
    /// How the JSON object was found.
    pub strategy: Strategy,
    /// Whether [`repair_json`] changed the object's text.
    pub repaired: bool,
    /// Whether only the `"scores"` object could be read ([`scores_only`]).
    pub scores_only: bool,
}

impl Verdict {
    /// The sample's `total_score` ([`Scores::total`]).
    pub fn total_score(&self) -> f64 {
        self.scores.total()
    }
}

/// Parses a judge's raw answer, in the benchmark's order:
///
/// 1. the answer is trimmed; empty is an error;
/// 2. thinking is removed ([`remove_thinking`] with `final_evaluation` as the response tag);
/// 3. the text searched is the last `<final_evaluation>` block ([`tagged_block`]), or the whole
///    text when there is none;
/// 4. the JSON object is the last markdown code block holding one with `"scores"` (else the last
///    holding any object), else the last object found by forward brace matching (preferring one
///    with `"scores"`), else the object ending at the last `}` by backward matching;
/// 5. the object is repaired ([`repair_json`]) and parsed; if that fails, the first `"scores"`
///    object alone is ([`scores_only`]);
/// 6. it needs a `"scores"` object, read by [`Scores::from_json`]. A verdict whose scores are all
///    missing still parses (its `total_score` is 0 and it is left out of every mean), as in the
///    benchmark.
///
/// # Errors
/// [`Error::Verdict`] naming the step that failed.
pub fn parse_verdict(raw: &str) -> Result<Verdict> {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Err(Error::Verdict("empty output".into()));
    }
    let cleaned = remove_thinking(trimmed, JUDGE_TAG);
    let tagged = tagged_block(&cleaned, JUDGE_TAG);
    let text = tagged.unwrap_or(&cleaned);
    let (candidate, strategy) = if let Some(c) = markdown_json(text) {
        (c, Strategy::Markdown)
    } else if let Some(c) = brace_forward(text) {
        (c, Strategy::BraceForward)
    } else if let Some(c) = brace_backward(text) {
        (c, Strategy::BraceBackward)
    } else {
        return Err(Error::Verdict("no JSON object found".into()));
    };
    let repaired_text = repair_json(candidate);
    let (value, only) = match serde_json::from_str::<Value>(&repaired_text) {
        Ok(v) => (v, false),
        Err(e) => {
            let fallback = scores_only(&repaired_text)
                .and_then(|s| serde_json::from_str::<Value>(&s).ok())
                .ok_or_else(|| Error::Verdict(format!("JSON error: {e}")))?;
            (fallback, true)
        }
    };
    let object = value
        .as_object()
        .ok_or_else(|| Error::Verdict("the JSON is not an object".into()))?;
    let scores = object
        .get("scores")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            let keys: Vec<&str> = object.keys().map(String::as_str).collect();
            Error::Verdict(format!("no \"scores\" object; keys: {keys:?}"))
        })?;
    Ok(Verdict {
        scores: Scores::from_json(scores),
        strengths: to_list(object.get("strengths")),
        weaknesses: to_list(object.get("weaknesses")),
        tagged: tagged.is_some(),
        strategy,
        repaired: repaired_text != candidate,
        scores_only: only,
    })
}

fn to_list(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect(),
        Some(Value::String(s)) if !s.is_empty() => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// How judging one row ended.
#[derive(Debug, Clone, PartialEq)]
pub enum JudgeOutcome {
    /// The judge answered and the answer parsed.
    Scored {
        /// The parsed answer.
        verdict: Verdict,
        /// The judge's raw answer.
        raw: String,
    },
    /// No generation to judge, or every attempt failed (call error or unparseable answer).
    Failed {
        /// Why (stored as `error_message`).
        message: String,
        /// The last raw answer, if any came back.
        raw: Option<String>,
    },
}

/// Fields a judged row may carry; cleared before an outcome is written.
const JUDGE_FIELDS: [&str; 12] = [
    "total_score",
    "format",
    "factuality",
    "consistency",
    "realism",
    "quality",
    "failed",
    "strengths",
    "weaknesses",
    "extracted_output",
    "judge_raw_output",
    "error_message",
];

impl JudgeOutcome {
    /// The outcome for a row without a generation: failed, and the judge is not called.
    pub fn no_generation() -> Self {
        JudgeOutcome::Failed {
            message: NO_GENERATION.into(),
            raw: None,
        }
    }

    /// Runs up to `max_attempts` judge calls (at least one) until an answer parses.
    ///
    /// `call(attempt)` (attempt counts from 0) returns the raw answer or why the call failed;
    /// waiting between attempts is the caller's. A call error and an unparseable answer both
    /// use up an attempt, as in the benchmark's `run_judge`.
    pub fn with_retries(
        max_attempts: usize,
        mut call: impl FnMut(usize) -> std::result::Result<String, String>,
    ) -> Self {
        let mut last_error = String::from("no attempt made");
        let mut last_raw = None;
        for attempt in 0..max_attempts.max(1) {
            match call(attempt) {
                Ok(raw) => match parse_verdict(&raw) {
                    Ok(verdict) => return JudgeOutcome::Scored { verdict, raw },
                    Err(e) => {
                        last_error = e.to_string();
                        last_raw = Some(raw);
                    }
                },
                Err(e) => last_error = format!("judge call failed: {e}"),
            }
        }
        JudgeOutcome::Failed {
            message: format!("Judge scoring failed: {last_error}"),
            raw: last_raw,
        }
    }

    /// Whether the sample is excluded from scoring (`failed = 1`).
    pub fn is_failed(&self) -> bool {
        matches!(self, JudgeOutcome::Failed { .. })
    }

    /// Stores the outcome in `row` under the benchmark's field names, replacing any earlier
    /// judgement. `extracted` is the judged prediction (`extracted_output`).
    ///
    /// Scored: `total_score`, the five dimensions, `failed: 0.0`, `strengths`, `weaknesses`,
    /// `extracted_output`, `judge_raw_output`. Failed: `total_score: 0`, `failed: 1.0`,
    /// `error_message`, `extracted_output` when given, `judge_raw_output` when an answer came.
    pub fn write_into(&self, row: &mut Row, extracted: Option<&str>) {
        for key in JUDGE_FIELDS {
            row.extra.remove(key);
        }
        let mut fields = Map::new();
        match self {
            JudgeOutcome::Scored { verdict, raw } => {
                fields.insert("total_score".into(), json!(verdict.total_score()));
                for d in Dimension::ALL {
                    fields.insert(d.as_str().into(), json!(verdict.scores.get(d)));
                }
                fields.insert("failed".into(), json!(0.0));
                fields.insert("strengths".into(), json!(verdict.strengths));
                fields.insert("weaknesses".into(), json!(verdict.weaknesses));
                fields.insert("judge_raw_output".into(), json!(raw));
            }
            JudgeOutcome::Failed { message, raw } => {
                fields.insert("total_score".into(), json!(0));
                fields.insert("failed".into(), json!(1.0));
                fields.insert("error_message".into(), json!(message));
                if let Some(raw) = raw {
                    fields.insert("judge_raw_output".into(), json!(raw));
                }
            }
        }
        if let Some(e) = extracted {
            fields.insert("extracted_output".into(), json!(e));
        }
        row.extra.extend(fields);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "<final_evaluation>\n```json\n{\"strengths\": [\"ok\"], \"weaknesses\": \"one\", \"scores\": {\"format\": 5, \"factuality\": 4, \"consistency\": 4, \"realism\": 3, \"quality\": 4}}\n```\n</final_evaluation>";

    #[test]
    fn a_well_formed_answer() {
        let v = parse_verdict(&format!("<think>hmm</think>Reasoning...\n{GOOD}")).unwrap();
        assert_eq!(v.scores.values(), [5, 4, 4, 3, 4]);
        // (5 + 4 + 4 + 3 + 4) / 5 = 20 / 5 = 4.0
        assert_eq!(v.total_score(), 4.0);
        assert_eq!(
            (v.strengths, v.weaknesses),
            (vec!["ok".to_string()], vec!["one".to_string()])
        );
        assert!(v.tagged && !v.repaired && !v.scores_only);
        assert_eq!(v.strategy, Strategy::Markdown);
    }

    #[test]
    fn errors_name_the_step() {
        let msg = |raw: &str| parse_verdict(raw).unwrap_err().to_string();
        assert!(msg("  \n").contains("empty output"));
        assert!(msg("<think>all thinking</think>").contains("no JSON object found"));
        assert!(msg("I rate it 4/5.").contains("no JSON object found"));
        assert!(
            msg("{\"score\": 4}").contains("no \"scores\" object"),
            "{}",
            msg("{\"score\": 4}")
        );
        assert!(msg("{\"scores\": [4, 4]}").contains("no \"scores\" object"));
        assert!(msg("{\"scores\": {\"format\": }").contains("JSON error"));
    }

    #[test]
    fn retries_stop_at_the_first_parsed_answer() {
        let mut calls = 0;
        let out = JudgeOutcome::with_retries(3, |attempt| {
            calls += 1;
            match attempt {
                0 => Err("HTTP 503".into()),
                1 => Ok("no json here".into()),
                _ => Ok(GOOD.into()),
            }
        });
        assert_eq!(calls, 3);
        assert!(!out.is_failed());
        let out = JudgeOutcome::with_retries(2, |_| Ok("still no json".to_string()));
        match out {
            JudgeOutcome::Failed { message, raw } => {
                assert!(message.starts_with("Judge scoring failed: "), "{message}");
                assert_eq!(raw.as_deref(), Some("still no json"));
            }
            other => panic!("{other:?}"),
        }
        let out = JudgeOutcome::with_retries(0, |_| Err("refused".into()));
        assert!(
            matches!(out, JudgeOutcome::Failed { message, raw: None } if message.contains("judge call failed: refused"))
        );
    }
}
