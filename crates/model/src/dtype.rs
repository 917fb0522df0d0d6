//! The precision the model's weights are held and read in.
//!
//! One model definition serves every precision: the backend's float element stays `f32`, and
//! each weight tensor carries its own runtime dtype (burn 0.21 tensors are dtype-tagged). The
//! weights of the matrix products (every `Linear`, the stacked experts, the embedding and the
//! LM head) are held in the [`WeightDtype`] the user picks; everything the transformers
//! reference keeps in f32 stays f32 whatever the choice: the residual stream, RMSNorm
//! statistics and weights, softmax, router logits and top-k, RoPE angles, the DeltaNet
//! recurrent state, its chunked math, conv1d, `A_log` and `dt_bias`, and the attention mask.
//! [`crate::kernels::matmul`] multiplies an f32 activation by a weight of any of these
//! dtypes and returns f32.
//!
//! Int8 ([`Quantize::Int8`]) is a separate, CPU-only choice made at load time on top of a
//! dtype (see [`crate::kernels::int8`]).

use burn::tensor::DType;

/// Element type of the weights of the matrix products.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WeightDtype {
    /// 4 bytes a weight: the reference precision (and the training precision).
    #[default]
    F32,
    /// bfloat16, 2 bytes: what the released checkpoints store (`torch_dtype: bfloat16`).
    Bf16,
    /// IEEE half, 2 bytes: for GPUs whose shaders have f16 but not bf16 (WebGPU `shader-f16`).
    F16,
}

impl WeightDtype {
    /// Every dtype, in `--help` order.
    pub const ALL: [Self; 3] = [Self::F32, Self::Bf16, Self::F16];

    /// The burn dtype of weight tensors held in this precision.
    pub fn burn(self) -> DType {
        match self {
            Self::F32 => DType::F32,
            Self::Bf16 => DType::BF16,
            Self::F16 => DType::F16,
        }
    }

    /// Bytes per weight.
    pub fn bytes(self) -> usize {
        match self {
            Self::F32 => 4,
            Self::Bf16 | Self::F16 => 2,
        }
    }

    /// The name on the command line and in summaries: `f32`, `bf16`, `f16`.
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::Bf16 => "bf16",
            Self::F16 => "f16",
        }
    }

    /// The dtype a `config.json` `torch_dtype` (or transformers 5's `dtype`) names:
    /// `bfloat16`, `float16`, `float32` (and the short names); `None` for anything else.
    pub fn from_torch(name: &str) -> Option<Self> {
        match name.trim().trim_start_matches("torch.") {
            "float32" | "float" | "f32" | "fp32" => Some(Self::F32),
            "bfloat16" | "bf16" => Some(Self::Bf16),
            "float16" | "half" | "f16" | "fp16" => Some(Self::F16),
            _ => None,
        }
    }
}

impl std::fmt::Display for WeightDtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for WeightDtype {
    type Err = String;

    /// Parses `f32`, `bf16` or `f16` (and the torch names `float32`, `bfloat16`, `float16`).
    fn from_str(s: &str) -> Result<Self, String> {
        Self::from_torch(&s.to_ascii_lowercase())
            .ok_or_else(|| format!("unknown dtype `{s}`: expected one of f32, bf16, f16"))
    }
}

/// Weight quantization applied at load time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Quantize {
    /// None: weights stay in their [`WeightDtype`].
    #[default]
    None,
    /// Symmetric 8-bit integers with one f32 scale per block of
    /// [`crate::kernels::int8::BLOCK`] consecutive weights of a row (llama.cpp's Q8_0 idea),
    /// for the projections and the routed experts on the CPU.
    Int8,
}

/// How the loader stores the weights: the dtype, and an optional quantization on top.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct LoadOptions {
    /// Element type of the weights of the matrix products.
    pub dtype: WeightDtype,
    /// Quantization applied to the projection and expert weights after reading.
    pub quantize: Quantize,
}

impl LoadOptions {
    /// Weights in `dtype`, unquantized.
    pub fn dtype(dtype: WeightDtype) -> Self {
        Self {
            dtype,
            quantize: Quantize::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cli_and_torch_names() {
        assert_eq!("bf16".parse::<WeightDtype>(), Ok(WeightDtype::Bf16));
        assert_eq!("BF16".parse::<WeightDtype>(), Ok(WeightDtype::Bf16));
        assert_eq!(WeightDtype::from_torch("bfloat16"), Some(WeightDtype::Bf16));
        assert_eq!(
            WeightDtype::from_torch("torch.float16"),
            Some(WeightDtype::F16)
        );
        assert_eq!(WeightDtype::from_torch("float32"), Some(WeightDtype::F32));
        assert!(
            "int4"
                .parse::<WeightDtype>()
                .unwrap_err()
                .contains("f32, bf16, f16")
        );
        for d in WeightDtype::ALL {
            assert_eq!(d.name().parse::<WeightDtype>(), Ok(d));
        }
    }
}
