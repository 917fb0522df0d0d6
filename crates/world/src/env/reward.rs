//! Rule-based rewards for a step: the action's format (does it parse for its domain?) plus
//! rules the user supplies, read from JSON:
//!
//! ```json
//! {"valid_action": 0.0, "invalid_action": -1.0,
//!  "rules": [{"name": "logged in", "when": [{"observation_contains": "Welcome"}], "reward": 1.0},
//!            {"name": "no-op", "when": [{"state_changed": false}], "reward": -0.1}]}
//! ```
//!
//! A rule adds its `reward` when every condition in `when` holds (an empty `when` always
//! holds). Any other scheme plugs in through [`RewardHook`].

use serde::{Deserialize, Serialize};

use crate::Domain;

/// What a reward sees of one finished step.
#[derive(Debug, Clone, Copy)]
pub struct StepView<'a> {
    /// The environment's domain.
    pub domain: Domain,
    /// 1-based turn number.
    pub turn: usize,
    /// The action text as the agent gave it.
    pub action: &'a str,
    /// Whether the action parses for the domain (`agentworld_world::action::parse_action`).
    pub action_valid: bool,
    /// The world model's raw output (empty for a step that did not call it).
    pub generation: &'a str,
    /// The observation after the step.
    pub observation: &'a str,
    /// Whether the world model's output is exactly one closed `<predicted_observation>` block.
    pub well_formed: bool,
    /// Whether the state differs from the one before the step (structurally when both parse,
    /// else as text).
    pub state_changed: bool,
    /// Whether the episode ends with this step.
    pub done: bool,
}

/// One named part of a step's reward.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewardPart {
    /// Which rule gave it (`valid_action`, `invalid_action`, or the rule's name).
    pub name: String,
    /// The amount.
    pub value: f64,
}

/// Computes a step's reward parts; the step's reward is their sum.
pub trait RewardHook: Send + Sync {
    /// The parts of the reward for `step` (empty: 0).
    fn reward(&self, step: &StepView<'_>) -> Vec<RewardPart>;
}

/// A condition on a step, written `{"<kind>": value}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Condition {
    /// The observation contains this text.
    ObservationContains(String),
    /// The observation does not contain this text.
    ObservationLacks(String),
    /// The action text contains this text.
    ActionContains(String),
    /// The action parses (`true`) or does not (`false`).
    ActionValid(bool),
    /// The world model's output is well formed (`true`) or not (`false`).
    WellFormed(bool),
    /// The state changed (`true`) or stayed the same (`false`).
    StateChanged(bool),
    /// The episode ends with this step (`true`) or goes on (`false`).
    Done(bool),
}

impl Condition {
    /// Whether the condition holds for `step`.
    pub fn holds(&self, step: &StepView<'_>) -> bool {
        match self {
            Condition::ObservationContains(t) => step.observation.contains(t.as_str()),
            Condition::ObservationLacks(t) => !step.observation.contains(t.as_str()),
            Condition::ActionContains(t) => step.action.contains(t.as_str()),
            Condition::ActionValid(b) => step.action_valid == *b,
            Condition::WellFormed(b) => step.well_formed == *b,
            Condition::StateChanged(b) => step.state_changed == *b,
            Condition::Done(b) => step.done == *b,
        }
    }
}

/// A user rule: `reward` when every condition holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// The rule's name, reported in [`RewardPart::name`].
    pub name: String,
    /// Conditions that must all hold.
    #[serde(default)]
    pub when: Vec<Condition>,
    /// The amount added.
    pub reward: f64,
}

/// The built-in [`RewardHook`]: action format plus user rules (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RewardRules {
    /// Added when the action parses for its domain.
    #[serde(default)]
    pub valid_action: f64,
    /// Added when it does not.
    #[serde(default = "minus_one")]
    pub invalid_action: f64,
    /// User rules, applied in order.
    #[serde(default)]
    pub rules: Vec<Rule>,
}

fn minus_one() -> f64 {
    -1.0
}

impl Default for RewardRules {
    /// 0 for a valid action, -1 for an invalid one, no user rules.
    fn default() -> Self {
        RewardRules {
            valid_action: 0.0,
            invalid_action: minus_one(),
            rules: Vec::new(),
        }
    }
}

impl RewardRules {
    /// Reads rules from JSON text (see the module docs).
    ///
    /// # Errors
    /// [`crate::Error::Json`] (line 1) naming the unknown field or bad value.
    pub fn from_json(text: &str) -> crate::Result<RewardRules> {
        serde_json::from_str(text).map_err(|e| crate::Error::Json {
            line: e.line(),
            message: e.to_string(),
        })
    }
}

impl RewardHook for RewardRules {
    fn reward(&self, step: &StepView<'_>) -> Vec<RewardPart> {
        let mut parts = Vec::new();
        let (name, value) = if step.action_valid {
            ("valid_action", self.valid_action)
        } else {
            ("invalid_action", self.invalid_action)
        };
        if value != 0.0 {
            parts.push(RewardPart {
                name: name.into(),
                value,
            });
        }
        for rule in &self.rules {
            if rule.when.iter().all(|c| c.holds(step)) {
                parts.push(RewardPart {
                    name: rule.name.clone(),
                    value: rule.reward,
                });
            }
        }
        parts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view<'a>(observation: &'a str, action_valid: bool) -> StepView<'a> {
        StepView {
            domain: Domain::Terminal,
            turn: 1,
            action: "[]",
            action_valid,
            generation: "",
            observation,
            well_formed: true,
            state_changed: true,
            done: false,
        }
    }

    #[test]
    fn rules_from_json_add_up() {
        let rules = RewardRules::from_json(
            r#"{"rules": [{"name": "hi", "when": [{"observation_contains": "hi"}, {"state_changed": true}], "reward": 2.5},
                          {"name": "always", "reward": 0.5}]}"#,
        )
        .unwrap();
        let names = |parts: Vec<RewardPart>| -> Vec<(String, f64)> {
            parts.into_iter().map(|p| (p.name, p.value)).collect()
        };
        assert_eq!(
            names(rules.reward(&view("oh hi", true))),
            [("hi".to_string(), 2.5), ("always".to_string(), 0.5)]
        );
        assert_eq!(
            names(rules.reward(&view("bye", false))),
            [
                ("invalid_action".to_string(), -1.0),
                ("always".to_string(), 0.5)
            ]
        );
    }

    #[test]
    fn bad_rules_are_errors() {
        for bad in [
            r#"{"rule": []}"#,
            r#"{"rules": [{"name": "x", "when": [{"observation_has": "a"}], "reward": 1}]}"#,
            r#"{"rules": [{"name": "x"}]}"#,
            "not json",
        ] {
            assert!(RewardRules::from_json(bad).is_err(), "{bad}");
        }
    }
}
