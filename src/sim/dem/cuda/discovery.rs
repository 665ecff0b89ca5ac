//! [`probe`] and [`locate_nvrtc`]: the driver, a device and NVRTC; and [`CudaError`].

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cudarc::driver::{CudaContext, DriverError};

/// The pinned wheel `.ci/nvrtc.sh` installs, named in error messages.
pub const NVRTC_WHEEL: &str = "nvidia-cuda-nvrtc-cu12==12.8.93";

/// Environment variable naming a folder that holds `libnvrtc.so*`.
pub const NVRTC_DIR_VAR: &str = "LOAM_NVRTC_DIR";

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

pub(in crate::sim::dem) fn driver_error(
    during: &str,
) -> impl FnOnce(DriverError) -> CudaError + '_ {
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
