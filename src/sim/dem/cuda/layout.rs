//! Device memory: structs handed to kernels by value, the field tables and their arenas.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceRepr};

use super::discovery::{driver_error, CudaError};

// Slot capacities per grain; the same numbers as the #defines in kernels/common.cuh.
pub(super) const PAIR_SLOTS: usize = 16;
pub(super) const REVERSE_SLOTS: usize = 16;
pub(super) const EXTERNAL_SLOTS: usize = 8;
pub(in crate::sim::dem) const GATHER_THREADS: u32 = 256;
pub(in crate::sim::dem) const BODY_BLOCKS: u32 = 32;
pub(super) const BODY_SUMS: usize = 8;
pub(in crate::sim::dem) const BLOCK: u32 = 256;

// ---- device-side argument structs (mirror kernels/common.cuh) ----

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Params {
    pub(super) grains_per_scene: i64,
    pub(super) scenes: i64,
    pub(super) bodies_per_scene: i64,
    pub(super) hash_table_size: i64,
    pub(super) container: i64,
    pub(super) walls: i64,
    pub(super) container_a: f64,
    pub(super) container_b: f64,
    pub(super) gravity_x: f64,
    pub(super) gravity_y: f64,
    pub(super) gravity_z: f64,
    pub(super) dt: f64,
    pub(super) friction: f64,
    pub(super) wall_friction: f64,
    pub(super) stabilisation: f64,
    pub(super) relaxation: f64,
    pub(super) max_radius: f64,
    pub(super) margin_fraction: f64,
    pub(super) overlap_slop: f64,
}

// SAFETY: #[repr(C)], all fields 8-byte plain numbers, field for field the CUDA `Params`.
unsafe impl DeviceRepr for Params {}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(in crate::sim::dem) enum Kind {
    Real,
    Int,
    Counter,
}

#[derive(Clone, Copy, Debug)]
pub(in crate::sim::dem) enum Count {
    /// per item (grain, body, pair …), times this factor
    Each(usize),
    /// one per item and one more: the starts of a prefix sum and its total
    OnePast,
    HashTable,
    Fixed(usize),
    /// [`Sizes::other`] elements
    Other,
}

/// What the [`Count`]s of a field table count.
#[derive(Clone, Copy, Debug, Default)]
pub(in crate::sim::dem) struct Sizes {
    pub items: usize,
    pub hash_table: usize,
    pub other: usize,
}

/// The fields of `struct Grains` in kernels/common.cuh, in order.
pub(super) const GRAIN_FIELDS: &[(&str, Kind, Count)] = {
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
        ("fx", Real, Each(1)),
        ("fy", Real, Each(1)),
        ("fz", Real, Each(1)),
        ("radius", Real, Each(1)),
        ("inv_mass", Real, Each(1)),
        ("cell", Int, Each(3)),
        ("next", Int, Each(1)),
        ("table", Int, HashTable),
        ("degree", Int, Each(1)),
        ("pair_count", Int, Each(1)),
        ("pair_partner", Int, Each(PAIR_SLOTS)),
        ("pair_nx", Real, Each(PAIR_SLOTS)),
        ("pair_ny", Real, Each(PAIR_SLOTS)),
        ("pair_nz", Real, Each(PAIR_SLOTS)),
        ("pair_psi", Real, Each(PAIR_SLOTS)),
        ("pair_lx", Real, Each(PAIR_SLOTS)),
        ("pair_ly", Real, Each(PAIR_SLOTS)),
        ("pair_lz", Real, Each(PAIR_SLOTS)),
        ("prev_pair_count", Int, Each(1)),
        ("prev_pair_partner", Int, Each(PAIR_SLOTS)),
        ("prev_pair_lx", Real, Each(PAIR_SLOTS)),
        ("prev_pair_ly", Real, Each(PAIR_SLOTS)),
        ("prev_pair_lz", Real, Each(PAIR_SLOTS)),
        ("reverse_count", Int, Each(1)),
        ("reverse_slot", Int, Each(REVERSE_SLOTS)),
        ("ext_count", Int, Each(1)),
        ("ext_key", Int, Each(EXTERNAL_SLOTS)),
        ("ext_nx", Real, Each(EXTERNAL_SLOTS)),
        ("ext_ny", Real, Each(EXTERNAL_SLOTS)),
        ("ext_nz", Real, Each(EXTERNAL_SLOTS)),
        ("ext_psi", Real, Each(EXTERNAL_SLOTS)),
        ("ext_lx", Real, Each(EXTERNAL_SLOTS)),
        ("ext_ly", Real, Each(EXTERNAL_SLOTS)),
        ("ext_lz", Real, Each(EXTERNAL_SLOTS)),
        ("prev_ext_count", Int, Each(1)),
        ("prev_ext_key", Int, Each(EXTERNAL_SLOTS)),
        ("prev_ext_lx", Real, Each(EXTERNAL_SLOTS)),
        ("prev_ext_ly", Real, Each(EXTERNAL_SLOTS)),
        ("prev_ext_lz", Real, Each(EXTERNAL_SLOTS)),
        ("deep_degree", Int, Each(1)),
        ("qx", Real, Each(1)),
        ("qy", Real, Each(1)),
        ("qz", Real, Each(1)),
        ("pair_k", Real, Each(PAIR_SLOTS)),
        ("ext_k", Real, Each(EXTERNAL_SLOTS)),
        ("counters", Counter, Fixed(3)),
    ]
};

/// The fields of `struct Bodies` in kernels/common.cuh, in order.
pub(super) const BODY_FIELDS: &[(&str, Kind, Count)] = {
    use Count::*;
    use Kind::*;
    &[
        ("shape", Int, Each(1)),
        ("size", Real, Each(3)),
        ("friction", Real, Each(1)),
        ("px", Real, Each(1)),
        ("py", Real, Each(1)),
        ("pz", Real, Each(1)),
        ("vx", Real, Each(1)),
        ("vy", Real, Each(1)),
        ("vz", Real, Each(1)),
        ("wx", Real, Each(1)),
        ("wy", Real, Each(1)),
        ("wz", Real, Each(1)),
        ("fx", Real, Each(1)),
        ("fy", Real, Each(1)),
        ("fz", Real, Each(1)),
        ("ext_fx", Real, Each(1)),
        ("ext_fy", Real, Each(1)),
        ("ext_fz", Real, Each(1)),
        ("inv_mass", Real, Each(1)),
        ("degree", Real, Each(1)),
        ("partial", Real, Each(BODY_BLOCKS as usize * BODY_SUMS)),
        ("impulse_x", Real, Each(1)),
        ("impulse_y", Real, Each(1)),
        ("impulse_z", Real, Each(1)),
        ("moment_x", Real, Each(1)),
        ("moment_y", Real, Each(1)),
        ("moment_z", Real, Each(1)),
        ("touching", Real, Each(1)),
        ("qx", Real, Each(1)),
        ("qy", Real, Each(1)),
        ("qz", Real, Each(1)),
        ("deep_degree", Real, Each(1)),
    ]
};

/// The warm-start double buffers: (current, previous) field pairs swapped every step.
pub(super) const SWAPPED: [(&str, &str); 10] = [
    ("pair_count", "prev_pair_count"),
    ("pair_partner", "prev_pair_partner"),
    ("pair_lx", "prev_pair_lx"),
    ("pair_ly", "prev_pair_ly"),
    ("pair_lz", "prev_pair_lz"),
    ("ext_count", "prev_ext_count"),
    ("ext_key", "prev_ext_key"),
    ("ext_lx", "prev_ext_lx"),
    ("ext_ly", "prev_ext_ly"),
    ("ext_lz", "prev_ext_lz"),
];

/// Device pointers of a struct whose every field is a pointer: `N` u64 in field order.
#[repr(C)]
#[derive(Clone, Copy)]
pub(in crate::sim::dem) struct Pointers<const N: usize>(pub [u64; N]);

// SAFETY: #[repr(C)] array of 64-bit device addresses, the layout of a C struct of N pointers.
unsafe impl<const N: usize> DeviceRepr for Pointers<N> {}

pub(super) const GRAIN_FIELD_COUNT: usize = 55;
pub(super) const BODY_FIELD_COUNT: usize = 32;

/// Where each field lives: three arenas (f64, i32, u64) and an element offset per field.
pub(in crate::sim::dem) struct Arenas {
    pub real: CudaSlice<f64>,
    pub int: CudaSlice<i32>,
    pub counter: CudaSlice<u64>,
    /// (kind, offset, length) per field, in field order.
    pub fields: Vec<(Kind, usize, usize)>,
}

impl Arenas {
    pub fn new(
        stream: &Arc<CudaStream>,
        table: &[(&str, Kind, Count)],
        sizes: Sizes,
    ) -> Result<Self, CudaError> {
        let mut next = [0usize; 3];
        let mut fields = Vec::with_capacity(table.len());
        for &(_, kind, count) in table {
            let len = match count {
                Count::Each(k) => k * sizes.items,
                Count::OnePast => sizes.items + 1,
                Count::HashTable => sizes.hash_table,
                Count::Fixed(k) => k,
                Count::Other => sizes.other,
            };
            let slot = &mut next[kind as usize];
            fields.push((kind, *slot, len));
            // keep every field 256-byte aligned for coalesced access
            *slot += len.div_ceil(32) * 32;
        }
        let alloc = "allocating the bed's device arrays";
        Ok(Self {
            real: stream
                .alloc_zeros::<f64>(next[0].max(1))
                .map_err(driver_error(alloc))?,
            int: stream
                .alloc_zeros::<i32>(next[1].max(1))
                .map_err(driver_error(alloc))?,
            counter: stream
                .alloc_zeros::<u64>(next[2].max(1))
                .map_err(driver_error(alloc))?,
            fields,
        })
    }

    pub fn pointers(&self, stream: &CudaStream) -> Vec<u64> {
        let (real, _r) = self.real.device_ptr(stream);
        let (int, _i) = self.int.device_ptr(stream);
        let (counter, _c) = self.counter.device_ptr(stream);
        self.fields
            .iter()
            .map(|&(kind, offset, _)| match kind {
                Kind::Real => real + 8 * offset as u64,
                Kind::Int => int + 4 * offset as u64,
                Kind::Counter => counter + 8 * offset as u64,
            })
            .collect()
    }

    pub fn index(table: &[(&str, Kind, Count)], name: &str) -> usize {
        table
            .iter()
            .position(|f| f.0 == name)
            .unwrap_or_else(|| unreachable!("field {name} is in the table"))
    }

    /// (offset, length) of field `field`.
    fn span(&self, field: usize) -> (usize, usize) {
        let (_, offset, len) = self.fields[field];
        (offset, len)
    }

    pub fn write_real(
        &mut self,
        stream: &Arc<CudaStream>,
        field: usize,
        data: &[f64],
    ) -> Result<(), CudaError> {
        self.write_real_at(stream, field, 0, data)
    }

    /// Writes `data` into field `field` from element `start` on.
    pub fn write_real_at(
        &mut self,
        stream: &Arc<CudaStream>,
        field: usize,
        start: usize,
        data: &[f64],
    ) -> Result<(), CudaError> {
        let span = self.span(field);
        copy_in(stream, &mut self.real, span, start, data)
    }

    pub fn write_int(
        &mut self,
        stream: &Arc<CudaStream>,
        field: usize,
        data: &[i32],
    ) -> Result<(), CudaError> {
        let span = self.span(field);
        copy_in(stream, &mut self.int, span, 0, data)
    }

    /// Writes `data` into the u64 field `field` from element `start` on.
    pub fn write_counter_at(
        &mut self,
        stream: &Arc<CudaStream>,
        field: usize,
        start: usize,
        data: &[u64],
    ) -> Result<(), CudaError> {
        let span = self.span(field);
        copy_in(stream, &mut self.counter, span, start, data)
    }

    pub fn read_real(
        &self,
        stream: &Arc<CudaStream>,
        field: usize,
        len: usize,
    ) -> Result<Vec<f64>, CudaError> {
        self.read_real_at(stream, field, 0, len)
    }

    /// Elements `start..start + len` of field `field` (waits for the device).
    pub fn read_real_at(
        &self,
        stream: &Arc<CudaStream>,
        field: usize,
        start: usize,
        len: usize,
    ) -> Result<Vec<f64>, CudaError> {
        copy_out(stream, &self.real, self.span(field), start, len)
    }

    /// Element `index` of the u64 field `field` (waits for the device).
    pub fn read_counter_at(
        &self,
        stream: &Arc<CudaStream>,
        field: usize,
        index: usize,
    ) -> Result<u64, CudaError> {
        Ok(copy_out(stream, &self.counter, self.span(field), index, 1)?[0])
    }
}

/// Copies `data` into elements `start..` of the field at `(offset, len)` of `arena`.
fn copy_in<T: DeviceRepr>(
    stream: &Arc<CudaStream>,
    arena: &mut CudaSlice<T>,
    (offset, len): (usize, usize),
    start: usize,
    data: &[T],
) -> Result<(), CudaError> {
    assert!(
        start + data.len() <= len,
        "host array longer than its device field"
    );
    let mut view = arena.slice_mut(offset + start..offset + start + data.len());
    stream
        .memcpy_htod(data, &mut view)
        .map_err(driver_error("copying to the device"))
}

/// Elements `start..start + count` of the field at `(offset, len)` of `arena`.
fn copy_out<T: DeviceRepr + Default + Clone>(
    stream: &Arc<CudaStream>,
    arena: &CudaSlice<T>,
    (offset, len): (usize, usize),
    start: usize,
    count: usize,
) -> Result<Vec<T>, CudaError> {
    assert!(start + count <= len, "read past the end of a device field");
    let mut out = vec![T::default(); count];
    stream
        .memcpy_dtoh(
            &arena.slice(offset + start..offset + start + count),
            &mut out,
        )
        .map_err(driver_error("copying from the device"))?;
    Ok(out)
}
