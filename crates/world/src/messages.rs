//! Chat messages exactly as the benchmark's infer step builds them, and the turn prompt layout.
//!
//! A turn prompt is
//!
//! ````text
//! ### Turn {N}
//! **Action:**
//! ```json
//! {action}
//! ```
//! ````
//!
//! optionally followed by `\n\n**Current State:**\n{state}`. `N` counts from 1. Nothing follows
//! the state (no trailing newline is added). Ground-truth observations (assistant turns in the
//! history) are `**Environment Observation:**\n{observation}`.
//!
//! Assumptions, since the spec gives the layout but not every byte: the state block comes after
//! the action block, separated by one blank line; the action inside the fence is written on its
//! own lines. How an action becomes the text inside the fence is [`TurnAction`]'s job.

mod action;

pub use action::{TurnAction, python_json};

use serde::{Deserialize, Serialize};

/// The marker that opens every ground-truth observation.
pub const OBSERVATION_MARKER: &str = "**Environment Observation:**";

/// Who speaks a chat message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The system prompt.
    System,
    /// A turn prompt (action, maybe state).
    User,
    /// An observation.
    Assistant,
}

/// One chat message, serialised as `{"role": "user", "content": "…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: String,
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Message {
            role: Role::System,
            content: content.into(),
        }
    }
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: content.into(),
        }
    }
    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Message {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// One turn's input: its 1-based number, the action and, optionally, the current state.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// 1-based turn number (`### Turn N`).
    pub number: usize,
    /// The agent's action.
    pub action: TurnAction,
    /// The state shown under `**Current State:**`, if any.
    pub state: Option<String>,
}

impl Turn {
    /// The turn prompt text (see the module docs for the layout).
    pub fn prompt(&self) -> String {
        turn_prompt(
            self.number,
            &self.action.to_block_text(),
            self.state.as_deref(),
        )
    }
}

/// Lays out a turn prompt from the text that goes inside the ```` ```json ```` fence.
pub fn turn_prompt(number: usize, action_text: &str, state: Option<&str>) -> String {
    let mut out = format!("### Turn {number}\n**Action:**\n```json\n{action_text}\n```");
    if let Some(state) = state {
        out.push_str("\n\n**Current State:**\n");
        out.push_str(state);
    }
    out
}

/// The action text of a turn prompt laid out by [`turn_prompt`]: what its ```` ```json ````
/// fence holds. `None` when the prompt has no `**Action:**` fence.
pub fn turn_action(prompt: &str) -> Option<&str> {
    let start = prompt.find("**Action:**\n```json\n")? + "**Action:**\n```json\n".len();
    let len = prompt[start..].find("\n```")?;
    Some(&prompt[start..start + len])
}

/// The ground-truth form of an observation: `**Environment Observation:**\n{observation}`.
pub fn observation_response(observation: &str) -> String {
    format!("{OBSERVATION_MARKER}\n{observation}")
}

/// Removes the observation marker as the benchmark's scorer does (every occurrence), then one
/// newline that directly followed a leading marker.
pub fn strip_observation_marker(text: &str) -> String {
    let trimmed = text.trim_start();
    if let Some(rest) = trimmed.strip_prefix(OBSERVATION_MARKER) {
        let rest = rest
            .strip_prefix("\r\n")
            .or_else(|| rest.strip_prefix('\n'))
            .unwrap_or(rest);
        return rest.replace(OBSERVATION_MARKER, "");
    }
    text.replace(OBSERVATION_MARKER, "")
}

/// The interaction so far: a system prompt and finished (prompt, response) exchanges.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    /// The system prompt, as given (placeholders already filled).
    pub system: String,
    /// Earlier turns: the turn prompt and the observation that answered it.
    pub exchanges: Vec<Exchange>,
}

/// One finished turn of a [`History`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exchange {
    /// The turn prompt (user message).
    pub prompt: String,
    /// The observation (assistant message), usually with the observation marker.
    pub response: String,
}

impl History {
    /// An empty history with a system prompt.
    pub fn new(system: impl Into<String>) -> Self {
        History {
            system: system.into(),
            exchanges: Vec::new(),
        }
    }

    /// Appends a finished turn.
    pub fn push(&mut self, prompt: impl Into<String>, response: impl Into<String>) {
        self.exchanges.push(Exchange {
            prompt: prompt.into(),
            response: response.into(),
        });
    }

    /// The 1-based number of the next turn.
    pub fn next_turn(&self) -> usize {
        self.exchanges.len() + 1
    }

    /// Messages for predicting the answer to `current_prompt`:
    /// `[system] + (user, assistant) per exchange + [user=current_prompt]`.
    pub fn messages(&self, current_prompt: &str) -> Vec<Message> {
        let mut out = Vec::with_capacity(2 + 2 * self.exchanges.len());
        out.push(Message::system(self.system.clone()));
        for e in &self.exchanges {
            out.push(Message::user(e.prompt.clone()));
            out.push(Message::assistant(e.response.clone()));
        }
        out.push(Message::user(current_prompt));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_action_reads_back_what_turn_prompt_fenced() {
        let action = "fill('13', 'a\nb')";
        assert_eq!(
            turn_action(&turn_prompt(2, action, Some("[13] textbox"))),
            Some(action)
        );
        assert_eq!(turn_action(&turn_prompt(1, "[]", None)), Some("[]"));
        assert_eq!(turn_action("no fence here"), None);
    }

    #[test]
    fn turn_prompt_layout_is_exact() {
        let t = Turn {
            number: 1,
            action: TurnAction::parse(r#"[{"keystrokes": "ls\n", "duration": 0.5}]"#),
            state: None,
        };
        assert_eq!(
            t.prompt(),
            "### Turn 1\n**Action:**\n```json\n[{\"keystrokes\": \"ls\\n\", \"duration\": 0.5}]\n```"
        );
        let with_state = turn_prompt(3, "\"back\"", Some("user@sandbox:~$ "));
        assert_eq!(
            with_state,
            "### Turn 3\n**Action:**\n```json\n\"back\"\n```\n\n**Current State:**\nuser@sandbox:~$ "
        );
    }

    #[test]
    fn observation_marker_round_trip() {
        let r = observation_response("a\nb");
        assert_eq!(r, "**Environment Observation:**\na\nb");
        assert_eq!(strip_observation_marker(&r), "a\nb");
        assert_eq!(
            strip_observation_marker("  **Environment Observation:**\r\nx"),
            "x"
        );
        assert_eq!(strip_observation_marker("plain"), "plain");
        assert_eq!(
            strip_observation_marker("x **Environment Observation:** y"),
            "x  y"
        );
    }

    #[test]
    fn history_messages_follow_the_infer_step() {
        let mut h = History::new("SYS");
        h.push("p1", "r1");
        h.push("p2", "r2");
        assert_eq!(h.next_turn(), 3);
        let m = h.messages("p3");
        let roles: Vec<Role> = m.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [
                Role::System,
                Role::User,
                Role::Assistant,
                Role::User,
                Role::Assistant,
                Role::User
            ]
        );
        let contents: Vec<&str> = m.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(contents, ["SYS", "p1", "r1", "p2", "r2", "p3"]);
    }

    #[test]
    fn message_serde_uses_lowercase_roles() {
        let json = serde_json::to_string(&Message::assistant("x")).unwrap();
        assert_eq!(json, r#"{"role":"assistant","content":"x"}"#);
        let m: Message = serde_json::from_str(r#"{"role":"system","content":"s"}"#).unwrap();
        assert_eq!(m, Message::system("s"));
        assert!(serde_json::from_str::<Message>(r#"{"role":"tool","content":"s"}"#).is_err());
    }
}
