//! The training loop: burn autodiff on the same model definition that serves inference.
//!
//! Next-token cross-entropy on completion tokens only, AdamW with per-tensor gradient clipping,
//! linear warm-up then cosine decay, length-bucketed batches reshuffled every epoch. Right
//! padding needs no attention mask: every mixer is causal, so real tokens never see the pads
//! after them, and pad positions carry no loss.

use std::time::Instant;

use agentworld_model::Qwen35Moe;
use burn::grad_clipping::GradientClippingConfig;
use burn::module::AutodiffModule;
use burn::optim::{AdamWConfig, GradientsParams, Optimizer};
use burn::tensor::backend::AutodiffBackend;

use crate::checkpoint::{Checkpointing, TrainState};
use crate::dataset::Example;
use crate::error::Result;
pub use crate::train_config::{CurriculumStage, LengthRamp, StepInfo, TrainConfig};

mod batch_order;
mod loss;
pub(crate) use batch_order::BatchOrder;
pub use loss::{batch_loss, batch_loss_noised};

/// Trains `model` on `examples`; returns the trained model (without autodiff) and the loss
/// of every step. `on_step` sees each step as it finishes. With `checkpoints`, the run saves
/// a checkpoint every `every` steps and at the end, and (with `resume`) starts from the newest
/// one: same weights, optimizer moments, step, schedule and batch order, so a resumed run
/// ends where an uninterrupted one would. A run stopped by `stop_at` returns the model and
/// history at that step.
///
/// # Errors
/// A batch the model rejects (e.g. a sequence longer than the context); a checkpoint that
/// cannot be written, read, or was made with other settings.
pub fn train<B: AutodiffBackend>(
    model: Qwen35Moe<B>,
    examples: &[Example],
    config: &TrainConfig,
    pad_id: u32,
    checkpoints: Option<&Checkpointing>,
    on_step: &mut dyn FnMut(StepInfo),
) -> Result<(Qwen35Moe<B::InnerBackend>, Vec<StepInfo>)> {
    train_probed(model, examples, config, pad_id, checkpoints, on_step, None)
}

/// A look at the model every `every` steps during training (e.g. held-out accuracy,
/// [`crate::probe::teacher_forced`]); it sees the step count and the weights without
/// autodiff, and does not change the run.
pub struct Probe<'a, B: AutodiffBackend> {
    /// Steps between looks (after step `every`, `2 * every`, ...).
    pub every: usize,
    /// Called with the number of steps done and the model.
    pub run: &'a mut dyn FnMut(usize, &Qwen35Moe<B::InnerBackend>),
}

/// [`train`], with a [`Probe`].
///
/// # Errors
/// As [`train`].
pub fn train_probed<B: AutodiffBackend>(
    mut model: Qwen35Moe<B>,
    examples: &[Example],
    config: &TrainConfig,
    pad_id: u32,
    checkpoints: Option<&Checkpointing>,
    on_step: &mut dyn FnMut(StepInfo),
    mut probe: Option<Probe<B>>,
) -> Result<(Qwen35Moe<B::InnerBackend>, Vec<StepInfo>)> {
    let mut optimizer = AdamWConfig::new()
        .with_weight_decay(config.weight_decay)
        .with_grad_clipping(Some(GradientClippingConfig::Norm(config.grad_clip)))
        .init::<B, Qwen35Moe<B>>();
    let mut history = Vec::with_capacity(config.steps);
    let mut first = 0;
    if let Some(ck) = checkpoints.filter(|c| c.resume)
        && let Some((at, state)) = ck.latest()?
    {
        (model, optimizer) = ck.load(&at, &state, config, examples.len(), model, optimizer)?;
        first = state.step;
        history = state.history;
    }
    // A resumed run already at or past its stop point trains no further.
    if checkpoints
        .and_then(|c| c.stop_at)
        .is_some_and(|stop| stop <= first)
    {
        return Ok((model.valid(), history));
    }
    let started = Instant::now();
    let offset = history.last().map_or(0.0, |s: &StepInfo| s.elapsed_secs);
    let mut order = BatchOrder::new(examples, config);
    // A resumed run draws the batches the stopped one drew, without training on them.
    for step in 0..first {
        order.next(step);
    }
    for step in first..config.steps {
        let batch: Vec<&Example> = order.next(step).iter().map(|&i| &examples[i]).collect();
        let (loss, tokens) = batch_loss_noised(
            &model,
            &batch,
            pad_id,
            config.input_noise,
            config.seed ^ (step as u64).wrapping_mul(0x2545_F491_4F6C_DD1D),
            config.edit_weight,
        )?;
        let loss_value = loss
            .clone()
            .into_data()
            .convert::<f64>()
            .to_vec::<f64>()
            .map(|v| v[0])
            .unwrap_or(f64::NAN);
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        let learning_rate = config.lr_at(step);
        model = optimizer.step(learning_rate, model, grads);
        let info = StepInfo {
            step,
            loss: loss_value,
            learning_rate,
            tokens,
            elapsed_secs: offset + started.elapsed().as_secs_f64(),
        };
        on_step(info);
        history.push(info);
        if let Some(p) = probe
            .as_mut()
            .filter(|p| p.every > 0 && (step + 1) % p.every == 0)
        {
            (p.run)(step + 1, &model.valid());
        }
        if let Some(ck) = checkpoints {
            let done = step + 1;
            let stop = ck.stop_at == Some(done);
            if stop || done == config.steps || (ck.every > 0 && done % ck.every == 0) {
                let state = TrainState {
                    step: done,
                    config: config.clone(),
                    examples: examples.len(),
                    history: history.clone(),
                };
                ck.save(&model, &optimizer, &state)?;
            }
            if stop {
                break;
            }
        }
    }
    Ok((model.valid(), history))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentworld_model::Qwen35MoeConfig;
    use burn::backend::{Autodiff, Flex};
    use burn::tensor::Tensor;

    /// A two-layer model with 16-wide everything: enough to train and checkpoint in a test.
    pub(super) fn smallest_config() -> Qwen35MoeConfig {
        let j = serde_json::json!({
            "vocab_size": 16, "hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2,
            "num_key_value_heads": 1, "head_dim": 8, "linear_num_key_heads": 1,
            "linear_num_value_heads": 1, "linear_key_head_dim": 8, "linear_value_head_dim": 8,
            "num_experts": 2, "num_experts_per_tok": 1, "moe_intermediate_size": 8,
            "shared_expert_intermediate_size": 8, "full_attention_interval": 2
        });
        Qwen35MoeConfig::from_json_str(&j.to_string(), "test").unwrap()
    }

    #[test]
    fn schedule_warms_up_then_decays_to_the_floor() {
        let c = TrainConfig {
            steps: 100,
            warmup_steps: 10,
            learning_rate: 1.0,
            min_lr_ratio: 0.1,
            ..Default::default()
        };
        assert!((c.lr_at(0) - 0.1).abs() < 1e-12);
        assert!((c.lr_at(9) - 1.0).abs() < 1e-12);
        assert!((c.lr_at(10) - 1.0).abs() < 1e-12);
        assert!((c.lr_at(99) - 0.1).abs() < 1e-3);
        assert!(c.lr_at(50) < c.lr_at(20));
    }

    /// Every parameter of a fresh model takes part in training (an untrained embedding once
    /// slipped through: it was created without `require_grad`).
    #[test]
    fn every_parameter_requires_grad() {
        use burn::module::{ModuleVisitor, Param};
        use burn::tensor::backend::Backend;
        struct Check(usize, usize);
        impl<B: Backend> ModuleVisitor<B> for Check {
            fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
                self.0 += 1;
                if param.val().is_require_grad() {
                    self.1 += 1;
                }
            }
        }
        let config = smallest_config();
        let model = Qwen35Moe::<Autodiff<Flex>>::init(&config, &Default::default());
        let mut check = Check(0, 0);
        burn::module::Module::visit(&model, &mut check);
        assert!(check.0 > 20);
        assert_eq!(
            check.0, check.1,
            "{} of {} parameters require grad",
            check.1, check.0
        );
    }

    /// A tiny model learns to continue a fixed sequence: the loss must fall sharply.
    #[test]
    fn loss_falls_on_a_memorisable_task() {
        let j = serde_json::json!({
            "vocab_size": 16, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
            "num_key_value_heads": 1, "head_dim": 16, "linear_num_key_heads": 1,
            "linear_num_value_heads": 2, "linear_key_head_dim": 8, "linear_value_head_dim": 8,
            "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 16,
            "shared_expert_intermediate_size": 16, "full_attention_interval": 2
        });
        let config = Qwen35MoeConfig::from_json_str(&j.to_string(), "test").unwrap();
        type B = Autodiff<Flex>;
        let device = Default::default();
        <B as burn::tensor::backend::Backend>::seed(&device, 1);
        let model = Qwen35Moe::<B>::init(&config, &device);
        let examples: Vec<Example> = (0..4)
            .map(|k| Example {
                ids: (0..20).map(|i| ((i * (k + 1)) % 13 + 1) as u32).collect(),
                completion_start: 5,
                domain: "terminal".into(),
                row_id: k.to_string(),
            })
            .collect();
        let cfg = TrainConfig {
            steps: 60,
            learning_rate: 1e-2,
            warmup_steps: 5,
            tokens_per_batch: 100,
            ..Default::default()
        };
        let (_, history) = train(model, &examples, &cfg, 0, None, &mut |_| {}).unwrap();
        let first = history[0].loss;
        let last = history.iter().rev().take(5).map(|s| s.loss).sum::<f64>() / 5.0;
        assert!(first > 2.0 && last < first * 0.3, "loss {first} -> {last}");
    }

    /// Stopping after 4 steps then resuming gives the same losses and weights as one run (up
    /// to float rounding).
    #[test]
    fn a_resumed_run_ends_where_an_uninterrupted_one_does() {
        let config = smallest_config();
        type B = Autodiff<Flex>;
        let device = Default::default();
        // One initialisation, cloned: burn's seed is global, and tests running beside this
        // one draw from it between a seed and an init.
        let initial = Qwen35Moe::<B>::init(&config, &device);
        let fresh = || initial.clone();
        let examples: Vec<Example> = (0..6)
            .map(|k| Example {
                ids: (0..12).map(|i| ((i * (k + 2)) % 13 + 1) as u32).collect(),
                completion_start: 3,
                domain: "terminal".into(),
                row_id: k.to_string(),
            })
            .collect();
        let cfg = TrainConfig {
            steps: 7,
            warmup_steps: 2,
            tokens_per_batch: 30,
            ..Default::default()
        };
        let (whole, history) = train(fresh(), &examples, &cfg, 0, None, &mut |_| {}).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut ck = Checkpointing {
            dir: dir.path().join("ck"),
            every: 3,
            resume: true,
            stop_at: Some(4),
        };
        let (_, first) = train(fresh(), &examples, &cfg, 0, Some(&ck), &mut |_| {}).unwrap();
        assert_eq!(first.len(), 4);
        assert_eq!(
            std::fs::read_to_string(ck.dir.join("latest")).unwrap(),
            "step-000004"
        );
        assert!(
            !ck.dir.join("step-000003").exists(),
            "older checkpoint kept"
        );
        ck.stop_at = None;
        let mut seen = Vec::new();
        let (resumed, again) = train(fresh(), &examples, &cfg, 0, Some(&ck), &mut |s| {
            seen.push(s.step)
        })
        .unwrap();
        assert_eq!(seen, vec![4, 5, 6], "only the missing steps run");
        let losses = |h: &[StepInfo]| h.iter().map(|s| s.loss).collect::<Vec<_>>();
        // Equal up to float rounding: the CPU backend's parallel reductions may add in another
        // order from run to run (seen as a difference in the 16th digit under load), so the
        // same run twice is not always bit-identical either.
        let close = |a: &[f64], b: &[f64], tol: f64| {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| (x - y).abs() <= tol * (1.0 + y.abs()))
        };
        let (l1, l2) = (losses(&again), losses(&history));
        assert!(close(&l1, &l2, 1e-6), "{l1:?} vs {l2:?}");
        let a = whole
            .lm_head
            .as_ref()
            .unwrap()
            .weight
            .val()
            .into_data()
            .to_vec::<f32>()
            .unwrap();
        let b = resumed
            .lm_head
            .as_ref()
            .unwrap()
            .weight
            .val()
            .into_data()
            .to_vec::<f32>()
            .unwrap();
        let widen = |v: Vec<f32>| v.into_iter().map(f64::from).collect::<Vec<_>>();
        assert!(
            close(&widen(a), &widen(b), 1e-5),
            "weights differ after resume"
        );
        // Other settings: refused, naming the folder.
        let other = TrainConfig {
            learning_rate: 1e-3,
            ..cfg.clone()
        };
        let err = train(fresh(), &examples, &other, 0, Some(&ck), &mut |_| {})
            .expect_err("refused")
            .to_string();
        assert!(
            err.contains("other settings") && err.contains("ck"),
            "{err}"
        );
    }
}
