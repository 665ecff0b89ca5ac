//! `loam._loam`: the Python extension module of loam (docs/PYTHON.md).
//!
//! A thin layer over `loam::api`, the library calls the `loam` command line makes: a problem
//! loaded here, solved and written is the run folder `loam solve` writes, and a replay is
//! `loam simulate`'s. This layer only converts: paths and lists in, NumPy arrays and dicts
//! out, `loam::api::ApiError` into the exceptions of `loam/errors.py` (which carry the command
//! line's exit code, and a problem file's file, line and field).

mod plan;
mod tables;

use std::path::{Path, PathBuf};

use loam::api::{self, ApiError, SimulateOptions};
use loam::plot::{Formats, PlotError, PlotSettings};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use plan::{Plan, Problem, Replay};

/// An exception of `loam.errors` by class name, with `message` as its argument and
/// `attributes` set on it.
fn error(py: Python<'_>, class: &str, message: String, attributes: &[(&str, Py<PyAny>)]) -> PyErr {
    let raised = (|| -> PyResult<PyErr> {
        let class = py.import("loam.errors")?.getattr(class)?;
        let value = class.call1((message.clone(),))?;
        for (name, v) in attributes {
            value.setattr(*name, v)?;
        }
        Ok(PyErr::from_value(value))
    })();
    // An import that failed is itself the error to show (a broken installation).
    raised.unwrap_or_else(|e| e)
}

/// The exception of an [`ApiError`]: `ProblemError` (with file, line, column, field),
/// `InputError`, `OutputError` or `ComputationError`; the text is what `loam` prints.
pub(crate) fn raise(py: Python<'_>, e: ApiError) -> PyErr {
    let message = e.to_string();
    match e {
        ApiError::Problem(p) => {
            let attributes = (|| -> PyResult<Vec<(&str, Py<PyAny>)>> {
                let set = match &p.source_of_value {
                    loam::problem::ValueSource::Override(text) => Some(text.clone()),
                    loam::problem::ValueSource::File => None,
                };
                Ok(vec![
                    (
                        "file",
                        p.file
                            .display()
                            .to_string()
                            .into_pyobject(py)?
                            .into_any()
                            .unbind(),
                    ),
                    ("line", p.line.into_pyobject(py)?.into_any().unbind()),
                    ("column", p.column.into_pyobject(py)?.into_any().unbind()),
                    (
                        "field",
                        p.field.clone().into_pyobject(py)?.into_any().unbind(),
                    ),
                    (
                        "reason",
                        p.message.clone().into_pyobject(py)?.into_any().unbind(),
                    ),
                    ("override", set.into_pyobject(py)?.into_any().unbind()),
                ])
            })();
            match attributes {
                Ok(attributes) => error(py, "ProblemError", message, &attributes),
                Err(e) => e,
            }
        }
        ApiError::BadInput(_) => error(py, "InputError", message, &[]),
        ApiError::Output(_) => error(py, "OutputError", message, &[]),
        ApiError::Failed(_) => error(py, "ComputationError", message, &[]),
    }
}

/// Reads a problem: a file (YAML; or a run folder or its `solution.json`, the problem it
/// solved) or a dict in the file's schema. `set` overrides fields as `loam solve --set` does
/// (`["task.apex_height=0.08"]`). A dict's `origin` names it in errors, gives its default name
/// and is where relative paths in it are read from.
#[pyfunction]
#[pyo3(signature = (source, set=None, origin=None))]
fn load_problem(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    set: Option<Vec<String>>,
    origin: Option<PathBuf>,
) -> PyResult<Problem> {
    let overrides = set.unwrap_or_default();
    if let Ok(dict) = source.cast::<PyDict>() {
        // JSON is YAML: the dict goes through the file loader's parser and checks.
        let text: String = py
            .import("json")?
            .call_method1("dumps", (dict,))?
            .extract()?;
        let origin = origin.unwrap_or_else(|| PathBuf::from("<dict>"));
        let problem = api::load_text(&text, &origin, &overrides).map_err(|e| raise(py, e))?;
        return Ok(Problem::new(problem, origin, overrides, true));
    }
    let path: PathBuf = source.extract()?;
    let problem = api::load(&path, &overrides).map_err(|e| raise(py, e))?;
    Ok(Problem::new(problem, path, overrides, false))
}

/// Replays the plan in `run_dir` as `loam simulate RUN_DIR [--terrain T]` does (the reduced
/// backend), writes `<stem>.csv` and `<stem>.json` there, and returns them read back.
#[pyfunction]
#[pyo3(signature = (run_dir, terrain=None, rtol=1e-10, atol=1e-12, max_steps=2_000_000, strides=None, backend=None, mdp_step=None))]
#[allow(clippy::too_many_arguments)]
fn simulate(
    py: Python<'_>,
    run_dir: PathBuf,
    terrain: Option<String>,
    rtol: f64,
    atol: f64,
    max_steps: usize,
    strides: Option<usize>,
    backend: Option<String>,
    mdp_step: Option<f64>,
) -> PyResult<Replay> {
    let options = SimulateOptions {
        terrain,
        rtol,
        atol,
        max_steps,
        strides,
        simulator: simulator(py, backend.as_deref())?,
        mdp_step,
    };
    simulate_dir(py, &run_dir, &options, true)
}

/// `backend` as `loam simulate --backend` names it: `reduced` or `mdp` (None: the one the
/// ground asks for); the DEM's are the command line's.
pub(crate) fn simulator(py: Python<'_>, backend: Option<&str>) -> PyResult<api::Simulator> {
    match backend {
        None => Ok(api::Simulator::Auto),
        Some("reduced") => Ok(api::Simulator::Reduced),
        Some("mdp") => Ok(api::Simulator::Mdp),
        Some(other) => Err(raise(
            py,
            ApiError::BadInput(format!(
                "backend {other:?}: accepted here: \"reduced\", \"mdp\" (the DEM backends are \
                 `loam simulate --backend dem-cpu|dem-cuda`)"
            )),
        )),
    }
}

pub(crate) fn simulate_dir(
    py: Python<'_>,
    run_dir: &Path,
    options: &SimulateOptions,
    keep_paths: bool,
) -> PyResult<Replay> {
    let written = api::simulate(run_dir, options).map_err(|e| raise(py, e))?;
    Replay::read(py, &written, keep_paths)
}

/// Draws the figures of a run folder (a run and its replays, a sweep, a DEM replay) as
/// `loam plot` does, into `out` (default `RUN_DIR/plots`); returns the files written.
#[pyfunction]
#[pyo3(signature = (run_dir, out=None, png=true, svg=true, animate=false))]
fn plot(
    py: Python<'_>,
    run_dir: PathBuf,
    out: Option<PathBuf>,
    png: bool,
    svg: bool,
    animate: bool,
) -> PyResult<Vec<String>> {
    let settings = PlotSettings {
        out_dir: out,
        formats: Formats { png, svg },
        animate,
    };
    let report = loam::plot::plot_dir(&run_dir, &settings).map_err(|e| {
        // As `loam plot` sorts them: a folder or file that is not loam's is bad input.
        let class = match e {
            PlotError::NotAFolder { .. }
            | PlotError::NotALoamResult { .. }
            | PlotError::Empty { .. }
            | PlotError::Csv { .. }
            | PlotError::MissingColumn { .. }
            | PlotError::Json { .. }
            | PlotError::Identity(_) => "InputError",
            _ => "ComputationError",
        };
        error(py, class, e.to_string(), &[])
    })?;
    Ok(report
        .files
        .iter()
        .map(|f| f.display().to_string())
        .collect())
}

/// The folder of the CasADi and IPOPT libraries loam was linked against.
#[pyfunction]
fn casadi_dir() -> &'static str {
    api::casadi_dir()
}

/// The folder the `libcasadi` this process loaded came from (None where the loader's map is
/// unreadable): `import loam` warns when it is not [`casadi_dir`].
#[pyfunction]
fn loaded_casadi_dir() -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .find(|path| {
            Path::new(path)
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("libcasadi.so"))
        })
        .and_then(|path| Path::new(path).parent())
        .map(|dir| dir.display().to_string())
}

/// What this build of loam is: its version, the commit and dirty flag of the tree it was
/// built from, and the CasADi and IPOPT versions it runs (as `solution.json` records them).
#[pyfunction]
fn build_info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let provenance = loam::output::Provenance::new(loam::output::WarmStart::Rest);
    let info = PyDict::new(py);
    info.set_item("version", env!("CARGO_PKG_VERSION"))?;
    info.set_item("commit", provenance.loam_commit)?;
    info.set_item("commit_dirty", provenance.loam_commit_dirty)?;
    info.set_item("casadi_version", provenance.casadi_version)?;
    info.set_item("ipopt_version", provenance.ipopt_version)?;
    info.set_item("casadi_dir", api::casadi_dir())?;
    Ok(info)
}

#[pymodule]
fn _loam(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(load_problem, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(plot, m)?)?;
    m.add_function(wrap_pyfunction!(casadi_dir, m)?)?;
    m.add_function(wrap_pyfunction!(loaded_casadi_dir, m)?)?;
    m.add_function(wrap_pyfunction!(build_info, m)?)?;
    m.add_class::<Problem>()?;
    m.add_class::<Plan>()?;
    m.add_class::<Replay>()?;
    Ok(())
}
