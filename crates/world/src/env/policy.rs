//! The agent's side of a rollout: the messages a policy model gets, and reading an action out
//! of its reply.
//!
//! The policy sees `[system = the domain's action format] + [user = goal + initial state] +
//! (assistant = its earlier reply, user = "Observation:\n" + what the world model predicted)
//! per step`. Policy prompts are ours and short; a caller can pass its own system prompt.

use agentworld_text::observation::strip_thinking;

use super::WorldEnv;
use crate::Domain;
use crate::messages::Message;

/// Our policy system prompt for `domain`: what to do and how to write the action.
pub fn policy_system_prompt(domain: Domain) -> String {
    let format = match domain {
        Domain::Terminal => {
            "a JSON list of keystroke batches, e.g. [{\"keystrokes\": \"ls -l\\n\", \"duration\": 0.5}]; \
             tmux names such as \"C-c\" for control keys; [] when the task is done"
        }
        Domain::Search | Domain::Mcp | Domain::Swe => {
            "one JSON tool call {\"name\": ..., \"arguments\": {...}}"
        }
        Domain::Web => {
            "one BrowserGym call such as click('12'), fill('7', 'text'), goto('https://...'), \
             scroll(0, 300); send_msg_to_user('answer') when the task is done"
        }
        Domain::Android => {
            "one JSON action such as {\"action_type\": \"click\", \"index\": 3}, \
             {\"action_type\": \"input_text\", \"text\": \"hi\", \"index\": 5}, \
             {\"action_type\": \"navigate_back\"}; {\"action_type\": \"status\", \"goal_status\": \"complete\"} when done"
        }
        Domain::Os => "pyautogui Python code, or WAIT, DONE or FAIL",
    };
    format!(
        "You are an agent acting in a {} environment. Each turn you see the current state; \
         reply with your next action only, inside one ```json fenced block (or plain text for \
         code and calls). Action format: {format}.",
        domain.as_str()
    )
}

/// The action in a policy reply: thinking removed, then the last fenced block's content
/// (```` ```json ````, ```` ```python ```` or bare), else the last `<action>…</action>`, else
/// the whole reply, trimmed.
pub fn extract_action(reply: &str) -> String {
    let text = strip_thinking(reply);
    let fences: Vec<usize> = text.match_indices("```").map(|(i, _)| i).collect();
    if fences.len() >= 2 {
        let (open, close) = (fences[fences.len() - 2], fences[fences.len() - 1]);
        let inner = &text[open + 3..close];
        // Drop a language tag on the opening line.
        let body = match inner.split_once('\n') {
            Some((tag, rest))
                if tag
                    .trim()
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
            {
                rest
            }
            _ => inner,
        };
        return body.trim().to_string();
    }
    if let Some(start) = text.rfind("<action>") {
        let inner = &text[start + "<action>".len()..];
        let end = inner.find("</action>").unwrap_or(inner.len());
        return inner[..end].trim().to_string();
    }
    text.trim().to_string()
}

impl WorldEnv {
    /// The messages for the policy's next action (see the module docs), with `system` as
    /// the policy's system prompt.
    pub fn policy_messages(&self, system: &str) -> Vec<Message> {
        let mut goal = String::new();
        if !self.task.instruction.is_empty() {
            goal.push_str(&format!("Task: {}\n\n", self.task.instruction));
        }
        let initial = self.task.state.as_deref().unwrap_or("");
        goal.push_str(&format!("Current state:\n{initial}"));
        let mut out = vec![Message::system(system), Message::user(goal)];
        for r in &self.records {
            let said = r.policy_output.clone().unwrap_or_else(|| r.action.clone());
            out.push(Message::assistant(said));
            out.push(Message::user(format!("Observation:\n{}", r.observation)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_come_out_of_fences_tags_or_the_whole_reply() {
        assert_eq!(
            extract_action("<think>ls first</think>\n```json\n[{\"keystrokes\": \"ls\\n\"}]\n```"),
            "[{\"keystrokes\": \"ls\\n\"}]"
        );
        assert_eq!(
            extract_action("```\nclick('1')\n``` then ```python\npyautogui.click(1, 2)\n```"),
            "pyautogui.click(1, 2)"
        );
        assert_eq!(extract_action("I will <action> DONE </action>"), "DONE");
        assert_eq!(extract_action("  click('12')\n"), "click('12')");
        assert_eq!(extract_action("```click('3')```"), "click('3')");
        assert_eq!(extract_action("```[\"a\"]\n```"), "[\"a\"]");
    }

    #[test]
    fn every_domain_has_a_prompt() {
        for d in Domain::ALL {
            assert!(policy_system_prompt(d).contains(d.as_str()));
        }
    }
}
