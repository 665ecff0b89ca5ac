//! The kernels' CUDA C, their NVRTC compilation (cached) and loading them into a context.

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream};
use cudarc::nvrtc::Ptx;

use super::discovery::{driver_error, locate_nvrtc, probe, CudaError, DeviceInfo};

/// The kernels' CUDA C: the shared declarations first, then one file per stage.
pub const KERNEL_SOURCES: [(&str, &str); 7] = [
    ("common.cuh", include_str!("../kernels/common.cuh")),
    ("hash.cu", include_str!("../kernels/hash.cu")),
    ("contacts.cu", include_str!("../kernels/contacts.cu")),
    ("impulses.cu", include_str!("../kernels/impulses.cu")),
    ("split.cu", include_str!("../kernels/split.cu")),
    ("integrate.cu", include_str!("../kernels/integrate.cu")),
    ("hertz.cu", include_str!("../kernels/hertz.cu")),
];

/// The projected-Jacobi step's `__global__` functions, in launch order (the Hertz-Mindlin
/// step's are [`HERTZ_KERNEL_NAMES`](super::HERTZ_KERNEL_NAMES)).
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

/// Loaded kernels of one context.
pub(in crate::sim::dem) struct Kernels {
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
