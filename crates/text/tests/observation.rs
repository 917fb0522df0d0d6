//! Observation extraction on realistic world-model outputs.

use agentworld_text::observation::{NO_OUTPUT, extract_observation, inspect, is_well_formed};
use agentworld_text::reasoning::split_reasoning;

const TERMINAL: &str = "The user runs ls in /tmp, which holds notes.txt.\nWait! They used -la, so hidden entries show too.\n</think>\n\n**Environment Observation:**\n<predicted_observation>\ntotal 12\ndrwxrwxrwt  3 root root 4096 Jan  1 00:00 .\ndrwxr-xr-x 19 root root 4096 Jan  1 00:00 ..\n-rw-r--r--  1 user user   11 Jan  1 00:00 notes.txt\nuser@host:/tmp$ \n</predicted_observation>";

#[test]
fn terminal_output_with_prompt_side_think_tag() {
    let obs = extract_observation(TERMINAL);
    assert!(obs.starts_with("total 12\n"));
    assert!(obs.ends_with("user@host:/tmp$"));
    assert!(
        is_well_formed(TERMINAL),
        "thinking, marker and one closed block"
    );
}

#[test]
fn marker_outside_the_block_is_not_extra_text() {
    // The marker is removed before judging what lies outside the block.
    let out = "plan</think>\n**Environment Observation:**\n<predicted_observation>\nx\n</predicted_observation>";
    assert!(is_well_formed(out));
    let report = inspect(out);
    assert_eq!(
        (report.blocks, report.closed, report.text_outside),
        (1, true, false)
    );
}

#[test]
fn truncated_thinking_gives_no_output_and_reasoning_only() {
    let out = "The page has a search box [12]. Clicking it focuses";
    // Without </think>, output_parser's orphan rules do not apply: the text is the answer.
    assert_eq!(extract_observation(out), out);
    // The reasoning parser, knowing thinking was on, calls all of it reasoning.
    assert_eq!(split_reasoning(out, true), (Some(out.to_owned()), None));
    assert_eq!(extract_observation("<think>The page has"), NO_OUTPUT);
}

#[test]
fn self_correction_keeps_the_last_block() {
    let out = "<think>r</think><predicted_observation>[1] button 'Buy'</predicted_observation>\nWait! The click opened a dialog.\n<predicted_observation>\n[1] dialog 'Confirm'\n  [2] button 'OK'\n</predicted_observation>";
    assert_eq!(
        extract_observation(out),
        "[1] dialog 'Confirm'\n  [2] button 'OK'"
    );
    assert!(!is_well_formed(out));
}
