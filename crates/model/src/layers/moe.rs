//! Sparse mixture of experts of Qwen3.5-MoE (`Qwen3_5MoeSparseMoeBlock`, `Qwen3_5MoeTopKRouter`,
//! `Qwen3_5MoeExperts`, transformers `modeling_qwen3_5_moe.py`; qwen3_5_moe.md §4.5).
//!
//! ```text
//! p      = softmax(x @ router)                 [tokens, experts]
//! w, idx = top_k(p); w = w / sum(w)            always renormalised
//! routed = sum_k w_k * down_e(silu(gate_e x) * up_e x)     e = idx_k
//! out    = routed + sigmoid(x @ shared_expert_gate) * shared_expert(x)
//! ```
//! No capacity limit and no token dropping. Three equivalent evaluation strategies:
//! - **gathered** (decode, few tokens): the chosen experts' weights are gathered per (token,
//!   expert) pair, so only they are read; nothing is read back to the host;
//! - **grouped** (prefill, many tokens; native builds): the routing is read back once per layer,
//!   (token, expert) pairs are sorted by expert, each active expert runs one matmul pair over
//!   its rows, and the results are scatter-added back weighted by the router — only routed
//!   experts are computed, as in vLLM's fused MoE or transformers' `grouped_mm`;
//! - **dense** (the reference; also prefill in wasm, where a synchronous read-back is not
//!   possible): every expert on every token, combined with the (mostly zero) routing weights.

use burn::module::{Module, Param};
use burn::nn::Linear;
use burn::tensor::activation::{sigmoid, silu, softmax};
use burn::tensor::backend::Backend;
use burn::tensor::{IndexingUpdateOp, Int, Tensor};

use super::mlp::SwiGluMlp;
use crate::kernels::{self, linear};

/// How the routed experts are evaluated (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Gather the chosen experts' weights per pair; no read-back.
    Gathered,
    /// Sort pairs by expert (one read-back of the routing), one matmul pair per active expert.
    Grouped,
    /// Every expert on every token.
    Dense,
}

/// The strategy for `pairs` (token, expert) pairs among `experts` on `device`.
///
/// On a backend whose tensors live in host memory (burn-flex, ndarray) reading the routing back
/// costs nothing and slicing an expert's weights copies nothing, so grouping wins from
/// [`GROUPED_MIN_PAIRS`] pairs up. On a device (CUDA, wgpu) decode keeps the gathered strategy
/// so that the sampled token stays the only read-back of a step; prefill (more pairs than
/// experts) groups. In wasm a synchronous read-back is impossible, so prefill runs dense.
pub fn strategy<B: Backend>(pairs: usize, experts: usize, device: &B::Device) -> Strategy {
    let host = crate::DeviceKind::of::<B>(device).is_host();
    if cfg!(target_family = "wasm") {
        if pairs <= experts {
            Strategy::Gathered
        } else {
            Strategy::Dense
        }
    } else if host {
        if pairs < GROUPED_MIN_PAIRS {
            Strategy::Gathered
        } else {
            Strategy::Grouped
        }
    } else if pairs <= experts {
        Strategy::Gathered
    } else {
        Strategy::Grouped
    }
}

/// On host-memory backends, the fewest pairs evaluated grouped (measured with `agentworld
/// bench`: below it, gathering the few experts' weights is as fast as a sort).
pub const GROUPED_MIN_PAIRS: usize = 2;

/// The routed experts of one layer, stacked (HF fused layout, transposed for `x @ W`).
#[derive(Module, Debug)]
pub struct Experts<B: Backend> {
    /// `[experts, hidden, 2 * intermediate]`: columns `0..I` are gate, `I..2I` are up
    /// (HF `mlp.experts.gate_up_proj [E, 2I, H]`, transposed).
    pub gate_up_proj: Param<Tensor<B, 3>>,
    /// `[experts, intermediate, hidden]` (HF `mlp.experts.down_proj [E, H, I]`, transposed).
    pub down_proj: Param<Tensor<B, 3>>,
}

/// One sparse MoE block with a gated shared expert.
#[derive(Module, Debug)]
pub struct SparseMoe<B: Backend> {
    /// Router `[hidden, experts]` (HF `mlp.gate.weight [E, H]`).
    pub gate: Linear<B>,
    /// Routed experts.
    pub experts: Experts<B>,
    /// Shared expert, applied to every token.
    pub shared_expert: SwiGluMlp<B>,
    /// `[hidden, 1]`: scalar gate of the shared expert.
    pub shared_expert_gate: Linear<B>,
    /// Experts per token.
    pub top_k: usize,
}

/// The `k` largest entries of each row of non-negative `probs` and their columns, largest
/// first, by `k` rounds of argmax (no sort, no read-back): a chosen entry is set to -1 so the
/// next round passes it over. On ties the lowest column wins.
///
/// # Shapes
/// - probs: `[tokens, experts]`
/// - output: `[tokens, k]` values and indices
pub fn top_k_by_argmax<B: Backend>(
    probs: Tensor<B, 2>,
    k: usize,
) -> (Tensor<B, 2>, Tensor<B, 2, Int>) {
    let [n, e] = probs.dims();
    let columns = Tensor::<B, 1, Int>::arange(0..e as i64, &probs.device())
        .reshape([1, e])
        .expand([n, e]);
    let mut rest = probs;
    let mut values = Vec::with_capacity(k);
    let mut indices = Vec::with_capacity(k);
    for _ in 0..k {
        let idx = rest.clone().argmax(1);
        values.push(rest.clone().gather(1, idx.clone()));
        let chosen = columns.clone().equal(idx.clone().expand([n, e]));
        rest = rest.mask_fill(chosen, -1.0);
        indices.push(idx);
    }
    (Tensor::cat(values, 1), Tensor::cat(indices, 1))
}

/// Routing decision for a batch of tokens.
#[derive(Debug, Clone)]
pub struct Routing<B: Backend> {
    /// Renormalised weights of the chosen experts, `[tokens, top_k]`.
    pub weights: Tensor<B, 2>,
    /// Chosen expert ids, `[tokens, top_k]`, highest probability first.
    pub indices: Tensor<B, 2, Int>,
}

impl<B: Backend> SparseMoe<B> {
    /// Number of routed experts.
    pub fn num_experts(&self) -> usize {
        self.experts.gate_up_proj.dims()[0]
    }

    /// Router: softmax over experts, top-k, renormalise.
    ///
    /// # Shapes
    /// - x: `[tokens, hidden]`
    /// - output: `[tokens, top_k]` weights and indices
    pub fn route(&self, x: Tensor<B, 2>) -> Routing<B> {
        let probs = softmax(linear(&self.gate, x), 1);
        // burn 0.21's cubecl backends (wgpu, CUDA) have no sort kernel: `topk_with_indices`
        // reads the probabilities back, sorts on the host and uploads the result, one blocking
        // read per MoE layer per step (and a panic in a browser, where reads are async). On a
        // device, k rounds of argmax pick the same experts with no read; on the host a sort
        // reads nothing and is faster.
        let (weights, indices) = if crate::DeviceKind::of::<B>(&probs.device()).is_host() {
            probs.topk_with_indices(self.top_k, 1)
        } else {
            top_k_by_argmax(probs, self.top_k)
        };
        let weights = weights.clone() / weights.sum_dim(1);
        Routing { weights, indices }
    }

    /// # Shapes
    /// - x: `[batch, seq, hidden]`
    /// - output: `[batch, seq, hidden]`
    pub fn forward(&self, x: Tensor<B, 3>) -> Tensor<B, 3> {
        self.forward_routed(x).0
    }

    /// [`Self::forward`], also returning the router's choices (for inspection: which experts
    /// each token went to).
    ///
    /// # Shapes
    /// - x: `[batch, seq, hidden]`
    /// - output: `[batch, seq, hidden]`, and the routing `[batch * seq, top_k]`
    pub fn forward_routed(&self, x: Tensor<B, 3>) -> (Tensor<B, 3>, Routing<B>) {
        let [batch, seq, hidden] = x.dims();
        let tokens = x.reshape([batch * seq, hidden]);
        let routing = self.route(tokens.clone());
        let pairs = batch * seq * self.top_k;
        let mut strategy = strategy::<B>(pairs, self.num_experts(), &tokens.device());
        if kernels::int8::is_int8(&self.experts.down_proj.val()) {
            // Int8 experts are read in place by the grouped path's kernels; gathering or
            // reshaping them would dequantize whole tensors.
            strategy = Strategy::Grouped;
        }
        let routed = match strategy {
            Strategy::Gathered => self.experts_gathered(tokens.clone(), &routing),
            Strategy::Grouped => self.experts_grouped(tokens.clone(), &routing),
            Strategy::Dense => self.experts_dense(tokens.clone(), &routing),
        };
        let shared = self.shared_expert.forward(tokens.clone())
            * sigmoid(linear(&self.shared_expert_gate, tokens));
        ((routed + shared).reshape([batch, seq, hidden]), routing)
    }

    /// Reads only the chosen experts' weights: `tokens * top_k` small matmuls in one batch.
    ///
    /// # Shapes
    /// - x: `[tokens, hidden]`; output `[tokens, hidden]`
    pub fn experts_gathered(&self, x: Tensor<B, 2>, routing: &Routing<B>) -> Tensor<B, 2> {
        let [n, h] = x.dims();
        let k = self.top_k;
        let inter = self.experts.down_proj.dims()[1];
        let idx = routing.indices.clone().reshape([n * k]);
        let gate_up = self.experts.gate_up_proj.val().select(0, idx.clone()); // [n*k, h, 2I]
        let down = self.experts.down_proj.val().select(0, idx); // [n*k, I, h]
        let xs = x
            .unsqueeze_dim::<3>(1)
            .expand([n, k, h])
            .reshape([n * k, 1, h]);
        let gu = kernels::matmul(xs, gate_up); // [n*k, 1, 2I]
        let act = silu(gu.clone().slice([0..n * k, 0..1, 0..inter]))
            * gu.slice([0..n * k, 0..1, inter..2 * inter]);
        let out = kernels::matmul(act, down).reshape([n, k, h]);
        (out * routing.weights.clone().unsqueeze_dim::<3>(2))
            .sum_dim(1)
            .reshape([n, h])
    }

    /// Only the routed experts, grouped: pairs sorted by expert on the host (one read-back of
    /// the `[tokens, top_k]` routing), one gate/up and one down matmul per active expert over
    /// its rows, weighted by the router and scatter-added back to their tokens.
    ///
    /// # Shapes
    /// - x: `[tokens, hidden]`; output `[tokens, hidden]`
    ///
    /// # Panics
    /// Only if the backend cannot read an integer tensor back (a backend bug, not user input).
    pub fn experts_grouped(&self, x: Tensor<B, 2>, routing: &Routing<B>) -> Tensor<B, 2> {
        let [n, h] = x.dims();
        let k = self.top_k;
        let e = self.num_experts();
        let inter = self.experts.down_proj.dims()[1];
        let device = x.device();
        let chosen: Vec<i64> = routing
            .indices
            .clone()
            .into_data()
            .convert::<i64>()
            .to_vec()
            .expect("routing indices read back as integers");
        // Counting sort of the pairs (token * k + slot) by expert.
        let mut counts = vec![0usize; e + 1];
        for &id in &chosen {
            counts[id as usize + 1] += 1;
        }
        for i in 0..e {
            counts[i + 1] += counts[i];
        }
        let offsets = counts.clone();
        let mut next = counts;
        let mut pair_order = vec![0i64; n * k];
        for (pair, &id) in chosen.iter().enumerate() {
            pair_order[next[id as usize]] = pair as i64;
            next[id as usize] += 1;
        }
        let token_order: Vec<i64> = pair_order.iter().map(|p| p / k as i64).collect();
        let int = |v: Vec<i64>| {
            Tensor::<B, 1, Int>::from_data(burn::tensor::TensorData::new(v, [n * k]), &device)
        };
        let (pair_idx, token_idx) = (int(pair_order), int(token_order));
        let xs = x.select(0, token_idx.clone()); // [n*k, h], grouped by expert
        let weights = routing
            .weights
            .clone()
            .reshape([n * k])
            .select(0, pair_idx)
            .reshape([n * k, 1]);
        let gate_up = self.experts.gate_up_proj.val();
        let down = self.experts.down_proj.val();
        let xs = xs.unsqueeze_dim::<3>(0); // [1, n*k, h]
        let mut outs = Vec::new();
        for id in 0..e {
            let (lo, hi) = (offsets[id], offsets[id + 1]);
            if lo == hi {
                continue;
            }
            // Kept 3-d: a slice of the stacked weights is a view, and a batched matmul reads it
            // in place (reshaping a view that does not start at offset 0 would copy it).
            let rows = xs.clone().slice([0..1, lo..hi, 0..h]);
            let gu = kernels::matmul_expert(rows, &gate_up, id); // [1, rows, 2I]
            let act = silu(gu.clone().slice([0..1, 0..hi - lo, 0..inter]))
                * gu.slice([0..1, 0..hi - lo, inter..2 * inter]);
            outs.push(kernels::matmul_expert(act, &down, id)); // [1, rows, h]
        }
        let routed = Tensor::cat(outs, 1).reshape([n * k, h]) * weights; // [n*k, h]
        Tensor::<B, 2>::zeros([n, h], &device).select_assign(
            0,
            token_idx,
            routed,
            IndexingUpdateOp::Add,
        )
    }

    /// Runs every expert on every token and weights the results by the routing (zero for
    /// experts not chosen).
    ///
    /// # Shapes
    /// - x: `[tokens, hidden]`; output `[tokens, hidden]`
    pub fn experts_dense(&self, x: Tensor<B, 2>, routing: &Routing<B>) -> Tensor<B, 2> {
        let [n, h] = x.dims();
        let e = self.num_experts();
        let inter = self.experts.down_proj.dims()[1];
        let combine = Tensor::<B, 2>::zeros([n, e], &x.device()).scatter(
            1,
            routing.indices.clone(),
            routing.weights.clone(),
            IndexingUpdateOp::Add,
        ); // [n, e]
        // All experts side by side: x [n, h] @ [h, e * 2I] in one matmul.
        let gate_up = self
            .experts
            .gate_up_proj
            .val()
            .swap_dims(0, 1)
            .reshape([h, e * 2 * inter]);
        let gu = kernels::matmul(x, gate_up).reshape([n, e, 2 * inter]);
        let act = silu(gu.clone().slice([0..n, 0..e, 0..inter]))
            * gu.slice([0..n, 0..e, inter..2 * inter]);
        // sum_e w_e * (act_e @ down_e) = (w ⊙ act) [n, e * I] @ down [e * I, h].
        let weighted = (act * combine.unsqueeze_dim::<3>(2)).reshape([n, e * inter]);
        kernels::matmul(
            weighted,
            self.experts.down_proj.val().reshape([e * inter, h]),
        )
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn top_k_by_argmax_matches_topk() {
        type B = TestBackend;
        let device = Default::default();
        let probs = burn::tensor::activation::softmax(
            Tensor::<B, 2>::random(
                [7, 8],
                burn::tensor::Distribution::Normal(0.0, 2.0),
                &device,
            ),
            1,
        );
        let (w, i) = probs.clone().topk_with_indices(3, 1);
        let (w2, i2) = super::top_k_by_argmax(probs, 3);
        assert_eq!(i.into_data(), i2.into_data());
        w.into_data()
            .assert_approx_eq::<f32>(&w2.into_data(), burn::tensor::Tolerance::absolute(0.0));
    }

    use super::*;
    use crate::TestBackend;
    use crate::config::Qwen35MoeConfig;
    use crate::model::Qwen35Moe;
    use burn::tensor::{Distribution, Tolerance};

    fn tiny() -> Qwen35MoeConfig {
        let j = serde_json::json!({
            "vocab_size": 32, "hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
            "num_key_value_heads": 1, "head_dim": 8, "linear_num_key_heads": 1,
            "linear_num_value_heads": 2, "linear_key_head_dim": 4, "linear_value_head_dim": 4,
            "num_experts": 6, "num_experts_per_tok": 2, "moe_intermediate_size": 8,
            "shared_expert_intermediate_size": 8
        });
        Qwen35MoeConfig::from_json_str(&j.to_string(), "test").unwrap()
    }

    /// The gathered (decode) and dense (prefill) strategies compute the same thing, and both
    /// equal a plain per-token loop over the chosen experts.
    #[test]
    fn gathered_dense_and_naive_loop_agree() {
        let dev = Default::default();
        let model = Qwen35Moe::<TestBackend>::init(&tiny(), &dev);
        let moe = &model.layers[0].mlp;
        let x = Tensor::<TestBackend, 2>::random([5, 16], Distribution::Normal(0.0, 1.0), &dev);
        let routing = moe.route(x.clone());
        let gathered = moe.experts_gathered(x.clone(), &routing);
        let dense = moe.experts_dense(x.clone(), &routing);
        let grouped = moe.experts_grouped(x.clone(), &routing);
        gathered
            .clone()
            .into_data()
            .assert_approx_eq(&dense.into_data(), Tolerance::<f32>::absolute(1e-6));
        gathered
            .clone()
            .into_data()
            .assert_approx_eq(&grouped.into_data(), Tolerance::<f32>::absolute(1e-6));

        let idx = routing.indices.into_data().to_vec::<i32>().unwrap();
        let w = routing.weights.into_data().to_vec::<f32>().unwrap();
        let gu = moe.experts.gate_up_proj.val();
        let down = moe.experts.down_proj.val();
        let mut rows = Vec::new();
        for t in 0..5 {
            let xt = x.clone().slice([t..t + 1, 0..16]);
            let mut acc = Tensor::<TestBackend, 2>::zeros([1, 16], &dev);
            for k in 0..2 {
                let e = idx[t * 2 + k] as usize;
                let g = gu.clone().slice([e..e + 1, 0..16, 0..16]).reshape([16, 16]);
                let d = down.clone().slice([e..e + 1, 0..8, 0..16]).reshape([8, 16]);
                let h = xt.clone().matmul(g);
                let act = silu(h.clone().slice([0..1, 0..8])) * h.slice([0..1, 8..16]);
                acc = acc + act.matmul(d).mul_scalar(w[t * 2 + k]);
            }
            rows.push(acc);
        }
        gathered.into_data().assert_approx_eq(
            &Tensor::cat(rows, 0).into_data(),
            Tolerance::<f32>::absolute(1e-6),
        );
    }

    #[test]
    fn routing_weights_are_renormalised_top_k() {
        let dev = Default::default();
        let model = Qwen35Moe::<TestBackend>::init(&tiny(), &dev);
        let x = Tensor::<TestBackend, 2>::random([7, 16], Distribution::Normal(0.0, 1.0), &dev);
        let r = model.layers[0].mlp.route(x);
        let sums = r
            .weights
            .clone()
            .sum_dim(1)
            .into_data()
            .to_vec::<f32>()
            .unwrap();
        assert!(sums.iter().all(|s| (s - 1.0).abs() < 1e-6), "{sums:?}");
        let w = r.weights.into_data().to_vec::<f32>().unwrap();
        assert!(w.chunks(2).all(|p| p[0] >= p[1]), "highest first: {w:?}");
    }
}
