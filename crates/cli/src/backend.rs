//! Choosing the burn backend at run time among those compiled in.

use clap::ValueEnum;

/// Where the model runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BackendKind {
    /// burn-flex on the CPU (always available).
    Cpu,
    /// wgpu: Vulkan, Metal or DX12 (build with `--features wgpu`).
    Wgpu,
    /// CUDA (build with `--features cuda`).
    Cuda,
}

/// Something to run on a backend chosen at run time.
pub trait OnBackend {
    /// What it returns.
    type Output;
    /// Runs on backend `B`.
    fn run<B: burn::tensor::backend::Backend>(
        self,
        device: B::Device,
    ) -> anyhow::Result<Self::Output>;
}

/// Runs `job` on the backend `kind`, or says how to get that backend. A GPU backend is started
/// first ([`start`]), so a missing driver is an error before any work, not a panic after it.
pub fn dispatch<J: OnBackend>(kind: BackendKind, job: J) -> anyhow::Result<J::Output> {
    match kind {
        BackendKind::Cpu => job.run::<burn::backend::Flex>(Default::default()),
        #[cfg(feature = "wgpu")]
        BackendKind::Wgpu => job.run::<burn::backend::Wgpu>(start::<burn::backend::Wgpu>(
            "wgpu",
            "is there a Vulkan, Metal or DX12 adapter? (without a GPU on Linux, lavapipe: `apt-get install mesa-vulkan-drivers`)",
        )?),
        #[cfg(feature = "cuda")]
        BackendKind::Cuda => job.run::<burn::backend::Cuda>(start::<burn::backend::Cuda>(
            "cuda",
            "is an NVIDIA driver installed, and are libcuda and libnvrtc on LD_LIBRARY_PATH?",
        )?),
        #[allow(unreachable_patterns)]
        other => anyhow::bail!(
            "this build has no {} backend; rebuild with `cargo build --release --features {}`",
            format!("{other:?}").to_lowercase(),
            format!("{other:?}").to_lowercase()
        ),
    }
}

/// Starts backend `B` on its default device by running one tiny operation there. burn's GPU
/// runtimes panic (on a thread of their own) when the driver is missing; that panic is caught
/// here and its message returned as an error with `hint`.
///
/// # Errors
/// The backend could not start; the message names it, the runtime's reason and `hint`.
#[allow(dead_code)] // used only in builds with a GPU feature
fn start<B: burn::tensor::backend::Backend>(name: &str, hint: &str) -> anyhow::Result<B::Device> {
    use std::sync::{Arc, Mutex};
    let device = B::Device::default();
    let reasons = Arc::new(Mutex::new(Vec::<String>::new()));
    let previous = std::panic::take_hook();
    let seen = Arc::clone(&reasons);
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let text = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        if let Ok(mut r) = seen.lock() {
            r.push(text);
        }
    }));
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        burn::tensor::Tensor::<B, 1>::zeros([1], &device)
            .into_data()
            .to_vec::<f32>()
            .is_ok()
    }));
    std::panic::set_hook(previous);
    match ran {
        Ok(true) => Ok(device),
        Ok(false) => {
            anyhow::bail!("the {name} backend started but could not read a tensor back; {hint}")
        }
        Err(_) => {
            let reasons = reasons.lock().map(|r| r.clone()).unwrap_or_default();
            // The first panic is the runtime's own (e.g. cudarc's "Unable to dynamically load
            // the cuda shared library"); later ones are its channel closing.
            let reason = reasons.first().map_or("unknown", |r| r.as_str());
            let reason = reason.split(" - searched for").next().unwrap_or(reason);
            anyhow::bail!("the {name} backend could not start: {reason}; {hint}")
        }
    }
}

/// `--dtype` and `--quantize`: the precision a command holds the model's weights in. Every
/// command that loads a model flattens this into its arguments.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct Precision {
    /// Precision of the weights: f32, bf16 or f16 (read from the checkpoint straight into it).
    /// Default: the checkpoint's own (`torch_dtype` in config.json; bf16 for the released models
    /// and the demo), or the nearest the device has (wgpu: f16 with `shader-f16`, else f32);
    /// `train` evaluates its export in f32 unless told.
    /// Activations, norms, softmax, the router and the DeltaNet state stay f32 in every dtype.
    #[arg(long, value_parser = parse_dtype)]
    pub dtype: Option<agentworld_model::WeightDtype>,
    /// Quantize the projection and expert weights to 8-bit blocks at load time (32 weights per
    /// f32 scale; CPU only): about 1.1 bytes a weight, for the fastest CPU decode.
    #[arg(long, value_enum)]
    pub quantize: Option<QuantizeArg>,
}

/// `--quantize` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum QuantizeArg {
    /// Symmetric int8, one f32 scale per 32 weights.
    Int8,
}

fn parse_dtype(s: &str) -> Result<agentworld_model::WeightDtype, String> {
    s.parse()
}

impl Precision {
    /// The load options when there is no checkpoint yet to take a default from (the model
    /// `train` will export): `--dtype` or f32, `--quantize` as given. The device check happens
    /// when the model is loaded.
    pub fn fixed(&self) -> agentworld_model::LoadOptions {
        agentworld_model::LoadOptions {
            dtype: self.dtype.unwrap_or_default(),
            quantize: match self.quantize {
                None => agentworld_model::Quantize::None,
                Some(QuantizeArg::Int8) => agentworld_model::Quantize::Int8,
            },
        }
    }

    /// The load options for the model in `dir` on `device`: `--dtype` if given (an error when
    /// the device cannot hold it), else the checkpoint's `torch_dtype`, lowered to what the
    /// device has.
    ///
    /// # Errors
    /// An explicit dtype the device lacks, or int8 off the CPU, with what to use instead.
    pub fn resolve<B: burn::tensor::backend::Backend>(
        &self,
        dir: &std::path::Path,
        device: &B::Device,
    ) -> anyhow::Result<agentworld_model::LoadOptions> {
        use agentworld_model::{LoadOptions, Quantize, WeightDtype};
        let has = |d: WeightDtype| B::supports_dtype(device, d.burn());
        let dtype = match self.dtype {
            Some(d) if has(d) => d,
            Some(d) => anyhow::bail!(
                "this device ({}) cannot hold {d} weights; use --dtype f32{}",
                B::name(device),
                if d != WeightDtype::F16 && has(WeightDtype::F16) {
                    " or --dtype f16"
                } else {
                    ""
                }
            ),
            None => {
                let stored = stored_dtype(dir).unwrap_or(WeightDtype::F32);
                [stored, WeightDtype::F16, WeightDtype::F32]
                    .into_iter()
                    .find(|&d| has(d))
                    .unwrap_or(WeightDtype::F32)
            }
        };
        let quantize = match self.quantize {
            None => Quantize::None,
            Some(QuantizeArg::Int8) if agentworld_model::kernels::is_host::<B>() => Quantize::Int8,
            Some(QuantizeArg::Int8) => anyhow::bail!(
                "--quantize int8 runs on the CPU backend only; on a GPU use --dtype bf16 (or f16)"
            ),
        };
        Ok(LoadOptions { dtype, quantize })
    }
}

/// The dtype `config.json` in `dir` says the weights are stored in (`torch_dtype`, or
/// transformers 5's `dtype`, at the top or in `text_config`); `None` when it says nothing
/// readable.
pub fn stored_dtype(dir: &std::path::Path) -> Option<agentworld_model::WeightDtype> {
    let text = std::fs::read_to_string(dir.join("config.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    [&json, &json["text_config"]]
        .into_iter()
        .flat_map(|v| [&v["torch_dtype"], &v["dtype"]])
        .find_map(|v| {
            v.as_str()
                .and_then(agentworld_model::WeightDtype::from_torch)
        })
}
