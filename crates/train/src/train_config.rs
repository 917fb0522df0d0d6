//! Optimisation settings ([`TrainConfig`]: steps, learning-rate schedule, batch size,
//! curriculum) and the record of one step ([`StepInfo`]), shared by the training loop
//! ([`crate::trainer`]) and its checkpoints ([`crate::checkpoint`]).

/// Optimisation settings.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TrainConfig {
    /// Optimizer steps.
    pub steps: usize,
    /// Peak learning rate.
    pub learning_rate: f64,
    /// Warm-up steps (linear from 0).
    pub warmup_steps: usize,
    /// Final learning rate as a share of the peak (cosine decay).
    pub min_lr_ratio: f64,
    /// Padded tokens per batch.
    pub tokens_per_batch: usize,
    /// AdamW weight decay.
    pub weight_decay: f32,
    /// Per-tensor gradient norm limit.
    pub grad_clip: f32,
    /// Seed of the batch order.
    pub seed: u64,
    /// Stages at the start of the run, in order: each draws its batches only from the
    /// examples of its domain, for its number of steps (e.g. copy examples of growing span,
    /// [`crate::dataset::copy_examples`], so the copying circuit forms before the world-model
    /// rows are seen). The mixed phase after them never draws a stage's domain. Empty: mixed
    /// from the first step.
    #[serde(default)]
    pub curriculum: Vec<CurriculumStage>,
    /// A length ramp at the start of the mixed phase: for its first `steps` steps, batches
    /// hold only examples of at most `start_tokens` tokens, the limit growing linearly to the
    /// longest example. Attention learns to find the token to copy among a few dozen
    /// positions long before it does among a thousand. `None`: no ramp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length_ramp: Option<LengthRamp>,
    /// Share of completion tokens replaced, in the model's input only, by another token of
    /// the same completion (the targets stay the true tokens): the model learns to keep its
    /// place in a copy after a wrong token, as it must when it generates, where its own
    /// mistakes are its input (exposure bias; a form of scheduled sampling). 0: none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub input_noise: f64,
    /// Loss weight of the completion tokens the prompt does not predict (edits: a token whose
    /// last [`crate::probe::COPY_CONTEXT`] tokens are not a span of the prompt,
    /// [`crate::probe::copied_positions`]), relative to the copied ones; the loss is the
    /// weighted mean. A world model's next state is mostly its current state copied, so the
    /// few tokens that change it carry a few percent of a plain mean's gradient, and a small
    /// model learns the copy long before the edits. 1: the plain mean. A value that another
    /// line of the prompt holds after the same tokens counts as copied: a check box flipped to
    /// `', checked='true` when another box is checked (docs/demo-model-research-log.md, (m)).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub edit_weight: f64,
}

fn one() -> f64 {
    1.0
}

fn is_one(x: &f64) -> bool {
    *x == 1.0
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// See [`TrainConfig::length_ramp`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LengthRamp {
    /// Steps of the ramp, counted from the start of the mixed phase.
    pub steps: usize,
    /// Longest example (tokens) at the ramp's first step.
    pub start_tokens: usize,
}

/// One stage of [`TrainConfig::curriculum`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CurriculumStage {
    /// The [`Example::domain`] the stage draws from (a stage without examples is skipped:
    /// its steps go to the mixed phase).
    pub domain: String,
    /// Optimizer steps of the stage.
    pub steps: usize,
}

impl Default for TrainConfig {
    fn default() -> Self {
        Self {
            steps: 1000,
            learning_rate: 2e-3,
            warmup_steps: 50,
            min_lr_ratio: 0.1,
            tokens_per_batch: 2048,
            weight_decay: 0.01,
            grad_clip: 1.0,
            seed: 0,
            curriculum: Vec::new(),
            length_ramp: None,
            input_noise: 0.0,
            edit_weight: 1.0,
        }
    }
}

impl TrainConfig {
    /// Learning rate at `step` (0-based).
    pub fn lr_at(&self, step: usize) -> f64 {
        if step < self.warmup_steps {
            return self.learning_rate * (step + 1) as f64 / self.warmup_steps as f64;
        }
        let span = self.steps.saturating_sub(self.warmup_steps).max(1) as f64;
        let progress = ((step - self.warmup_steps) as f64 / span).min(1.0);
        let cosine = 0.5 * (1.0 + (std::f64::consts::PI * progress).cos());
        self.learning_rate * (self.min_lr_ratio + (1.0 - self.min_lr_ratio) * cosine)
    }
}

/// What one step did, for progress display.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepInfo {
    /// 0-based step.
    pub step: usize,
    /// Mean loss over the batch's completion tokens.
    pub loss: f64,
    /// Learning rate used.
    pub learning_rate: f64,
    /// Real (unpadded) tokens in the batch.
    pub tokens: usize,
    /// Seconds of training so far (across resumed runs).
    pub elapsed_secs: f64,
}
