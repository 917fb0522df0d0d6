//! The judge request: our own judge system prompt per domain (or the official one from a
//! `--prompts-dir`), and the user message laid out byte for byte as the benchmark's
//! `build_judge_messages` fills its `JUDGE_USER_PROMPT`.
//!
//! The user message is
//!
//! ```text
//! {context}\n\n# Current Turn:\n\n{current_prompt}\n\n
//! **World Model Output (Simulated):**\n```\n{prediction}\n```\n\n
//! **Ground Truth (Real Output):**\n```\n{ground_truth}\n```\n\n
//! {rubric}
//! ```
//!
//! (line breaks after `\n\n` added here for reading), with leading and trailing whitespace
//! trimmed from the whole. `{context}` is empty for a first turn, else
//! `# Context (Historical Interactions):\n\n` followed by `{prompt_i}\n{response_i}\n\n` for
//! each earlier turn, responses as stored (marker included); so a later turn has four line
//! breaks between the last earlier response and `# Current Turn:`. `{prediction}` and
//! `{ground_truth}` pass through [`clean_marker`]. The rubric ([`RUBRIC`]) is ours: the five
//! dimensions, the 1–5 scale, the `<final_evaluation>` answer format and a note against
//! manipulation, in our own words.

use crate::messages::OBSERVATION_MARKER;
use crate::{Domain, Message, PromptSet, Result, Row};

/// Opens the context block (only when there are earlier turns).
pub const CONTEXT_HEADING: &str = "# Context (Historical Interactions):\n\n";
/// Opens the current turn.
pub const CURRENT_TURN_HEADING: &str = "# Current Turn:\n\n";
/// Heads the world model's (fenced) observation.
pub const SIMULATED_HEADING: &str = "**World Model Output (Simulated):**";
/// Heads the real (fenced) observation.
pub const GROUND_TRUTH_HEADING: &str = "**Ground Truth (Real Output):**";

/// Our rubric, the last part of the judge's user message (`src/prompts/judge/rubric.md`).
pub const RUBRIC: &str = include_str!("../prompts/judge/rubric.md");

/// Our judge system prompt for a domain (`src/prompts/judge/<domain>.md`).
pub fn builtin_judge_prompt(domain: Domain) -> &'static str {
    match domain {
        Domain::Terminal => include_str!("../prompts/judge/terminal.md"),
        Domain::Search => include_str!("../prompts/judge/search.md"),
        Domain::Mcp => include_str!("../prompts/judge/mcp.md"),
        Domain::Swe => include_str!("../prompts/judge/swe.md"),
        Domain::Web => include_str!("../prompts/judge/web.md"),
        Domain::Android => include_str!("../prompts/judge/android.md"),
        Domain::Os => include_str!("../prompts/judge/os.md"),
    }
}

/// The judge system prompt for a domain: the set's `judge_system_prompt.txt` when its
/// directory had one ([`PromptSet::judge_prompt`]), else ours.
pub fn judge_system_prompt(prompts: &PromptSet, domain: Domain) -> &str {
    prompts
        .judge_prompt(domain)
        .unwrap_or_else(|| builtin_judge_prompt(domain))
}

/// Removes the `**Environment Observation:**` marker as the benchmark's
/// `clean_response_marker` does: a leading marker alone when the text starts with it, else
/// every occurrence; then trims.
pub fn clean_marker(text: &str) -> String {
    match text.strip_prefix(OBSERVATION_MARKER) {
        Some(rest) => rest.trim().to_string(),
        None => text.replace(OBSERVATION_MARKER, "").trim().to_string(),
    }
}

/// The judge's user message for a row and a prediction (see the module docs for the layout).
///
/// # Errors
/// [`Error::Row`](crate::Error::Row) for a row whose `turn_idx` is out of range, whose history
/// is incomplete or that has no ground truth for the turn.
pub fn judge_user_prompt(row: &Row, prediction: &str) -> Result<String> {
    let truth = row.target()?;
    let mut context = String::new();
    for i in 0..row.turn_idx - 1 {
        context.push_str(&row.prompt[i]);
        context.push('\n');
        context.push_str(&row.response[i]);
        context.push_str("\n\n");
    }
    if !context.is_empty() {
        context.insert_str(0, CONTEXT_HEADING);
    }
    let current = if row.current_prompt.is_empty() {
        &row.prompt[row.turn_idx - 1]
    } else {
        &row.current_prompt
    };
    let text = format!(
        "{context}\n\n{CURRENT_TURN_HEADING}{current}\n\n\
         {SIMULATED_HEADING}\n```\n{}\n```\n\n\
         {GROUND_TRUTH_HEADING}\n```\n{}\n```\n\n\
         {RUBRIC}",
        clean_marker(prediction),
        clean_marker(truth),
    );
    Ok(text.trim().to_string())
}

/// The judge request: `[system=judge system prompt, user=judge_user_prompt(row, prediction)]`.
/// The system message is sent even when empty, as the benchmark does.
///
/// # Errors
/// As [`judge_user_prompt`].
pub fn judge_messages(row: &Row, prediction: &str, system: &str) -> Result<Vec<Message>> {
    Ok(vec![
        Message::system(system),
        Message::user(judge_user_prompt(row, prediction)?),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_turn_row() -> Row {
        Row::from_turns(
            Domain::Terminal,
            "t-1",
            "SYS",
            vec![
                ("P1".into(), "**Environment Observation:**\nR1".into()),
                ("P2".into(), "**Environment Observation:**\nR2".into()),
            ],
        )
    }

    #[test]
    fn later_turn_layout_is_exact() {
        let text = judge_user_prompt(&two_turn_row(), "PRED").unwrap();
        let head = "# Context (Historical Interactions):\n\n\
                    P1\n**Environment Observation:**\nR1\n\n\
                    \n\n# Current Turn:\n\nP2\n\n\
                    **World Model Output (Simulated):**\n```\nPRED\n```\n\n\
                    **Ground Truth (Real Output):**\n```\nR2\n```\n\n";
        assert_eq!(text, format!("{head}{}", RUBRIC.trim_end()));
    }

    #[test]
    fn first_turn_has_no_context_and_starts_with_the_turn() {
        let mut row = two_turn_row();
        row.turn_idx = 1;
        row.current_prompt = String::new();
        let text = judge_user_prompt(&row, "**Environment Observation:**\n  x \n").unwrap();
        assert!(
            text.starts_with("# Current Turn:\n\nP1\n\n**World Model Output (Simulated):**\n```\nx\n```\n\n**Ground Truth (Real Output):**\n```\nR1\n```\n\n"),
            "{text}"
        );
        let m = judge_messages(&row, "x", "").unwrap();
        assert_eq!((m[0].content.as_str(), m.len()), ("", 2));
        row.response.clear();
        assert!(judge_user_prompt(&row, "x").is_err());
    }

    #[test]
    fn marker_cleaning_matches_the_benchmark() {
        assert_eq!(
            clean_marker("**Environment Observation:**\n a **Environment Observation:** b "),
            "a **Environment Observation:** b"
        );
        assert_eq!(clean_marker(" x **Environment Observation:** y"), "x  y");
    }

    #[test]
    fn builtin_judge_prompts_and_rubric() {
        for d in Domain::ALL {
            let p = builtin_judge_prompt(d);
            assert!(
                p.contains(&format!("{} World Model", d.world_model_name())),
                "{d}"
            );
            for dim in ["format", "factuality", "consistency", "realism", "quality"] {
                assert!(p.to_lowercase().contains(dim), "{d} lacks {dim}");
            }
            assert_eq!(judge_system_prompt(&PromptSet::builtin(), d), p);
        }
        for needle in [
            "<final_evaluation>",
            "```json",
            "\"strengths\"",
            "\"weaknesses\"",
            "\"scores\"",
            "1 to 5",
        ] {
            assert!(RUBRIC.contains(needle), "rubric lacks {needle}");
        }
        assert!(RUBRIC.to_lowercase().contains("manipulat"));
    }
}
