//! The engine thread: owns the model, runs continuous batching, and talks to the HTTP side
//! through channels.
//!
//! Requests wait in a bounded queue ([`EngineHandle::submit`] refuses with 503 when it is
//! full). Between decode steps the thread admits waiting requests while the batch has room
//! (`max_batch`), prefilling each and joining it to the running [`DecodeBatch`], and drops
//! sequences whose client has gone (its event receiver was dropped), so their cache slots are
//! freed before the next step.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError, TrySendError};
use std::time::{SystemTime, UNIX_EPOCH};

use agentworld_engine::{
    DecodeBatch, Engine, FinishReason, GenerateParams, ModelCard, PromptMarks, SequenceEvent,
};
use agentworld_text::{ChatTemplate, GenerationConfig, Tokenizer};
use burn::tensor::backend::Backend;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::config::ServeConfig;
use crate::error::{ApiError, Result, ServeError};
use crate::metrics::Metrics;

/// What the HTTP side needs to know about the model (its text side; the weights stay on the
/// engine thread).
#[derive(Debug)]
pub struct ModelInfo {
    /// The name clients must use (`--served-model-name`).
    pub name: String,
    /// The checkpoint's tokenizer.
    pub tokenizer: Tokenizer,
    /// The checkpoint's chat template.
    pub template: ChatTemplate,
    /// Sampling defaults of the checkpoint.
    pub generation_config: GenerationConfig,
    /// Longest prompt plus output, in tokens.
    pub max_model_len: usize,
    /// The model card (empty where the checkpoint has none): the copy prior of requests that
    /// set none is its `copy_bias` for the domain of the request's system prompt.
    pub card: ModelCard,
    /// Unix seconds when the model was loaded (`created` of `/v1/models`).
    pub created: u64,
}

/// One generation request for the engine thread.
#[derive(Debug)]
pub struct Job {
    /// Prompt token ids.
    pub prompt: Vec<u32>,
    /// Limits and sampling.
    pub params: GenerateParams,
    /// Where the copy prior copies from in the prompt (the lines its action names, the state
    /// it is held to).
    pub marks: Option<PromptMarks>,
    /// Where the output goes; dropping the receiver cancels the generation.
    pub events: UnboundedSender<JobEvent>,
}

/// Output of a job, in order: text pieces, then `Done` or `Failed`.
#[derive(Debug, Clone, PartialEq)]
pub enum JobEvent {
    /// New text and how many tokens produced it.
    Text {
        /// The text (may be empty).
        text: String,
        /// Generated tokens this event accounts for (0 or 1).
        tokens: usize,
    },
    /// The generation ended.
    Done(FinishReason),
    /// The generation could not run (the message says why).
    Failed(String),
}

/// The HTTP side's handle on the engine thread.
#[derive(Debug, Clone)]
pub struct EngineHandle {
    jobs: SyncSender<Job>,
    /// The model's text side.
    pub info: Arc<ModelInfo>,
    /// Shared statistics.
    pub metrics: Arc<Metrics>,
    alive: Arc<AtomicBool>,
}

/// The text side of a model, handed to the HTTP side once the model is loaded.
#[derive(Debug, Clone)]
pub struct ModelText {
    /// The checkpoint's tokenizer.
    pub tokenizer: Tokenizer,
    /// The checkpoint's chat template.
    pub template: ChatTemplate,
    /// Sampling defaults of the checkpoint.
    pub generation_config: GenerationConfig,
    /// The model's context length in tokens.
    pub context: usize,
    /// The model card (empty where the checkpoint has none).
    pub card: ModelCard,
}

impl ModelText {
    /// The text side of a loaded engine.
    pub fn of<B: Backend>(engine: &Engine<B>) -> Self {
        Self {
            tokenizer: engine.tokenizer.clone(),
            template: engine.template.clone(),
            generation_config: engine.generation_config.clone(),
            context: engine.max_context(),
            card: engine.card.clone().unwrap_or_default(),
        }
    }
}

/// What the engine thread drives: a batch that sequences join and leave between steps.
///
/// [`DecodeBatch`] is the real one; tests can script output with
/// [`crate::testing::ScriptedBatch`].
pub trait StepBatch {
    /// Starts a sequence and returns its first event (see [`DecodeBatch::add_marked`]).
    ///
    /// # Errors
    /// The request cannot run (the message is sent to the client).
    fn add(
        &mut self,
        id: u64,
        prompt: &[u32],
        params: &GenerateParams,
        marks: Option<&PromptMarks>,
    ) -> agentworld_engine::Result<SequenceEvent>;
    /// Advances every running sequence by one token (see [`DecodeBatch::step`]).
    ///
    /// # Errors
    /// The step failed; every running sequence is dropped.
    fn step(&mut self) -> agentworld_engine::Result<Vec<SequenceEvent>>;
    /// Drops a running sequence; `false` if it is not running.
    fn cancel(&mut self, id: u64) -> bool;
    /// Ids of the running sequences.
    fn ids(&self) -> Vec<u64>;
    /// Drops every sequence (after a failed or panicked step).
    fn clear(&mut self);
}

impl<B: Backend> StepBatch for DecodeBatch<'_, B> {
    fn add(
        &mut self,
        id: u64,
        prompt: &[u32],
        params: &GenerateParams,
        marks: Option<&PromptMarks>,
    ) -> agentworld_engine::Result<SequenceEvent> {
        DecodeBatch::add_marked(self, id, prompt, params, marks)
    }
    fn step(&mut self) -> agentworld_engine::Result<Vec<SequenceEvent>> {
        DecodeBatch::step(self)
    }
    fn cancel(&mut self, id: u64) -> bool {
        DecodeBatch::cancel(self, id)
    }
    fn ids(&self) -> Vec<u64> {
        DecodeBatch::ids(self)
    }
    fn clear(&mut self) {
        DecodeBatch::clear(self)
    }
}

/// Reports the loaded model to the waiting [`EngineHandle`]; `false` if it must not run.
type Ready<'a> = &'a mut dyn FnMut(std::result::Result<ModelText, ServeError>) -> bool;

impl EngineHandle {
    /// Loads a model on a new engine thread and starts its decode loop.
    ///
    /// `load` runs on that thread, so the backend's tensors never cross threads.
    ///
    /// # Errors
    /// Whatever `load` returns, or [`ServeError::Config`] for settings the model cannot honour
    /// (`max_model_len` above its context, `max_batch` or `max_queue` of 0).
    pub fn spawn<B, F>(load: F, config: &ServeConfig) -> Result<Self>
    where
        B: Backend,
        F: FnOnce() -> agentworld_engine::Result<Engine<B>> + Send + 'static,
    {
        Self::launch(config, move |ready, queue, max_batch, metrics| {
            let engine = match load() {
                Ok(e) => e,
                Err(e) => {
                    ready(Err(e.into()));
                    return;
                }
            };
            if ready(Ok(ModelText::of(&engine))) {
                run(&mut DecodeBatch::new(&engine), queue, max_batch, metrics);
            }
        })
    }

    /// Starts the decode loop on any [`StepBatch`] (tests script the output this way).
    ///
    /// # Errors
    /// As [`Self::spawn`].
    pub fn spawn_batch<S>(text: ModelText, mut batch: S, config: &ServeConfig) -> Result<Self>
    where
        S: StepBatch + Send + 'static,
    {
        Self::launch(config, move |ready, queue, max_batch, metrics| {
            if ready(Ok(text)) {
                run(&mut batch, queue, max_batch, metrics);
            }
        })
    }

    fn launch<W>(config: &ServeConfig, work: W) -> Result<Self>
    where
        W: FnOnce(Ready<'_>, &Receiver<Job>, usize, &Metrics) + Send + 'static,
    {
        config.validate()?;
        let (jobs, queue) = mpsc::sync_channel::<Job>(config.max_queue);
        let (ready_tx, ready_rx) = mpsc::channel::<Result<Arc<ModelInfo>>>();
        let metrics = Arc::new(Metrics::default());
        let alive = Arc::new(AtomicBool::new(true));
        let config = config.clone();
        let (thread_metrics, thread_alive) = (metrics.clone(), alive.clone());
        std::thread::Builder::new()
            .name("agentworld-engine".into())
            .spawn(move || {
                let mut ready = |text: std::result::Result<ModelText, ServeError>| {
                    let info = text.and_then(|text| model_info(&config, text));
                    let ok = info.is_ok();
                    ready_tx.send(info).is_ok() && ok
                };
                // Marks the engine dead however the thread ends, panics included.
                let _alive = AliveGuard(thread_alive);
                work(&mut ready, &queue, config.max_batch, &thread_metrics);
            })
            .map_err(|source| ServeError::Io {
                context: "starting the engine thread".into(),
                source,
            })?;
        let info = ready_rx.recv().map_err(|_| {
            ServeError::Config("the engine thread stopped while loading the model".into())
        })??;
        Ok(Self {
            jobs,
            info,
            metrics,
            alive,
        })
    }

    /// Queues a generation; its output arrives on the returned receiver. Dropping the
    /// receiver cancels it.
    ///
    /// # Errors
    /// 503 with `Retry-After` when the queue is full or the engine has stopped.
    pub fn submit(
        &self,
        prompt: Vec<u32>,
        params: GenerateParams,
    ) -> std::result::Result<UnboundedReceiver<JobEvent>, ApiError> {
        self.submit_marked(prompt, params, None)
    }

    /// [`EngineHandle::submit`], with where the copy prior copies from in the prompt
    /// ([`PromptMarks`]).
    ///
    /// # Errors
    /// As [`EngineHandle::submit`].
    pub fn submit_marked(
        &self,
        prompt: Vec<u32>,
        params: GenerateParams,
        marks: Option<PromptMarks>,
    ) -> std::result::Result<UnboundedReceiver<JobEvent>, ApiError> {
        let (events, rx) = unbounded_channel();
        self.metrics.queue_depth.fetch_add(1, Ordering::Relaxed);
        let job = Job {
            prompt,
            params,
            marks,
            events,
        };
        match self.jobs.try_send(job) {
            Ok(()) => Ok(rx),
            Err(e) => {
                self.metrics.queue_depth.fetch_sub(1, Ordering::Relaxed);
                Err(match e {
                    TrySendError::Full(_) => ApiError::overloaded(
                        "The server is busy: its request queue is full. Retry after a second, \
                         or start it with a larger --max-queue.",
                        1,
                    ),
                    TrySendError::Disconnected(_) => ApiError::overloaded(
                        "The engine has stopped; restart the server (see its log).",
                        5,
                    ),
                })
            }
        }
    }

    /// Whether the engine thread is running.
    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Relaxed)
    }
}

struct AliveGuard(Arc<AtomicBool>);

impl Drop for AliveGuard {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

/// Runs `f`, turning a panic into an error message (a bug in the model code must cost one
/// request or one batch, not the server).
fn guarded<T>(f: impl FnOnce() -> agentworld_engine::Result<T>) -> std::result::Result<T, String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.to_string()),
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("unknown panic");
            tracing::error!("the engine panicked: {what}");
            Err(format!("internal error in the engine: {what}"))
        }
    }
}

fn model_info(config: &ServeConfig, text: ModelText) -> Result<Arc<ModelInfo>> {
    let context = text.context;
    let max_model_len = config.max_model_len.unwrap_or(context);
    if max_model_len > context {
        return Err(ServeError::Config(format!(
            "--max-model-len {max_model_len} is above this model's context of {context} \
             tokens; use at most {context}"
        )));
    }
    Ok(Arc::new(ModelInfo {
        name: config.model_name.clone(),
        tokenizer: text.tokenizer,
        template: text.template,
        generation_config: text.generation_config,
        max_model_len,
        card: text.card,
        created: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    }))
}

/// The decode loop; returns when every [`EngineHandle`] is gone and the batch is empty.
fn run<S: StepBatch + ?Sized>(
    batch: &mut S,
    queue: &Receiver<Job>,
    max_batch: usize,
    metrics: &Metrics,
) {
    let mut clients: HashMap<u64, UnboundedSender<JobEvent>> = HashMap::new();
    let mut next_id: u64 = 0;
    let mut queue_open = true;
    loop {
        // Free the slots of clients that went away.
        for id in batch.ids() {
            if clients.get(&id).is_none_or(UnboundedSender::is_closed) {
                batch.cancel(id);
                clients.remove(&id);
                metrics.cancelled();
            }
        }
        metrics.running.store(batch.ids().len(), Ordering::Relaxed);
        // Admit waiting requests while there is room.
        while queue_open && batch.ids().len() < max_batch {
            let job = if batch.ids().is_empty() {
                match queue.recv() {
                    Ok(job) => job,
                    Err(_) => {
                        queue_open = false;
                        break;
                    }
                }
            } else {
                match queue.try_recv() {
                    Ok(job) => job,
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        queue_open = false;
                        break;
                    }
                }
            };
            metrics.queue_depth.fetch_sub(1, Ordering::Relaxed);
            if job.events.is_closed() {
                metrics.cancelled();
                continue;
            }
            next_id += 1;
            let before = batch.ids();
            match guarded(|| batch.add(next_id, &job.prompt, &job.params, job.marks.as_ref())) {
                Ok(event) => {
                    metrics.generated(usize::from(event.token.is_some()));
                    if deliver(&job.events, event) {
                        clients.insert(next_id, job.events);
                    }
                }
                Err(message) => {
                    let _ = job.events.send(JobEvent::Failed(message));
                    if batch.ids() != before {
                        // A panic mid-add may have left the batch half-changed.
                        fail_all(batch, &mut clients, "the engine failed; retry the request");
                    }
                }
            }
            metrics.running.store(batch.ids().len(), Ordering::Relaxed);
        }
        if batch.ids().is_empty() {
            metrics.running.store(0, Ordering::Relaxed);
            if !queue_open {
                return;
            }
            continue;
        }
        match guarded(|| batch.step()) {
            Ok(events) => {
                metrics.generated(events.iter().filter(|e| e.token.is_some()).count());
                for event in events {
                    let id = event.id;
                    let Some(client) = clients.get(&id) else {
                        continue;
                    };
                    let finished = event.finish.is_some();
                    if !deliver(client, event) || finished {
                        clients.remove(&id);
                    }
                }
            }
            Err(e) => {
                tracing::error!("decode step failed: {e}");
                fail_all(batch, &mut clients, &format!("generation failed: {e}"));
            }
        }
        metrics.running.store(batch.ids().len(), Ordering::Relaxed);
    }
}

/// Drops every running sequence and tells its client why.
fn fail_all<S: StepBatch + ?Sized>(
    batch: &mut S,
    clients: &mut HashMap<u64, UnboundedSender<JobEvent>>,
    message: &str,
) {
    let _ = guarded(|| {
        batch.clear();
        Ok(())
    });
    for (_, client) in clients.drain() {
        let _ = client.send(JobEvent::Failed(message.to_owned()));
    }
}

/// Sends an event's text (and end) to its client; `false` if the sequence is over for the
/// client, because it finished or the client is gone (the caller then cancels it).
fn deliver(client: &UnboundedSender<JobEvent>, event: SequenceEvent) -> bool {
    let text = JobEvent::Text {
        text: event.text,
        tokens: usize::from(event.token.is_some()),
    };
    if client.send(text).is_err() {
        return false;
    }
    match event.finish {
        Some(reason) => {
            let _ = client.send(JobEvent::Done(reason));
            false
        }
        None => true,
    }
}
