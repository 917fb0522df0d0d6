//! Sparse mixture of experts of Qwen3.5-MoE (`Qwen3_5MoeSparseMoeBlock`, `Qwen3_5MoeTopKRouter`,
//! `Qwen3_5MoeExperts`, transformers `modeling_qwen3_5_moe.py`; qwen3_5_moe.md §4.5).
//!
//! ```text
//! p      = softmax(x @ router)                 [tokens, experts]
//! w, idx = top_k(p); w = w / sum(w)            always renormalised
//! routed = sum_k w_k * down_e(silu(gate_e x) * up_e x)     e = idx_k
//! out    = routed + sigmoid(x @ shared_expert_gate) * shared_expert(x)
//! ```
//! No capacity limit and no token dropping. Two equivalent evaluation strategies, chosen by the
//! number of routed (token, expert) pairs: for few tokens (decode) the chosen experts' weights
//! are gathered so only they are read; for many tokens every expert runs on every token and the
//! results are combined with the (mostly zero) routing weights. Neither reads anything back to
//! the host.

use burn::module::{Module, Param};
use burn::nn::Linear;
use burn::tensor::activation::{sigmoid, silu, softmax};
use burn::tensor::backend::Backend;
use burn::tensor::{IndexingUpdateOp, Int, Tensor};

use super::mlp::SwiGluMlp;

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
        let probs = softmax(self.gate.forward(x), 1);
        let (weights, indices) = probs.topk_with_indices(self.top_k, 1);
        let weights = weights.clone() / weights.sum_dim(1);
        Routing { weights, indices }
    }

    /// # Shapes
    /// - x: `[batch, seq, hidden]`
    /// - output: `[batch, seq, hidden]`
    pub fn forward(&self, x: Tensor<B, 3>) -> Tensor<B, 3> {
        let [batch, seq, hidden] = x.dims();
        let tokens = x.reshape([batch * seq, hidden]);
        let routing = self.route(tokens.clone());
        let routed = if batch * seq * self.top_k <= self.num_experts() {
            self.experts_gathered(tokens.clone(), &routing)
        } else {
            self.experts_dense(tokens.clone(), &routing)
        };
        let shared = self.shared_expert.forward(tokens.clone())
            * sigmoid(self.shared_expert_gate.forward(tokens));
        (routed + shared).reshape([batch, seq, hidden])
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
        let gu = xs.matmul(gate_up); // [n*k, 1, 2I]
        let act = silu(gu.clone().slice([0..n * k, 0..1, 0..inter]))
            * gu.slice([0..n * k, 0..1, inter..2 * inter]);
        let out = act.matmul(down).reshape([n, k, h]);
        (out * routing.weights.clone().unsqueeze_dim::<3>(2))
            .sum_dim(1)
            .reshape([n, h])
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
        let gu = x.matmul(gate_up).reshape([n, e, 2 * inter]);
        let act = silu(gu.clone().slice([0..n, 0..e, 0..inter]))
            * gu.slice([0..n, 0..e, inter..2 * inter]);
        // sum_e w_e * (act_e @ down_e) = (w ⊙ act) [n, e * I] @ down [e * I, h].
        let weighted = (act * combine.unsqueeze_dim::<3>(2)).reshape([n, e * inter]);
        weighted.matmul(self.experts.down_proj.val().reshape([e * inter, h]))
    }
}

#[cfg(test)]
mod tests {
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
        gathered
            .clone()
            .into_data()
            .assert_approx_eq(&dense.into_data(), Tolerance::<f32>::absolute(1e-6));

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
