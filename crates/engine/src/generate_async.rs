//! One sequence decoded with asynchronous readback, for WebGPU in a browser, where a
//! synchronous read (`into_data`) panics: every token's id (or, when sampling, its logits) is
//! read with `into_data_async().await`, so the page's event loop keeps running between steps.
//! The arithmetic is [`Engine::generate`]'s for one prompt; no clock is read (wasm32 has none),
//! so the timings of the returned [`Generation`] are 0.

use agentworld_model::TokenBatch;
use agentworld_model::sampling::Sampler;
use burn::tensor::Tensor;
use burn::tensor::backend::Backend;

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::generate::{FinishReason, GenerateParams, Generation};

impl<B: Backend> Engine<B> {
    /// [`Engine::generate`] for one prompt, reading results back asynchronously; `on_text`
    /// gets each piece of text as it is decoded. `stop` is polled before each step: when it
    /// returns true, generation ends as [`FinishReason::Stop`].
    pub async fn generate_async(
        &self,
        prompt: &[u32],
        params: &GenerateParams,
        on_text: &mut dyn FnMut(&str),
        stop: &dyn Fn() -> bool,
    ) -> Result<Generation> {
        let context = self.max_context();
        self.check_prompt(prompt)?;
        let limit = params.max_tokens.min(context - prompt.len());
        let mut cache = self.model.new_cache(1, &self.device);
        let batch = TokenBatch::single(prompt.to_vec());
        let mut logits = self.model.forward_last(&batch, Some(&mut cache))?;
        let mut sampler = Sampler::new(params.sampling);
        let mut stream = self.tokenizer.decode_stream(true);
        let mut text = String::new();
        let mut ids = Vec::new();
        let finish = loop {
            let tok = pick_async(logits, &mut sampler).await?;
            if self.stop_ids.contains(&tok) {
                break FinishReason::Stop;
            }
            ids.push(tok);
            if let Some(piece) = stream.step(tok)? {
                text.push_str(&piece);
                on_text(&piece);
            }
            if ids.len() >= limit {
                break FinishReason::Length;
            }
            if stop() {
                break FinishReason::Stop;
            }
            let step = TokenBatch::single(vec![tok]);
            logits = self.model.forward_last(&step, Some(&mut cache))?;
        };
        if let Some(rest) = stream.finish()? {
            text.push_str(&rest);
            on_text(&rest);
        }
        Ok(Generation {
            text,
            token_ids: ids,
            prompt_tokens: prompt.len(),
            finish_reason: finish,
            prefill_secs: 0.0,
            decode_secs: 0.0,
        })
    }
}

/// The next token from `[1, vocab]` logits: the argmax read back when greedy, else the
/// logits read back and sampled.
async fn pick_async<B: Backend>(logits: Tensor<B, 2>, sampler: &mut Sampler) -> Result<u32> {
    fn read(e: impl std::fmt::Debug) -> EngineError {
        EngineError::Request(format!("reading results back from the device: {e:?}"))
    }
    if sampler.is_greedy() {
        let data = logits.argmax(1).into_data_async().await.map_err(read)?;
        let ids = data.convert::<i64>().to_vec::<i64>().map_err(read)?;
        return Ok(ids.first().copied().unwrap_or(0) as u32);
    }
    let data = logits.into_data_async().await.map_err(read)?;
    let values = data.convert::<f32>().to_vec::<f32>().map_err(read)?;
    Ok(sampler.sample(&values))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::ModelFiles;

    #[test]
    fn same_tokens_as_the_synchronous_loop() {
        type B = burn_flex::Flex;
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../public/models/agentworld-demo");
        let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
        let files = ModelFiles {
            config_json: String::from_utf8(read("config.json")).unwrap(),
            shards: vec![("model.safetensors".into(), read("model.safetensors"))],
            tokenizer_json: read("tokenizer.json"),
            tokenizer_config_json: Some(read("tokenizer_config.json")),
            chat_template: Some(String::from_utf8(read("chat_template.jinja")).unwrap()),
            generation_config_json: Some(read("generation_config.json")),
            ..ModelFiles::default()
        };
        let engine = Engine::<B>::from_files(&files, &Default::default(), &mut |_, _| {}).unwrap();
        let prompt = engine.encode("user@sandbox:~$ ls").unwrap();
        let params = GenerateParams {
            max_tokens: 24,
            ..GenerateParams::default()
        };
        let sync = engine.generate(&prompt, &params, &mut |_| {}).unwrap();
        let mut streamed = String::new();
        let mut on_text = |t: &str| streamed.push_str(t);
        let fut = engine.generate_async(&prompt, &params, &mut on_text, &|| false);
        let got = burn::tensor::try_read_sync(fut)
            .expect("the Flex backend completes at once")
            .unwrap();
        assert_eq!(got.token_ids, sync.token_ids);
        assert_eq!(got.text, sync.text);
        assert_eq!(streamed, sync.text);
        assert_eq!(got.finish_reason, sync.finish_reason);
    }
}
