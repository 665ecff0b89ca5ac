//! Result files: written whole or not at all (a temporary file, then a rename).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

pub mod run;

/// DejaVu Sans (assets/fonts/, with its licence), embedded once for every figure loam draws:
/// a machine without system fonts still gets labelled plots and renders.
pub static DEJAVU_SANS: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
#[cfg(feature = "planner")]
pub mod planar;
#[cfg(feature = "planner")]
mod solution;
#[cfg(feature = "planner")]
pub use solution::{trajectory_csv, write_run, PhaseSummary, SolutionFile, SolveRecord, Timing};

#[derive(Debug, thiserror::Error)]
#[error("could not write {}: {source}", path.display())]
pub struct OutputError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let err = |source| OutputError {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(err)?;
    }
    let tmp = path.with_extension(format!(
        "{}.tmp{}",
        path.extension().and_then(|e| e.to_str()).unwrap_or(""),
        std::process::id()
    ));
    let mut file = fs::File::create(&tmp).map_err(err)?;
    file.write_all(bytes).map_err(err)?;
    file.sync_all().ok();
    fs::rename(&tmp, path).map_err(err)
}
