//! The Hertz-Mindlin step on an NVIDIA GPU: the twin of [`super::hertz`] (the step) and
//! [`super::law`] (the contact law), in `kernels/hertz.cu`. The kernels repeat the CPU's
//! floating-point operations in the CPU's order, so a grain's force after a step agrees with
//! the CPU's to rounding; only the body sums (a tree on the GPU, rayon's split on the CPU)
//! add in another order.
//!
//! [`HertzDeviceBed`] holds one bed, replicated into `scenes` copies that step together (one
//! launch per kernel for all of them). The neighbour list is compressed rows (pair starts by a
//! prefix sum on the device), double buffered so that a rebuild carries each pair's spring
//! over; it grows when a build finds more pairs than it holds. Each step reads one number
//! back, the largest displacement since the last build, to decide on a rebuild as the CPU
//! does (and to stop a bed that exploded with the CPU's error); a rebuild reads the pair count.
//! `kernels/README.md` lists the kernels and the memory layout.
//!
//! Files: `upload.rs` (the bed's device arrays and what is written into them), `step.rs` (the
//! kernel launches), `readback.rs` (what is read back).

use std::sync::Arc;

use cudarc::driver::{CudaStream, DeviceRepr, LaunchConfig};

use super::cuda::{Arenas, Count, CudaError, DeviceInfo, Kernels, Kind, BODY_BLOCKS};
use super::law::HertzMindlin;

mod readback;
mod step;
mod upload;

/// The Hertz-Mindlin step's `__global__` functions, in launch order.
pub const HERTZ_KERNEL_NAMES: [&str; 16] = [
    "hm_kick_drift",
    "hm_body_kick_drift",
    "hm_displacement",
    "hm_hash_clear",
    "hm_hash_insert",
    "hm_count_pairs",
    "hm_scan_blocks",
    "hm_scan_sums",
    "hm_scan_add",
    "hm_fill_pairs",
    "hm_sort_partners",
    "hm_pair_forces",
    "hm_gather",
    "hm_body_partials",
    "hm_body_totals",
    "hm_kick",
];

// The same numbers as the #defines in kernels/hertz.cu.
const SCAN_THREADS: u32 = 256;
const HM_BODY_SUMS: usize = 7;
const MAX_WALLS: usize = 5;
const MOTION_KINEMATIC: i32 = 0;
const MOTION_DYNAMIC: i32 = 1;
const MOTION_ROTATING: i32 = 2;
// common.cuh's SHAPE_* and hertz.cu's SHAPE_GRID.
const SHAPE_PLANE: i32 = 0;
const SHAPE_BOX: i32 = 1;
const SHAPE_CYLINDER: i32 = 2;
const SHAPE_DISC: i32 = 3;
const SHAPE_GRID: i32 = 4;

/// The constants above with their names in the CUDA source, for the test that they agree.
#[cfg(test)]
pub(super) fn hertz_defines() -> [(&'static str, i64); 11] {
    [
        ("SCAN_THREADS", SCAN_THREADS as i64),
        ("HM_BODY_SUMS", HM_BODY_SUMS as i64),
        ("MAX_WALLS", MAX_WALLS as i64),
        ("MOTION_KINEMATIC", MOTION_KINEMATIC as i64),
        ("MOTION_DYNAMIC", MOTION_DYNAMIC as i64),
        ("MOTION_ROTATING", MOTION_ROTATING as i64),
        ("SHAPE_PLANE", SHAPE_PLANE as i64),
        ("SHAPE_BOX", SHAPE_BOX as i64),
        ("SHAPE_CYLINDER", SHAPE_CYLINDER as i64),
        ("SHAPE_DISC", SHAPE_DISC as i64),
        ("SHAPE_GRID", SHAPE_GRID as i64),
    ]
}

/// `struct HmParams` of kernels/hertz.cu.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct HmParams {
    grains_per_scene: i64,
    scenes: i64,
    bodies_per_scene: i64,
    hash_table_size: i64,
    container: i64,
    walls: i64,
    pairs: i64,
    container_a: f64,
    container_b: f64,
    gravity_x: f64,
    gravity_y: f64,
    gravity_z: f64,
    dt: f64,
    friction: f64,
    wall_friction: f64,
    cell: f64,
    skin: f64,
    e_star: f64,
    g_star: f64,
    damping: f64,
    rolling: f64,
}

// SAFETY: #[repr(C)], all fields 8-byte plain numbers, field for field the CUDA `HmParams`.
unsafe impl DeviceRepr for HmParams {}

/// The fields of `struct HmGrains` in kernels/hertz.cu, in order.
pub(super) const HM_GRAIN_FIELDS: &[(&str, Kind, Count)] = {
    use Count::*;
    use Kind::*;
    &[
        ("x", Real, Each(1)),
        ("y", Real, Each(1)),
        ("z", Real, Each(1)),
        ("vx", Real, Each(1)),
        ("vy", Real, Each(1)),
        ("vz", Real, Each(1)),
        ("wx", Real, Each(1)),
        ("wy", Real, Each(1)),
        ("wz", Real, Each(1)),
        ("pvx", Real, Each(1)),
        ("pvy", Real, Each(1)),
        ("pvz", Real, Each(1)),
        ("pwx", Real, Each(1)),
        ("pwy", Real, Each(1)),
        ("pwz", Real, Each(1)),
        ("fx", Real, Each(1)),
        ("fy", Real, Each(1)),
        ("fz", Real, Each(1)),
        ("tx", Real, Each(1)),
        ("ty", Real, Each(1)),
        ("tz", Real, Each(1)),
        ("rx", Real, Each(1)),
        ("ry", Real, Each(1)),
        ("rz", Real, Each(1)),
        ("radius", Real, Each(1)),
        ("inv_mass", Real, Each(1)),
        ("mass", Real, Each(1)),
        ("inv_inertia", Real, Each(1)),
        ("wall_sx", Real, Each(MAX_WALLS)),
        ("wall_sy", Real, Each(MAX_WALLS)),
        ("wall_sz", Real, Each(MAX_WALLS)),
        ("cell", Int, Each(3)),
        ("next", Int, Each(1)),
        ("table", Int, HashTable),
        ("partner_fill", Int, Each(1)),
        ("key", Counter, Each(1)),
        ("pair_start", Counter, OnePast),
        ("old_pair_start", Counter, OnePast),
        ("partner_start", Counter, OnePast),
        ("scan_sums", Counter, OnePast),
        ("counters", Counter, Fixed(2)),
    ]
};

/// The fields of `struct HmBodies` in kernels/hertz.cu, in order.
pub(super) const HM_BODY_FIELDS: &[(&str, Kind, Count)] = {
    use Count::*;
    use Kind::*;
    &[
        ("motion", Int, Each(1)),
        ("shape", Int, Each(1)),
        ("size", Real, Each(3)),
        ("mass", Real, Each(1)),
        ("inertia", Real, Each(3)),
        ("friction", Real, Each(1)),
        ("reach", Real, Each(1)),
        ("px", Real, Each(1)),
        ("py", Real, Each(1)),
        ("pz", Real, Each(1)),
        ("vx", Real, Each(1)),
        ("vy", Real, Each(1)),
        ("vz", Real, Each(1)),
        ("qw", Real, Each(1)),
        ("qx", Real, Each(1)),
        ("qy", Real, Each(1)),
        ("qz", Real, Each(1)),
        ("ox", Real, Each(1)),
        ("oy", Real, Each(1)),
        ("oz", Real, Each(1)),
        ("efx", Real, Each(1)),
        ("efy", Real, Each(1)),
        ("efz", Real, Each(1)),
        ("etx", Real, Each(1)),
        ("ety", Real, Each(1)),
        ("etz", Real, Each(1)),
        ("pvx", Real, Each(1)),
        ("pvy", Real, Each(1)),
        ("pvz", Real, Each(1)),
        ("pox", Real, Each(1)),
        ("poy", Real, Each(1)),
        ("poz", Real, Each(1)),
        ("fx", Real, Each(1)),
        ("fy", Real, Each(1)),
        ("fz", Real, Each(1)),
        ("tx", Real, Each(1)),
        ("ty", Real, Each(1)),
        ("tz", Real, Each(1)),
        ("contacts", Real, Each(1)),
        ("partial", Real, Each(BODY_BLOCKS as usize * HM_BODY_SUMS)),
        ("grid_origin", Real, Each(3)),
        ("grid_spacing", Real, Each(1)),
        ("grid_dims", Int, Each(3)),
        ("grid_offset", Counter, Each(1)),
        ("grid_values", Real, Other),
    ]
};

/// The fields of `struct BodyContacts` in kernels/hertz.cu: one per body and grain.
pub(super) const HM_CONTACT_FIELDS: &[(&str, Kind, Count)] = {
    use Count::*;
    use Kind::*;
    &[
        ("sx", Real, Each(1)),
        ("sy", Real, Each(1)),
        ("sz", Real, Each(1)),
        ("fx", Real, Each(1)),
        ("fy", Real, Each(1)),
        ("fz", Real, Each(1)),
        ("tx", Real, Each(1)),
        ("ty", Real, Each(1)),
        ("tz", Real, Each(1)),
        ("touching", Int, Each(1)),
    ]
};

/// The fields of `struct PairList` in kernels/hertz.cu: one per pair of the list's capacity.
pub(super) const HM_PAIR_FIELDS: &[(&str, Kind, Count)] = {
    use Count::*;
    use Kind::*;
    &[
        ("a", Int, Each(1)),
        ("b", Int, Each(1)),
        ("sx", Real, Each(1)),
        ("sy", Real, Each(1)),
        ("sz", Real, Each(1)),
        ("fx", Real, Each(1)),
        ("fy", Real, Each(1)),
        ("fz", Real, Each(1)),
        ("tax", Real, Each(1)),
        ("tay", Real, Each(1)),
        ("taz", Real, Each(1)),
        ("tbx", Real, Each(1)),
        ("tby", Real, Each(1)),
        ("tbz", Real, Each(1)),
        ("partner", Counter, Each(1)),
    ]
};

pub(super) const HM_GRAIN_FIELD_COUNT: usize = 41;
pub(super) const HM_BODY_FIELD_COUNT: usize = 45;
pub(super) const HM_CONTACT_FIELD_COUNT: usize = 10;
pub(super) const HM_PAIR_FIELD_COUNT: usize = 15;

/// A neighbour list on the device and the pairs it has room for.
struct PairBuffers {
    arenas: Arenas,
    capacity: usize,
}

/// One Hertz-Mindlin bed, replicated into `scenes` independent copies, on the device.
pub struct HertzDeviceBed {
    stream: Arc<CudaStream>,
    kernels: Kernels,
    info: DeviceInfo,
    grains: Arenas,
    bodies: Arenas,
    contacts: Arenas,
    /// The current neighbour list and the one of the build before.
    list: PairBuffers,
    old: PairBuffers,
    params: HmParams,
    /// The material whose constants `params` holds.
    law: Option<HertzMindlin>,
    grains_per_scene: usize,
    bodies_per_scene: usize,
    scenes: usize,
    builds: usize,
}

fn per_item(items: usize, threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((items as u32).div_ceil(threads).max(1), 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Columns of equal length, read back, as one array per row.
fn rows<const K: usize>(
    columns: [Result<Vec<f64>, CudaError>; K],
) -> Result<Vec<[f64; K]>, CudaError> {
    let mut read = Vec::with_capacity(K);
    for column in columns {
        read.push(column?);
    }
    let len = read.first().map_or(0, Vec::len);
    Ok((0..len)
        .map(|i| std::array::from_fn(|k| read[k][i]))
        .collect())
}
