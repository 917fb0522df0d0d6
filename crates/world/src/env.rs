//! [`WorldEnv`]: one environment simulated by a world model, for agent RL ("Sim RL").
//!
//! The environment is pure and synchronous: it never calls a model. A step has two halves, so
//! a caller can batch many environments' model calls (a local engine's batched decode, or
//! concurrent HTTP requests) however it likes:
//!
//! 1. [`WorldEnv::act`] takes the agent's action and returns the chat messages to send to the
//!    world model ([`Act::Query`]), exactly as `agentworld simulate` and `eval infer` build
//!    them: `[system] + (turn prompt, "**Environment Observation:**\n" + observation) per
//!    earlier turn + [this turn's prompt]`. The initial state goes under `**Current State:**`
//!    in the first turn only; later turns carry the action alone (the observations in the
//!    history are the state), as in AgentWorldBench's multi-turn rows. A finishing action
//!    (terminal `[]`, os `DONE`/`FAIL`, web `send_msg_to_user`/`report_infeasible`, an Android
//!    `status` report) ends the episode without a model call ([`Act::Finished`]).
//! 2. [`WorldEnv::observe`] takes the model's raw output and returns the [`Step`]: the
//!    observation extracted as the benchmark's parser does
//!    (`agentworld_text::observation`), the state parsed into the common tree
//!    ([`crate::state`]), the structural diff from the previous state ([`crate::diff`]), the
//!    reward ([`RewardHook`]), `done` and the [`StepInfo`]. [`WorldEnv::fail`] records a step
//!    whose model call failed for good (the episode ends, the step is kept).
//!
//! Every step, failed ones included, is kept as a [`StepRecord`], and [`WorldEnv::to_row`]
//! writes the trajectory as an AgentWorldBench [`Row`](crate::Row) (see [`record`]).

mod policy;
pub mod record;
pub mod reward;
pub mod task;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::Arc;

use agentworld_text::observation::inspect;
use serde::{Deserialize, Serialize};

use crate::action::{Action, AndroidForm, OsAction, check_targets, parse_action};
use crate::diff::{self, LineChange, ObservationForm, StateDiff};
use crate::messages::{History, Message, TurnAction, observation_response, turn_prompt};
use crate::state::{Registry, StateTree};
use crate::{Domain, Error, PromptSet, Result};

pub use policy::{extract_action, policy_system_prompt};
pub use record::{CallStats, StepRecord};
pub use reward::{RewardHook, RewardPart, RewardRules, StepView};
#[cfg(feature = "native")]
pub use task::read_tasks_file;
pub use task::{Task, parse_tasks};

/// Formats whose states are text first: their steps also get a line diff.
const LINE_FORMATS: [&str; 2] = ["terminal", "json"];

/// What every environment of a rollout shares.
#[derive(Clone)]
pub struct EnvConfig {
    /// World-model system prompts (a task's `system` overrides its domain's).
    pub prompts: PromptSet,
    /// The reward of each step.
    pub rewards: Arc<dyn RewardHook>,
    /// Most steps per episode (a task's `max_steps` overrides it); at least 1.
    pub max_steps: usize,
    /// Per domain, what the world model writes as its observation (its card's
    /// `observation_form_by_domain`): a [`ObservationForm::Patch`] is applied to the current
    /// state ([`diff::apply_patch`]) before the state is read; a domain not listed: the whole
    /// next state.
    pub observation_forms: BTreeMap<Domain, ObservationForm>,
}

impl Default for EnvConfig {
    /// Built-in prompts, [`RewardRules::default`], 8 steps.
    fn default() -> Self {
        EnvConfig {
            prompts: PromptSet::builtin(),
            rewards: Arc::new(RewardRules::default()),
            max_steps: 8,
            observation_forms: BTreeMap::new(),
        }
    }
}

impl std::fmt::Debug for EnvConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvConfig")
            .field("max_steps", &self.max_steps)
            .finish_non_exhaustive()
    }
}

/// A state as the agent sees it: the text, and the tree it parses into.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Observation {
    /// The state text (the initial state, or the observation the model predicted).
    pub text: String,
    /// The parsed state; `None` when there is no state or no format could read it.
    pub state: Option<StateTree>,
    /// Parse warnings, or why the text could not be parsed.
    pub warnings: Vec<String>,
}

/// Why an episode ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DoneReason {
    /// The agent gave its domain's finishing action.
    Finished,
    /// The step limit was reached.
    StepLimit,
    /// A scripted task ran out of actions.
    ScriptEnded,
    /// A model call failed after its retries (the failed step is recorded with its error).
    Failed,
}

/// What the env says about a step besides observation, state, diff, reward and done.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StepInfo {
    /// 1-based turn number.
    pub turn: usize,
    /// Why the action does not parse for its domain (it was sent as written).
    pub action_error: Option<String>,
    /// Elements the action names that the state lacks, and state parse warnings.
    pub warnings: Vec<String>,
    /// Whether the model output is exactly one closed `<predicted_observation>` block.
    pub well_formed: bool,
    /// Why the episode ended, when it did.
    pub done_reason: Option<DoneReason>,
    /// Why the step failed (the model could not be reached), when it did.
    pub error: Option<String>,
}

/// The result of one step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// The state after the step (unchanged for a finishing or failed step).
    pub observation: Observation,
    /// Structural changes from the previous state, when both parse.
    pub diff: Option<StateDiff>,
    /// Line changes, for text states (terminal screens, JSON).
    pub lines: Option<Vec<LineChange>>,
    /// The step's reward (the sum of `reward_parts`).
    pub reward: f64,
    /// Its parts.
    pub reward_parts: Vec<RewardPart>,
    /// Whether the episode is over.
    pub done: bool,
    /// Everything else.
    pub info: StepInfo,
}

/// What [`WorldEnv::act`] asks of the caller.
#[derive(Debug, Clone, PartialEq)]
pub enum Act {
    /// Send these messages to the world model, then pass its output to [`WorldEnv::observe`]
    /// (or the failure to [`WorldEnv::fail`]).
    Query(Vec<Message>),
    /// The action finished the episode; no model call is needed (boxed: a step is large).
    Finished(Box<Step>),
}

/// A step between [`WorldEnv::act`] and [`WorldEnv::observe`].
#[derive(Debug, Clone)]
struct Pending {
    action: String,
    action_error: Option<String>,
    warnings: Vec<String>,
    prompt: String,
}

/// One environment: its task, the history in the form the model expects, the current state
/// and the steps so far (see the module docs).
#[derive(Debug)]
pub struct WorldEnv {
    config: EnvConfig,
    registry: Registry,
    task: Task,
    history: History,
    current: Observation,
    format: String,
    pending: Option<Pending>,
    records: Vec<StepRecord>,
    done: Option<DoneReason>,
}

impl WorldEnv {
    /// An environment that has not started (call [`WorldEnv::reset`]).
    pub fn new(config: EnvConfig) -> WorldEnv {
        WorldEnv {
            config,
            registry: Registry::standard(),
            task: Task::new("", Domain::Terminal, None),
            history: History::default(),
            current: Observation {
                text: String::new(),
                state: None,
                warnings: Vec::new(),
            },
            format: "auto".into(),
            pending: None,
            records: Vec::new(),
            done: Some(DoneReason::Finished),
        }
    }

    /// Starts an episode of `task`: clears the history and the steps, and returns the initial
    /// observation (the task's state, parsed in its `format` or the detected one; later
    /// observations are read in the same format).
    pub fn reset(&mut self, task: Task) -> Observation {
        let system = task
            .system
            .clone()
            .unwrap_or_else(|| self.config.prompts.system_prompt(task.domain).to_string());
        self.history = History::new(system);
        self.format = task.format.clone().unwrap_or_else(|| "auto".into());
        let text = task.state.clone().unwrap_or_default();
        self.current = self.read_state(&text);
        if let Some(tree) = &self.current.state {
            self.format = tree.format.clone();
        }
        self.task = task;
        self.pending = None;
        self.records.clear();
        self.done = None;
        self.current.clone()
    }

    /// The task being run.
    pub fn task(&self) -> &Task {
        &self.task
    }

    /// The history as the world model sees it.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// The current state.
    pub fn observation(&self) -> &Observation {
        &self.current
    }

    /// Every step so far, failed and finishing ones included.
    pub fn records(&self) -> &[StepRecord] {
        &self.records
    }

    /// The last step's record, for the caller to add what it measured ([`CallStats`], the
    /// policy's raw reply).
    pub fn last_record_mut(&mut self) -> Option<&mut StepRecord> {
        self.records.last_mut()
    }

    /// Why the episode ended; `None` while it runs.
    pub fn done(&self) -> Option<DoneReason> {
        self.done
    }

    /// The step limit of this episode.
    pub fn max_steps(&self) -> usize {
        self.task.max_steps.unwrap_or(self.config.max_steps).max(1)
    }

    /// Ends a running episode without a step (a scripted task has no more actions).
    pub fn end(&mut self, reason: DoneReason) {
        if self.done.is_none() {
            self.done = Some(reason);
        }
    }

    /// Begins a step with the agent's action (see the module docs).
    ///
    /// # Errors
    /// [`Error::Env`] when the episode is over (or was never reset) or a step is pending.
    pub fn act(&mut self, action: &str) -> Result<Act> {
        if let Some(reason) = self.done {
            return Err(Error::Env(format!(
                "the episode of task `{}` is over ({reason:?}); call reset",
                self.task.id
            )));
        }
        if self.pending.is_some() {
            return Err(Error::Env(
                "a step is waiting for the world model's output".into(),
            ));
        }
        let domain = self.task.domain;
        let (action_error, finishing, warnings) = match parse_action(domain, action) {
            Ok(parsed) => {
                let warnings = match &self.current.state {
                    Some(tree) => check_targets(&parsed, tree),
                    None => Vec::new(),
                };
                (None, is_finishing(&parsed), warnings)
            }
            Err(e) => (Some(e.message), false, Vec::new()),
        };
        let turn = self.history.next_turn();
        let state = (turn == 1).then_some(self.task.state.as_deref()).flatten();
        let prompt = turn_prompt(turn, &TurnAction::parse(action).to_block_text(), state);
        let pending = Pending {
            action: action.to_string(),
            action_error,
            warnings,
            prompt,
        };
        if finishing {
            let step = self.finish_step(pending, None, DoneReason::Finished);
            return Ok(Act::Finished(Box::new(step)));
        }
        let messages = self.history.messages(&pending.prompt);
        self.pending = Some(pending);
        Ok(Act::Query(messages))
    }

    /// Completes the pending step with the world model's raw output (thinking included or
    /// not): extracts the observation, parses and diffs the state, computes the reward.
    ///
    /// # Errors
    /// [`Error::Env`] when no step is pending.
    pub fn observe(&mut self, generation: &str) -> Result<Step> {
        let pending = self
            .pending
            .take()
            .ok_or_else(|| Error::Env("observe needs a pending step: call act first".into()))?;
        let report = inspect(generation);
        let mut well_formed = report.blocks == 1 && report.closed && !report.text_outside;
        let form = self
            .config
            .observation_forms
            .get(&self.task.domain)
            .copied()
            .unwrap_or_default();
        let after = match form {
            ObservationForm::Full => self.read_state(&report.observation),
            ObservationForm::Patch => {
                let patched = diff::apply_patch(&self.current.text, &report.observation);
                // A patch line with no place to go is a malformed output.
                well_formed &= patched.unplaced.is_empty();
                let mut after = self.read_state(&patched.state);
                after
                    .warnings
                    .extend(patched.unplaced.iter().map(|(line, text)| {
                        format!("patch line {line} matches no line of the state, left out: {text}")
                    }));
                after
            }
        };
        let before = std::mem::replace(&mut self.current, after);
        let (diff, lines) = self.diff(&before);
        let state_changed = match &diff {
            Some(d) => !d.is_empty(),
            None => before.text.trim() != self.current.text.trim(),
        };
        self.history.push(
            pending.prompt.clone(),
            observation_response(&self.current.text),
        );
        let done =
            (self.history.exchanges.len() >= self.max_steps()).then_some(DoneReason::StepLimit);
        self.done = done;
        let mut warnings = pending.warnings.clone();
        warnings.extend(self.current.warnings.iter().cloned());
        let view = StepView {
            domain: self.task.domain,
            turn: self.history.exchanges.len(),
            action: &pending.action,
            action_valid: pending.action_error.is_none(),
            generation,
            observation: &self.current.text,
            well_formed,
            state_changed,
            done: done.is_some(),
        };
        let reward_parts = self.config.rewards.reward(&view);
        let reward = reward_parts.iter().map(|p| p.value).sum();
        let step = Step {
            observation: self.current.clone(),
            diff,
            lines,
            reward,
            reward_parts,
            done: done.is_some(),
            info: StepInfo {
                turn: view.turn,
                action_error: pending.action_error,
                warnings,
                well_formed,
                done_reason: done,
                error: None,
            },
        };
        self.records.push(StepRecord::of(
            &pending.action,
            Some(generation),
            &step,
            state_changed,
        ));
        Ok(step)
    }

    /// Records the pending step as failed for good (its model call ran out of retries, or
    /// the policy could not give an action when nothing is pending) and ends the episode.
    /// The state is unchanged and the reward 0.
    pub fn fail(&mut self, error: impl Into<String>) -> Step {
        let pending = self.pending.take().unwrap_or_else(|| Pending {
            action: String::new(),
            action_error: None,
            warnings: Vec::new(),
            prompt: String::new(),
        });
        self.finish_step(pending, Some(error.into()), DoneReason::Failed)
    }

    /// A step that ends the episode without a model output.
    fn finish_step(&mut self, pending: Pending, error: Option<String>, reason: DoneReason) -> Step {
        self.done = Some(reason);
        let turn = self.history.next_turn();
        let action_valid = pending.action_error.is_none() && !pending.action.is_empty();
        let (reward, reward_parts) = if error.is_some() {
            (0.0, Vec::new())
        } else {
            let view = StepView {
                domain: self.task.domain,
                turn,
                action: &pending.action,
                action_valid,
                generation: "",
                observation: &self.current.text,
                well_formed: false,
                state_changed: false,
                done: true,
            };
            let parts = self.config.rewards.reward(&view);
            (parts.iter().map(|p| p.value).sum(), parts)
        };
        let step = Step {
            observation: self.current.clone(),
            diff: None,
            lines: None,
            reward,
            reward_parts,
            done: true,
            info: StepInfo {
                turn,
                action_error: pending.action_error,
                warnings: pending.warnings,
                well_formed: false,
                done_reason: Some(reason),
                error,
            },
        };
        let mut record = StepRecord::of(&pending.action, None, &step, false);
        if step.info.error.is_some() && !pending.prompt.is_empty() {
            record.prompt = Some(pending.prompt);
        }
        self.records.push(record);
        step
    }

    /// `text` parsed in the episode's format (`auto` until a state has been read).
    fn read_state(&self, text: &str) -> Observation {
        if text.trim().is_empty() {
            return Observation {
                text: text.to_string(),
                state: None,
                warnings: Vec::new(),
            };
        }
        match self.registry.parse(&self.format, text) {
            Ok(parsed) => Observation {
                text: text.to_string(),
                warnings: parsed.warnings.iter().map(ToString::to_string).collect(),
                state: Some(parsed.tree),
            },
            Err(e) => Observation {
                text: text.to_string(),
                state: None,
                warnings: vec![format!("state: {e}")],
            },
        }
    }

    /// The structural diff from `before` to the current state, and a line diff for text
    /// formats.
    fn diff(&self, before: &Observation) -> (Option<StateDiff>, Option<Vec<LineChange>>) {
        let structural = match (&before.state, &self.current.state) {
            (Some(b), Some(a)) => Some(diff::diff(b, a)),
            _ => None,
        };
        let lines = LINE_FORMATS
            .contains(&self.format.as_str())
            .then(|| diff::line_diff(&before.text, &self.current.text));
        (structural, lines)
    }
}

/// Whether a parsed action ends the episode.
fn is_finishing(action: &Action) -> bool {
    match action {
        Action::Terminal(t) => t.is_done(),
        Action::Os(a) => matches!(a, OsAction::Done | OsAction::Fail),
        Action::Web(a) => matches!(a.name.as_str(), "send_msg_to_user" | "report_infeasible"),
        Action::Android(AndroidForm::Report { kind, .. }) => kind == "status",
        Action::Android(AndroidForm::Ui(_)) => false,
        Action::Tool(_) => false,
    }
}
