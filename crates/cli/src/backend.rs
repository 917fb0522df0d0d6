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
