//! What kind of device a burn backend runs on ([`DeviceKind`]): the one place the engine
//! tells backends apart, so that choices such as the MoE strategy ([`crate::layers::moe`]) or
//! where device memory is read from do not each match backend names.

use burn::tensor::backend::Backend;

/// The kind of device a backend's tensors live on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// Host memory: burn-flex (told by its tensor type, [`crate::kernels::is_host`]), also
    /// under autodiff, or ndarray. Reading a tensor back costs nothing.
    Host,
    /// An NVIDIA GPU through burn's CUDA runtime.
    Cuda,
    /// A GPU through wgpu (Vulkan, Metal, DX12, WebGPU).
    Wgpu,
    /// Any other backend: treated as a device where reads back are costly.
    Other,
}

impl DeviceKind {
    /// The kind of `B` on `device`. burn-flex is told by its tensor type; the others by the
    /// name burn 0.21 gives the backend (`B::name`, which names the runtime: `cuda`, `wgpu`,
    /// `flex`, `ndarray`, wrapped by `fusion<…>` or `autodiff<…>`), read here and nowhere else.
    pub fn of<B: Backend>(device: &B::Device) -> Self {
        if crate::kernels::is_host::<B>() {
            return Self::Host;
        }
        Self::from_name(&B::name(device))
    }

    /// The kind a backend named `name` (`B::name`) runs on.
    pub fn from_name(name: &str) -> Self {
        let name = name.to_lowercase();
        if name.contains("cuda") {
            Self::Cuda
        } else if name.contains("wgpu") || name.contains("webgpu") || name.contains("vulkan") {
            Self::Wgpu
        } else if name.contains("flex") || name.contains("ndarray") {
            Self::Host
        } else {
            Self::Other
        }
    }

    /// Whether tensors live in host memory ([`Self::Host`]).
    pub fn is_host(self) -> bool {
        self == Self::Host
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_backend_is_host_memory_with_or_without_autodiff() {
        let device = Default::default();
        assert_eq!(
            DeviceKind::of::<burn::backend::Flex>(&device),
            DeviceKind::Host
        );
        assert_eq!(
            DeviceKind::of::<burn::backend::Autodiff<burn::backend::Flex>>(&device),
            DeviceKind::Host
        );
    }

    #[test]
    fn gpu_runtimes_are_told_by_name() {
        assert_eq!(
            DeviceKind::from_name("fusion<cubecl<cuda>>"),
            DeviceKind::Cuda
        );
        assert_eq!(DeviceKind::from_name("wgpu<wgsl>"), DeviceKind::Wgpu);
        assert_eq!(DeviceKind::from_name("ndarray"), DeviceKind::Host);
        assert_eq!(DeviceKind::from_name("tch"), DeviceKind::Other);
        assert!(!DeviceKind::Other.is_host());
    }
}
