//! `eval infer --model DIR`: batched generation with a local model through
//! `agentworld_engine::Engine`.

use std::path::PathBuf;

use agentworld_engine::GenerateParams;
use agentworld_engine::sampling::SamplingParams;
use agentworld_world::Message;
use agentworld_world::bench::Inference;
use anyhow::{Context, Result};

use super::rows::inference_of;
use crate::backend::OnBackend;
use crate::progress;

/// Generation for the pending rows of `eval infer` with a local model.
pub struct LocalInfer<'a> {
    /// The model directory.
    pub dir: PathBuf,
    /// `--dtype` / `--quantize`.
    pub precision: crate::backend::Precision,
    /// Every input row's messages.
    pub messages: &'a [Vec<Message>],
    /// Input indices still to run.
    pub pending: &'a [usize],
    /// Rows generated together.
    pub batch: usize,
    /// Generation limit per row (capped by the model's context).
    pub max_tokens: usize,
    /// Sampling temperature.
    pub temperature: f64,
    /// Seed; row r of a batch uses `seed + r`.
    pub seed: u64,
    /// Called with each row's result as its batch finishes.
    pub record: &'a mut dyn FnMut(usize, Inference) -> Result<()>,
}

impl OnBackend for LocalInfer<'_> {
    type Output = ();

    fn run<B: burn::tensor::backend::Backend>(self, device: B::Device) -> Result<()> {
        let engine = progress::load_engine::<B>(&self.dir, &device, self.precision)?;
        let context = engine.max_context();
        let mut prompts = Vec::with_capacity(self.pending.len());
        for &i in self.pending {
            let text = engine
                .render_prompt(&self.messages[i], None)
                .with_context(|| format!("rendering row {}", i + 1))?;
            prompts.push((i, engine.encode(&text)?));
        }
        // Rows of similar length together keep padding low.
        prompts.sort_by_key(|(_, ids)| ids.len());
        let (fits, too_long): (Vec<_>, Vec<_>) = prompts
            .into_iter()
            .partition(|(_, ids)| ids.len() < context);
        for (i, ids) in too_long {
            let error = format!(
                "the prompt has {} tokens; this model's context is {context}",
                ids.len()
            );
            (self.record)(
                i,
                Inference {
                    error: Some(error),
                    ..Default::default()
                },
            )?;
        }
        let params = GenerateParams {
            max_tokens: self.max_tokens,
            sampling: SamplingParams {
                temperature: self.temperature as f32,
                top_k: 0,
                top_p: 1.0,
                seed: self.seed,
                copy_bias: 0.0,
            },
        };
        for chunk in fits.chunks(self.batch.max(1)) {
            let batch: Vec<Vec<u32>> = chunk.iter().map(|(_, ids)| ids.clone()).collect();
            let generations = engine.generate_batch(&batch, &params)?;
            for ((i, _), g) in chunk.iter().zip(generations) {
                (self.record)(*i, inference_of(g.text, None))?;
            }
        }
        Ok(())
    }
}
