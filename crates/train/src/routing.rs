//! Which experts the router picks, per domain: the figures behind the playground's MoE view
//! ("how expert use differs between domains").
//!
//! Each row is run once, teacher-forced (prompt and true completion in one forward pass, no
//! generation), and every completion position's top-k choices are counted per layer
//! ([`agentworld_model::Qwen35Moe::forward_hidden_traced`], the router of HF
//! `Qwen3_5MoeTopKRouter`). A domain's share of expert `e` in layer `l` is the fraction of its
//! choices in that layer that went to `e`; each layer's shares sum to 1.

use std::collections::BTreeMap;

use agentworld_engine::Engine;
use agentworld_model::TokenBatch;
use agentworld_world::Row;
use burn::tensor::backend::Backend;
use serde::{Deserialize, Serialize};

use crate::dataset::build_examples;
use crate::error::{Result, TrainError};

/// Expert use of one domain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DomainExperts {
    /// Domain (the row's task without its `world_model/` prefix).
    pub domain: String,
    /// Rows run.
    pub rows: usize,
    /// Completion tokens counted.
    pub tokens: usize,
    /// Share of the layer's top-k choices that went to each expert: `[layers][num_experts]`.
    pub share: Vec<Vec<f64>>,
}

/// Expert use of a model on a set of rows, as `agentworld eval routing` writes it
/// (`routing.json` beside a model, read by the playground).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExpertUse {
    /// Routed experts per layer (`num_experts`).
    pub num_experts: usize,
    /// Experts chosen per token (`num_experts_per_tok`).
    pub top_k: usize,
    /// The layers' mixers (`layer_types`).
    pub layer_types: Vec<String>,
    /// Per domain, in name order.
    pub domains: Vec<DomainExperts>,
}

impl ExpertUse {
    /// Total-variation distance between two domains' expert shares in `layer` (0: the same
    /// experts in the same proportions; 1: disjoint experts). `None` for an unknown domain or
    /// layer.
    pub fn distance(&self, a: &str, b: &str, layer: usize) -> Option<f64> {
        let find = |d: &str| self.domains.iter().find(|x| x.domain == d);
        let (a, b) = (find(a)?.share.get(layer)?, find(b)?.share.get(layer)?);
        Some(0.5 * a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum::<f64>())
    }
}

/// Counts the experts the model's router picks on the completions of `rows`, per domain.
///
/// # Errors
/// A row without a target observation; a row longer than the model's context; a failed
/// read-back of the routing.
pub fn expert_use<B: Backend>(
    engine: &Engine<B>,
    rows: &[Row],
    on_row: &mut dyn FnMut(usize),
) -> Result<ExpertUse> {
    let config = &engine.config;
    let examples = build_examples(
        rows,
        &engine.tokenizer,
        &engine.template,
        engine.card.as_ref(),
    )?;
    let layers = config.num_hidden_layers;
    let experts = config.num_experts;
    let mut counts: BTreeMap<String, (usize, usize, Vec<Vec<u64>>)> = BTreeMap::new();
    for (i, example) in examples.iter().enumerate() {
        if example.ids.len() > engine.max_context() {
            return Err(TrainError::Data(format!(
                "row {}: {} tokens, the model's context is {}",
                example.row_id,
                example.ids.len(),
                engine.max_context()
            )));
        }
        let mut trace = Vec::new();
        engine.model.forward_hidden_traced(
            &TokenBatch::single(example.ids.clone()),
            None,
            Some(&mut trace),
        )?;
        let entry = counts
            .entry(example.domain.clone())
            .or_insert_with(|| (0, 0, vec![vec![0; experts]; layers]));
        entry.0 += 1;
        // Position p predicts token p + 1: the completion is predicted from completion_start - 1.
        let first = example.completion_start.saturating_sub(1);
        let last = example.ids.len() - 1;
        entry.1 += last - first;
        for (layer, routing) in trace.iter().enumerate() {
            let k = routing.indices.dims()[1];
            let chosen = routing
                .indices
                .clone()
                .into_data()
                .convert::<i64>()
                .to_vec::<i64>()
                .map_err(|e| TrainError::Data(format!("reading the routing back: {e:?}")))?;
            for &e in &chosen[first * k..last * k] {
                entry.2[layer][e as usize] += 1;
            }
        }
        on_row(i + 1);
    }
    let domains = counts
        .into_iter()
        .map(|(domain, (rows, tokens, per_layer))| DomainExperts {
            domain,
            rows,
            tokens,
            share: per_layer
                .into_iter()
                .map(|c| {
                    let total = c.iter().sum::<u64>().max(1) as f64;
                    c.into_iter().map(|n| n as f64 / total).collect()
                })
                .collect(),
        })
        .collect();
    Ok(ExpertUse {
        num_experts: experts,
        top_k: config.num_experts_per_tok,
        layer_types: config
            .layer_types()
            .iter()
            .map(|t| {
                serde_json::to_value(t)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            })
            .collect(),
        domains,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_is_half_the_l1_gap_of_the_shares() {
        let d = |name: &str, share: Vec<f64>| DomainExperts {
            domain: name.into(),
            rows: 1,
            tokens: 1,
            share: vec![share],
        };
        let use_ = ExpertUse {
            num_experts: 4,
            top_k: 1,
            layer_types: vec!["full_attention".into()],
            domains: vec![
                d("a", vec![0.5, 0.5, 0.0, 0.0]),
                d("b", vec![0.0, 0.0, 0.5, 0.5]),
                d("c", vec![0.25, 0.75, 0.0, 0.0]),
            ],
        };
        assert_eq!(use_.distance("a", "b", 0), Some(1.0));
        assert_eq!(use_.distance("a", "c", 0), Some(0.25));
        assert_eq!(use_.distance("a", "a", 0), Some(0.0));
        assert_eq!(use_.distance("a", "zz", 0), None);
        assert_eq!(use_.distance("a", "b", 1), None);
    }
}
