//! Loading real Hugging Face checkpoints into [`Qwen35Moe`].
//!
//! Key names follow qwen3_5_moe.md §3: prefix `model.language_model.` (composite checkpoints)
//! or `model.` (text-only), `lm_head.weight` at the top; experts fused
//! (`mlp.experts.gate_up_proj [E, 2I, H]`, `mlp.experts.down_proj [E, H, I]`) or per expert
//! (`mlp.experts.{e}.{gate,up,down}_proj.weight`, as transformers' `conversion_mapping.py`
//! accepts). `mtp.*` (the speculative-decoding head) and `model.visual.*` (the vision tower) are
//! skipped and reported. Tensors are converted one at a time to the weight dtype the caller
//! picks ([`LoadOptions`]: f32, bf16 or f16, optionally int8 blocks) and transposed to burn's
//! `[in, out]` layout on the way, so no second copy of the whole model is ever held in memory.

pub mod checkpoint;
pub mod export;

use burn::module::Param;
use burn::nn::{Embedding, Linear};
use burn::tensor::backend::Backend;
use burn::tensor::{Element, Tensor, TensorData};

pub use checkpoint::{Checkpoint, CheckpointElem, decode_f32};

use crate::config::{LayerType, Qwen35MoeConfig};
use crate::dtype::{LoadOptions, Quantize, WeightDtype};
use crate::error::{ModelError, Result};
use crate::kernels;
use crate::layers::attention::GatedAttention;
use crate::layers::decoder_layer::{DecoderLayer, Mixer};
use crate::layers::gated_delta_net::GatedDeltaNet;
use crate::layers::mlp::SwiGluMlp;
use crate::layers::moe::{Experts, SparseMoe};
use crate::layers::rms_norm::{RmsNorm1p, RmsNormGated};
use crate::model::Qwen35Moe;

/// How the routed experts are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpertLayout {
    /// `mlp.experts.gate_up_proj` and `mlp.experts.down_proj`, one 3-D tensor each per layer.
    Fused,
    /// `mlp.experts.{e}.{gate,up,down}_proj.weight`.
    PerExpert,
}

/// What the loader found in a checkpoint, for `agentworld inspect` and logs.
#[derive(Debug, Clone)]
pub struct LayoutReport {
    /// Key prefix of the text model (`model.language_model.` or `model.`).
    pub prefix: String,
    /// Expert storage.
    pub experts: ExpertLayout,
    /// Shard files.
    pub shards: Vec<String>,
    /// Tensor counts per dtype, e.g. `("BF16", 1043)`.
    pub dtypes: Vec<(String, usize)>,
    /// Bytes of tensor data.
    pub data_bytes: u64,
    /// Groups of tensors deliberately skipped, with counts (`mtp.*`, `model.visual.*`).
    pub skipped: Vec<(String, usize)>,
    /// Tensors no part of the model uses (after loading; empty before).
    pub unused: Vec<String>,
    /// Warnings from reading the shards.
    pub warnings: Vec<String>,
}

impl LayoutReport {
    /// Describes `checkpoint` without reading any tensor data.
    ///
    /// # Errors
    /// [`ModelError::MissingTensor`] when no embedding is found under either prefix.
    pub fn describe(checkpoint: &Checkpoint) -> Result<Self> {
        let prefix = ["model.language_model.", "model."]
            .into_iter()
            .find(|p| checkpoint.contains(&format!("{p}embed_tokens.weight")))
            .ok_or_else(|| ModelError::MissingTensor {
                tensor: "model.language_model.embed_tokens.weight".into(),
                hint: " (nor model.embed_tokens.weight: is this a Qwen3.5-MoE checkpoint?)".into(),
            })?
            .to_string();
        let experts = if checkpoint
            .names()
            .any(|n| n.ends_with("mlp.experts.gate_up_proj"))
        {
            ExpertLayout::Fused
        } else {
            ExpertLayout::PerExpert
        };
        let mut dtypes = std::collections::BTreeMap::new();
        let mut skipped = std::collections::BTreeMap::new();
        for name in checkpoint.names() {
            let entry = checkpoint.entry(name).expect("listed");
            *dtypes.entry(format!("{:?}", entry.dtype)).or_insert(0) += 1;
            if let Some(group) = skipped_group(name) {
                *skipped.entry(group.to_string()).or_insert(0) += 1;
            }
        }
        Ok(Self {
            prefix,
            experts,
            shards: checkpoint.shard_names(),
            dtypes: dtypes.into_iter().collect(),
            data_bytes: checkpoint.data_bytes(),
            skipped: skipped.into_iter().collect(),
            unused: Vec::new(),
            warnings: checkpoint.warnings.clone(),
        })
    }
}

fn skipped_group(name: &str) -> Option<&'static str> {
    if name.starts_with("mtp.") {
        Some("mtp.* (multi-token prediction head)")
    } else if name.starts_with("model.visual.") || name.starts_with("visual.") {
        Some("model.visual.* (vision tower)")
    } else {
        None
    }
}

/// Runs `$e` with `$T` the element type of `$dtype`.
macro_rules! with_elem {
    ($dtype:expr, $T:ident => $e:expr) => {
        match $dtype {
            WeightDtype::F32 => {
                type $T = f32;
                $e
            }
            WeightDtype::Bf16 => {
                type $T = half::bf16;
                $e
            }
            WeightDtype::F16 => {
                type $T = half::f16;
                $e
            }
        }
    };
}

/// An element weights can be held in: read from the checkpoint, stored in a burn tensor.
trait Elem: CheckpointElem + Element {}
impl<T: CheckpointElem + Element> Elem for T {}

/// Reads tensors by name, converts them, and remembers which were used.
struct Reader<'a, B: Backend> {
    checkpoint: &'a Checkpoint,
    device: &'a B::Device,
    options: LoadOptions,
    used: std::collections::HashSet<String>,
    progress: &'a mut dyn FnMut(usize, usize),
    total: usize,
}

impl<B: Backend> Reader<'_, B> {
    fn read_as<T: CheckpointElem>(&mut self, name: &str, shape: &[usize]) -> Result<Vec<T>> {
        let values = self.checkpoint.read_as::<T>(name, shape)?;
        self.used.insert(name.to_string());
        (self.progress)(self.used.len(), self.total);
        Ok(values)
    }

    /// An f32 parameter (norm weights, conv1d, `A_log`, `dt_bias`: kept in f32 in every dtype).
    fn read(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
        self.read_as::<f32>(name, shape)
    }

    fn vector(&mut self, name: &str, len: usize) -> Result<Tensor<B, 1>> {
        let v = self.read(name, &[len])?;
        Ok(Tensor::from_data(TensorData::new(v, [len]), self.device))
    }

    /// A tensor of `T` values in `T`'s dtype.
    fn tensor<T: Elem, const D: usize>(&self, v: Vec<T>, shape: [usize; D]) -> Tensor<B, D> {
        Tensor::from_data(TensorData::new(v, shape), (self.device, T::dtype()))
    }

    /// `w` as int8 blocks when the options ask for it and the shape allows, else as is.
    fn maybe_quantized<const D: usize>(&self, w: Tensor<B, D>) -> Tensor<B, D> {
        if self.options.quantize != Quantize::Int8 || !kernels::int8::quantizable(w.dims()[D - 1]) {
            return w;
        }
        kernels::int8::quantize(w.clone()).unwrap_or(w)
    }

    /// HF `[batch, rows, cols]` weights, transposed to burn's `[batch, cols, rows]`, in the
    /// weight dtype.
    fn transposed(
        &mut self,
        name: &str,
        batch: usize,
        rows: usize,
        cols: usize,
    ) -> Result<Tensor<B, 3>> {
        let shape: Vec<usize> = if batch == 1 {
            vec![rows, cols]
        } else {
            vec![batch, rows, cols]
        };
        Ok(with_elem!(self.options.dtype, T => {
            let v = self.read_as::<T>(name, &shape)?;
            self.tensor(transpose(&v, batch, rows, cols), [batch, cols, rows])
        }))
    }

    /// An HF linear weight `[out, in]`, transposed to burn's `[in, out]`, in the weight dtype
    /// (int8 blocks under `--quantize int8` when `quantize`).
    fn linear_with(
        &mut self,
        name: &str,
        d_in: usize,
        d_out: usize,
        quantize: bool,
    ) -> Result<Linear<B>> {
        let weight = self
            .transposed(name, 1, d_out, d_in)?
            .reshape([d_in, d_out]);
        let weight = if quantize {
            self.maybe_quantized(weight)
        } else {
            weight
        };
        Ok(Linear {
            weight: Param::from_tensor(weight),
            bias: None,
        })
    }

    fn linear(&mut self, name: &str, d_in: usize, d_out: usize) -> Result<Linear<B>> {
        self.linear_with(name, d_in, d_out, true)
    }
}

/// Swaps the last two axes of a row-major `[batch, rows, cols]` buffer.
fn transpose<T: Copy + Default>(v: &[T], batch: usize, rows: usize, cols: usize) -> Vec<T> {
    let mut out = vec![T::default(); v.len()];
    for b in 0..batch {
        let (src, dst) = (
            &v[b * rows * cols..(b + 1) * rows * cols],
            &mut out[b * rows * cols..(b + 1) * rows * cols],
        );
        for r in 0..rows {
            for c in 0..cols {
                dst[c * rows + r] = src[r * cols + c];
            }
        }
    }
    out
}

/// Loads the text model described by `config` from `checkpoint` onto `device`, in f32.
///
/// `progress(done, total)` is called after each tensor is read.
///
/// # Errors
/// Any missing tensor, wrong shape or unsupported dtype, named with its shard.
pub fn load_model<B: Backend>(
    checkpoint: &Checkpoint,
    config: &Qwen35MoeConfig,
    device: &B::Device,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(Qwen35Moe<B>, LayoutReport)> {
    load_model_with(checkpoint, config, device, LoadOptions::default(), progress)
}

/// [`load_model`] with the weights of the matrix products (projections, experts, embedding,
/// LM head) held in `options.dtype` and, under [`Quantize::Int8`], the projections and
/// experts as int8 blocks (CPU only). Each tensor is read from the mapped file straight into
/// its final dtype: no f32 copy of the model is ever made (int8 passes through one f32 tensor
/// at a time). Norms, conv1d, `A_log` and `dt_bias` stay f32 (see [`crate::dtype`]).
///
/// # Errors
/// As [`load_model`]; [`ModelError::Input`] for int8 on a backend other than the CPU.
pub fn load_model_with<B: Backend>(
    checkpoint: &Checkpoint,
    config: &Qwen35MoeConfig,
    device: &B::Device,
    options: LoadOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(Qwen35Moe<B>, LayoutReport)> {
    if options.quantize == Quantize::Int8 && !kernels::is_host::<B>() {
        return Err(ModelError::Input(format!(
            "--quantize int8 runs on the CPU backend only (this is {}); use --dtype bf16 on a GPU",
            B::name(device)
        )));
    }
    let mut report = LayoutReport::describe(checkpoint)?;
    let total = checkpoint
        .names()
        .filter(|n| skipped_group(n).is_none())
        .count();
    let mut r = Reader::<B> {
        checkpoint,
        device,
        options,
        used: Default::default(),
        progress,
        total,
    };
    let p = report.prefix.clone();
    let (h, v) = (config.hidden_size, config.vocab_size);

    let tied = config.tie_word_embeddings && !checkpoint.contains("lm_head.weight");
    let (embed, tied_head) = with_elem!(options.dtype, T => {
        let e = r.read_as::<T>(&format!("{p}embed_tokens.weight"), &[v, h])?;
        // A tied head is materialised as a transposed copy: the decode kernel reads
        // `[hidden, vocab]` rows contiguously.
        let head = tied.then(|| r.tensor(transpose(&e, 1, v, h), [h, v]));
        (r.tensor(e, [v, h]), head)
    });
    let lm_head = Some(match tied_head {
        Some(weight) => Linear {
            weight: Param::from_tensor(r.maybe_quantized(weight)),
            bias: None,
        },
        None => r.linear("lm_head.weight", h, v)?,
    });
    let mut layers = Vec::with_capacity(config.num_hidden_layers);
    for (i, kind) in config.layer_types().into_iter().enumerate() {
        let lp = format!("{p}layers.{i}.");
        let mixer = match kind {
            LayerType::LinearAttention => {
                Mixer::LinearAttention(load_deltanet(&mut r, config, &lp)?)
            }
            LayerType::FullAttention => Mixer::FullAttention(load_attention(&mut r, config, &lp)?),
        };
        layers.push(DecoderLayer {
            input_layernorm: RmsNorm1p::new(
                r.vector(&format!("{lp}input_layernorm.weight"), h)?,
                config.rms_norm_eps,
            ),
            mixer,
            post_attention_layernorm: RmsNorm1p::new(
                r.vector(&format!("{lp}post_attention_layernorm.weight"), h)?,
                config.rms_norm_eps,
            ),
            mlp: load_moe(&mut r, config, &lp, report.experts)?,
        });
    }
    let norm = RmsNorm1p::new(
        r.vector(&format!("{p}norm.weight"), h)?,
        config.rms_norm_eps,
    );
    let model = Qwen35Moe {
        embed_tokens: Embedding {
            weight: Param::from_tensor(embed),
        },
        layers,
        norm,
        lm_head,
        rotary_dim: config.rotary_dim(),
        rope_theta: config.rope_parameters.rope_theta,
    };
    report.unused = checkpoint
        .names()
        .filter(|n| skipped_group(n).is_none() && !r.used.contains(*n))
        .map(str::to_string)
        .collect();
    Ok((model, report))
}

fn load_attention<B: Backend>(
    r: &mut Reader<'_, B>,
    c: &Qwen35MoeConfig,
    lp: &str,
) -> Result<GatedAttention<B>> {
    let (h, hq, hkv, hd) = (
        c.hidden_size,
        c.num_attention_heads,
        c.num_key_value_heads,
        c.head_dim,
    );
    let a = format!("{lp}self_attn.");
    Ok(GatedAttention {
        q_proj: r.linear(&format!("{a}q_proj.weight"), h, hq * hd * 2)?,
        k_proj: r.linear(&format!("{a}k_proj.weight"), h, hkv * hd)?,
        v_proj: r.linear(&format!("{a}v_proj.weight"), h, hkv * hd)?,
        o_proj: r.linear(&format!("{a}o_proj.weight"), hq * hd, h)?,
        q_norm: RmsNorm1p::new(r.vector(&format!("{a}q_norm.weight"), hd)?, c.rms_norm_eps),
        k_norm: RmsNorm1p::new(r.vector(&format!("{a}k_norm.weight"), hd)?, c.rms_norm_eps),
        num_heads: hq,
        num_kv_heads: hkv,
        head_dim: hd,
    })
}

fn load_deltanet<B: Backend>(
    r: &mut Reader<'_, B>,
    c: &Qwen35MoeConfig,
    lp: &str,
) -> Result<GatedDeltaNet<B>> {
    let h = c.hidden_size;
    let (hv, vd, k, conv) = (
        c.linear_num_value_heads,
        c.linear_value_dim(),
        c.linear_conv_kernel_dim,
        c.linear_conv_dim(),
    );
    let a = format!("{lp}linear_attn.");
    let conv_w = r.read(&format!("{a}conv1d.weight"), &[conv, 1, k])?;
    Ok(GatedDeltaNet {
        in_proj_qkv: r.linear(&format!("{a}in_proj_qkv.weight"), h, conv)?,
        in_proj_z: r.linear(&format!("{a}in_proj_z.weight"), h, vd)?,
        in_proj_b: r.linear(&format!("{a}in_proj_b.weight"), h, hv)?,
        in_proj_a: r.linear(&format!("{a}in_proj_a.weight"), h, hv)?,
        conv1d: Param::from_tensor(Tensor::from_data(
            TensorData::new(conv_w, [conv, k]),
            r.device,
        )),
        dt_bias: Param::from_tensor(r.vector(&format!("{a}dt_bias"), hv)?),
        a_log: Param::from_tensor(r.vector(&format!("{a}A_log"), hv)?),
        norm: RmsNormGated::new(
            r.vector(&format!("{a}norm.weight"), c.linear_value_head_dim)?,
            c.rms_norm_eps,
        ),
        out_proj: r.linear(&format!("{a}out_proj.weight"), vd, h)?,
        num_k_heads: c.linear_num_key_heads,
        num_v_heads: hv,
        head_k_dim: c.linear_key_head_dim,
        head_v_dim: c.linear_value_head_dim,
    })
}

fn load_moe<B: Backend>(
    r: &mut Reader<'_, B>,
    c: &Qwen35MoeConfig,
    lp: &str,
    layout: ExpertLayout,
) -> Result<SparseMoe<B>> {
    let (h, e, i, is) = (
        c.hidden_size,
        c.num_experts,
        c.moe_intermediate_size,
        c.shared_expert_intermediate_size,
    );
    let m = format!("{lp}mlp.");
    let (gate_up, down) = match layout {
        // One tensor at a time, so that only one raw copy is alive beside its transpose.
        ExpertLayout::Fused => (
            r.transposed(&format!("{m}experts.gate_up_proj"), e, 2 * i, h)?,
            r.transposed(&format!("{m}experts.down_proj"), e, h, i)?,
        ),
        ExpertLayout::PerExpert => with_elem!(r.options.dtype, T => {
            // Stack experts straight into the fused, transposed layout: [E, H, 2I] and [E, I, H].
            let mut gate_up = vec![T::default(); e * h * 2 * i];
            let mut down = vec![T::default(); e * i * h];
            for x in 0..e {
                let g = r.read_as::<T>(&format!("{m}experts.{x}.gate_proj.weight"), &[i, h])?;
                let u = r.read_as::<T>(&format!("{m}experts.{x}.up_proj.weight"), &[i, h])?;
                let d = r.read_as::<T>(&format!("{m}experts.{x}.down_proj.weight"), &[h, i])?;
                let gu = &mut gate_up[x * h * 2 * i..(x + 1) * h * 2 * i];
                for row in 0..i {
                    for col in 0..h {
                        gu[col * 2 * i + row] = g[row * h + col];
                        gu[col * 2 * i + i + row] = u[row * h + col];
                    }
                }
                down[x * i * h..(x + 1) * i * h].copy_from_slice(&transpose(&d, 1, h, i));
            }
            (r.tensor(gate_up, [e, h, 2 * i]), r.tensor(down, [e, i, h]))
        }),
    };
    let (gate_up, down) = (r.maybe_quantized(gate_up), r.maybe_quantized(down));
    Ok(SparseMoe {
        // The router stays unquantized: int8 must not change which experts a token picks.
        gate: r.linear_with(&format!("{m}gate.weight"), h, e, false)?,
        experts: Experts {
            gate_up_proj: Param::from_tensor(gate_up),
            down_proj: Param::from_tensor(down),
        },
        shared_expert: SwiGluMlp {
            gate_proj: r.linear(&format!("{m}shared_expert.gate_proj.weight"), h, is)?,
            up_proj: r.linear(&format!("{m}shared_expert.up_proj.weight"), h, is)?,
            down_proj: r.linear(&format!("{m}shared_expert.down_proj.weight"), is, h)?,
        },
        shared_expert_gate: r.linear(&format!("{m}shared_expert_gate.weight"), h, 1)?,
        top_k: c.num_experts_per_tok,
    })
}

/// Reads `config.json` and opens the checkpoint in `dir`.
///
/// # Errors
/// A missing or invalid `config.json`, or any error of [`Checkpoint::open_dir`].
#[cfg(feature = "native")]
pub fn open_dir(dir: &std::path::Path) -> Result<(Qwen35MoeConfig, Checkpoint)> {
    let path = dir.join("config.json");
    let text = std::fs::read_to_string(&path).map_err(|e| ModelError::Io {
        path: path.display().to_string(),
        source: e,
    })?;
    let config = Qwen35MoeConfig::from_json_str(&text, &path.display().to_string())?;
    Ok((config, Checkpoint::open_dir(dir)?))
}
