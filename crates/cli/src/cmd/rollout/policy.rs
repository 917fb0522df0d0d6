//! The agent behind a rollout: an OpenAI-compatible model asked for each action, or the
//! actions a task scripts (replayed in order, no model).

use agentworld_world::WorldEnv;
use agentworld_world::env::{extract_action, policy_system_prompt};

use crate::cmd::eval::pool::HttpArgs;
use crate::endpoint::CallError;

/// An OpenAI-compatible policy model.
pub struct EndpointPolicy {
    /// Server, retries, timeout, temperature and `max_tokens`.
    pub http: HttpArgs,
    /// The server's base URL.
    pub url: String,
    /// The model name on it.
    pub model: String,
    /// The policy's system prompt; `None`: ours for the task's domain.
    pub system: Option<String>,
}

/// The next action of an episode.
pub enum Next {
    /// The action text and, from a model, its raw reply.
    Action(String, Option<String>),
    /// A scripted task has no more actions.
    ScriptEnded,
    /// The policy could not be asked (after its retries).
    Failed(CallError),
}

/// Asks for the next action of `env`: the task's scripted action when it has `actions`,
/// else `policy`'s. Returns it with the number of policy calls made.
pub fn next_action(policy: Option<&EndpointPolicy>, env: &WorldEnv) -> (Next, usize) {
    if let Some(actions) = &env.task().actions {
        return match actions.get(env.records().len()) {
            Some(a) => (Next::Action(a.clone(), None), 0),
            None => (Next::ScriptEnded, 0),
        };
    }
    let Some(policy) = policy else {
        let error = CallError {
            message: "the task has no actions and no --policy-endpoint was given".into(),
            retryable: false,
        };
        return (Next::Failed(error), 0);
    };
    let system = policy
        .system
        .clone()
        .unwrap_or_else(|| policy_system_prompt(env.task().domain));
    let messages = serde_json::to_value(env.policy_messages(&system)).unwrap_or_default();
    let (reply, attempts) = policy
        .http
        .with_retries(|| policy.http.chat_once(&policy.url, &policy.model, &messages));
    match reply {
        Ok(r) => (
            Next::Action(extract_action(&r.content), Some(r.content)),
            attempts,
        ),
        Err(e) => (Next::Failed(e), attempts),
    }
}
