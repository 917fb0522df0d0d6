//! Where a rendered world-model prompt holds its current state and the action on it, and what
//! a copy of that state continues with.
//!
//! A world model's next state starts, in most rows, as its current state copied: a GUI tree
//! with a few lines edited, a terminal screen that only grows (the old screen, then the command
//! the shell echoes, then what the command prints). The copy prior
//! (`agentworld_engine::sampling::CopyPrior::sources`) follows the state found here and nothing
//! else in the prompt. Nothing here predicts the next state: these are only the places a copy
//! comes from.
//!
//! The prompt is any chat template's rendering of [`crate::messages`]' turns: the action is the
//! `**Action:**` fence of the last user turn ([`crate::messages::turn_prompt`]), the state that
//! turn's `**Current State:**`, else the previous observation (the last
//! `**Environment Observation:**` or `<predicted_observation>` block before the last user turn).

use std::ops::Range;

use crate::Domain;
use crate::messages::OBSERVATION_MARKER;
use crate::state::terminal::PromptLine;

const ACTION: &str = "**Action:**\n```json\n";
const STATE: &str = "**Current State:**";
const USER_TURN: &str = "<|im_start|>user";
const ASSISTANT_TURN: &str = "<|im_start|>assistant";
const END_OF_TURN: &str = "<|im_end|>";
const BLOCK_OPEN: &str = "<predicted_observation>";
const BLOCK_CLOSE: &str = "</predicted_observation>";

/// The current state of a rendered world-model prompt and the action on it (byte ranges of
/// the prompt; see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptState {
    /// The action text: what the last user turn's `**Action:**` fence holds.
    pub action: Range<usize>,
    /// The state text: to the end of its message (`<|im_end|>`, a
    /// `</predicted_observation>`, or the end of the prompt).
    pub state: Range<usize>,
}

/// Finds the current state and the action in a rendered world-model prompt (module docs).
/// The action is the first fence of the last user turn (ChatML's `<|im_start|>user`; the last
/// fence of the prompt when it has no such turn), so a state that shows an action fence of
/// its own does not hide the real one. `None` when there is no action fence, or no state in
/// the turn and no observation before it.
pub fn state_in_prompt(prompt: &str) -> Option<PromptState> {
    let turn = prompt.rfind(USER_TURN);
    let a = match turn {
        Some(t) => t + prompt[t..].find(ACTION)?,
        None => prompt.rfind(ACTION)?,
    } + ACTION.len();
    let after = a + prompt[a..].find("\n```")?;
    let turn_end = prompt[after..]
        .find(END_OF_TURN)
        .map_or(prompt.len(), |i| after + i);
    let start = match prompt[after..turn_end].find(STATE) {
        // A template that trims its messages drops the newline after an empty state.
        Some(i) => after + i + STATE.len(),
        None => {
            // The previous observation: in the last assistant turn before this one (a system
            // prompt that names the block is not an observation); without ChatML, anywhere
            // before the action.
            let before = match turn {
                Some(t) => {
                    let from = prompt[..t].rfind(ASSISTANT_TURN)?;
                    from..t
                }
                None => 0..a,
            };
            let region = &prompt[before.clone()];
            let marker = region
                .rfind(OBSERVATION_MARKER)
                .map(|i| i + OBSERVATION_MARKER.len());
            let block = region.rfind(BLOCK_OPEN).map(|i| i + BLOCK_OPEN.len());
            before.start + marker.max(block)?
        }
    };
    let start = start + usize::from(prompt[start..].starts_with('\n'));
    let end = [END_OF_TURN, BLOCK_CLOSE]
        .iter()
        .filter_map(|m| prompt[start..].find(m))
        .min()
        .map_or(prompt.len(), |i| start + i);
    Some(PromptState {
        action: a..after,
        state: start..end,
    })
}

/// What a copy of a prompt's current state comes from and continues with
/// ([`copy_sources_in_prompt`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopySources {
    /// The current state (byte range of the prompt), its trailing whitespace cut: the copy
    /// ends where the state's text does. Empty when the state is blank.
    pub state: Range<usize>,
    /// Text that continues the copy where the state ends. Terminal: when the screen's last
    /// line is a shell prompt waiting for input, the blank that ended it (one space where a
    /// chat template trimmed it) and the first keystroke batch up to its first `\n` or `\r`,
    /// with a newline for that Enter (what the shell echoes as the keys are typed: on the
    /// demo model's terminal rows 100–149, line F1 0.856 with the newline, 0.848 without); a
    /// control key (`C-c`) echoes nothing. Empty elsewhere.
    pub echo: String,
}

/// The copy sources of a rendered world-model prompt of `domain` ([`CopySources`]): its current
/// state ([`state_in_prompt`]) and, on a terminal screen, the echo of the typed command.
/// `None` when the prompt has no state to copy.
pub fn copy_sources_in_prompt(prompt: &str, domain: Domain) -> Option<CopySources> {
    let found = state_in_prompt(prompt)?;
    let text = &prompt[found.state.clone()];
    let trimmed = text.trim_end();
    let state = found.state.start..found.state.start + trimmed.len();
    let mut echo = String::new();
    if domain == Domain::Terminal && !trimmed.is_empty() {
        let last_start = text[..trimmed.len()].rfind('\n').map_or(0, |i| i + 1);
        let last_line = &text[last_start..];
        // The blank after the prompt symbol, as the screen had it (not the next lines); a chat
        // template that trims its messages drops it, and a shell prompt always has one.
        let blank: String = text[trimmed.len()..]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        let blank = if blank.is_empty() {
            " ".to_string()
        } else {
            blank
        };
        let waiting = PromptLine::parse(last_line.trim_end_matches(['\n', '\r']))
            .is_some_and(|p| p.input.trim().is_empty());
        let keys = super::terminal::parse(&prompt[found.action.clone()])
            .ok()
            .and_then(|a| a.batches.into_iter().next())
            .filter(|b| !b.is_key_name())
            .map(|b| b.keys);
        if let (true, Some(keys)) = (waiting, keys) {
            let line = keys.split(['\n', '\r']).next().unwrap_or("");
            // Enter moves the screen to the next line.
            let enter = if line.len() < keys.len() { "\n" } else { "" };
            if !line.is_empty() || !enter.is_empty() {
                echo = format!("{blank}{line}{enter}");
            }
        }
    }
    Some(CopySources { state, echo })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::{observation_response, turn_prompt};

    fn chatml(turns: &[(&str, Option<&str>)]) -> String {
        let mut out =
            String::from("<|im_start|>system\nYou are a Terminal World Model.<|im_end|>\n");
        for (i, (user, assistant)) in turns.iter().enumerate() {
            out.push_str(&format!(
                "<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"
            ));
            match assistant {
                Some(a) => out.push_str(&format!("{a}<|im_end|>\n")),
                None => assert_eq!(i + 1, turns.len(), "only the last turn is open"),
            }
        }
        out.push_str("<think>\n");
        out
    }

    const SCREEN: &str = "user@sandbox:~$ ls\nnotes.txt\nuser@sandbox:~$ ";

    #[test]
    fn a_terminal_prompt_copies_from_its_screen_and_the_typed_command() {
        let action = r#"[{"keystrokes": "cat notes.txt || echo 'none'\n", "duration": 0.5}, {"keystrokes": "ls\n", "duration": 0.5}]"#;
        let prompt = chatml(&[(&turn_prompt(1, action, Some(SCREEN)), None)]);
        let s = copy_sources_in_prompt(&prompt, Domain::Terminal).unwrap();
        assert_eq!(&prompt[s.state.clone()], SCREEN.trim_end());
        assert_eq!(
            s.echo, " cat notes.txt || echo 'none'\n",
            "the first batch, to its Enter"
        );
        // A control key, or a screen whose last line is not a waiting prompt, echoes nothing.
        let ctrl = chatml(&[(
            &turn_prompt(
                1,
                r#"[{"keystrokes": "C-c", "duration": 0.5}]"#,
                Some(SCREEN),
            ),
            None,
        )]);
        assert_eq!(
            copy_sources_in_prompt(&ctrl, Domain::Terminal)
                .unwrap()
                .echo,
            ""
        );
        for keys in ["Escape", "Up", "M-x"] {
            let key = chatml(&[(
                &turn_prompt(1, &format!(r#"[{{"keystrokes": "{keys}"}}]"#), Some(SCREEN)),
                None,
            )]);
            let echo = copy_sources_in_prompt(&key, Domain::Terminal).unwrap().echo;
            assert_eq!(echo, "", "a tmux key name is not text ({keys})");
        }
        // Enter alone moves to the next line.
        let enter = chatml(&[(
            &turn_prompt(1, r#"[{"keystrokes": "\n"}]"#, Some(SCREEN)),
            None,
        )]);
        assert_eq!(
            copy_sources_in_prompt(&enter, Domain::Terminal)
                .unwrap()
                .echo,
            " \n"
        );
        let pager = chatml(&[(&turn_prompt(1, action, Some("line 1\nline 2\n:")), None)]);
        let s = copy_sources_in_prompt(&pager, Domain::Terminal).unwrap();
        assert_eq!(
            (&pager[s.state.clone()], s.echo.as_str()),
            ("line 1\nline 2\n:", "")
        );
        // A carriage return ends the echo as a newline does; other domains have none.
        let cr = chatml(&[(
            &turn_prompt(1, r#"[{"keystrokes": "pwd\rls\n"}]"#, Some(SCREEN)),
            None,
        )]);
        assert_eq!(
            copy_sources_in_prompt(&cr, Domain::Terminal).unwrap().echo,
            " pwd\n"
        );
        // Keys with no Enter are echoed as typed, the line left open; a screen a chat template
        // trimmed still gets the prompt's blank.
        let typing = chatml(&[(
            &turn_prompt(1, r#"[{"keystrokes": "ech"}]"#, Some(SCREEN.trim_end())),
            None,
        )]);
        assert_eq!(
            copy_sources_in_prompt(&typing, Domain::Terminal)
                .unwrap()
                .echo,
            " ech"
        );
        assert_eq!(
            copy_sources_in_prompt(&prompt, Domain::Web).unwrap().echo,
            ""
        );
        assert_eq!(copy_sources_in_prompt("no turn", Domain::Terminal), None);
    }

    #[test]
    fn the_state_is_found_in_a_returned_block_and_past_a_fence_it_shows() {
        let next =
            "user@sandbox:~$ ls\nnotes.txt\nuser@sandbox:~$ pwd\n/home/user\nuser@sandbox:~$ ";
        let action1 = r#"[{"keystrokes": "pwd\n"}]"#;
        let action2 = r#"[{"keystrokes": "whoami\n"}]"#;
        // History as the benchmark writes it, and as a client sends a raw output back.
        for answer in [
            observation_response(next),
            format!("<predicted_observation>\n{next}\n</predicted_observation>"),
        ] {
            let prompt = chatml(&[
                (&turn_prompt(1, action1, Some(SCREEN)), Some(&answer)),
                (&turn_prompt(2, action2, None), None),
            ]);
            let found = state_in_prompt(&prompt).unwrap();
            assert_eq!(prompt[found.state].trim_end(), next.trim_end(), "{answer}");
            assert_eq!(&prompt[found.action], action2);
        }
        // No state in the turn and no observation before it: none, even where the system
        // prompt names the block; an empty state a template trimmed is an empty state.
        let system = "<|im_start|>system\nWrite one <predicted_observation> block.<|im_end|>\n";
        let bare = format!(
            "{system}<|im_start|>user\n{}<|im_end|>\n",
            turn_prompt(1, action2, None)
        );
        assert_eq!(state_in_prompt(&bare), None);
        let trimmed = format!(
            "{system}<|im_start|>user\n{}<|im_end|>\n",
            turn_prompt(1, action2, Some("")).trim_end()
        );
        let found = state_in_prompt(&trimmed).unwrap();
        assert!(found.state.is_empty(), "{:?}", &trimmed[found.state]);
        // A screen that shows an action fence: the action is the turn's own, the first fence.
        let shown = format!("user@sandbox:~$ cat t.md\n{ACTION}[]\n```\nuser@sandbox:~$ ");
        let prompt = chatml(&[(&turn_prompt(1, action1, Some(&shown)), None)]);
        let found = state_in_prompt(&prompt).unwrap();
        assert_eq!(&prompt[found.action], action1);
        assert_eq!(&prompt[found.state], shown);
    }
}
