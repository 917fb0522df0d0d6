//! A simulation session: the domain, the system prompt, the current state and the steps taken
//! so far. Plain data (no browser types), so it is tested natively.
//!
//! Each step sends the earlier turns as history (the benchmark's infer layout, see
//! [`agentworld_world::History`]) and the current state under **Current State:** when it is
//! not already the last predicted observation (turn 1 always carries it).

use agentworld_world::messages::{observation_response, turn_prompt};
use agentworld_world::state::for_model;
use agentworld_world::{Domain, History, Message, Row, TurnAction};

/// One finished world-model step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The action as the user composed it.
    pub action: String,
    /// The state shown before the step (as the page holds it).
    pub state_before: String,
    /// The user turn sent to the model.
    pub prompt: String,
    /// The model's reasoning.
    pub thinking: String,
    /// The predicted observation (extracted from the answer).
    pub observation: String,
}

/// The interaction so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The domain simulated.
    pub domain: Domain,
    /// The system prompt used for every step.
    pub system: String,
    /// Finished steps, oldest first.
    pub steps: Vec<Step>,
}

impl Session {
    /// A session with no steps.
    pub fn new(domain: Domain, system: impl Into<String>) -> Session {
        Session {
            domain,
            system: system.into(),
            steps: Vec::new(),
        }
    }

    /// The history of finished turns.
    pub fn history(&self) -> History {
        let mut h = History::new(self.system.clone());
        for s in &self.steps {
            h.push(s.prompt.clone(), observation_response(&s.observation));
        }
        h
    }

    /// The user turn for `action` on `state` (`model_state`: the state as the model reads it,
    /// see [`model_state`]). The state is left out when it is the last prediction, which the
    /// history already holds.
    pub fn next_prompt(&self, action: &str, state: &str, model_state: &str) -> String {
        let repeated = self
            .steps
            .last()
            .is_some_and(|s| s.observation.trim() == state.trim());
        let state = (!repeated && !state.trim().is_empty()).then_some(model_state);
        let block = TurnAction::parse(action).to_block_text();
        turn_prompt(self.steps.len() + 1, &block, state)
    }

    /// The chat messages for the next turn's `prompt`.
    pub fn messages(&self, prompt: &str) -> Vec<Message> {
        self.history().messages(prompt)
    }

    /// Removes the last step; returns it (its `state_before` is the state to go back to).
    pub fn undo(&mut self) -> Option<Step> {
        self.steps.pop()
    }

    /// The trajectory as AgentWorldBench JSONL: one row per step, each holding every turn,
    /// with `turn_idx` the step it scores (1-based) and `total_turns` the number of steps;
    /// the reasoning of that step goes in `thinking`.
    pub fn to_jsonl(&self, id: &str) -> String {
        let turns: Vec<(String, String)> = self
            .steps
            .iter()
            .map(|s| (s.prompt.clone(), observation_response(&s.observation)))
            .collect();
        let mut out = String::new();
        for (k, step) in self.steps.iter().enumerate() {
            let mut row = Row::from_turns(
                self.domain,
                format!("{id}-{}", k + 1),
                self.system.clone(),
                turns.clone(),
            );
            row.turn_idx = k + 1;
            row.current_prompt = step.prompt.clone();
            row.thinking = (!step.thinking.is_empty()).then(|| step.thinking.clone());
            match serde_json::to_string(&row) {
                Ok(line) => {
                    out.push_str(&line);
                    out.push('\n');
                }
                Err(e) => out.push_str(&format!("{{\"error\": \"{e}\"}}\n")),
            }
        }
        out
    }
}

/// The state as the model reads it, in `format`, the model's format for the domain (its card's
/// `state_formats`; `None`: as written): a uiautomator dump, an HTML page or a desktop XML tree
/// is converted as `agentworld simulate` does ([`for_model`]), with notes saying so; one that
/// cannot be read is sent as written, with the reason.
pub fn model_state(domain: Domain, state: &str, format: Option<&str>) -> (String, Vec<String>) {
    match for_model(domain, state, format) {
        Ok(prepared) => (prepared.text, prepared.notes),
        Err(e) => (state.to_string(), vec![format!("{e}; sent as written")]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(n: usize, obs: &str) -> Step {
        Step {
            action: format!("a{n}"),
            state_before: format!("s{n}"),
            prompt: format!("p{n}"),
            thinking: "t".into(),
            observation: obs.into(),
        }
    }

    #[test]
    fn prompts_repeat_the_state_only_when_it_changed() {
        let mut s = Session::new(Domain::Web, "sys");
        let p = s.next_prompt("click('3')", "page", "page");
        assert_eq!(
            p,
            "### Turn 1\n**Action:**\n```json\nclick('3')\n```\n\n**Current State:**\npage"
        );
        s.steps.push(step(1, "page 2"));
        let p = s.next_prompt("noop()", "page 2", "page 2");
        assert!(
            p.starts_with("### Turn 2") && !p.contains("Current State"),
            "{p}"
        );
        let p = s.next_prompt("noop()", "edited", "edited");
        assert!(p.ends_with("**Current State:**\nedited"), "{p}");
        let m = s.messages("next");
        assert_eq!(m.len(), 4);
        assert_eq!(m[2].content, "**Environment Observation:**\npage 2");
        assert_eq!(s.undo().map(|x| x.state_before), Some("s1".into()));
    }

    #[test]
    fn jsonl_has_one_row_per_step() {
        let mut s = Session::new(Domain::Android, "sys");
        s.steps.push(step(1, "o1"));
        s.steps.push(step(2, "o2"));
        let text = s.to_jsonl("run");
        let rows = agentworld_world::row::parse_jsonl(&text).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].task, "android");
        assert_eq!((rows[0].turn_idx, rows[0].total_turns), (1, 2));
        assert_eq!(rows[1].current_prompt, "p2");
        assert_eq!(
            rows[1].target().unwrap(),
            "**Environment Observation:**\no2"
        );
        assert_eq!(rows[0].id, "run-1");
    }

    #[test]
    fn android_dumps_become_compact() {
        let xml = "<hierarchy><node class=\"android.widget.TextView\" text=\"Hi\" \
                   bounds=\"[0,0][10,10]\"/></hierarchy>";
        let (s, _) = model_state(Domain::Android, xml, Some("android-compact"));
        assert_eq!(s.trim(), "TextView \"Hi\" [0,0][10,10]");
        let (s, notes) = model_state(Domain::Android, "<hierarchy><node", Some("android-compact"));
        assert!(notes[0].contains("sent as written") && s.starts_with('<'));
        assert_eq!(model_state(Domain::Web, xml, None).0, xml);
    }

    #[test]
    fn html_and_desktop_xml_follow_the_card() {
        let html = "<html><body><button>Go</button></body></html>";
        let (s, notes) = model_state(Domain::Web, html, Some("axtree"));
        assert!(s.contains("button 'Go'") && notes.len() == 1, "{s}");
        assert_eq!(model_state(Domain::Web, html, None).0, html);
    }
}
