//! One sequence decoded with asynchronous readback, for WebGPU in a browser, where a
//! synchronous read (`into_data`) panics: every token's id (or, when sampling, its logits) is
//! read with `into_data_async().await`, so the page's event loop keeps running between steps.
//! The arithmetic is [`Engine::generate`]'s for one prompt; no clock is read (wasm32 has none),
//! so the timings of the returned [`Generation`] are 0.

use crate::sampling::Sampler;
use agentworld_model::{Routing, TokenBatch};
use burn::tensor::Tensor;
use burn::tensor::backend::Backend;

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::generate::{FinishReason, GenerateParams, Generation, PromptMarks};

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
        self.generate_async_routed(prompt, None, params, on_text, stop, None)
            .await
    }

    /// [`Self::generate_async`]; with `marks`, the copy prior copies from where they say
    /// ([`PromptMarks`]: the lines the action names, the state it is held to); with `on_routing`, also reports
    /// for every generated token which experts each MoE layer chose at the position that
    /// predicted it ([`TokenRouting`]), read back asynchronously with the token.
    ///
    /// # Errors
    /// As [`Engine::generate`]; a failed read-back from the device.
    pub async fn generate_async_routed(
        &self,
        prompt: &[u32],
        marks: Option<&PromptMarks>,
        params: &GenerateParams,
        on_text: &mut dyn FnMut(&str),
        stop: &dyn Fn() -> bool,
        mut on_routing: Option<&mut dyn FnMut(TokenRouting)>,
    ) -> Result<Generation> {
        let context = self.max_context();
        self.check_prompt(prompt)?;
        let limit = params.max_tokens.min(context - prompt.len());
        let mut cache = self.model.new_cache(1, &self.device);
        let batch = TokenBatch::single(prompt.to_vec());
        let mut trace = Vec::new();
        let tracing = on_routing.is_some();
        let mut logits = self.model.forward_last_traced(
            &batch,
            Some(&mut cache),
            tracing.then_some(&mut trace),
        )?;
        let mut sampler = self.sampler(params.sampling, prompt, marks);
        let mut stream = self.tokenizer.decode_stream(true);
        let mut text = String::new();
        let mut ids = Vec::new();
        let finish = loop {
            let tok = pick_async(logits, &mut sampler).await?;
            if let Some(report) = on_routing.as_deref_mut() {
                let mut routing = read_routing(std::mem::take(&mut trace)).await?;
                routing.token = tok;
                report(routing);
            }
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
            logits = self.model.forward_last_traced(
                &step,
                Some(&mut cache),
                tracing.then_some(&mut trace),
            )?;
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

/// Which experts each MoE layer chose for one generated token: the router's choice at the
/// position whose logits picked the token (HF `Qwen3_5MoeTopKRouter`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TokenRouting {
    /// The generated token id.
    pub token: u32,
    /// Per layer, the chosen expert ids, highest router probability first: `[layers][top_k]`.
    pub experts: Vec<Vec<u32>>,
    /// Per layer, the chosen experts' renormalised weights: `[layers][top_k]`.
    pub weights: Vec<Vec<f32>>,
}

/// The last position's routing of every layer, read back in one transfer: expert ids (exact
/// in f32 below 2^24) beside their weights, `[layers, 2 * top_k]`.
async fn read_routing<B: Backend>(trace: Vec<Routing<B>>) -> Result<TokenRouting> {
    fn read(e: impl std::fmt::Debug) -> EngineError {
        EngineError::Request(format!("reading the routing back from the device: {e:?}"))
    }
    let Some([tokens, k]) = trace.first().map(|r| r.indices.dims()) else {
        return Ok(TokenRouting {
            token: 0,
            experts: Vec::new(),
            weights: Vec::new(),
        });
    };
    let rows = trace
        .iter()
        .map(|r| {
            let ids = r.indices.clone().slice([tokens - 1..tokens, 0..k]).float();
            let weights = r.weights.clone().slice([tokens - 1..tokens, 0..k]);
            Tensor::cat(vec![ids, weights], 1)
        })
        .collect();
    let data = Tensor::cat(rows, 0).into_data_async().await.map_err(read)?;
    let values = data.convert::<f32>().to_vec::<f32>().map_err(read)?;
    let (experts, weights) = values
        .chunks(2 * k)
        .map(|row| {
            let (ids, w) = row.split_at(k);
            (ids.iter().map(|&e| e as u32).collect(), w.to_vec())
        })
        .unzip();
    Ok(TokenRouting {
        token: 0,
        experts,
        weights,
    })
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

    type B = burn_flex::Flex;

    fn demo_engine() -> Engine<B> {
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
        Engine::<B>::from_files(&files, &Default::default(), &mut |_, _| {}).unwrap()
    }

    #[test]
    fn encode_marked_gives_the_tokens_of_the_marked_lines() {
        let engine = demo_engine();
        let text = "<|im_start|>user\nRootWebArea 'Form'\n\t[13] textbox 'Name'\n\t[14] button 'OK'<|im_end|>";
        let line = text.find("\t[13]").unwrap()..text.find("\t[14]").unwrap();
        let (ids, marked) = engine
            .encode_marked(text, std::slice::from_ref(&line))
            .unwrap();
        assert_eq!(ids, engine.encode(text).unwrap(), "the same ids as encode");
        assert_eq!(marked.len(), 1, "one line, one run of tokens: {marked:?}");
        let decoded = engine
            .tokenizer
            .decode(&ids[marked[0].clone()], false)
            .unwrap();
        assert!(
            decoded.contains("[13] textbox 'Name'") && !decoded.contains("[14]"),
            "{decoded:?}"
        );
        let (_, none) = engine.encode_marked(text, &[]).unwrap();
        assert!(none.is_empty());
    }

    #[test]
    fn an_engine_over_a_model_in_memory_generates_as_the_loaded_one() {
        // What the training probe does: the same weights, handed over without a checkpoint.
        let loaded = demo_engine();
        let made = Engine::from_model(
            loaded.model.clone(),
            loaded.config.clone(),
            loaded.tokenizer.clone(),
            loaded.template.clone(),
            &Default::default(),
        );
        assert_eq!(made.stop_ids, loaded.stop_ids);
        let prompt = loaded.encode("user@sandbox:~$ ls").unwrap();
        let params = GenerateParams {
            max_tokens: 24,
            ..GenerateParams::default()
        };
        let a = loaded.generate(&prompt, &params, &mut |_| {}).unwrap();
        let b = made.generate(&prompt, &params, &mut |_| {}).unwrap();
        assert_eq!(a.token_ids, b.token_ids);
        assert!(made.layout.shards.is_empty() && made.card.is_none());
    }

    #[test]
    fn same_tokens_as_the_synchronous_loop() {
        let engine = demo_engine();
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

    #[test]
    fn routing_of_each_token_matches_a_full_forward_pass() {
        let engine = demo_engine();
        let prompt = engine.encode("user@sandbox:~$ ls -la").unwrap();
        let params = GenerateParams {
            max_tokens: 12,
            ..GenerateParams::default()
        };
        let mut seen = Vec::new();
        let mut on_routing = |r: TokenRouting| seen.push(r);
        let mut on_text = |_: &str| {};
        let fut = engine.generate_async_routed(
            &prompt,
            None,
            &params,
            &mut on_text,
            &|| false,
            Some(&mut on_routing),
        );
        let got = burn::tensor::try_read_sync(fut).unwrap().unwrap();
        assert!(seen.len() >= got.token_ids.len() && !seen.is_empty());
        // Without a cache, one pass over prompt + generated tokens routes every position; the
        // position before token i predicted it.
        let mut all = prompt.clone();
        all.extend(&got.token_ids);
        let mut trace = Vec::new();
        engine
            .model
            .forward_hidden_traced(&TokenBatch::single(all), None, Some(&mut trace))
            .unwrap();
        let config = engine.model.layers.len();
        let chosen: Vec<Vec<i64>> = trace
            .iter()
            .map(|r| {
                r.indices
                    .clone()
                    .into_data()
                    .convert::<i64>()
                    .to_vec::<i64>()
                    .unwrap()
            })
            .collect();
        let k = trace[0].indices.dims()[1];
        for (i, r) in seen.iter().take(got.token_ids.len()).enumerate() {
            assert_eq!(r.token, got.token_ids[i]);
            assert_eq!(r.experts.len(), config);
            for (layer, row) in chosen.iter().enumerate() {
                let at = prompt.len() - 1 + i;
                let want: Vec<u32> = row[at * k..(at + 1) * k]
                    .iter()
                    .map(|&e| e as u32)
                    .collect();
                assert_eq!(r.experts[layer], want, "token {i}, layer {layer}");
                let sum: f32 = r.weights[layer].iter().sum();
                assert!((sum - 1.0).abs() < 1e-4, "weights sum to {sum}");
            }
        }
    }
}
