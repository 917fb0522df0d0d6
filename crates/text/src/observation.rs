//! Reading a world model's predicted observation out of its raw output, following
//! Qwen-AgentWorld's `output_parser.py` (see `spec/agentworld.md`, "Extraction"):
//!
//! 1. strip thinking: matched `<think>…</think>` pairs; then an orphan `</think>` removes
//!    everything up to it; then an orphan `<think>` removes everything from it up to the
//!    next `<predicted_observation>` (or to the end);
//! 2. take the **last** `<predicted_observation>` block, running to the end if unclosed;
//!    without one, take the whole cleaned text;
//! 3. remove the `**Environment Observation:**` marker and trim; `"No output"` if empty.

mod stream;

pub use stream::{ObservationEvent, ObservationStream};

use crate::reasoning::{THINK_CLOSE, THINK_OPEN};

/// Opening tag of the observation block.
pub const OBSERVATION_OPEN: &str = "<predicted_observation>";
/// Closing tag of the observation block.
pub const OBSERVATION_CLOSE: &str = "</predicted_observation>";
/// Marker the ground-truth observations (and some predictions) start with.
pub const OBSERVATION_MARKER: &str = "**Environment Observation:**";
/// What [`extract_observation`] returns when nothing is left.
pub const NO_OUTPUT: &str = "No output";

/// The predicted observation in a model output (see the [module docs](self)).
///
/// ```
/// use agentworld_text::observation::extract_observation;
///
/// let out = "<think>ls lists one file</think>\n<predicted_observation>\nnotes.txt\n</predicted_observation>";
/// assert_eq!(extract_observation(out), "notes.txt");
/// assert_eq!(extract_observation("plan…</think>"), "No output");
/// ```
pub fn extract_observation(output: &str) -> String {
    let cleaned = strip_thinking(output);
    let body = match cleaned.rfind(OBSERVATION_OPEN) {
        Some(start) => {
            let inner = &cleaned[start + OBSERVATION_OPEN.len()..];
            inner
                .find(OBSERVATION_CLOSE)
                .map_or(inner, |end| &inner[..end])
        }
        None => cleaned.as_str(),
    };
    let text = strip_observation_marker(body);
    if text.is_empty() {
        NO_OUTPUT.to_owned()
    } else {
        text
    }
}

/// Removes every `**Environment Observation:**` marker and trims (apply it to ground-truth
/// observations before comparing them with predictions).
pub fn strip_observation_marker(text: &str) -> String {
    text.replace(OBSERVATION_MARKER, "").trim().to_owned()
}

/// Removes thinking from an output: matched pairs, then an orphan `</think>` with everything
/// before it, then an orphan `<think>` with everything up to the next
/// `<predicted_observation>` (or to the end).
pub fn strip_thinking(output: &str) -> String {
    // Matched pairs, non-greedy, left to right.
    let mut text = String::with_capacity(output.len());
    let mut rest = output;
    while let Some(open) = rest.find(THINK_OPEN) {
        let after_open = &rest[open + THINK_OPEN.len()..];
        let Some(close) = after_open.find(THINK_CLOSE) else {
            break;
        };
        text.push_str(&rest[..open]);
        rest = &after_open[close + THINK_CLOSE.len()..];
    }
    text.push_str(rest);
    // Orphan closing tags: keep what follows the last one.
    if let Some(close) = text.rfind(THINK_CLOSE) {
        text.drain(..close + THINK_CLOSE.len());
    }
    // Orphan opening tag: drop it and the thinking after it.
    if let Some(open) = text.find(THINK_OPEN) {
        let end = text[open..]
            .find(OBSERVATION_OPEN)
            .map_or(text.len(), |i| open + i);
        text.drain(open..end);
    }
    text
}

/// Whether an output follows the strict format of the Web and Android prompts: after the
/// thinking, exactly one `<predicted_observation>` block, closed, and no other text.
pub fn is_well_formed(output: &str) -> bool {
    let report = inspect(output);
    report.blocks == 1 && report.closed && !report.text_outside
}

/// Format facts about an output, for rule-based rewards and diagnostics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservationReport {
    /// What [`extract_observation`] returns.
    pub observation: String,
    /// Number of `<predicted_observation>` opening tags after the thinking.
    pub blocks: usize,
    /// Whether the last block has its closing tag.
    pub closed: bool,
    /// Whether non-blank text (other than the marker) sits outside the blocks.
    pub text_outside: bool,
}

/// Extracts the observation and reports on the output's format.
pub fn inspect(output: &str) -> ObservationReport {
    let cleaned = strip_thinking(output);
    let blocks = cleaned.matches(OBSERVATION_OPEN).count();
    let closed = cleaned
        .rfind(OBSERVATION_OPEN)
        .is_some_and(|start| cleaned[start..].contains(OBSERVATION_CLOSE));
    let mut outside = String::new();
    let mut rest = cleaned.as_str();
    while let Some(start) = rest.find(OBSERVATION_OPEN) {
        outside.push_str(&rest[..start]);
        let inner = &rest[start + OBSERVATION_OPEN.len()..];
        rest = inner
            .find(OBSERVATION_CLOSE)
            .map_or("", |end| &inner[end + OBSERVATION_CLOSE.len()..]);
    }
    outside.push_str(rest);
    let text_outside = !strip_observation_marker(&outside).is_empty();
    ObservationReport {
        observation: extract_observation(output),
        blocks,
        closed,
        text_outside,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn think_pairs_and_orphans() {
        assert_eq!(strip_thinking("a<think>x</think>b<think>y</think>c"), "abc");
        assert_eq!(strip_thinking("plan\n</think>\nobs"), "\nobs");
        assert_eq!(strip_thinking("<think>x</think> y </think> z"), " z");
        assert_eq!(
            strip_thinking("a <think> never closed <predicted_observation>o"),
            "a <predicted_observation>o"
        );
        assert_eq!(strip_thinking("a <think> never closed"), "a ");
        assert_eq!(strip_thinking("a</think>b<think>c</think>d"), "bd");
    }

    #[test]
    fn last_block_wins_and_unclosed_runs_to_end() {
        let out = "<predicted_observation>draft</predicted_observation> Wait! <predicted_observation>\nfinal\n</predicted_observation>";
        assert_eq!(extract_observation(out), "final");
        assert_eq!(
            extract_observation("<predicted_observation>\ncut off at max tok"),
            "cut off at max tok"
        );
    }

    #[test]
    fn fallbacks_and_marker() {
        assert_eq!(
            extract_observation("**Environment Observation:**\n$ ls\nnotes.txt\n"),
            "$ ls\nnotes.txt"
        );
        assert_eq!(
            extract_observation("<think>only thoughts</think>  "),
            NO_OUTPUT
        );
        assert_eq!(extract_observation(""), NO_OUTPUT);
        assert_eq!(
            extract_observation(
                "<predicted_observation>**Environment Observation:**\ntotal 0\n</predicted_observation>"
            ),
            "total 0"
        );
        assert_eq!(
            strip_observation_marker("**Environment Observation:**\n x "),
            "x"
        );
    }

    #[test]
    fn well_formedness() {
        let good = "<think>r</think>\n<predicted_observation>\nx\n</predicted_observation>\n";
        assert!(is_well_formed(good));
        assert!(is_well_formed(
            "r</think><predicted_observation>x</predicted_observation>"
        ));
        assert!(!is_well_formed("<predicted_observation>x"), "unclosed");
        assert!(!is_well_formed(
            "<predicted_observation>x</predicted_observation><predicted_observation>y</predicted_observation>"
        ));
        assert!(
            !is_well_formed("Here: <predicted_observation>x</predicted_observation>"),
            "extra text"
        );
        assert!(!is_well_formed("just text"));
        let report = inspect(
            "intro <predicted_observation>a</predicted_observation> <predicted_observation>b",
        );
        assert_eq!(
            report,
            ObservationReport {
                observation: "b".into(),
                blocks: 2,
                closed: false,
                text_outside: true
            }
        );
    }
}
