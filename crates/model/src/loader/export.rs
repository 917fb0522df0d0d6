//! Writing a model back out as a Hugging Face checkpoint (text-only layout, fused experts),
//! loadable by transformers' `Qwen3_5MoeForCausalLM.from_pretrained` and by [`super::load_model`].
//!
//! Used to ship the models this project trains. Reads tensors back synchronously, so it is for
//! native use only.

use std::collections::BTreeMap;

use burn::tensor::Tensor;
use burn::tensor::backend::Backend;
use safetensors::tensor::{Dtype, TensorView};

use crate::error::{ModelError, Result};
use crate::layers::decoder_layer::Mixer;
use crate::model::Qwen35Moe;

/// Element type of an exported checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportDtype {
    /// 4 bytes per weight, exact.
    F32,
    /// 2 bytes per weight (round to nearest even), as the released checkpoints.
    Bf16,
}

struct Collected {
    tensors: BTreeMap<String, (Vec<usize>, Vec<f32>)>,
}

impl Collected {
    fn put<B: Backend, const D: usize>(&mut self, name: String, t: Tensor<B, D>) {
        let shape = t.dims().to_vec();
        let values = t
            .into_data()
            .convert::<f32>()
            .to_vec::<f32>()
            .expect("f32 data");
        self.tensors.insert(name, (shape, values));
    }

    /// A burn `[in, out]` weight stored as HF `[out, in]`.
    fn put_linear<B: Backend>(&mut self, name: String, w: Tensor<B, 2>) {
        self.put(name, w.transpose());
    }
}

/// Serialises `model` as `model.safetensors` bytes with `model.`-prefixed keys.
///
/// # Errors
/// [`ModelError::Safetensors`] if serialisation fails (it does not for valid models).
pub fn to_safetensors<B: Backend>(model: &Qwen35Moe<B>, dtype: ExportDtype) -> Result<Vec<u8>> {
    let mut c = Collected {
        tensors: BTreeMap::new(),
    };
    c.put(
        "model.embed_tokens.weight".into(),
        model.embed_tokens.weight.val(),
    );
    c.put("model.norm.weight".into(), model.norm.weight.val());
    // A tied model has no `lm_head.weight`: transformers ties it to the embedding on load.
    if let Some(head) = &model.lm_head {
        c.put_linear("lm_head.weight".into(), head.weight.val());
    }
    for (i, layer) in model.layers.iter().enumerate() {
        let lp = format!("model.layers.{i}.");
        c.put(
            format!("{lp}input_layernorm.weight"),
            layer.input_layernorm.weight.val(),
        );
        c.put(
            format!("{lp}post_attention_layernorm.weight"),
            layer.post_attention_layernorm.weight.val(),
        );
        match &layer.mixer {
            Mixer::FullAttention(a) => {
                let p = format!("{lp}self_attn.");
                c.put_linear(format!("{p}q_proj.weight"), a.q_proj.weight.val());
                c.put_linear(format!("{p}k_proj.weight"), a.k_proj.weight.val());
                c.put_linear(format!("{p}v_proj.weight"), a.v_proj.weight.val());
                c.put_linear(format!("{p}o_proj.weight"), a.o_proj.weight.val());
                c.put(format!("{p}q_norm.weight"), a.q_norm.weight.val());
                c.put(format!("{p}k_norm.weight"), a.k_norm.weight.val());
            }
            Mixer::LinearAttention(d) => {
                let p = format!("{lp}linear_attn.");
                c.put_linear(format!("{p}in_proj_qkv.weight"), d.in_proj_qkv.weight.val());
                c.put_linear(format!("{p}in_proj_z.weight"), d.in_proj_z.weight.val());
                c.put_linear(format!("{p}in_proj_b.weight"), d.in_proj_b.weight.val());
                c.put_linear(format!("{p}in_proj_a.weight"), d.in_proj_a.weight.val());
                c.put_linear(format!("{p}out_proj.weight"), d.out_proj.weight.val());
                let [ch, k] = d.conv1d.dims();
                c.put(
                    format!("{p}conv1d.weight"),
                    d.conv1d.val().reshape([ch, 1, k]),
                );
                c.put(format!("{p}dt_bias"), d.dt_bias.val());
                c.put(format!("{p}A_log"), d.a_log.val());
                c.put(format!("{p}norm.weight"), d.norm.weight.val());
            }
        }
        let m = format!("{lp}mlp.");
        c.put_linear(format!("{m}gate.weight"), layer.mlp.gate.weight.val());
        c.put(
            format!("{m}experts.gate_up_proj"),
            layer.mlp.experts.gate_up_proj.val().swap_dims(1, 2),
        );
        c.put(
            format!("{m}experts.down_proj"),
            layer.mlp.experts.down_proj.val().swap_dims(1, 2),
        );
        let s = &layer.mlp.shared_expert;
        c.put_linear(
            format!("{m}shared_expert.gate_proj.weight"),
            s.gate_proj.weight.val(),
        );
        c.put_linear(
            format!("{m}shared_expert.up_proj.weight"),
            s.up_proj.weight.val(),
        );
        c.put_linear(
            format!("{m}shared_expert.down_proj.weight"),
            s.down_proj.weight.val(),
        );
        c.put_linear(
            format!("{m}shared_expert_gate.weight"),
            layer.mlp.shared_expert_gate.weight.val(),
        );
    }
    let encoded: BTreeMap<String, (Vec<usize>, Vec<u8>)> = c
        .tensors
        .into_iter()
        .map(|(name, (shape, values))| {
            let bytes = match dtype {
                ExportDtype::F32 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
                ExportDtype::Bf16 => values
                    .iter()
                    .flat_map(|v| half::bf16::from_f32(*v).to_le_bytes())
                    .collect(),
            };
            (name, (shape, bytes))
        })
        .collect();
    let st_dtype = match dtype {
        ExportDtype::F32 => Dtype::F32,
        ExportDtype::Bf16 => Dtype::BF16,
    };
    let views: Vec<(String, TensorView<'_>)> = encoded
        .iter()
        .map(|(name, (shape, bytes))| {
            let view = TensorView::new(st_dtype, shape.clone(), bytes).expect("consistent sizes");
            (name.clone(), view)
        })
        .collect();
    let mut meta = std::collections::HashMap::new();
    meta.insert("format".to_string(), "pt".to_string());
    safetensors::serialize(views, Some(meta)).map_err(|e| ModelError::Safetensors {
        file: "model.safetensors".into(),
        message: format!("{e:?}"),
    })
}
