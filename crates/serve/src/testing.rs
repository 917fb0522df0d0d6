//! A scripted [`StepBatch`] for protocol tests: the server's HTTP, batching and parsing code
//! runs for real, and the "model" replies with fixed text pieces, one per token, so tests
//! can feed exact outputs (tool calls, tags split across tokens) that a small model will not
//! produce on demand.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use agentworld_engine::{EngineError, FinishReason, GenerateParams, SequenceEvent};

use crate::scheduler::StepBatch;

/// Chooses the reply pieces for a prompt (its token ids).
pub type Script = Arc<dyn Fn(&[u32]) -> Vec<String> + Send + Sync>;

/// A batch whose sequences emit scripted pieces, one per step, then stop.
pub struct ScriptedBatch {
    script: Script,
    step_delay: Duration,
    rows: Vec<(u64, VecDeque<String>, usize)>,
}

impl std::fmt::Debug for ScriptedBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedBatch")
            .field("rows", &self.rows.len())
            .finish_non_exhaustive()
    }
}

impl ScriptedBatch {
    /// A batch replying with `script(prompt)`; each step sleeps `step_delay` (a stand-in for
    /// the forward pass).
    pub fn new(script: Script, step_delay: Duration) -> Self {
        Self {
            script,
            step_delay,
            rows: Vec::new(),
        }
    }

    fn next(id: u64, pieces: &mut VecDeque<String>, left: &mut usize) -> SequenceEvent {
        match pieces.pop_front() {
            None => SequenceEvent {
                id,
                token: None,
                text: String::new(),
                finish: Some(FinishReason::Stop),
            },
            Some(text) => {
                *left -= 1;
                SequenceEvent {
                    id,
                    token: Some(0),
                    text,
                    finish: (*left == 0).then_some(FinishReason::Length),
                }
            }
        }
    }
}

impl StepBatch for ScriptedBatch {
    fn add(
        &mut self,
        id: u64,
        prompt: &[u32],
        params: &GenerateParams,
        _marks: Option<&agentworld_engine::PromptMarks>,
    ) -> agentworld_engine::Result<SequenceEvent> {
        if params.max_tokens == 0 {
            return Err(EngineError::Request("max_tokens must be at least 1".into()));
        }
        let mut pieces: VecDeque<String> = (self.script)(prompt).into();
        let mut left = params.max_tokens;
        let event = Self::next(id, &mut pieces, &mut left);
        if event.finish.is_none() {
            self.rows.push((id, pieces, left));
        }
        Ok(event)
    }

    fn step(&mut self) -> agentworld_engine::Result<Vec<SequenceEvent>> {
        std::thread::sleep(self.step_delay);
        let events: Vec<SequenceEvent> = self
            .rows
            .iter_mut()
            .map(|(id, pieces, left)| Self::next(*id, pieces, left))
            .collect();
        self.rows
            .retain(|(id, _, _)| events.iter().any(|e| e.id == *id && e.finish.is_none()));
        Ok(events)
    }

    fn cancel(&mut self, id: u64) -> bool {
        let before = self.rows.len();
        self.rows.retain(|(r, _, _)| *r != id);
        self.rows.len() < before
    }

    fn ids(&self) -> Vec<u64> {
        self.rows.iter().map(|(id, _, _)| *id).collect()
    }

    fn clear(&mut self) {
        self.rows.clear();
    }
}
