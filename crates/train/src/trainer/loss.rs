//! The training loss: masked next-token cross-entropy over the completions, with input noise
//! ([`super::TrainConfig::input_noise`]) and an edit weight ([`super::TrainConfig::edit_weight`]).

use agentworld_model::{Qwen35Moe, TokenBatch};
use burn::tensor::activation::log_softmax;
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Int, Tensor, TensorData};

use crate::dataset::Example;
use crate::error::Result;

/// Masked next-token loss of one batch.
///
/// The `lm_head` and softmax run only at the positions that carry loss (the completions):
/// the prompt's logits would be computed and thrown away, and at the demo's size the head is
/// the largest matmul per token.
///
/// Returns the scalar loss tensor and the number of real tokens.
pub fn batch_loss<B: AutodiffBackend>(
    model: &Qwen35Moe<B>,
    examples: &[&Example],
    pad_id: u32,
) -> Result<(Tensor<B, 1>, usize)> {
    batch_loss_noised(model, examples, pad_id, 0.0, 0, 1.0)
}

/// [`batch_loss`] with [`input_noise`](super::TrainConfig::input_noise) and
/// [`edit_weight`](super::TrainConfig::edit_weight): a `noise` share of each example's completion tokens is replaced in the input (never in the
/// targets) by another token of that completion, drawn with `seed`; the loss of each edit
/// token counts `edit_weight` times. `noise` is clamped to 0..=1, `edit_weight` below 0 is 0
/// (not a number: 0 noise, weight 1).
pub fn batch_loss_noised<B: AutodiffBackend>(
    model: &Qwen35Moe<B>,
    examples: &[&Example],
    pad_id: u32,
    noise: f64,
    seed: u64,
    edit_weight: f64,
) -> Result<(Tensor<B, 1>, usize)> {
    use rand::{Rng, SeedableRng, rngs::StdRng};
    let mut rng = StdRng::seed_from_u64(seed);
    let noise = if noise.is_nan() {
        0.0
    } else {
        noise.clamp(0.0, 1.0)
    };
    let device = model.embed_tokens.weight.device();
    let len = examples.iter().map(|e| e.ids.len()).max().unwrap_or(1) - 1;
    let b = examples.len();
    let mut inputs = Vec::with_capacity(b);
    let mut targets = Vec::new();
    let edit_weight = if edit_weight.is_nan() {
        1.0
    } else {
        edit_weight.max(0.0)
    };
    // Flat indices (`row * len + t`) of the positions with a loss, and their weights.
    let mut picked = Vec::new();
    let mut weights: Vec<f32> = Vec::new();
    let mut tokens = 0;
    for (row_index, e) in examples.iter().enumerate() {
        let n = e.ids.len() - 1;
        let mut row: Vec<u32> = e.ids[..n].to_vec();
        if noise > 0.0 && e.completion_start < n {
            let completion = &e.ids[e.completion_start..n];
            for token in &mut row[e.completion_start..] {
                if rng.random_bool(noise) {
                    *token = completion[rng.random_range(0..completion.len())];
                }
            }
        }
        row.resize(len, pad_id);
        inputs.push(row);
        for t in e.completion_start.saturating_sub(1)..n {
            picked.push((row_index * len + t) as i64);
            targets.push(e.ids[t + 1] as i64);
        }
        if edit_weight != 1.0 {
            // Entry k is the target `e.ids[first_scored(e) + k]`, as above.
            weights.extend(
                crate::probe::copied_positions(e)
                    .into_iter()
                    .map(|copied| if copied { 1.0 } else { edit_weight as f32 }),
            );
        }
        tokens += n;
    }
    let hidden = model.forward_hidden(
        &TokenBatch {
            ids: inputs,
            valid: None,
        },
        None,
    )?; // [b, len, hidden]
    let h = hidden.dims()[2];
    let count = picked.len();
    if count == 0 {
        return Ok((hidden.sum().mul_scalar(0.0), tokens));
    }
    let index = Tensor::<B, 1, Int>::from_data(TensorData::new(picked, [count]), &device);
    let at_loss = hidden.reshape([b * len, h]).select(0, index); // [count, hidden]
    let logits = model.logits(at_loss.unsqueeze()); // [1, count, vocab]
    let log_probs = log_softmax(logits, 2);
    let targets = Tensor::<B, 3, Int>::from_data(TensorData::new(targets, [1, count, 1]), &device);
    let picked = log_probs.gather(2, targets);
    if weights.is_empty() {
        return Ok((picked.sum().neg().div_scalar(count as f32), tokens));
    }
    let total: f32 = weights.iter().sum();
    let weights = Tensor::<B, 3>::from_data(TensorData::new(weights, [1, count, 1]), &device);
    Ok((
        picked
            .mul(weights)
            .sum()
            .neg()
            .div_scalar(total.max(f32::MIN_POSITIVE)),
        tokens,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trainer::tests::smallest_config;
    use burn::backend::{Autodiff, Flex};

    /// Input noise changes what the model reads, never what it is scored against: no noise
    /// is the plain loss; noise gives another loss, the same one for the same seed; and only
    /// completion inputs change, so a batch whose completion is one repeated token (every
    /// replacement is that token again) scores as without noise.
    #[test]
    fn input_noise_touches_completion_inputs_only() {
        type B = Autodiff<Flex>;
        let device = Default::default();
        <B as burn::tensor::backend::Backend>::seed(&device, 3);
        let model = Qwen35Moe::<B>::init(&smallest_config(), &device);
        let value = |t: Tensor<B, 1>| t.into_data().convert::<f64>().to_vec::<f64>().unwrap()[0];
        let e = Example {
            ids: (0..24).map(|i| (i * 7 % 15 + 1) as u32).collect(),
            completion_start: 8,
            domain: "terminal".into(),
            row_id: "a".into(),
        };
        let plain = value(batch_loss(&model, &[&e], 0).unwrap().0);
        let none = value(batch_loss_noised(&model, &[&e], 0, 0.0, 9, 1.0).unwrap().0);
        assert_eq!(plain, none);
        let noised = value(batch_loss_noised(&model, &[&e], 0, 0.5, 9, 1.0).unwrap().0);
        let again = value(batch_loss_noised(&model, &[&e], 0, 0.5, 9, 1.0).unwrap().0);
        assert_eq!(noised, again);
        assert_ne!(noised, plain);
        let flat = Example {
            ids: (0..24)
                .map(|i| if i < 8 { i as u32 + 1 } else { 5 })
                .collect(),
            ..e
        };
        let flat_plain = value(batch_loss(&model, &[&flat], 0).unwrap().0);
        let flat_noised = value(
            batch_loss_noised(&model, &[&flat], 0, 0.9, 9, 1.0)
                .unwrap()
                .0,
        );
        assert_eq!(flat_plain, flat_noised);
    }

    /// With an edit weight the loss is the weighted mean of the per-token losses, computed
    /// here from the full logits, with the copied targets marked by hand.
    #[test]
    fn edit_weight_weighs_the_tokens_the_prompt_does_not_hold() {
        type B = Autodiff<Flex>;
        let device = Default::default();
        <B as burn::tensor::backend::Backend>::seed(&device, 5);
        let model = Qwen35Moe::<B>::init(&smallest_config(), &device);
        let value = |t: Tensor<B, 1>| t.into_data().convert::<f64>().to_vec::<f64>().unwrap()[0];
        // Prompt 1..=8; the completion copies 1 2 3 4, writes 9 10 11, copies 5 6 7 8. Copied
        // targets (their last four tokens are a span of the prompt): the 4 and the 8.
        let ids: Vec<u32> = vec![1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 9, 10, 11, 5, 6, 7, 8];
        let copied = [
            false, false, false, true, false, false, false, false, false, false, true,
        ];
        let e = Example {
            ids: ids.clone(),
            completion_start: 8,
            domain: "web".into(),
            row_id: "a".into(),
        };
        let n = ids.len() - 1;
        let hidden = model
            .forward_hidden(
                &TokenBatch {
                    ids: vec![ids[..n].to_vec()],
                    valid: None,
                },
                None,
            )
            .unwrap();
        let logits = model
            .logits(hidden)
            .into_data()
            .convert::<f64>()
            .to_vec::<f64>()
            .unwrap();
        let vocab = logits.len() / n;
        let nll: Vec<f64> = (7..n)
            .map(|t| {
                let row = &logits[t * vocab..(t + 1) * vocab];
                let max = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let lse = max + row.iter().map(|l| (l - max).exp()).sum::<f64>().ln();
                lse - row[ids[t + 1] as usize]
            })
            .collect();
        assert_eq!(nll.len(), copied.len());
        for w in [0.0, 1.0, 3.0] {
            let weights: Vec<f64> = copied.iter().map(|&c| if c { 1.0 } else { w }).collect();
            let expected = nll.iter().zip(&weights).map(|(l, w)| l * w).sum::<f64>()
                / weights.iter().sum::<f64>();
            let got = value(batch_loss_noised(&model, &[&e], 0, 0.0, 9, w).unwrap().0);
            assert!(
                (got - expected).abs() < 1e-4,
                "weight {w}: {got} vs {expected}"
            );
        }
        let plain = value(batch_loss(&model, &[&e], 0).unwrap().0);
        let mean = nll.iter().sum::<f64>() / nll.len() as f64;
        assert!((plain - mean).abs() < 1e-4);
    }
}
