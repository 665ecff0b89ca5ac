//! The discrete-element bed (docs/MODEL.md section 4): grains, a container and bodies that
//! touch the grains through signed distance fields, under one of two contact laws
//! ([`ContactLaw`]): Hertz-Mindlin soft spheres that spin ([`law`], [`hertz`]; the default,
//! whose forces converge with the time step) or GranularGym's hard spheres by projected
//! Jacobi (fast and approximate; the numerical choices below are its).
//!
//! - [`scene`]: the bed's YAML description, validated; [`scene_file`] reads it, resolving a
//!   named [`material`] (grains, law, measured targets); [`layout`]: fill regions, walls and
//!   gates, a rough floor.
//! - [`run`]: a general scene run for a time (`loam dem run`): settle, remove gates, measure.
//! - [`backend`]: the [`Backend`] trait and the state it exchanges; its docs state the step.
//! - [`law`]: the Hertz-Mindlin contact law, its damping and its stable time step.
//! - [`hertz`]: the Hertz-Mindlin step on the CPU.
//! - [`cpu`]: the rayon implementation of the projected-Jacobi step, and [`CpuBackend`],
//!   which runs either law.
//! - [`cuda`], [`cuda_hertz`]: the GPU backend, both laws (kernels in `kernels/`).
//! - [`bed`]: pouring and settling a bed, and its checkpoint file.
//! - [`planar`]: a planar robot (the hopper's robot file among them) two-way coupled to a
//!   bed, one realisation or several side by side.
//! - [`intrude`]: a kinematic body driven through a bed, force and torque against depth.
//! - [`drag`]: a kinematic body driven down to a pose, then at a constant planar twist (the
//!   wrench-space `dem` generator's driver).
//! - [`wrench_space`]: the wrench-space `dem` generator, boundary wrenches measured on a bed.
//! - [`bench`]: the benchmark column of `loam bench dem`.
//! - [`surface`]: the bodies' surfaces as triangles. The files made of a bed (snapshots for
//!   ParaView, side-view renders, checkpoints) are written by `output::dem`.
//!
//! Numerical choices of the projected-Jacobi law (defaults in [`scene::SolverSettings`]):
//! - **Relaxation ω = 1** with mass splitting (each contact sees a grain's mass divided by the
//!   grain's contact count): the Jacobi sweep is then diagonally dominant and converges
//!   without under-relaxation.
//! - **20 iterations**: Jacobi moves a load one contact per iteration, so a bed of n layers
//!   needs about n iterations for gravity alone; with warm starting 20 hold a 10-15-layer bed
//!   at rest. A heavy body on light grains needs many more (the hopper's foot presses with
//!   250 times its own weight): its resting depth was only converged at ~100 iterations
//!   per 1 ms step (a robot's replay sets them with `PlanarDemSettings::iterations`).
//! - **Stabilisation α = 0.1 as a split impulse**: overlaps are removed by pseudo-velocities
//!   that move positions but are never kept as velocity. GranularGym's α ψ/Δt in the velocity
//!   solve makes an unconverged bed boil and a heavy body bounce on the overlaps.
//! - **Speculative contacts** (margin max(0.1 r, 2 Δt v_max)): grains that can meet within the
//!   step are constrained before they touch, so a falling grain stops at the surface in one
//!   step instead of overlapping and being pushed back out.

pub mod backend;
pub mod bed;
pub mod bench;
pub mod calibrate;
pub mod cpu;
pub mod cuda;
pub mod cuda_hertz;
pub mod drag;
pub mod hertz;
pub mod intrude;
pub mod law;
pub mod layout;
pub mod material;
pub mod mesh;
pub mod planar;
pub mod run;
pub mod scene;
pub mod scene_file;
pub mod sdf;
pub mod surface;
pub mod wrench_space;

use std::path::PathBuf;

pub use backend::{
    Backend, Body, BodyForce, BodyGeometry, BodyState, ContactLaw, Container, GrainState, Motion,
    StepParams, Timings,
};
pub use bed::Checkpoint;
pub use cpu::{CpuBackend, CpuScenes};
pub use law::HertzMindlin;
pub use scene::Scene;

/// Everything that can go wrong in the DEM layer. Every variant except `Io`, `Unphysical`,
/// `Cuda` is bad input (exit code 2 at the command line).
#[derive(Debug, thiserror::Error)]
pub enum DemError {
    /// A scene file that cannot be read into a scene, with where and what is accepted.
    #[error("{file}{}: {message}", location(.line, .field))]
    Scene {
        file: PathBuf,
        line: Option<usize>,
        field: Option<String>,
        message: String,
    },
    /// A checkpoint that is missing, foreign or damaged.
    #[error("{}: {reason}", path.display())]
    Checkpoint { path: PathBuf, reason: String },
    /// A value out of range (a non-positive time step or radius, mismatched arrays …).
    #[error("{0}")]
    Invalid(String),
    #[error("could not read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The simulation left physics (a body below the container floor, a bed whose packing or
    /// energy is not finite or out of range): the run failed, the input may be valid.
    #[error("{0}")]
    Unphysical(String),
    /// The GPU, its driver or NVRTC is missing or failed: not the user's input.
    #[error("CUDA backend: {0}")]
    Cuda(#[from] cuda::CudaError),
}

impl DemError {
    /// Whether the user can fix this by changing the input (exit code 2).
    /// (A scene file that cannot be read is the user's to fix, as a problem file is; results
    /// that cannot be written are `output::OutputError`s, not these.)
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, DemError::Unphysical(_) | DemError::Cuda(_))
    }
}

fn location(line: &Option<usize>, field: &Option<String>) -> String {
    let mut s = String::new();
    if let Some(line) = line {
        s.push_str(&format!(":{line}"));
    }
    if let Some(field) = field {
        s.push_str(&format!(": field `{field}`"));
    }
    s
}
