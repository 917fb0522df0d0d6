//! The world model behind a rollout: one trait ([`WorldModel`]: messages in, raw text out)
//! with two implementations, a local model and an OpenAI-compatible endpoint.
//!
//! The local model runs on `agentworld serve`'s engine thread ([`EngineHandle`]): every
//! environment's request joins one continuous batch ([`agentworld_engine::DecodeBatch`]), so N
//! concurrent environments decode together in one forward pass per token instead of queueing
//! one by one. The endpoint takes concurrent HTTP requests, one per environment thread.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agentworld_engine::GenerateParams;
use agentworld_engine::sampling::SamplingParams;
use agentworld_serve::EngineHandle;
use agentworld_serve::scheduler::JobEvent;
use agentworld_text::RenderOptions;
use agentworld_world::{Domain, Message};

use crate::cmd::eval::pool::HttpArgs;
use crate::endpoint::CallError;

/// Something that predicts the next observation: given the chat messages of a world-model
/// request, one try at its raw output (thinking, then the `<predicted_observation>` block).
/// Retries are the caller's ([`HttpArgs::with_retries`]).
pub trait WorldModel: Sync {
    /// One try for an environment of `domain`. `seed` varies the sampling per environment and
    /// step where the model honours it.
    ///
    /// # Errors
    /// [`CallError`], retryable for timeouts, transport errors, 5xx and a full queue.
    fn complete(
        &self,
        domain: Domain,
        messages: &[Message],
        seed: u64,
    ) -> Result<String, CallError>;

    /// One line on how the model ran, for the summary (`None`: nothing to say).
    fn report(&self) -> Option<String> {
        None
    }
}

/// A world model on an OpenAI-compatible server (vLLM, SGLang, `agentworld serve`).
pub struct EndpointWorld {
    /// Server, timeout, temperature and `max_tokens`.
    pub http: HttpArgs,
    /// The server's base URL.
    pub url: String,
    /// The model name on it.
    pub model: String,
}

impl WorldModel for EndpointWorld {
    fn complete(
        &self,
        _domain: Domain,
        messages: &[Message],
        _seed: u64,
    ) -> Result<String, CallError> {
        let value = serde_json::to_value(messages).map_err(|e| CallError {
            message: format!("cannot serialise the messages: {e}"),
            retryable: false,
        })?;
        let reply = self.http.chat_once(&self.url, &self.model, &value)?;
        // As the streaming client does: reasoning split off by the server goes back in front.
        Ok(match reply.reasoning {
            Some(r) => format!("{r}\n</think>\n\n{}", reply.content),
            None => reply.content,
        })
    }
}

/// A local model on an engine thread with continuous batching.
pub struct LocalWorld {
    /// The engine thread.
    pub handle: EngineHandle,
    /// Drives the waits (timers) of the environment threads.
    pub runtime: tokio::runtime::Runtime,
    /// Most generated tokens per step (capped by the room left in the context).
    pub max_tokens: usize,
    /// Sampling temperature (0: greedy).
    pub temperature: f32,
    /// Longest wait for one step's output; the generation is cancelled after it.
    pub timeout: Duration,
    /// The most sequences seen decoding together (sampled as output arrives).
    pub peak_batch: AtomicUsize,
}

impl WorldModel for LocalWorld {
    fn complete(
        &self,
        domain: Domain,
        messages: &[Message],
        seed: u64,
    ) -> Result<String, CallError> {
        let fail = |message: String, retryable| CallError { message, retryable };
        let info = &self.handle.info;
        let text = info
            .template
            .render(messages, &RenderOptions::new().with_generation_prompt(true))
            .map_err(|e| {
                fail(
                    format!("the chat template rejected the messages: {e}"),
                    false,
                )
            })?;
        let (prompt, marks) = agentworld_serve::request::encode_chat_prompt(
            info,
            &text,
            agentworld_engine::NamedBias::Card,
        )
        .map_err(|e| fail(format!("tokenizing the prompt failed: {e}"), false))?;
        if prompt.len() >= info.max_model_len {
            return Err(fail(
                format!(
                    "the prompt has {} tokens; the model's context is {}",
                    prompt.len(),
                    info.max_model_len
                ),
                false,
            ));
        }
        let params = GenerateParams {
            max_tokens: self
                .max_tokens
                .min(info.max_model_len - prompt.len())
                .max(1),
            sampling: SamplingParams {
                temperature: self.temperature,
                top_p: 1.0,
                top_k: 0,
                seed,
                // The model card's copy prior for the environment's domain.
                copy_bias: info.card.copy_bias_for(Some(domain.as_str())),
            },
        };
        let mut events = self
            .handle
            .submit_marked(prompt, params, Some(marks))
            .map_err(|e| fail(format!("local engine: {e}"), true))?;
        let collect = async move {
            let mut out = String::new();
            while let Some(event) = events.recv().await {
                match event {
                    JobEvent::Text { text, .. } => {
                        let running = self.handle.metrics.running.load(Ordering::Relaxed);
                        self.peak_batch.fetch_max(running, Ordering::Relaxed);
                        out.push_str(&text);
                    }
                    JobEvent::Done(_) => return Ok(out),
                    JobEvent::Failed(message) => {
                        return Err(fail(format!("local engine: {message}"), false));
                    }
                }
            }
            Err(fail(
                "local engine: the engine thread stopped".into(),
                false,
            ))
        };
        // On timeout the receiver is dropped, which cancels the generation.
        self.runtime
            .block_on(async { tokio::time::timeout(self.timeout, collect).await })
            .unwrap_or_else(|_| {
                Err(fail(
                    format!("local engine: no answer within {:?}", self.timeout),
                    true,
                ))
            })
    }

    fn report(&self) -> Option<String> {
        Some(format!(
            "peak decode batch {}",
            self.peak_batch.load(Ordering::Relaxed)
        ))
    }
}
