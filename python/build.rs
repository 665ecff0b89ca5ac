//! Gives the extension module an rpath to the CasADi and IPOPT that loam links.
//!
//! loam's build.rs links `libcasadi` and `libipopt` with `-L DIR -l...`, which reach this
//! cdylib's link through the loam library, and sets `-Wl,-rpath,DIR` for loam's own binary,
//! which does not: cargo passes a package's `rustc-link-arg` to that package's targets only.
//! Without an rpath, `import loam` fails with "libcasadi.so: cannot open shared object file".
//!
//! DIR is found as loam's build.rs finds it (ARCHITECTURE.md, "Provisioning CasADi and
//! IPOPT"); rather than repeat its choice, every place it may choose goes into the rpath in its
//! order, and the loader takes the first that holds the libraries: `LOAM_CASADI_DIR`, a
//! `casadi` Python package importable by `python3`, the per-user cache. `loam` checks at import
//! that the libraries loaded are the ones loam was linked against (`loam.casadi_dir()`).

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=LOAM_CASADI_DIR");
    println!("cargo:rerun-if-env-changed=XDG_CACHE_HOME");
    println!("cargo:rerun-if-env-changed=HOME");
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(dir) = env::var_os("LOAM_CASADI_DIR") {
        dirs.push(dir.into());
    }
    if let Some(dir) = python_casadi() {
        dirs.push(dir);
    }
    let cache = match env::var_os("XDG_CACHE_HOME").filter(|x| !x.is_empty()) {
        Some(xdg) => PathBuf::from(xdg),
        None => PathBuf::from(env::var_os("HOME").unwrap_or_else(|| "/tmp".into())).join(".cache"),
    };
    dirs.push(cache.join("loam/casadi-3.8.2/casadi"));
    for dir in dirs {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-rpath,{}", dir.display());
    }
}

/// The folder of a `casadi` package importable by `python3`, where loam's build.rs takes it:
/// the pinned version, with the libraries and headers.
fn python_casadi() -> Option<PathBuf> {
    let output = Command::new("python3")
        .args([
            "-c",
            "import casadi, os; print(casadi.__version__); print(os.path.dirname(casadi.__file__))",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let text = String::from_utf8(output.stdout).ok()?;
    let mut lines = text.lines();
    let (version, dir) = (lines.next()?.trim(), PathBuf::from(lines.next()?.trim()));
    let complete = ["libcasadi.so", "libipopt.so", "include/casadi/casadi.hpp"]
        .iter()
        .all(|file| dir.join(file).exists());
    (version == "3.8.2" && complete).then_some(dir)
}
