//! AgentWorldBench evaluation: the infer step's messages, the judge request, the judge's verdict
//! and the score tables, as the benchmark's `eval/eval.py` and `lwm_eval_utils` compute them.
//!
//! The pipeline has three steps, each reading and writing JSONL rows (a [`Row`](crate::Row)
//! plus fields kept in [`Row::extra`](crate::Row::extra)):
//!
//! 1. **infer**: [`infer_messages`] builds the chat request for a row; the raw model output is
//!    stored as `generation` and the extracted observation as `prediction` ([`set_inference`]).
//!    Extraction itself (the benchmark's output parser) lives in
//!    `agentworld_text::observation::extract_observation`; the caller extracts and passes the
//!    result in, so a row can hold another extractor's output.
//! 2. **judge**: [`judge_messages`] builds the judge request (system: the domain's judge prompt;
//!    user: context, current turn, simulated and real observation, rubric); [`parse_verdict`]
//!    reads the judge's answer; [`JudgeOutcome::write_into`] stores the scores in the row under
//!    the benchmark's field names (`format`, `factuality`, `consistency`, `realism`, `quality`,
//!    `total_score`, `failed`, `strengths`, `weaknesses`, `extracted_output`,
//!    `judge_raw_output`, `error_message`), so files written here and by `eval.py` read alike.
//! 3. **score**: [`parse_judged_jsonl`] reads judged rows, [`aggregate`] computes per-domain
//!    figures normalised as `(raw-1)/4*100` and both overall figures: the unweighted mean of the
//!    domain scores (the README table's "Overall") and the sample-weighted mean (`eval.py`'s).
//!
//! Where this module departs from the Python code, it says so on the item concerned.

mod aggregate;
mod candidates;
mod infer;
mod judge_prompt;
mod repair;
mod scores;
mod think;
mod verdict;

#[cfg(test)]
mod tests;

pub use aggregate::{
    DomainScore, Report, Sample, aggregate, normalise, parse_judged_jsonl, sample_from_value,
};
pub use candidates::{brace_backward, brace_forward, markdown_json};
pub use infer::{
    Inference, SampleKey, generation, infer_messages, inference_error, prediction, set_inference,
};
pub use judge_prompt::{
    CONTEXT_HEADING, CURRENT_TURN_HEADING, GROUND_TRUTH_HEADING, RUBRIC, SIMULATED_HEADING,
    builtin_judge_prompt, clean_marker, judge_messages, judge_system_prompt, judge_user_prompt,
};
pub use repair::{repair_json, scores_only};
pub use scores::{Dimension, Scores};
pub use think::{remove_thinking, tagged_block};
pub use verdict::{JudgeOutcome, Strategy, Verdict, parse_verdict};

/// The tag the judge wraps its final JSON in.
pub const JUDGE_TAG: &str = "final_evaluation";
/// `error_message` of a row whose generation is missing or empty (the judge is not called).
pub const NO_GENERATION: &str = "No model generation";
