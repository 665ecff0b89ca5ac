//! The DEM step on an NVIDIA GPU: CUDA C kernels (`kernels/*.cu`, embedded in the binary)
//! compiled by NVRTC at first use, launched through `cudarc`'s driver API. The bed stays on
//! the device across steps; only what is read back crosses the bus.
//!
//! Layers, outermost last:
//! - [`probe`] and [`locate_nvrtc`] (`discovery.rs`): find the driver library, a device and
//!   NVRTC *before* `cudarc` touches them, since `cudarc` panics when it cannot load a
//!   library. Each failure is its own [`CudaError`] variant whose message says what is
//!   missing and how to get it.
//! - [`compile_kernels`] (`compile.rs`): one NVRTC compilation per process and architecture,
//!   cached.
//! - [`DeviceBed`] (`bed.rs`; its launch sequence and read-back in `launch.rs`, its device
//!   arrays in `layout.rs`): the projected-Jacobi step: the grains of one or more scenes
//!   (each its own copy of the bed) in device arrays, and the launch sequence of one step.
//!   [`HertzDeviceBed`] (`cuda_hertz/`) is the Hertz-Mindlin step's. See
//!   `kernels/README.md` for the kernels, their launch shapes and the memory layout.
//! - [`CudaBackend`] (`backend.rs`): the [`Backend`](super::Backend); the law in the step
//!   parameters picks the bed.
//!
//! `unsafe` is confined to the files of this module and of `cuda_hertz/` (its launch in
//! `cuda_hertz/step.rs`, `HmParams` in `cuda_hertz/mod.rs`): the library loads of the probe
//! (`discovery.rs`), the NVRTC calls that fetch a CUBIN and the context's setup
//! (`compile.rs`), structs handed to kernels by value (`layout.rs`), and kernel launches
//! (`launch.rs`), whose argument types the compiler cannot check against the CUDA C
//! signatures; `kernel_structs_match_the_cuda_source` and
//! `hertz_kernel_structs_match_the_cuda_source` (`tests.rs`) check the struct layouts
//! against the source instead.

mod backend;
mod bed;
mod compile;
mod discovery;
mod launch;
mod layout;
#[cfg(test)]
mod tests;

pub use super::cuda_hertz::{HertzDeviceBed, HERTZ_KERNEL_NAMES};
pub use backend::CudaBackend;
pub use bed::{
    DeviceBed, DeviceBody, DeviceBodyReadout, DeviceContainer, DeviceGrains, DeviceParams,
    DeviceShape,
};
pub use compile::{compile_kernels, compile_source, kernel_program, KERNEL_NAMES, KERNEL_SOURCES};
pub use discovery::{
    locate_nvrtc, nvrtc_search_dirs, nvrtc_version, probe, CudaError, DeviceInfo, NVRTC_DIR_VAR,
    NVRTC_WHEEL,
};

pub(super) use compile::Kernels;
pub(super) use discovery::driver_error;
pub(super) use layout::{Arenas, Count, Kind, Pointers, Sizes, BLOCK, BODY_BLOCKS, GATHER_THREADS};
