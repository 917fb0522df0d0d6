//! One look of the training probe: teacher-forced accuracy on held-out examples
//! ([`crate::probe::teacher_forced`]) and greedy generations from a few held-out rows scored as
//! the final evaluation scores them, printed and appended to `probe.jsonl`.

use std::path::Path;

use agentworld_engine::Engine;
use agentworld_model::{Qwen35Moe, Qwen35MoeConfig};
use agentworld_text::{ChatTemplate, Tokenizer};
use agentworld_world::Row;
use burn::tensor::backend::Backend;

use super::{DemoRecipe, append_line};
use crate::dataset::Example;
use crate::eval::{evaluate, summarise};

/// What a look reads: the probe's examples and rows, the model's files, and the log.
pub(super) struct Looks<'a> {
    pub teacher_forced: &'a [Example],
    pub generated: &'a [Row],
    pub config: &'a Qwen35MoeConfig,
    pub tokenizer: &'a Tokenizer,
    pub template: &'a ChatTemplate,
    pub recipe: &'a DemoRecipe,
    pub log: &'a Path,
}

impl Looks<'_> {
    /// Scores `m` after `done` steps; returns the lines to print (a failure is a line, not
    /// an error: training goes on). The record is appended to the log.
    pub(super) fn look<B: Backend>(
        &self,
        done: usize,
        m: &Qwen35Moe<B>,
        device: &B::Device,
    ) -> Vec<String> {
        let mut record = serde_json::json!({"step": done});
        let mut lines = Vec::new();
        match crate::probe::teacher_forced(m, self.teacher_forced, 4096) {
            Ok(figures) => {
                lines.push(format!(
                    "held-out, teacher-forced, step {done}: {}",
                    crate::probe::format_accuracy(&figures)
                ));
                record["domains"] = serde_json::json!(figures);
            }
            Err(e) => lines.push(format!("held-out probe at step {done} failed: {e}")),
        }
        if !self.generated.is_empty() {
            let mut engine = Engine::from_model(
                m.clone(),
                self.config.clone(),
                self.tokenizer.clone(),
                self.template.clone(),
                device,
            );
            // Where the copy may come from is the recipe's (a terminal copy is held to its
            // screen); the card's other decoding settings are tuned after training.
            let reading = super::reading_card(self.recipe)
                .ok()
                .flatten()
                .unwrap_or_default();
            engine.card = Some(agentworld_engine::ModelCard {
                copy_sources_by_domain: self.recipe.copy_sources_by_domain.clone(),
                target_in_thinking: self.recipe.target_in_thinking.clone(),
                ..reading
            });
            match evaluate(
                &engine,
                self.generated,
                self.recipe.eval_batch,
                self.recipe.eval_max_tokens,
                &|d| self.recipe.copy_bias_for(d),
                // The recipe sets no named-line prior: it is a card setting, tuned after training.
                &|_| None,
                &mut |_, _| {},
            ) {
                Ok(predictions) => {
                    let summary = summarise(&predictions);
                    lines.push(format!(
                        "held-out, generated, step {done}: {}",
                        crate::probe::format_generated(&summary)
                    ));
                    record["generated"] = serde_json::json!(summary);
                }
                Err(e) => lines.push(format!("generating probe at step {done} failed: {e}")),
            }
        }
        let _ = append_line(self.log, &record.to_string());
        lines
    }
}
