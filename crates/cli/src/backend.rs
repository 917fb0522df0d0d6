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

/// Runs `job` on the backend `kind`, or says how to get that backend.
pub fn dispatch<J: OnBackend>(kind: BackendKind, job: J) -> anyhow::Result<J::Output> {
    match kind {
        BackendKind::Cpu => job.run::<burn::backend::Flex>(Default::default()),
        #[cfg(feature = "wgpu")]
        BackendKind::Wgpu => job.run::<burn::backend::Wgpu>(Default::default()),
        #[cfg(feature = "cuda")]
        BackendKind::Cuda => job.run::<burn::backend::Cuda>(Default::default()),
        #[allow(unreachable_patterns)]
        other => anyhow::bail!(
            "this build has no {} backend; rebuild with `cargo build --release --features {}`",
            format!("{other:?}").to_lowercase(),
            format!("{other:?}").to_lowercase()
        ),
    }
}
