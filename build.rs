#![cfg_attr(not(feature = "planner"), allow(dead_code, unused_imports))]
//! Provisions CasADi 3.8.2 and IPOPT 3.14 (both from the pinned PyPI wheel `casadi==3.8.2`),
//! compiles the cxx bridge against CasADi's headers and links both libraries with an rpath.
//!
//! Where the libraries come from, in order (ARCHITECTURE.md, "Provisioning CasADi and IPOPT"):
//! 1. `LOAM_CASADI_DIR`: a folder holding `libcasadi.so` and `include/`;
//! 2. the per-user cache `$XDG_CACHE_HOME` (or `~/.cache`)`/loam/casadi-3.8.2`, never a
//!    `casadi` the active Python environment happens to import;
//! 3. otherwise `python3 -m pip install --no-deps --target <cache> casadi==3.8.2`, once.
//!
//! It also embeds the git commit the binary is built from (`LOAM_GIT_COMMIT`, `LOAM_GIT_DIRTY`)
//! for the provenance that `solution.json` records.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const CASADI_VERSION: &str = "3.8.2";

fn main() {
    embed_git_commit();
    // Replay-only builds (no `planner` feature) link neither CasADi nor IPOPT.
    if env::var_os("CARGO_FEATURE_PLANNER").is_some() {
        provision_and_link();
    }
}

#[cfg(not(feature = "planner"))]
fn provision_and_link() {}

#[cfg(feature = "planner")]
fn provision_and_link() {
    println!("cargo:rerun-if-env-changed=LOAM_CASADI_DIR");
    println!("cargo:rerun-if-env-changed=XDG_CACHE_HOME");
    for file in [
        "src/symbolic/ffi.rs",
        "src/symbolic/casadi_shim.h",
        "src/symbolic/casadi_shim.cc",
        "src/solver/ipopt_shim.cc",
    ] {
        println!("cargo:rerun-if-changed={file}");
    }

    let dir = match locate_casadi() {
        Ok(dir) => dir,
        Err(message) => {
            // A panic in build.rs is how cargo reports a failed build script; the message is
            // what the user needs to fix it.
            panic!("\n\nloam could not provision CasADi {CASADI_VERSION}: {message}\n\n")
        }
    };

    cxx_build::bridge("src/symbolic/ffi.rs")
        .file("src/symbolic/casadi_shim.cc")
        .file("src/solver/ipopt_shim.cc")
        .include(dir.join("include"))
        .include(dir.join("include/coin-or"))
        .include("src/symbolic")
        .std("c++17")
        .flag_if_supported("-O2")
        // CasADi's own headers warn under g++ 12; loam's shim is small enough to read.
        .warnings(false)
        .flag_if_supported("-w")
        .compile("loam_casadi_shim");

    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=casadi");
    println!("cargo:rustc-link-lib=dylib=ipopt");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    println!("cargo:rustc-env=LOAM_CASADI_DIR={}", dir.display());
    println!(
        "cargo:rustc-env=LOAM_CASADI_PYTHONPATH={}",
        python_path(&dir).unwrap_or_default()
    );
}

/// NumPy for the `casadi` Python package (which imports it): pinned, for `loam bench`'s peer.
const NUMPY_VERSION: &str = "2.2.6";

/// The PYTHONPATH under which `import casadi` loads the same CasADi loam links, for the
/// CasADi-Python peer of `loam bench` (bench/peer/): the folder holding the `casadi` package,
/// and a pinned NumPy when `python3` has none (installed once into the cache beside CasADi;
/// a failure is only a warning, since loam itself does not need it). None when `dir` is not
/// a Python package (a `LOAM_CASADI_DIR` of bare libraries).
fn python_path(dir: &Path) -> Option<String> {
    if !dir.join("__init__.py").exists() {
        return None;
    }
    let mut path = vec![dir.parent()?.to_path_buf()];
    let has_numpy = |path: &[PathBuf]| {
        Command::new("python3")
            .args(["-c", "import numpy"])
            .env("PYTHONPATH", env::join_paths(path).unwrap_or_default())
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !has_numpy(&path) {
        let numpy = cache_root().join(format!("numpy-{NUMPY_VERSION}"));
        if !numpy.join("numpy").exists() {
            let installed = Command::new("python3")
                .args(["-m", "pip", "install", "--quiet", "--no-deps", "--target"])
                .arg(&numpy)
                .arg(format!("numpy=={NUMPY_VERSION}"))
                .status()
                .is_ok_and(|s| s.success());
            if !installed {
                println!(
                    "cargo:warning=loam: could not install numpy=={NUMPY_VERSION} into {}; \
                     `loam bench` will run without its CasADi-Python peer",
                    numpy.display()
                );
            }
        }
        path.push(numpy);
    }
    Some(env::join_paths(path).ok()?.to_string_lossy().into_owned())
}

fn has_casadi(dir: &Path) -> bool {
    dir.join("libcasadi.so").exists()
        && dir.join("libipopt.so").exists()
        && dir.join("include/casadi/casadi.hpp").exists()
}

fn locate_casadi() -> Result<PathBuf, String> {
    if let Ok(dir) = env::var("LOAM_CASADI_DIR") {
        let dir = PathBuf::from(dir);
        return if has_casadi(&dir) {
            Ok(dir)
        } else {
            Err(format!(
                "LOAM_CASADI_DIR={} holds no libcasadi.so, libipopt.so and include/casadi/casadi.hpp",
                dir.display()
            ))
        };
    }

    // Not a `casadi` importable by `python3`: the binary's rpath would then point into
    // whichever Python environment was active at build time, and break when it changes.
    let cache = cache_root().join(format!("casadi-{CASADI_VERSION}"));
    let dir = cache.join("casadi");
    if has_casadi(&dir) {
        return Ok(dir);
    }

    println!(
        "cargo:warning=loam: installing casadi=={CASADI_VERSION} into {} (once)",
        cache.display()
    );
    let status = Command::new("python3")
        .args(["-m", "pip", "install", "--quiet", "--no-deps", "--target"])
        .arg(&cache)
        .arg(format!("casadi=={CASADI_VERSION}"))
        .status()
        .map_err(|e| format!("could not run `python3 -m pip`: {e}"))?;
    if !status.success() {
        return Err(format!(
            "`python3 -m pip install --target {} casadi=={CASADI_VERSION}` failed ({status}); \
             set LOAM_CASADI_DIR to a folder with libcasadi.so and include/",
            cache.display()
        ));
    }
    if has_casadi(&dir) {
        Ok(dir)
    } else {
        Err(format!(
            "pip installed casadi into {} but libcasadi.so is not there",
            cache.display()
        ))
    }
}

fn cache_root() -> PathBuf {
    if let Ok(xdg) = env::var("XDG_CACHE_HOME") {
        if !xdg.is_empty() {
            return PathBuf::from(xdg).join("loam");
        }
    }
    let home = env::var("HOME").unwrap_or_else(|_| "/tmp".into());
    PathBuf::from(home).join(".cache").join("loam")
}

/// Paths whose changes make a different binary: a build from a tree that differs from its
/// commit in any of them is marked dirty.
const SOURCES: [&str; 5] = ["src", "build.rs", "Cargo.toml", "Cargo.lock", "assets"];

/// Sets `LOAM_GIT_COMMIT` to `git rev-parse --short HEAD` and `LOAM_GIT_DIRTY` to `true` when the
/// sources differ from that commit (staged or not), `false` when they do not; both `unknown`
/// outside a git checkout (a source archive) or without git. The script reruns when the commit
/// moves (HEAD, the branch, packed refs) or a source changes, so the flag is that of the tree
/// the binary was built from. It does not watch `.git/index`: `git status` and `git add`
/// rewrite the index without changing whether the sources differ from HEAD (staged changes
/// count as dirty too), and watching it rebuilt the whole crate after every `git status`.
fn embed_git_commit() {
    for path in SOURCES {
        println!("cargo:rerun-if-changed={path}");
    }
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map(|s| s.trim().to_string())
    };
    let mut watched = vec!["HEAD".to_string(), "packed-refs".into()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    for name in &watched {
        // Only files that exist: cargo reruns the script on every build for a missing one.
        if let Some(path) =
            git(&["rev-parse", "--git-path", name]).filter(|p| Path::new(p).exists())
        {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    let commit = git(&["rev-parse", "--short", "HEAD"]);
    let mut status = vec!["status", "--porcelain", "--untracked-files=no", "--"];
    status.extend(SOURCES);
    let dirty = commit
        .as_ref()
        .and_then(|_| git(&status))
        .map(|changes| (!changes.is_empty()).to_string());
    println!(
        "cargo:rustc-env=LOAM_GIT_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
    println!(
        "cargo:rustc-env=LOAM_GIT_DIRTY={}",
        dirty.as_deref().unwrap_or("unknown")
    );
}
