//! Result files: written whole or not at all (a temporary file, then a rename).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

pub mod dem;
pub mod folder;
pub mod identity;
pub mod run;

/// DejaVu Sans (assets/fonts/, with its licence), embedded once for every figure loam draws:
/// a machine without system fonts still gets labelled plots and renders.
pub static DEJAVU_SANS: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
#[cfg(feature = "planner")]
pub mod planar;
#[cfg(feature = "planner")]
mod provenance;
#[cfg(feature = "planner")]
#[cfg(feature = "planner")]
mod solution;
#[cfg(feature = "planner")]
#[cfg(feature = "planner")]
pub use provenance::{Provenance, WarmStart};
#[cfg(feature = "planner")]
pub use solution::{PhaseSummary, PlanWritten, SolveRecord, Timing};

#[derive(Debug, thiserror::Error)]
#[error("could not write {}: {source}", path.display())]
pub struct OutputError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Makes sure results can be written into `dir` (created if missing) before anything long is
/// computed: a probe file is written there and removed. An unwritable folder is an
/// [`OutputError`] (exit code 3), found in a moment rather than after the computation.
pub fn ensure_writable(dir: &Path) -> Result<(), OutputError> {
    let error = |source| OutputError {
        path: dir.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(error)?;
    let probe = temporary_path(&dir.join(".loam-write-probe"));
    std::fs::write(&probe, b"").map_err(error)?;
    std::fs::remove_file(&probe).map_err(error)
}

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    write_files_atomic(&[(path, bytes)])
}

/// The temporary file `path` is written to before it is renamed into place: in the same
/// folder (a rename within one file system), named after the file and this process.
pub fn temporary_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp{}", std::process::id()));
    path.with_file_name(name)
}

/// Writes every file to its temporary, then renames them into place in order: nothing is
/// replaced unless every file could be written, and no temporary is left behind on an error.
pub fn write_files_atomic(files: &[(&Path, &[u8])]) -> Result<(), OutputError> {
    let mut written: Vec<(PathBuf, &Path)> = Vec::new();
    let result = files.iter().try_for_each(|&(path, bytes)| {
        let tmp = temporary_path(path);
        write_new(&tmp, bytes, path)?;
        written.push((tmp, path));
        Ok(())
    });
    let result = result.and_then(|()| {
        written.iter().try_for_each(|(tmp, path)| {
            fs::rename(tmp, path).map_err(|source| OutputError {
                path: path.to_path_buf(),
                source,
            })
        })
    });
    if result.is_err() {
        for (tmp, _) in &written {
            fs::remove_file(tmp).ok();
        }
    }
    result
}

/// Writes `bytes` to the temporary `tmp` of `path` (creating the folder); an error names
/// `path` and leaves no `tmp` behind.
pub(crate) fn write_new(tmp: &Path, bytes: &[u8], path: &Path) -> Result<(), OutputError> {
    let err = |source| OutputError {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = tmp.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(err)?;
    }
    let mut file = fs::File::create(tmp).map_err(err)?;
    let written = file.write_all(bytes);
    if let Err(source) = written {
        drop(file);
        fs::remove_file(tmp).ok();
        return Err(err(source));
    }
    file.sync_all().ok();
    Ok(())
}

/// `field` as one CSV field: quoted when it holds a comma, a quote or a line break.
pub fn csv_field(field: &str) -> String {
    if field.contains([',', '"', '\n']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}
