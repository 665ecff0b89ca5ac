//! `loam.Problem`, `loam.Plan` and `loam.Replay`: a loaded problem, its solved plan, and a
//! replay of it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use loam::api::{self, Refine, SimulateOptions, SolveOptions, Solved};
use loam::problem::planar::PlanarProblem;
use loam::solver::IterationInfo;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::{raise, simulate_dir, tables};

/// A private path under the system's temporary folder, unique in this process.
fn temporary(what: &str) -> PathBuf {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("loam-{what}-{}-{n}", std::process::id()))
}

/// A JSON text as Python objects (`json.loads`).
fn from_json<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

/// A loaded and validated problem (`loam.load_problem`).
// `unsendable`: a problem may hold a robot description that is not thread-safe; Python's
// objects of it stay on the thread that made them.
#[pyclass(unsendable, module = "loam")]
pub struct Problem {
    problem: PlanarProblem,
    file: PathBuf,
    overrides: Vec<String>,
    from_dict: bool,
}

impl Problem {
    pub fn new(
        problem: PlanarProblem,
        file: PathBuf,
        overrides: Vec<String>,
        from_dict: bool,
    ) -> Self {
        Problem {
            problem,
            file,
            overrides,
            from_dict,
        }
    }

    /// The call that makes this problem, as Python source (for the provenance).
    fn call(&self) -> String {
        let quote = |s: &str| format!("{s:?}");
        let set: Vec<String> = self.overrides.iter().map(|o| quote(o)).collect();
        let source = if self.from_dict {
            format!("<dict>, origin={}", quote(&self.file.display().to_string()))
        } else {
            quote(&self.file.display().to_string())
        };
        format!("loam.load_problem({source}, set=[{}])", set.join(", "))
    }
}

#[pymethods]
impl Problem {
    /// The problem's name: its `name` field or its file's stem (`runs/<name>/` by default).
    #[getter]
    fn name(&self) -> &str {
        self.problem.name()
    }

    /// The file it was read from (a dict's `origin`).
    #[getter]
    fn file(&self) -> String {
        self.file.display().to_string()
    }

    /// The overrides applied (`set=`).
    #[getter]
    fn overrides(&self) -> Vec<String> {
        self.overrides.clone()
    }

    /// The problem as resolved (every default and preset filled in, a robot file's whole
    /// description under `robot.description`), as `solution.json`'s `problem` holds it but
    /// without the robot file's name, which is relative to the problem file's folder: a
    /// self-contained dict that `load_problem` reads back as the same problem from anywhere.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut problem = self.problem.clone();
        if let loam::problem::planar::RobotConfig::File(robot) = &mut problem.robot {
            robot.file = None;
        }
        let text = serde_json::to_string(&problem).expect("a problem serializes");
        from_json(py, &text)
    }

    /// Solves the problem with IPOPT as `loam solve` does, from the problem's
    /// `initial_guess`, or from the plan in the run folder `warm_start` (as `--warm-start`).
    /// `refine` (a relative tolerance) refines the mesh
    /// until the plan's replay agrees, at most `refine_rounds` times. `progress`, if given, is
    /// called with a dict per IPOPT iteration (`iteration`, `objective`, `inf_pr`, `inf_du`,
    /// `mu`); returning False stops IPOPT there. Ctrl-C stops it too and raises
    /// KeyboardInterrupt. A plan that did not converge is returned, `converged` False.
    #[pyo3(signature = (warm_start=None, refine=None, refine_rounds=3, progress=None))]
    fn solve(
        &self,
        py: Python<'_>,
        warm_start: Option<PathBuf>,
        refine: Option<f64>,
        refine_rounds: usize,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Plan> {
        let log = temporary("ipopt.log");
        let mut failure: Option<PyErr> = None;
        let mut on_iteration = |info: &IterationInfo| -> bool {
            if let Err(e) = py.check_signals() {
                failure = Some(e);
                return false;
            }
            let Some(callback) = &progress else {
                return true;
            };
            let call = || -> PyResult<bool> {
                let d = PyDict::new(py);
                d.set_item("iteration", info.iteration)?;
                d.set_item("objective", info.objective)?;
                d.set_item("inf_pr", info.inf_pr)?;
                d.set_item("inf_du", info.inf_du)?;
                d.set_item("mu", info.mu)?;
                let answer = callback.call1(py, (d,))?;
                // None (a callback that returns nothing) goes on; False stops.
                Ok(answer.is_none(py) || answer.bind(py).is_truthy()?)
            };
            match call() {
                Ok(go_on) => go_on,
                Err(e) => {
                    failure = Some(e);
                    false
                }
            }
        };
        let options = SolveOptions {
            log_file: Some(log.clone()),
            refine: refine.map(|tolerance| Refine {
                tolerance,
                rounds: refine_rounds,
            }),
            warm_start: warm_start.clone(),
            on_iteration: Some(&mut on_iteration),
        };
        let solved = api::solve(&self.problem, &self.file, options);
        if let Some(e) = failure {
            std::fs::remove_file(&log).ok();
            return Err(e);
        }
        let solved = solved.map_err(|e| {
            std::fs::remove_file(&log).ok();
            raise(py, e)
        })?;
        let mut arguments = Vec::new();
        if let Some(dir) = &warm_start {
            arguments.push(format!("warm_start={:?}", dir.display().to_string()));
        }
        if let Some(tolerance) = refine {
            arguments.push(format!(
                "refine={tolerance:?}, refine_rounds={refine_rounds}"
            ));
        }
        Ok(Plan {
            solved,
            log: log.exists().then_some(log),
            call: format!("{}.solve({})", self.call(), arguments.join(", ")),
            run_dir: None,
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "<loam.Problem {} ({}) from {}>",
            self.name(),
            self.problem.robot.model_name(),
            self.file.display()
        )
    }
}

/// A solved (or attempted) plan: IPOPT's outcome and the trajectory, in memory until
/// written (`write`).
#[pyclass(unsendable, module = "loam")]
pub struct Plan {
    solved: Solved,
    /// IPOPT's log of the solve, in a temporary file until the plan is dropped.
    log: Option<PathBuf>,
    /// The Python call that made the plan, for the provenance.
    call: String,
    run_dir: Option<PathBuf>,
}

impl Drop for Plan {
    fn drop(&mut self) {
        if let Some(log) = &self.log {
            std::fs::remove_file(log).ok();
        }
    }
}

impl Plan {
    /// Writes the run folder `dir` (`solution.json`, `trajectory.csv`, `ipopt.log`).
    fn write_to(&self, py: Python<'_>, dir: &Path) -> PyResult<String> {
        let mut provenance = self.solved.provenance();
        provenance.command_line = vec![
            "python".into(),
            "-c".into(),
            format!(
                "import loam; {}.write({:?})",
                self.call,
                dir.display().to_string()
            ),
        ];
        // The writer moves the log in by a rename, which must stay within the folder's file
        // system: a copy goes there first (the plan keeps its own for another write).
        let log = match &self.log {
            Some(log) => {
                loam::output::ensure_writable(dir).map_err(|e| raise(py, e.into()))?;
                let copy = dir.join(format!(".ipopt.log.tmp{}", std::process::id()));
                std::fs::copy(log, &copy).map_err(|source| {
                    let path = copy.clone();
                    raise(py, loam::output::OutputError { path, source }.into())
                })?;
                Some(copy)
            }
            None => None,
        };
        let written = self
            .solved
            .write(dir, provenance, log.as_deref())
            .map_err(|e| raise(py, e))?;
        Ok(written.plan_id)
    }
}

#[pymethods]
impl Plan {
    /// IPOPT's final objective (the problem's cost).
    #[getter]
    fn objective(&self) -> f64 {
        self.solved.report().objective
    }

    /// IPOPT's status, e.g. `Solve_Succeeded`.
    #[getter]
    fn status(&self) -> String {
        self.solved.report().status.to_string()
    }

    /// True only for `Solve_Succeeded` and `Solved_To_Acceptable_Level`.
    #[getter]
    fn converged(&self) -> bool {
        self.solved.report().converged
    }

    #[getter]
    fn iterations(&self) -> usize {
        self.solved.report().iterations
    }

    /// The largest violation of any constraint row or variable bound.
    #[getter]
    fn max_violation(&self) -> f64 {
        self.solved.report().max_violation
    }

    /// Seconds: transcription before IPOPT (`setup`), IPOPT (`solve`).
    #[getter]
    fn timing(&self) -> (f64, f64) {
        (
            self.solved.setup_seconds(),
            self.solved.report().solve_seconds,
        )
    }

    /// The phases: `[(name, duration_s, nodes)]`.
    #[getter]
    fn phases(&self) -> Vec<(String, f64, usize)> {
        self.solved
            .phases()
            .iter()
            .map(|p| (p.name.clone(), p.duration, p.states.len()))
            .collect()
    }

    /// A refined plan's rounds: `[{nodes, converged, iterations, objective, error}]`.
    #[getter]
    fn refinement<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text = serde_json::to_string(self.solved.refinement()).expect("rounds serialize");
        from_json(py, &text)
    }

    /// A planar plan's transcription error per interval, as `solution.json` records it:
    /// `{method, intervals: [[e_k per interval] per phase], max, worst_phase, worst_interval,
    /// worst_state}` (docs/MODEL.md 5.3); None on a wrench space.
    #[getter]
    fn transcription_error<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text =
            serde_json::to_string(&self.solved.transcription_error()).expect("errors serialize");
        from_json(py, &text)
    }

    /// The columns of `trajectory.csv`, in its order.
    #[getter]
    fn columns(&self) -> Vec<String> {
        let csv = self.solved.trajectory_csv();
        let header = csv.lines().next().unwrap_or("");
        header.split(',').map(str::to_owned).collect()
    }

    /// `trajectory.csv` as a dict of NumPy arrays, one per column in the file's order, every
    /// value the file's (units: README, "trajectory.csv"; a planar robot's: docs/ROBOTS.md).
    #[getter]
    fn trajectory<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        Ok(tables::columns(py, &self.solved.trajectory_csv())?.1)
    }

    /// The text of `trajectory.csv`.
    fn trajectory_csv(&self) -> String {
        self.solved.trajectory_csv()
    }

    /// IPOPT's log of the solve (print level 5), as `ipopt.log` holds it.
    fn ipopt_log(&self) -> PyResult<String> {
        match &self.log {
            Some(log) => Ok(std::fs::read_to_string(log)?),
            None => Ok(String::new()),
        }
    }

    /// The folder the plan was last written to, or None.
    #[getter]
    fn run_dir(&self) -> Option<String> {
        self.run_dir.as_ref().map(|d| d.display().to_string())
    }

    /// Writes the run folder `loam solve` writes (default `runs/<name>/`): `solution.json`,
    /// `trajectory.csv`, `ipopt.log`; another plan found there is archived. Returns the
    /// plan's `plan_id`.
    #[pyo3(signature = (run_dir=None))]
    fn write(&mut self, py: Python<'_>, run_dir: Option<PathBuf>) -> PyResult<String> {
        let dir = run_dir.unwrap_or_else(|| PathBuf::from("runs").join(self.solved.name()));
        let plan_id = self.write_to(py, &dir)?;
        self.run_dir = Some(dir);
        Ok(plan_id)
    }

    /// Replays the plan's command in the reduced-order simulator, as `loam simulate` does, on
    /// its own ground or on `terrain` (`"rigid"`, `"poppy_seeds"` or a problem file). A plan
    /// written (`write`) is replayed from its folder and the replay written there; otherwise
    /// from a temporary folder, removed after. Either way the plan replayed is the one a
    /// robot is handed: `trajectory.csv`'s nodes.
    #[pyo3(signature = (terrain=None, rtol=1e-10, atol=1e-12, max_steps=2_000_000, strides=None, backend=None, mdp_step=None))]
    #[allow(clippy::too_many_arguments)]
    fn simulate(
        &self,
        py: Python<'_>,
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
            simulator: crate::simulator(py, backend.as_deref())?,
            mdp_step,
        };
        if let Some(dir) = &self.run_dir {
            return simulate_dir(py, dir, &options, true);
        }
        let dir = temporary("plan");
        let replay = self
            .write_to(py, &dir)
            .and_then(|_| simulate_dir(py, &dir, &options, false));
        std::fs::remove_dir_all(&dir).ok();
        replay
    }

    fn __repr__(&self) -> String {
        let r = self.solved.report();
        format!(
            "<loam.Plan {}: {} after {} iterations, objective {:.6e}>",
            self.solved.name(),
            r.status,
            r.iterations,
            r.objective
        )
    }
}

/// A replay of a plan: its samples as NumPy columns and its comparison with the plan.
#[pyclass(module = "loam", get_all)]
pub struct Replay {
    /// `replay` on the plan's own ground, `replay-on-...` on another.
    stem: String,
    /// The replay reached the plan's end.
    complete: bool,
    /// The CSV's columns, in its order.
    columns: Vec<String>,
    /// The samples: a dict of NumPy arrays, one per column.
    data: Py<PyDict>,
    /// `<stem>.json`: how the replay compares with the plan (apex, take-off, differences).
    summary: Py<PyAny>,
    /// The files, where they were kept (None for a replay from a temporary folder).
    csv_path: Option<String>,
    json_path: Option<String>,
}

impl Replay {
    pub fn read(py: Python<'_>, written: &api::Simulated, keep_paths: bool) -> PyResult<Replay> {
        let csv = std::fs::read_to_string(&written.csv)?;
        let (columns, data) = tables::columns(py, &csv)?;
        let summary = from_json(py, &std::fs::read_to_string(&written.json)?)?;
        let path = |p: &Path| keep_paths.then(|| p.display().to_string());
        Ok(Replay {
            stem: written.stem.clone(),
            complete: written.complete,
            columns,
            data: data.unbind(),
            summary: summary.unbind(),
            csv_path: path(&written.csv),
            json_path: path(&written.json),
        })
    }
}

#[pymethods]
impl Replay {
    fn __repr__(&self) -> String {
        format!(
            "<loam.Replay {}{}>",
            self.stem,
            if self.complete { "" } else { " (incomplete)" }
        )
    }
}
