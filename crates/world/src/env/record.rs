//! What a trajectory keeps of each step ([`StepRecord`]), and the trajectory as an
//! AgentWorldBench row ([`WorldEnv::to_row`]).
//!
//! The row is `{task, id, prompt[], response[], current_prompt, system_str, turn_idx,
//! total_turns}` as the benchmark's rows: `prompt[i]` is turn i+1's prompt and `response[i]`
//! the observation the world model gave it (with the `**Environment Observation:**` marker),
//! `system_str` the world model's system prompt, and `turn_idx = total_turns =` the number of
//! prompts, so [`Row::messages`] of the row replays the last turn's request. When the last step
//! failed (its model call ran out of retries), its prompt is the last `prompt` with no
//! `response`: the row is then an infer-step input for exactly that turn. A trajectory that
//! ended before any turn (the agent finished at once, or the policy failed) has no prompts and
//! `turn_idx` 0.
//!
//! Added fields (kept in [`Row::extra`], written back unchanged by the row reader):
//! `instruction`, `steps` (one [`StepRecord`] per step, failed and finishing steps included),
//! `reward` (the sum of the steps' rewards) and `done_reason`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{DoneReason, RewardPart, Step, WorldEnv};
use crate::Row;

/// How the calls of one step went (filled by the caller that made them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CallStats {
    /// Policy calls made for this step's action (retries included; 0: none, e.g. scripted).
    pub policy_attempts: usize,
    /// World-model calls made (retries included; 0 for a finishing step).
    pub world_attempts: usize,
    /// Seconds waiting for the policy.
    pub policy_secs: f64,
    /// Seconds waiting for the world model.
    pub world_secs: f64,
}

/// One step of a trajectory, as stored in the row's `steps`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// 1-based turn number.
    pub turn: usize,
    /// The action as the agent gave it (empty when the policy gave none).
    pub action: String,
    /// The policy's raw reply the action was read from, when a policy was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_output: Option<String>,
    /// The world model's raw output (thinking included when the model returned it).
    pub generation: Option<String>,
    /// The observation after the step (unchanged for a finishing or failed step).
    pub observation: String,
    /// The turn prompt of a failed step (the row's last prompt, with no response).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Whether the world model's output was one closed `<predicted_observation>` block.
    pub well_formed: bool,
    /// Whether the state changed.
    pub state_changed: bool,
    /// Structural changes from the previous state (`None`: a side did not parse).
    pub changes: Option<usize>,
    /// The step's reward.
    pub reward: f64,
    /// Its parts.
    pub reward_parts: Vec<RewardPart>,
    /// Whether the episode ended here.
    pub done: bool,
    /// Why.
    pub done_reason: Option<DoneReason>,
    /// Why the action does not parse for its domain.
    pub action_error: Option<String>,
    /// Missing targets and state parse warnings.
    pub warnings: Vec<String>,
    /// Why the step failed.
    pub error: Option<String>,
    /// Attempts and waits.
    #[serde(default)]
    pub calls: CallStats,
}

impl StepRecord {
    /// The record of `step`, taken after `action` with the model's `generation`.
    pub fn of(action: &str, generation: Option<&str>, step: &Step, state_changed: bool) -> Self {
        StepRecord {
            turn: step.info.turn,
            action: action.to_string(),
            policy_output: None,
            generation: generation.map(str::to_string),
            observation: step.observation.text.clone(),
            prompt: None,
            well_formed: step.info.well_formed,
            state_changed,
            changes: step.diff.as_ref().map(|d| d.changes.len()),
            reward: step.reward,
            reward_parts: step.reward_parts.clone(),
            done: step.done,
            done_reason: step.info.done_reason,
            action_error: step.info.action_error.clone(),
            warnings: step.info.warnings.clone(),
            error: step.info.error.clone(),
            calls: CallStats::default(),
        }
    }
}

impl WorldEnv {
    /// The sum of the steps' rewards.
    pub fn total_reward(&self) -> f64 {
        self.records.iter().map(|r| r.reward).sum()
    }

    /// The trajectory so far as an AgentWorldBench row (see the module docs).
    pub fn to_row(&self) -> Row {
        let mut prompt: Vec<String> = Vec::new();
        let mut response: Vec<String> = Vec::new();
        for e in &self.history.exchanges {
            prompt.push(e.prompt.clone());
            response.push(e.response.clone());
        }
        if let Some(failed) = self.records.last().and_then(|r| r.prompt.clone()) {
            prompt.push(failed);
        }
        let mut extra = Map::new();
        extra.insert("instruction".into(), json!(self.task.instruction));
        extra.insert(
            "steps".into(),
            serde_json::to_value(&self.records).unwrap_or(Value::Null),
        );
        extra.insert("reward".into(), json!(self.total_reward()));
        extra.insert("done_reason".into(), json!(self.done));
        Row {
            task: self.task.domain.as_str().to_string(),
            id: self.task.id.clone(),
            current_prompt: prompt.last().cloned().unwrap_or_default(),
            system_str: self.history.system.clone(),
            turn_idx: prompt.len(),
            total_turns: prompt.len(),
            prompt,
            response,
            thinking: None,
            split: None,
            extra,
        }
    }
}
