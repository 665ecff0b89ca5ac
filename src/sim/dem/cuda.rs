//! The DEM step on an NVIDIA GPU: CUDA C kernels (`kernels/*.cu`, embedded in the binary)
//! compiled by NVRTC at first use, launched through `cudarc`'s driver API. The bed stays on
//! the device across steps; only what is read back crosses the bus.
//!
//! Layers, outermost last:
//! - [`probe`] and [`locate_nvrtc`]: find the driver library, a device and NVRTC *before*
//!   `cudarc` touches them, since `cudarc` panics when it cannot load a library. Each failure
//!   is its own [`CudaError`] variant whose message says what is missing and how to get it.
//! - [`compile_kernels`]: one NVRTC compilation per process and architecture, cached.
//! - [`DeviceBed`]: the projected-Jacobi step: the grains of one or more scenes (each its
//!   own copy of the bed) in device arrays, and the launch sequence of one step.
//!   [`HertzDeviceBed`] (`cuda_hertz.rs`) is the Hertz-Mindlin step's. See
//!   `kernels/README.md` for the kernels, their launch shapes and the memory layout.
//! - [`CudaBackend`]: the [`Backend`]; the law in the step parameters picks the bed.
//!
//! `unsafe` is confined to this file and `cuda_hertz.rs` (its launch and `HmParams`): structs
//! handed to kernels by value, the NVRTC calls that fetch a CUBIN, and kernel launches (whose
//! argument types the compiler cannot check against the CUDA C signatures;
//! `kernel_structs_match_the_cuda_source` and `hertz_kernel_structs_match_the_cuda_source`
//! below check the struct layouts against the source instead).

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DeviceRepr,
    DriverError, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::Ptx;

/// The kernels' CUDA C: the shared declarations first, then one file per stage.
pub const KERNEL_SOURCES: [(&str, &str); 7] = [
    ("common.cuh", include_str!("kernels/common.cuh")),
    ("hash.cu", include_str!("kernels/hash.cu")),
    ("contacts.cu", include_str!("kernels/contacts.cu")),
    ("impulses.cu", include_str!("kernels/impulses.cu")),
    ("split.cu", include_str!("kernels/split.cu")),
    ("integrate.cu", include_str!("kernels/integrate.cu")),
    ("hertz.cu", include_str!("kernels/hertz.cu")),
];

/// The projected-Jacobi step's `__global__` functions, in launch order (the Hertz-Mindlin
/// step's are [`HERTZ_KERNEL_NAMES`]).
pub const KERNEL_NAMES: [&str; 18] = [
    "hash_clear",
    "predict_grains",
    "predict_bodies",
    "hash_insert",
    "find_pairs",
    "find_external",
    "sort_reverse",
    "gather_grains",
    "body_partial_sums",
    "body_totals",
    "solve_contacts",
    "deep_prepare",
    "body_deep_partial_sums",
    "body_deep_totals",
    "solve_deep",
    "gather_deep",
    "integrate_grains",
    "integrate_bodies",
];

/// The pinned wheel `.ci/nvrtc.sh` installs, named in error messages.
pub const NVRTC_WHEEL: &str = "nvidia-cuda-nvrtc-cu12==12.8.93";

/// Environment variable naming a folder that holds `libnvrtc.so*`.
pub const NVRTC_DIR_VAR: &str = "LOAM_NVRTC_DIR";

// Slot capacities per grain; the same numbers as the #defines in kernels/common.cuh.
const PAIR_SLOTS: usize = 16;
const REVERSE_SLOTS: usize = 16;
const EXTERNAL_SLOTS: usize = 8;
pub(super) const GATHER_THREADS: u32 = 256;
pub(super) const BODY_BLOCKS: u32 = 32;
const BODY_SUMS: usize = 8;
pub(super) const BLOCK: u32 = 256;

/// Everything that can go wrong on the way to, and on, a GPU.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CudaError {
    #[error(
        "no CUDA driver: could not load libcuda.so.1 ({detail}); install the NVIDIA driver \
         on a machine with an NVIDIA GPU, or use the CPU backend"
    )]
    NoDriver { detail: String },
    #[error(
        "the CUDA driver loaded but sees no GPU ({detail}); check `nvidia-smi` and \
         CUDA_VISIBLE_DEVICES, or use the CPU backend"
    )]
    NoDevice { detail: String },
    #[error(
        "no NVRTC library (libnvrtc.so*): searched {searched}. Install it with \
         `python3 -m pip install --target ~/.cache/loam/nvrtc {wheel}` (what .ci/nvrtc.sh \
         does), or point {var} at a folder holding libnvrtc.so*",
        searched = .searched.join(", "), wheel = NVRTC_WHEEL, var = NVRTC_DIR_VAR
    )]
    NoNvrtc { searched: Vec<String> },
    #[error(
        "NVRTC found at {path} but unusable: {detail}; loam needs a CUDA 12 NVRTC \
         ({wheel})", wheel = NVRTC_WHEEL
    )]
    NvrtcUnusable { path: String, detail: String },
    #[error("NVRTC could not compile the DEM kernels for {arch} (options {options:?}):\n{log}")]
    Compile {
        arch: String,
        options: Vec<String>,
        log: String,
    },
    #[error("CUDA driver call failed while {during}: {detail}")]
    Driver { during: String, detail: String },
    #[error(
        "a grain had more {list} contacts than its {capacity} slots (grains smaller than \
         their neighbours, or a bed packed far past contact); the step dropped contacts"
    )]
    ContactOverflow { list: &'static str, capacity: usize },
    #[error("invalid DEM setup for the CUDA backend: {0}")]
    Setup(String),
}

pub(super) fn driver_error(during: &str) -> impl FnOnce(DriverError) -> CudaError + '_ {
    move |e| CudaError::Driver {
        during: during.to_string(),
        detail: format!("{e:?}"),
    }
}

/// A loader error with the system's reason (dlerror), which libloading keeps as its source.
fn load_error_text(e: &libloading::Error) -> String {
    match std::error::Error::source(e) {
        Some(source) => source.to_string(),
        None => e.to_string(),
    }
}

/// What the probe found.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceInfo {
    pub ordinal: usize,
    pub name: String,
    /// (major, minor) compute capability.
    pub compute_capability: (i32, i32),
    pub devices: usize,
    pub total_memory: usize,
    /// The NVRTC library the kernels will be compiled with.
    pub nvrtc: PathBuf,
}

impl DeviceInfo {
    /// The NVRTC architecture flag value for this device, e.g. `sm_90`.
    pub fn arch(&self) -> String {
        format!(
            "sm_{}{}",
            self.compute_capability.0, self.compute_capability.1
        )
    }
}

/// Loads the driver library, counts devices and locates NVRTC, in that order, returning the
/// first thing missing as an error. Never panics, whatever the machine lacks.
pub fn probe() -> Result<DeviceInfo, CudaError> {
    let mut detail = String::new();
    let mut found = false;
    for name in ["libcuda.so.1", "libcuda.so"] {
        // SAFETY: loading the NVIDIA driver library runs its initialisers, which have no
        // preconditions; the handle is dropped at once (cudarc loads it again by name).
        match unsafe { libloading::Library::new(name) } {
            Ok(_) => {
                found = true;
                break;
            }
            Err(e) if detail.is_empty() => detail = load_error_text(&e),
            Err(_) => {}
        }
    }
    // SAFETY: a dlopen of the names cudarc would try; no symbol is called.
    if !found || !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(CudaError::NoDriver { detail });
    }
    // From here cudarc's loader finds the library, so its calls return errors, not panics.
    cudarc::driver::result::init().map_err(|e| CudaError::NoDevice {
        detail: format!("cuInit: {e:?}"),
    })?;
    let devices = CudaContext::device_count().map_err(|e| CudaError::NoDevice {
        detail: format!("cuDeviceGetCount: {e:?}"),
    })?;
    if devices < 1 {
        return Err(CudaError::NoDevice {
            detail: "cuDeviceGetCount reports 0 devices".into(),
        });
    }
    let nvrtc = locate_nvrtc()?;
    let ctx = CudaContext::new(0).map_err(driver_error("creating a context on device 0"))?;
    Ok(DeviceInfo {
        ordinal: 0,
        name: ctx
            .name()
            .map_err(driver_error("reading the device name"))?,
        compute_capability: ctx
            .compute_capability()
            .map_err(driver_error("reading the compute capability"))?,
        devices: devices as usize,
        total_memory: ctx
            .total_mem()
            .map_err(driver_error("reading the memory size"))?,
        nvrtc,
    })
}

/// Folders searched for `libnvrtc.so*`, in order: `$LOAM_NVRTC_DIR`; the cache `.ci/nvrtc.sh`
/// fills (`$XDG_CACHE_HOME` or `~/.cache`, then `loam/nvrtc/nvidia/cuda_nvrtc/lib`); the pip
/// wheel's layout in an active virtual or conda environment; `$CUDA_PATH/lib64` and
/// `/usr/local/cuda/lib64`. The loader's own search path (LD_LIBRARY_PATH, ldconfig) comes last.
pub fn nvrtc_search_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(dir) = std::env::var_os(NVRTC_DIR_VAR) {
        dirs.push(PathBuf::from(dir));
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")));
    if let Some(cache) = cache {
        dirs.push(cache.join("loam/nvrtc/nvidia/cuda_nvrtc/lib"));
    }
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(prefix) = std::env::var_os(var) {
            let lib = Path::new(&prefix).join("lib");
            if let Ok(entries) = std::fs::read_dir(&lib) {
                let mut pythons: Vec<PathBuf> = entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| {
                        p.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with("python3"))
                    })
                    .collect();
                pythons.sort();
                for python in pythons {
                    dirs.push(python.join("site-packages/nvidia/cuda_nvrtc/lib"));
                }
            }
        }
    }
    if let Some(cuda) = std::env::var_os("CUDA_PATH") {
        dirs.push(Path::new(&cuda).join("lib64"));
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    dirs
}

/// `libnvrtc.so` and `libnvrtc.so.<version>` in `dir` (not the builtins or `.alt` variants).
fn nvrtc_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n == "libnvrtc.so"
                            || n.strip_prefix("libnvrtc.so.")
                                .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Finds NVRTC, loads it by its full path and keeps it loaded for the process, so that
/// cudarc's later load by soname (`libnvrtc.so.12`) finds the same library: the dynamic
/// loader matches an already loaded object by its soname, which is how a library in a folder
/// outside the loader's search path reaches cudarc without LD_LIBRARY_PATH (read only at
/// process start). Returns the path; cached for the process.
pub fn locate_nvrtc() -> Result<PathBuf, CudaError> {
    static FOUND: OnceLock<Result<PathBuf, CudaError>> = OnceLock::new();
    static LOADED: OnceLock<libloading::Library> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let mut searched = Vec::new();
            let mut chosen: Option<(PathBuf, libloading::Library)> = None;
            let mut load_error = None;
            'dirs: for dir in nvrtc_search_dirs() {
                searched.push(dir.display().to_string());
                for file in nvrtc_files(&dir) {
                    // SAFETY: NVRTC's initialisers have no preconditions.
                    match unsafe { libloading::Library::new(&file) } {
                        Ok(lib) => {
                            chosen = Some((file, lib));
                            break 'dirs;
                        }
                        Err(e) => load_error = Some((file, load_error_text(&e))),
                    }
                }
            }
            if let Some((path, lib)) = chosen {
                let _ = LOADED.set(lib);
                // SAFETY: a dlopen of the names cudarc tries; no symbol is called.
                if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
                    return Err(CudaError::NvrtcUnusable {
                        path: path.display().to_string(),
                        detail: "its soname is none of those cudarc loads (libnvrtc.so, \
                                 libnvrtc.so.12, .11, …)"
                            .into(),
                    });
                }
                return Ok(path);
            }
            if let Some((path, detail)) = load_error {
                return Err(CudaError::NvrtcUnusable {
                    path: path.display().to_string(),
                    detail,
                });
            }
            searched.push("the dynamic loader's path (LD_LIBRARY_PATH, ldconfig)".into());
            // SAFETY: as above.
            if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
                return Ok(PathBuf::from("libnvrtc.so (from the loader's path)"));
            }
            Err(CudaError::NoNvrtc { searched })
        })
        .clone()
}

/// The NVRTC version (major, minor).
pub fn nvrtc_version() -> Result<(i32, i32), CudaError> {
    locate_nvrtc()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: NVRTC is loaded (locate_nvrtc succeeded); both pointers are valid for writes.
    let status = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    status.result().map_err(|e| CudaError::NvrtcUnusable {
        path: "libnvrtc".into(),
        detail: format!("nvrtcVersion: {e:?}"),
    })?;
    Ok((major, minor))
}

/// The whole kernel program as NVRTC sees it.
pub fn kernel_program() -> String {
    let mut src = String::new();
    for (name, text) in KERNEL_SOURCES {
        src.push_str(&format!("// ---- {name}\n#line 1 \"{name}\"\n"));
        src.push_str(text);
        src.push('\n');
    }
    src
}

/// Compiles `source` for a real architecture (`sm_90` …) into a CUBIN. A CUBIN, not PTX: a
/// driver older than the NVRTC that wrote the PTX refuses it, while a CUBIN only needs a driver
/// of the same major version.
pub fn compile_source(source: &str, arch: &str) -> Result<Vec<u8>, CudaError> {
    use cudarc::nvrtc::{result, sys};
    locate_nvrtc()?;
    let options = vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".to_string(),
        "--fmad=false".to_string(),
    ];
    let src =
        CString::new(source).map_err(|_| CudaError::Setup("kernel source holds a NUL".into()))?;
    let name = CString::new("loam_dem.cu").expect("no NUL");
    let prog = result::create_program(&src, Some(&name)).map_err(|e| CudaError::Compile {
        arch: arch.into(),
        options: options.clone(),
        log: format!("nvrtcCreateProgram: {e:?}"),
    })?;
    // SAFETY: `prog` was created above and is destroyed once, at the end of this function;
    // `src` and `name` outlive it. Buffers handed to NVRTC have the sizes NVRTC reported.
    let out = unsafe {
        let compiled = result::compile_program(prog, &options);
        let log = result::get_program_log(prog)
            .map(|raw| CStr::from_ptr(raw.as_ptr()).to_string_lossy().into_owned())
            .unwrap_or_default();
        match compiled {
            Err(e) => Err(CudaError::Compile {
                arch: arch.into(),
                options: options.clone(),
                log: format!("{e:?}\n{log}"),
            }),
            Ok(()) => {
                let mut size = 0usize;
                let status = sys::nvrtcGetCUBINSize(prog, &mut size);
                let mut cubin = vec![0u8; size];
                let status = status
                    .result()
                    .and_then(|_| sys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr().cast()).result());
                match status {
                    Ok(()) if size > 0 => Ok(cubin),
                    other => Err(CudaError::Compile {
                        arch: arch.into(),
                        options: options.clone(),
                        log: format!(
                            "no CUBIN ({other:?}, {size} bytes): was {arch} a real architecture (sm_XY)?\n{log}"
                        ),
                    }),
                }
            }
        }
    };
    // SAFETY: see above.
    let _ = unsafe { result::destroy_program(prog) };
    out
}

/// The DEM kernels compiled for `arch`, once per process and architecture.
pub fn compile_kernels(arch: &str) -> Result<Arc<Vec<u8>>, CudaError> {
    type Cache = Mutex<HashMap<String, Result<Arc<Vec<u8>>, CudaError>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    cache
        .entry(arch.to_string())
        .or_insert_with(|| compile_source(&kernel_program(), arch).map(Arc::new))
        .clone()
}

/// The container, as the kernels see it (the floor is z = 0 and the top is open).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DeviceContainer {
    Cylinder { radius: f64 },
    Box { half_x: f64, half_y: f64 },
}

/// A body's analytic shape, as the kernels see it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DeviceShape {
    Plane,
    Box { half_extents: [f64; 3] },
    Cylinder { radius: f64, half_height: f64 },
    Disc { radius: f64, thickness: f64 },
}

/// One body of one scene: shape, friction, inverse mass (0: kinematic) and state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeviceBody {
    pub shape: DeviceShape,
    pub friction: f64,
    pub inverse_mass: f64,
    pub position: [f64; 3],
    pub velocity: [f64; 3],
    pub external_force: [f64; 3],
}

/// Numbers of a step; see the backend docs for where each enters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeviceParams {
    pub time_step: f64,
    pub gravity: [f64; 3],
    pub iterations: usize,
    pub relaxation: f64,
    pub stabilisation: f64,
    pub friction: f64,
    pub wall_friction: f64,
    /// Speculative contact distance as a fraction of the largest grain radius.
    pub contact_margin: f64,
}

/// Grains of one scene, structure of arrays.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceGrains {
    pub position: Vec<[f64; 3]>,
    pub velocity: Vec<[f64; 3]>,
    pub radius: Vec<f64>,
    pub inverse_mass: Vec<f64>,
}

/// A body's state and the grains' action on it over the last step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DeviceBodyReadout {
    pub position: [f64; 3],
    pub velocity: [f64; 3],
    /// Σ −λ / Δt over the body's contacts.
    pub force: [f64; 3],
    /// About the body's origin.
    pub torque: [f64; 3],
    /// Contacts with a non-zero impulse.
    pub contacts: usize,
}

// ---- device-side argument structs (mirror kernels/common.cuh) ----

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct Params {
    grains_per_scene: i64,
    scenes: i64,
    bodies_per_scene: i64,
    hash_table_size: i64,
    container: i64,
    walls: i64,
    container_a: f64,
    container_b: f64,
    gravity_x: f64,
    gravity_y: f64,
    gravity_z: f64,
    dt: f64,
    friction: f64,
    wall_friction: f64,
    stabilisation: f64,
    relaxation: f64,
    max_radius: f64,
    margin_fraction: f64,
    overlap_slop: f64,
}

// SAFETY: #[repr(C)], all fields 8-byte plain numbers, field for field the CUDA `Params`.
unsafe impl DeviceRepr for Params {}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    Real,
    Int,
    Counter,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Count {
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
pub(super) struct Sizes {
    pub items: usize,
    pub hash_table: usize,
    pub other: usize,
}

/// The fields of `struct Grains` in kernels/common.cuh, in order.
const GRAIN_FIELDS: &[(&str, Kind, Count)] = {
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
const BODY_FIELDS: &[(&str, Kind, Count)] = {
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
const SWAPPED: [(&str, &str); 10] = [
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
pub(super) struct Pointers<const N: usize>(pub [u64; N]);

// SAFETY: #[repr(C)] array of 64-bit device addresses, the layout of a C struct of N pointers.
unsafe impl<const N: usize> DeviceRepr for Pointers<N> {}

const GRAIN_FIELD_COUNT: usize = 55;
const BODY_FIELD_COUNT: usize = 32;

/// Where each field lives: three arenas (f64, i32, u64) and an element offset per field.
pub(super) struct Arenas {
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

/// Loaded kernels of one context.
pub(super) struct Kernels {
    _module: Arc<CudaModule>,
    pub functions: HashMap<&'static str, CudaFunction>,
}

impl Kernels {
    /// Probes the machine (so that a machine without a GPU fails with the probe's reason
    /// before anything else), compiles (or reuses) the program for its GPU, and loads the
    /// kernels `names` into a new context whose one stream will do all the work.
    pub fn load(names: &[&'static str]) -> Result<(DeviceInfo, Arc<CudaStream>, Self), CudaError> {
        let info = probe()?;
        let image = compile_kernels(&info.arch())?;
        let ctx = CudaContext::new(info.ordinal).map_err(driver_error("creating a context"))?;
        // SAFETY: one stream does all the work, in order, so cudarc's cross-stream event
        // tracking is not needed; raw pointers handed to kernels are then plain addresses.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.default_stream();
        let module = ctx
            .load_module(Ptx::from_binary(image.as_ref().clone()))
            .map_err(driver_error("loading the compiled kernels"))?;
        let mut functions = HashMap::new();
        for &name in names {
            let f = module
                .load_function(name)
                .map_err(driver_error(&format!("finding kernel {name}")))?;
            functions.insert(name, f);
        }
        Ok((
            info,
            stream,
            Self {
                _module: module,
                functions,
            },
        ))
    }
}

/// One bed, replicated into `scenes` independent copies, on the device.
pub struct DeviceBed {
    stream: Arc<CudaStream>,
    kernels: Kernels,
    grains: Arenas,
    bodies: Arenas,
    grain_pointers: Vec<u64>,
    body_pointers: Vec<u64>,
    params: Params,
    iterations: usize,
    grains_per_scene: usize,
    bodies_per_scene: usize,
    scenes: usize,
    time_step: f64,
    /// The largest grain radius: the cell size and the contact margin scale with it.
    max_radius: f64,
    info: DeviceInfo,
}

impl DeviceBed {
    /// Probes the machine, compiles (or reuses) the kernels for its GPU and uploads
    /// `scenes` copies of the bed: grains in a container, with `bodies` (each scene gets its
    /// own copy of every body; `set_body` then drives them apart).
    pub fn new(
        grains: &DeviceGrains,
        container: DeviceContainer,
        bodies: &[DeviceBody],
        params: &DeviceParams,
        scenes: usize,
    ) -> Result<Self, CudaError> {
        let n = grains.position.len();
        if grains.velocity.len() != n || grains.radius.len() != n || grains.inverse_mass.len() != n
        {
            return Err(CudaError::Setup(format!(
                "grain arrays differ in length: {n} positions, {} velocities, {} radii, {} inverse masses",
                grains.velocity.len(),
                grains.radius.len(),
                grains.inverse_mass.len()
            )));
        }
        if n == 0 || scenes == 0 {
            return Err(CudaError::Setup(format!(
                "{n} grains in {scenes} scenes; at least one of each is needed"
            )));
        }
        let total = n.checked_mul(scenes).filter(|t| *t < i32::MAX as usize / 2);
        let Some(total) = total else {
            return Err(CudaError::Setup(format!(
                "{n} grains × {scenes} scenes exceeds the 2^30 grains the kernels index"
            )));
        };
        let (info, stream, kernels) = Kernels::load(&KERNEL_NAMES)?;
        let hash_table_size = (2 * total).next_power_of_two();
        let body_count = bodies.len() * scenes;
        let grain_arenas = Arenas::new(
            &stream,
            GRAIN_FIELDS,
            Sizes {
                items: total,
                hash_table: hash_table_size,
                other: 0,
            },
        )?;
        let body_arenas = Arenas::new(
            &stream,
            BODY_FIELDS,
            Sizes {
                items: body_count.max(1),
                ..Sizes::default()
            },
        )?;
        let mut bed = Self {
            stream,
            kernels,
            grain_pointers: Vec::new(),
            body_pointers: Vec::new(),
            grains: grain_arenas,
            bodies: body_arenas,
            params: Params::default(),
            iterations: 1,
            grains_per_scene: n,
            bodies_per_scene: bodies.len(),
            scenes,
            time_step: params.time_step,
            max_radius: grains.radius.iter().cloned().fold(0.0, f64::max),
            info,
        };
        bed.grain_pointers = bed.grains.pointers(&bed.stream);
        bed.body_pointers = bed.bodies.pointers(&bed.stream);
        bed.upload_grains(grains)?;
        bed.upload_bodies(bodies)?;
        let (kind, a, b, walls) = match container {
            DeviceContainer::Cylinder { radius } => (0, radius, 0.0, 2),
            DeviceContainer::Box { half_x, half_y } => (1, half_x, half_y, 5),
        };
        bed.params = Params {
            grains_per_scene: n as i64,
            scenes: scenes as i64,
            bodies_per_scene: bodies.len() as i64,
            hash_table_size: hash_table_size as i64,
            container: kind,
            walls,
            container_a: a,
            container_b: b,
            ..Params::default()
        };
        bed.set_params(params)?;
        Ok(bed)
    }

    /// What the probe found about the device in use.
    pub fn device(&self) -> &DeviceInfo {
        &self.info
    }

    pub fn scenes(&self) -> usize {
        self.scenes
    }

    pub fn grains_per_scene(&self) -> usize {
        self.grains_per_scene
    }

    pub fn bodies_per_scene(&self) -> usize {
        self.bodies_per_scene
    }

    /// Changes the step's numbers in place.
    pub fn set_params(&mut self, params: &DeviceParams) -> Result<(), CudaError> {
        let positive = |v: f64| v > 0.0 && v.is_finite();
        if !positive(params.time_step) || !positive(params.relaxation) || params.iterations == 0 {
            return Err(CudaError::Setup(format!(
                "time_step {} and relaxation {} must be positive and iterations ({}) at least 1",
                params.time_step, params.relaxation, params.iterations
            )));
        }
        let max_radius = self.max_radius;
        let margin = params.contact_margin;
        self.params.gravity_x = params.gravity[0];
        self.params.gravity_y = params.gravity[1];
        self.params.gravity_z = params.gravity[2];
        self.params.dt = params.time_step;
        self.params.friction = params.friction;
        self.params.wall_friction = params.wall_friction;
        self.params.stabilisation = params.stabilisation;
        self.params.relaxation = params.relaxation;
        self.params.max_radius = max_radius;
        self.params.margin_fraction = margin;
        self.params.overlap_slop = super::cpu::OVERLAP_SLOP * max_radius;
        self.iterations = params.iterations;
        self.time_step = params.time_step;
        Ok(())
    }

    fn upload_grains(&mut self, grains: &DeviceGrains) -> Result<(), CudaError> {
        let total = self.grains_per_scene * self.scenes;
        let replicate = |f: &dyn Fn(usize) -> f64| -> Vec<f64> {
            (0..total).map(|i| f(i % self.grains_per_scene)).collect()
        };
        let columns: [(&str, Vec<f64>); 8] = [
            ("x", replicate(&|i| grains.position[i][0])),
            ("y", replicate(&|i| grains.position[i][1])),
            ("z", replicate(&|i| grains.position[i][2])),
            ("vx", replicate(&|i| grains.velocity[i][0])),
            ("vy", replicate(&|i| grains.velocity[i][1])),
            ("vz", replicate(&|i| grains.velocity[i][2])),
            ("radius", replicate(&|i| grains.radius[i])),
            ("inv_mass", replicate(&|i| grains.inverse_mass[i])),
        ];
        for (name, data) in columns {
            let field = Arenas::index(GRAIN_FIELDS, name);
            self.grains.write_real(&self.stream, field, &data)?;
        }
        // no contacts from a previous step
        for name in [
            "prev_pair_count",
            "prev_ext_count",
            "pair_count",
            "ext_count",
        ] {
            let field = Arenas::index(GRAIN_FIELDS, name);
            self.grains
                .write_int(&self.stream, field, &vec![0; total])?;
        }
        Ok(())
    }

    fn upload_bodies(&mut self, bodies: &[DeviceBody]) -> Result<(), CudaError> {
        if bodies.is_empty() {
            return Ok(());
        }
        let all: Vec<DeviceBody> = (0..self.scenes)
            .flat_map(|_| bodies.iter().copied())
            .collect();
        let mut shape = Vec::new();
        let mut size = Vec::new();
        for b in &all {
            let (s, z) = match b.shape {
                DeviceShape::Plane => (0, [0.0; 3]),
                DeviceShape::Box { half_extents } => (1, half_extents),
                DeviceShape::Cylinder {
                    radius,
                    half_height,
                } => (2, [radius, half_height, 0.0]),
                DeviceShape::Disc { radius, thickness } => (3, [radius, 0.5 * thickness, 0.0]),
            };
            shape.push(s);
            size.extend_from_slice(&z);
        }
        let field = Arenas::index(BODY_FIELDS, "shape");
        self.bodies.write_int(&self.stream, field, &shape)?;
        let field = Arenas::index(BODY_FIELDS, "size");
        self.bodies.write_real(&self.stream, field, &size)?;
        let columns: [(&str, Vec<f64>); 2] = [
            ("friction", all.iter().map(|b| b.friction).collect()),
            ("inv_mass", all.iter().map(|b| b.inverse_mass).collect()),
        ];
        for (name, data) in columns {
            let field = Arenas::index(BODY_FIELDS, name);
            self.bodies.write_real(&self.stream, field, &data)?;
        }
        for (index, b) in all.iter().enumerate() {
            self.set_body(index, b.position, b.velocity, b.external_force)?;
        }
        Ok(())
    }

    /// Sets body `index` (scene × bodies_per_scene + k) position, velocity and external force.
    pub fn set_body(
        &mut self,
        index: usize,
        position: [f64; 3],
        velocity: [f64; 3],
        external_force: [f64; 3],
    ) -> Result<(), CudaError> {
        let count = self.bodies_per_scene * self.scenes;
        if index >= count {
            return Err(CudaError::Setup(format!(
                "body {index} does not exist; there are {count} (bodies per scene × scenes)"
            )));
        }
        let names = [
            "px", "py", "pz", "vx", "vy", "vz", "ext_fx", "ext_fy", "ext_fz",
        ];
        let values = [position, velocity, external_force].concat();
        for (name, value) in names.iter().zip(values) {
            let field = Arenas::index(BODY_FIELDS, name);
            self.bodies
                .write_real_at(&self.stream, field, index, &[value])?;
        }
        Ok(())
    }

    fn launch(
        &self,
        name: &str,
        config: LaunchConfig,
        with_grains: bool,
        with_bodies: bool,
        flag: Option<i32>,
    ) -> Result<(), CudaError> {
        let function = &self.kernels.functions[name];
        let grains = Pointers::<GRAIN_FIELD_COUNT>(
            self.grain_pointers
                .as_slice()
                .try_into()
                .expect("GRAIN_FIELD_COUNT matches GRAIN_FIELDS"),
        );
        let bodies = Pointers::<BODY_FIELD_COUNT>(
            self.body_pointers
                .as_slice()
                .try_into()
                .expect("BODY_FIELD_COUNT matches BODY_FIELDS"),
        );
        let mut builder = self.stream.launch_builder(function);
        builder.arg(&self.params);
        if with_grains {
            builder.arg(&grains);
        }
        if with_bodies {
            builder.arg(&bodies);
        }
        let flag_value = flag.unwrap_or(0);
        if flag.is_some() {
            builder.arg(&flag_value);
        }
        // SAFETY: the argument list matches the kernel's CUDA signature: (Params, [Grains],
        // [Bodies], [int]) by value, as each call site below states for its kernel; the struct
        // layouts are checked against the source by a test; every pointer in them addresses
        // an allocation of this bed sized for the counts in `params`.
        unsafe { builder.launch(config) }.map_err(driver_error(&format!("launching {name}")))?;
        Ok(())
    }

    fn grid(items: usize) -> LaunchConfig {
        LaunchConfig {
            grid_dim: ((items as u32).div_ceil(BLOCK).max(1), 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    fn body_sums(&self, update_velocity: bool) -> Result<(), CudaError> {
        let bodies = self.bodies_per_scene * self.scenes;
        let partial = LaunchConfig {
            grid_dim: (BODY_BLOCKS, bodies as u32, 1),
            block_dim: (GATHER_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        self.launch("body_partial_sums", partial, true, true, None)?;
        self.launch(
            "body_totals",
            Self::grid(bodies),
            false,
            true,
            Some(update_velocity as i32),
        )
    }

    /// A body's contacts overlapping beyond the slop and its pseudo-velocity (split.cu).
    fn body_deep_sums(&self) -> Result<(), CudaError> {
        let bodies = self.bodies_per_scene * self.scenes;
        let partial = LaunchConfig {
            grid_dim: (BODY_BLOCKS, bodies as u32, 1),
            block_dim: (GATHER_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        self.launch("body_deep_partial_sums", partial, true, true, None)?;
        self.launch("body_deep_totals", Self::grid(bodies), false, true, None)
    }

    /// Advances every scene by `steps` steps. Returns without waiting for the device; a
    /// read waits.
    pub fn step(&mut self, steps: usize) -> Result<(), CudaError> {
        let n = self.grains_per_scene * self.scenes;
        let bodies = self.bodies_per_scene * self.scenes;
        let per_grain = Self::grid(n);
        for _ in 0..steps {
            for (current, previous) in SWAPPED {
                let a = Arenas::index(GRAIN_FIELDS, current);
                let b = Arenas::index(GRAIN_FIELDS, previous);
                self.grain_pointers.swap(a, b);
            }
            self.launch("predict_grains", per_grain, true, false, None)?;
            if bodies > 0 {
                self.launch("predict_bodies", Self::grid(bodies), false, true, None)?;
            }
            self.launch(
                "hash_clear",
                Self::grid(self.params.hash_table_size as usize),
                true,
                false,
                None,
            )?;
            self.launch("hash_insert", per_grain, true, false, None)?;
            self.launch("find_pairs", per_grain, true, false, None)?;
            self.launch("find_external", per_grain, true, true, None)?;
            self.launch("sort_reverse", per_grain, true, false, None)?;
            self.launch("gather_grains", per_grain, true, false, None)?;
            if bodies > 0 {
                self.body_sums(true)?;
            }
            for _ in 0..self.iterations {
                self.launch("solve_contacts", per_grain, true, true, None)?;
                self.launch("gather_grains", per_grain, true, false, None)?;
                if bodies > 0 {
                    self.body_sums(true)?;
                }
            }
            // The split-impulse pass (split.cu), the CPU's correct_positions: its sweeps are
            // position_iterations(K) whatever the overlaps (an empty pass costs little).
            self.launch("deep_prepare", per_grain, true, false, None)?;
            if bodies > 0 {
                self.body_deep_sums()?;
            }
            for _ in 0..super::cpu::position_iterations(self.iterations) {
                self.launch("solve_deep", per_grain, true, true, None)?;
                self.launch("gather_deep", per_grain, true, false, None)?;
                if bodies > 0 {
                    self.body_deep_sums()?;
                }
            }
            self.launch("integrate_grains", per_grain, true, false, None)?;
            if bodies > 0 {
                self.launch("integrate_bodies", Self::grid(bodies), false, true, None)?;
                // the step's force and moment, about the moved origin, as the CPU backend
                self.body_sums(false)?;
            }
        }
        Ok(())
    }

    /// Waits for the device and fails if a contact list overflowed since the bed was made.
    pub fn check(&self) -> Result<(), CudaError> {
        let counters = self.counters()?;
        let bits = counters[0];
        for (bit, list, capacity) in [
            (1, "grain-grain", PAIR_SLOTS),
            (2, "partner", REVERSE_SLOTS),
            (4, "wall and body", EXTERNAL_SLOTS),
        ] {
            if bits & bit != 0 {
                return Err(CudaError::ContactOverflow { list, capacity });
            }
        }
        Ok(())
    }

    /// [overflow bits, contacts summed over all steps and scenes].
    fn counters(&self) -> Result<[u64; 2], CudaError> {
        let mut out = [0u64; 2];
        self.stream
            .memcpy_dtoh(&self.grains.counter.slice(0..2), &mut out)
            .map_err(driver_error("reading the step counters"))?;
        Ok(out)
    }

    /// Contacts summed over all steps and scenes so far.
    pub fn contacts_so_far(&self) -> Result<u64, CudaError> {
        Ok(self.counters()?[1])
    }

    /// The grains of scene `scene`.
    pub fn grains(&self, scene: usize) -> Result<DeviceGrains, CudaError> {
        self.check()?;
        if scene >= self.scenes {
            return Err(CudaError::Setup(format!(
                "scene {scene} does not exist; there are {}",
                self.scenes
            )));
        }
        let n = self.grains_per_scene;
        let read = |name: &str| -> Result<Vec<f64>, CudaError> {
            let field = Arenas::index(GRAIN_FIELDS, name);
            let all = self
                .grains
                .read_real(&self.stream, field, n * (scene + 1))?;
            Ok(all[n * scene..].to_vec())
        };
        let [x, y, z, vx, vy, vz, radius, inverse_mass] =
            ["x", "y", "z", "vx", "vy", "vz", "radius", "inv_mass"].map(read);
        let (x, y, z, vx, vy, vz) = (x?, y?, z?, vx?, vy?, vz?);
        Ok(DeviceGrains {
            position: (0..n).map(|i| [x[i], y[i], z[i]]).collect(),
            velocity: (0..n).map(|i| [vx[i], vy[i], vz[i]]).collect(),
            radius: radius?,
            inverse_mass: inverse_mass?,
        })
    }

    /// The external forces `set_body` last gave the bodies (scene-major).
    pub fn external_forces(&self) -> Result<Vec<[f64; 3]>, CudaError> {
        let count = self.bodies_per_scene * self.scenes;
        if count == 0 {
            return Ok(Vec::new());
        }
        let read = |name: &str| {
            self.bodies
                .read_real(&self.stream, Arenas::index(BODY_FIELDS, name), count)
        };
        let (x, y, z) = (read("ext_fx")?, read("ext_fy")?, read("ext_fz")?);
        Ok((0..count).map(|k| [x[k], y[k], z[k]]).collect())
    }

    /// Every body of every scene (scene-major), with the grains' force over the last step.
    pub fn bodies(&self) -> Result<Vec<DeviceBodyReadout>, CudaError> {
        self.check()?;
        let count = self.bodies_per_scene * self.scenes;
        if count == 0 {
            return Ok(Vec::new());
        }
        let read = |name: &str| -> Result<Vec<f64>, CudaError> {
            self.bodies
                .read_real(&self.stream, Arenas::index(BODY_FIELDS, name), count)
        };
        let columns = [
            "px",
            "py",
            "pz",
            "vx",
            "vy",
            "vz",
            "impulse_x",
            "impulse_y",
            "impulse_z",
            "moment_x",
            "moment_y",
            "moment_z",
            "touching",
        ]
        .map(read);
        let mut c = Vec::with_capacity(columns.len());
        for column in columns {
            c.push(column?);
        }
        let dt = self.time_step;
        Ok((0..count)
            .map(|k| DeviceBodyReadout {
                position: [c[0][k], c[1][k], c[2][k]],
                velocity: [c[3][k], c[4][k], c[5][k]],
                force: [c[6][k] / dt, c[7][k] / dt, c[8][k] / dt],
                torque: [c[9][k] / dt, c[10][k] / dt, c[11][k] / dt],
                contacts: c[12][k] as usize,
            })
            .collect())
    }
}

// ---- the Backend trait ----

pub use super::cuda_hertz::{HertzDeviceBed, HERTZ_KERNEL_NAMES};

use super::backend::{
    Backend, Body, BodyForce, BodyGeometry, BodyState, ContactLaw, Container, GrainState, Motion,
    StepParams, Timings,
};
use super::sdf::Shape;
use super::DemError;

/// The bed on the device: the step of its contact law.
enum Bed {
    Jacobi(Box<DeviceBed>),
    Hertz(Box<HertzDeviceBed>),
}

/// The CUDA implementation of [`Backend`]; the law in the step parameters picks the kernels
/// (Hertz-Mindlin: `kernels/hertz.cu`, the twin of the CPU's step; projected Jacobi: the
/// other kernel files). With `scenes` > 1 it holds that many copies of the uploaded bed,
/// stepped together in one launch per kernel: grains are then reported scene-major (scene
/// s's grain i at s × N + i) and body index s × bodies + k is body k of scene s, which
/// `set_body` drives independently.
pub struct CudaBackend {
    scenes: usize,
    bed: Option<Bed>,
    timings: Timings,
    contacts_at_reset: u64,
}

impl CudaBackend {
    /// A backend that replicates each uploaded bed into `scenes` copies (1 for one bed).
    pub fn new(scenes: usize) -> Self {
        Self {
            scenes: scenes.max(1),
            bed: None,
            timings: Timings::default(),
            contacts_at_reset: 0,
        }
    }

    /// The projected-Jacobi device bed, once uploaded.
    pub fn device_bed(&self) -> Option<&DeviceBed> {
        match &self.bed {
            Some(Bed::Jacobi(bed)) => Some(bed),
            _ => None,
        }
    }

    /// The Hertz-Mindlin device bed, once uploaded.
    pub fn hertz_bed(&self) -> Option<&HertzDeviceBed> {
        match &self.bed {
            Some(Bed::Hertz(bed)) => Some(bed),
            _ => None,
        }
    }

    fn bed(&self) -> Result<&Bed, DemError> {
        self.bed.as_ref().ok_or_else(no_bed)
    }

    fn bed_mut(&mut self) -> Result<&mut Bed, DemError> {
        self.bed.as_mut().ok_or_else(no_bed)
    }

    fn contacts_so_far(&self) -> Option<u64> {
        match self.bed.as_ref()? {
            Bed::Jacobi(bed) => bed.contacts_so_far().ok(),
            Bed::Hertz(bed) => bed.contacts_so_far().ok(),
        }
    }
}

fn no_bed() -> DemError {
    DemError::Invalid("the CUDA backend has no bed: call upload first".into())
}

fn dem_error(e: CudaError) -> DemError {
    DemError::Cuda(e)
}

fn device_params(p: &StepParams) -> DeviceParams {
    DeviceParams {
        time_step: p.time_step,
        gravity: p.gravity,
        iterations: p.iterations,
        relaxation: p.relaxation,
        stabilisation: p.stabilisation,
        friction: p.friction,
        wall_friction: p.wall_friction,
        contact_margin: p.contact_margin,
    }
}

/// The projected-Jacobi device bed of a backend-level bed.
fn jacobi_bed(
    grains: &GrainState,
    container: &Container,
    bodies: &[Body],
    params: &StepParams,
    scenes: usize,
) -> Result<DeviceBed, DemError> {
    let mut device_bodies = Vec::with_capacity(bodies.len());
    for (k, body) in bodies.iter().enumerate() {
        let shape = match &body.geometry {
            BodyGeometry::Shape(Shape::Plane) => DeviceShape::Plane,
            BodyGeometry::Shape(Shape::Box { half_extents }) => DeviceShape::Box {
                half_extents: *half_extents,
            },
            BodyGeometry::Shape(Shape::Cylinder {
                radius,
                half_height,
            }) => DeviceShape::Cylinder {
                radius: *radius,
                half_height: *half_height,
            },
            BodyGeometry::Shape(Shape::Disc { radius, thickness }) => DeviceShape::Disc {
                radius: *radius,
                thickness: *thickness,
            },
            BodyGeometry::Field(_) => {
                return Err(DemError::Invalid(format!(
                    "body {k}: the CUDA backend's projected-Jacobi kernels take analytic shapes \
                     (plane, box, cylinder, disc); a gridded mesh SDF needs the hertz_mindlin \
                     law or --backend dem-cpu"
                )))
            }
        };
        device_bodies.push(DeviceBody {
            shape,
            friction: body.friction,
            inverse_mass: match body.motion {
                Motion::Kinematic => 0.0,
                Motion::Dynamic | Motion::Rotating { .. } => 1.0 / body.mass,
            },
            position: body.state.position,
            velocity: body.state.velocity,
            external_force: body.state.external_force,
        });
    }
    let device_grains = DeviceGrains {
        position: grains.position.clone(),
        velocity: grains.velocity.clone(),
        radius: grains.radius.clone(),
        inverse_mass: grains.inverse_mass.clone(),
    };
    let device_container = match *container {
        Container::Cylinder { radius } => DeviceContainer::Cylinder { radius },
        Container::Box { half_x, half_y } => DeviceContainer::Box { half_x, half_y },
    };
    DeviceBed::new(
        &device_grains,
        device_container,
        &device_bodies,
        &device_params(params),
        scenes,
    )
    .map_err(dem_error)
}

impl Backend for CudaBackend {
    fn upload(
        &mut self,
        grains: &GrainState,
        container: &Container,
        bodies: &[Body],
        params: &StepParams,
    ) -> Result<(), DemError> {
        grains.check()?;
        params.check()?;
        self.bed = None;
        let bed = match params.law {
            ContactLaw::HertzMindlin(_) => {
                super::hertz::check_bodies(bodies)?;
                Bed::Hertz(Box::new(HertzDeviceBed::new(
                    grains,
                    container,
                    bodies,
                    params,
                    self.scenes,
                )?))
            }
            ContactLaw::ProjectedJacobi => {
                let bed = jacobi_bed(grains, container, bodies, params, self.scenes)?;
                Bed::Jacobi(Box::new(bed))
            }
        };
        self.contacts_at_reset = 0;
        self.bed = Some(bed);
        Ok(())
    }

    fn set_params(&mut self, params: &StepParams) -> Result<(), DemError> {
        params.check()?;
        match (self.bed_mut()?, params.law) {
            (Bed::Jacobi(bed), ContactLaw::ProjectedJacobi) => {
                bed.set_params(&device_params(params)).map_err(dem_error)
            }
            (Bed::Hertz(bed), ContactLaw::HertzMindlin(_)) => bed.set_params(params),
            _ => Err(DemError::Invalid(
                "set_params cannot change the contact law; upload the bed again".into(),
            )),
        }
    }

    fn set_body(&mut self, index: usize, state: BodyState) -> Result<(), DemError> {
        match self.bed_mut()? {
            Bed::Jacobi(bed) => {
                bed.set_body(index, state.position, state.velocity, state.external_force)
            }
            Bed::Hertz(bed) => bed.set_body(index, state),
        }
        .map_err(dem_error)
    }

    fn step(&mut self, steps: usize) -> Result<(), DemError> {
        let start = std::time::Instant::now();
        match self.bed_mut()? {
            Bed::Jacobi(bed) => {
                bed.step(steps).map_err(dem_error)?;
                bed.check().map_err(dem_error)?;
            }
            Bed::Hertz(bed) => bed.step(steps)?,
        }
        // the GPU runs the phases back to back; their split is not measured, all is "solver"
        self.timings.solver += start.elapsed().as_secs_f64();
        self.timings.steps += steps;
        Ok(())
    }

    fn grains(&self) -> Result<GrainState, DemError> {
        let mut out = GrainState::default();
        match self.bed()? {
            Bed::Jacobi(bed) => {
                for scene in 0..bed.scenes() {
                    let g = bed.grains(scene).map_err(dem_error)?;
                    out.position.extend(g.position);
                    out.velocity.extend(g.velocity);
                    out.radius.extend(g.radius);
                    out.inverse_mass.extend(g.inverse_mass);
                }
            }
            Bed::Hertz(bed) => {
                for scene in 0..bed.scenes() {
                    let g = bed.grains(scene).map_err(dem_error)?;
                    out.position.extend(g.position);
                    out.velocity.extend(g.velocity);
                    out.radius.extend(g.radius);
                    out.inverse_mass.extend(g.inverse_mass);
                    out.angular_velocity.extend(g.angular_velocity);
                }
            }
        }
        Ok(out)
    }

    fn bodies(&self) -> Result<Vec<BodyState>, DemError> {
        match self.bed()? {
            Bed::Jacobi(bed) => {
                let readout = bed.bodies().map_err(dem_error)?;
                // the external force is host data: read it back from what set_body last wrote
                let external = bed.external_forces().map_err(dem_error)?;
                Ok(readout
                    .iter()
                    .zip(external)
                    .map(|(b, f)| BodyState {
                        position: b.position,
                        velocity: b.velocity,
                        external_force: f,
                        ..BodyState::default()
                    })
                    .collect())
            }
            Bed::Hertz(bed) => bed.bodies().map_err(dem_error),
        }
    }

    fn body_forces(&self) -> Result<Vec<BodyForce>, DemError> {
        match self.bed()? {
            Bed::Jacobi(bed) => Ok(bed
                .bodies()
                .map_err(dem_error)?
                .iter()
                .map(|b| BodyForce {
                    force: b.force,
                    torque: b.torque,
                    contacts: b.contacts,
                })
                .collect()),
            Bed::Hertz(bed) => bed.body_forces().map_err(dem_error),
        }
    }

    fn timings(&self) -> Timings {
        let mut t = self.timings;
        if let Some(total) = self.contacts_so_far() {
            t.contacts = total.saturating_sub(self.contacts_at_reset) as usize;
        }
        t
    }

    fn reset_timings(&mut self) {
        self.timings = Timings::default();
        self.contacts_at_reset = self.contacts_so_far().unwrap_or(0);
    }

    fn name(&self) -> &'static str {
        "cuda"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Field names of `struct NAME { ... };` in the CUDA source, in order.
    fn struct_fields(source: &str, name: &str) -> Vec<String> {
        let start = source
            .find(&format!("struct {name} {{"))
            .unwrap_or_else(|| panic!("struct {name} in common.cuh"));
        let body = &source[start..];
        let body = &body[body.find('{').unwrap() + 1..body.find("};").unwrap()];
        let mut names = Vec::new();
        for line in body.lines() {
            let code = line.split("//").next().unwrap().trim();
            if code.is_empty() {
                continue;
            }
            let decl = code.trim_end_matches(';');
            // "real *x, *y, *z" or "i64 grains_per_scene" or "real gravity_x, gravity_y"
            let after_type = decl.split_once(' ').unwrap().1;
            for part in after_type.split(',') {
                names.push(part.trim().trim_start_matches('*').trim().to_string());
            }
        }
        names
    }

    #[test]
    fn kernel_structs_match_the_cuda_source() {
        let source = KERNEL_SOURCES[0].1;
        let grains: Vec<&str> = GRAIN_FIELDS.iter().map(|f| f.0).collect();
        assert_eq!(struct_fields(source, "Grains"), grains);
        assert_eq!(grains.len(), GRAIN_FIELD_COUNT);
        let bodies: Vec<&str> = BODY_FIELDS.iter().map(|f| f.0).collect();
        assert_eq!(struct_fields(source, "Bodies"), bodies);
        assert_eq!(bodies.len(), BODY_FIELD_COUNT);
        let params = struct_fields(source, "Params");
        assert_eq!(params.len() * 8, std::mem::size_of::<Params>());
        let debug = format!("{:?}", Params::default());
        let mut at = 0;
        for name in &params {
            let found = debug[at..]
                .find(&format!("{name}:"))
                .unwrap_or_else(|| panic!("Params field {name} in order"));
            at += found;
        }
        for (name, value) in [
            ("PAIR_SLOTS", PAIR_SLOTS),
            ("REVERSE_SLOTS", REVERSE_SLOTS),
            ("EXTERNAL_SLOTS", EXTERNAL_SLOTS),
            ("GATHER_THREADS", GATHER_THREADS as usize),
            ("BODY_BLOCKS", BODY_BLOCKS as usize),
            ("BODY_SUMS", BODY_SUMS),
        ] {
            assert!(
                source.contains(&format!("#define {name} {value}\n")),
                "#define {name} {value} in common.cuh"
            );
        }
        for name in KERNEL_NAMES.iter().chain(&HERTZ_KERNEL_NAMES) {
            assert!(
                kernel_program().contains(&format!("__global__ void {name}(")),
                "kernel {name} is defined"
            );
        }
    }

    #[test]
    fn hertz_kernel_structs_match_the_cuda_source() {
        use super::super::cuda_hertz::*;
        let source = KERNEL_SOURCES
            .iter()
            .find(|(name, _)| *name == "hertz.cu")
            .expect("hertz.cu is in the program")
            .1;
        for (name, table, count) in [
            ("HmGrains", HM_GRAIN_FIELDS, HM_GRAIN_FIELD_COUNT),
            ("HmBodies", HM_BODY_FIELDS, HM_BODY_FIELD_COUNT),
            ("BodyContacts", HM_CONTACT_FIELDS, HM_CONTACT_FIELD_COUNT),
            ("PairList", HM_PAIR_FIELDS, HM_PAIR_FIELD_COUNT),
        ] {
            let fields: Vec<&str> = table.iter().map(|f| f.0).collect();
            assert_eq!(struct_fields(source, name), fields, "struct {name}");
            assert_eq!(fields.len(), count, "{name}: field count");
        }
        let params = struct_fields(source, "HmParams");
        assert_eq!(params.len() * 8, std::mem::size_of::<HmParams>());
        let debug = format!("{:?}", HmParams::default());
        let mut at = 0;
        for name in &params {
            at += debug[at..]
                .find(&format!("{name}:"))
                .unwrap_or_else(|| panic!("HmParams field {name} in order"));
        }
        let program = kernel_program();
        for (name, value) in hertz_defines() {
            assert!(
                program.contains(&format!("#define {name} {value}\n")),
                "#define {name} {value} in the kernels"
            );
        }
    }
}
