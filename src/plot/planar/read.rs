//! Loading a run folder (`solution.json` or `scenario.json` and the CSVs) into a [`PlanarRun`].

use std::path::Path;

use serde_json::Value;

use super::panels::{depth_panel, wrench_panels};
use super::{ExtraCurve, Phase, PlanarRun, RunKind, Series};
use crate::model::planar::PlanarRobot;
use crate::plot::data::read_json;
use crate::plot::style::trim_number;
use crate::plot::table::Table;
use crate::plot::PlotError;
use crate::problem::planar::PlanarProblem;
use crate::problem::scenario::Scenario;

/// A JSON file and its field `field` read as `T` (`what` names it in errors).
fn read_json_part<T: serde::de::DeserializeOwned>(
    path: &Path,
    field: &str,
    what: &str,
) -> Result<(Value, T), PlotError> {
    let err = |message: String| PlotError::Json {
        path: path.to_path_buf(),
        message,
    };
    let json = crate::plot::data::read_json(path)?;
    let part = serde_json::from_value(
        json.get(field)
            .cloned()
            .ok_or_else(|| err(format!("no field `{field}`")))?,
    )
    .map_err(|e| err(format!("`{field}` is not {what}: {e}")))?;
    Ok((json, part))
}

/// The DEM replay a run folder's figure draws: `dem-cpu/dem_replay.csv`, else
/// `dem-cuda/dem_replay.csv`, where one is there.
pub(in crate::plot) fn dem_replay_csv(dir: &Path) -> Option<std::path::PathBuf> {
    ["dem-cpu", "dem-cuda"]
        .map(|backend| dir.join(backend).join("dem_replay.csv"))
        .into_iter()
        .find(|csv| csv.is_file())
}

/// The DEM replay in `dir` ([`dem_replay_csv`]) from t = 0 on (its settling before the plan's
/// clock is left out), with its legend entry.
fn dem_replay(dir: &Path, robot: &PlanarRobot) -> Result<Option<(Series, String)>, PlotError> {
    let Some(path) = dem_replay_csv(dir) else {
        return Ok(None);
    };
    let mut series = Series::read(&path, robot, false)?;
    let first = series.t.partition_point(|&t| t < 0.0);
    series.t.drain(..first);
    for column in series
        .q
        .iter_mut()
        .chain(&mut series.u)
        .chain(&mut series.fz)
    {
        if let Some(values) = column {
            values.drain(..first);
        }
    }
    let shown = path.strip_prefix(dir).unwrap_or(&path).display();
    Ok(Some((series, format!("{shown} (on simulated grains)"))))
}

impl Series {
    fn read(path: &Path, robot: &PlanarRobot, plan: bool) -> Result<Series, PlotError> {
        let table = Table::read(path)?;
        let column = |name: String| -> Result<Option<Vec<f64>>, PlotError> {
            if plan || table.has(&name) {
                table.numbers(&name).map(Some)
            } else {
                Ok(None)
            }
        };
        let q = robot
            .coordinates
            .iter()
            .map(|c| column(c.name.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        let mut u = robot
            .inputs
            .iter()
            .map(|i| column(i.name.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        // A drive's column is its command rate; the figure draws the force it applies (from
        // the drive's states), against its limits, where the file has every state column.
        if robot.drives().next().is_some() {
            let names = robot.state_names();
            let states = if names.iter().all(|n| table.has(n)) {
                Some(
                    names
                        .iter()
                        .map(|n| table.numbers(n))
                        .collect::<Result<Vec<_>, _>>()?,
                )
            } else {
                None
            };
            let rates: Vec<Option<Vec<f64>>> = u.clone();
            for (i, _) in robot.drives() {
                u[i] = match (&states, &rates[i]) {
                    (Some(states), Some(_)) => Some(
                        (0..states[0].len())
                            .map(|row| {
                                let x: Vec<f64> = states.iter().map(|c| c[row]).collect();
                                let controls: Vec<f64> = rates
                                    .iter()
                                    .map(|c| c.as_ref().map_or(0.0, |c| c[row]))
                                    .collect();
                                robot.efforts(&x, &controls)[i]
                            })
                            .collect(),
                    ),
                    _ => None,
                };
            }
        }
        let fz = robot
            .contacts
            .iter()
            .map(|c| column(format!("{}_fz", c.name)))
            .collect::<Result<Vec<_>, _>>()?;
        let phase = if plan {
            table
                .numbers("phase")?
                .iter()
                .map(|p| p.max(0.0) as usize)
                .collect()
        } else {
            Vec::new()
        };
        Ok(Series {
            t: table.nondecreasing("t")?,
            q,
            u,
            fz,
            phase,
        })
    }

    /// The configuration at row `i` (zeros for missing columns).
    pub(in crate::plot) fn configuration(&self, i: usize) -> Vec<f64> {
        self.q
            .iter()
            .map(|c| c.as_ref().map_or(0.0, |c| c[i]))
            .collect()
    }
}

impl PlanarRun {
    pub fn load(dir: &Path) -> Result<PlanarRun, PlotError> {
        Self::load_on(dir, "replay")
    }

    /// The run with the replay `<stem>.csv` in place of `replay.csv`: `replay-on-<ground>-…`,
    /// the plan replayed on another contact model (`loam simulate --terrain`).
    pub fn load_on(dir: &Path, stem: &str) -> Result<PlanarRun, PlotError> {
        let path = dir.join("solution.json");
        let err = |message: String| PlotError::Json {
            path: path.clone(),
            message,
        };
        let (json, problem): (Value, PlanarProblem) =
            read_json_part(&path, "problem", "a planar problem")?;
        let robot = problem.robot.build(problem.gravity);
        let mut start = 0.0;
        let phases = json
            .get("phases")
            .and_then(Value::as_array)
            .ok_or_else(|| err("no list `phases`".into()))?
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let duration = p
                    .get("duration_s")
                    .and_then(Value::as_f64)
                    .filter(|d| d.is_finite() && *d >= 0.0)
                    .ok_or_else(|| err(format!("phases.{i}.duration_s is not a number >= 0")))?;
                let contacts = p
                    .get("contacts")
                    .and_then(Value::as_array)
                    .map(|c| {
                        c.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                let phase = Phase {
                    contacts,
                    start,
                    end: start + duration,
                };
                start += duration;
                Ok(phase)
            })
            .collect::<Result<Vec<_>, PlotError>>()?;
        let key_figures = json
            .get("key_figures")
            .and_then(Value::as_object)
            .map(|o| {
                // The end's vertical velocity and a gait's periodicity residual (0 to the
                // title's digits) are in solution.json; the title keeps what varies.
                o.iter()
                    .filter(|(k, _)| !matches!(k.as_str(), "com_vz_end" | "periodicity_residual"))
                    .filter_map(|(k, v)| v.as_f64().map(|v| format!("{k} {}", trim_number(v))))
                    .collect()
            })
            .unwrap_or_default();
        let plan = Series::read(&dir.join("trajectory.csv"), &robot, true)?;
        let replay_path = dir.join(format!("{stem}.csv"));
        // The ground the replay ran on: its record says (`replay.json`'s `terrain`).
        let replay_ground = read_json(&dir.join(format!("{stem}.json")))
            .ok()
            .and_then(|j| j["terrain"]["model"].as_str().map(str::to_string));
        let replay = if replay_path.is_file() {
            Some(Series::read(&replay_path, &robot, false)?)
        } else {
            None
        };
        // A plan on a wrench space: its feet's depth, tilt and wrench, and a replay that is
        // the MDP simulator's.
        let feet: Vec<String> = robot.contacts.iter().map(|c| c.name.clone()).collect();
        let replay_table = replay
            .is_some()
            .then(|| Table::read(&replay_path))
            .transpose()?;
        let trajectory_table = Table::read(&dir.join("trajectory.csv"))?;
        let mut extra = wrench_panels(&feet, &trajectory_table, replay_table.as_ref())?;
        // The feet's depth, on a ground they sink into (the plan's, or the replay's).
        let yields = |model: &str| matches!(model, "added_mass" | "spring");
        if problem
            .terrain
            .contact_model::<f64>()
            .is_some_and(|model| model.yields())
            || replay_ground.as_deref().is_some_and(yields)
        {
            extra.push(depth_panel(
                &robot,
                &trajectory_table,
                replay_table.as_ref(),
            )?);
        }
        // The transcription's error per interval (MODEL.md 5.3), at each node the larger of
        // its two intervals', on a log scale: where the mesh is too coarse.
        if let Some(errors) = json["transcription_error"]["intervals"].as_array() {
            let mut per_node = Vec::new();
            for phase in errors {
                let e: Vec<f64> = phase
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_f64).collect())
                    .unwrap_or_default();
                for k in 0..=e.len() {
                    let around = [k.checked_sub(1).map(|i| e[i]), e.get(k).copied()];
                    let worst = around.into_iter().flatten().fold(1e-16, f64::max);
                    per_node.push(worst.log10());
                }
            }
            if per_node.len() == plan.t.len() {
                // Its sum over the intervals where the run records it (since 2026-11-29).
                let total = json["transcription_error"]["total"]
                    .as_f64()
                    .map_or(String::new(), |t| format!(" (sum {t:.1e})"));
                extra.push((
                    "transcription error, log₁₀ [-]".to_string(),
                    vec![ExtraCurve {
                        name: format!("interval error{total}"),
                        plan: per_node,
                        replay: None,
                    }],
                ));
            }
        }
        let on_wrench_space = matches!(
            problem.terrain,
            crate::problem::planar::PlanarTerrainConfig::WrenchSpace(_)
        );
        Ok(PlanarRun {
            name: problem.name().to_string(),
            kind: RunKind::Plan {
                converged: json
                    .get("converged")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            },
            slope: 0.0,
            extra,
            replay_label: if on_wrench_space {
                "replay.csv (MDP simulator, open loop)".to_string()
            } else if stem == "replay" {
                "replay.csv (simulated)".to_string()
            } else {
                format!(
                    "{stem}.csv (simulated on {})",
                    replay_ground.as_deref().unwrap_or("another ground")
                )
            },
            dem: dem_replay(dir, &robot)?,
            robot,
            phases,
            key_figures,
            plan,
            replay,
        })
    }

    pub(super) fn time_range(&self) -> (f64, f64) {
        let mut t = self.plan.t.clone();
        if let Some(r) = &self.replay {
            t.extend(&r.t);
        }
        if let Some(last) = self.phases.last() {
            t.push(last.end);
        }
        let lo = t.iter().copied().fold(0.0_f64, f64::min);
        let hi = t.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lo, hi.max(lo + 1e-3))
    }

    /// A folder written by `loam mdp run`: `scenario.json` and `trajectory.csv`, whose
    /// phases are the sets of feet below the surface row by row.
    pub fn load_mdp(dir: &Path) -> Result<PlanarRun, PlotError> {
        let (json, scenario): (Value, Scenario) =
            read_json_part(&dir.join("scenario.json"), "scenario", "a scenario")?;
        let robot = scenario.robot.build(scenario.gravity);
        let csv = dir.join("trajectory.csv");
        let table = Table::read(&csv)?;
        let mut plan = Series::read(&csv, &robot, false)?;
        let feet: Vec<String> = robot.contacts.iter().map(|c| c.name.clone()).collect();
        let column = |foot: &str, what: &str| table.numbers(&format!("{foot}_{what}"));
        let depth = feet
            .iter()
            .map(|f| column(f, "depth"))
            .collect::<Result<Vec<_>, _>>()?;
        // Phases: runs of rows with the same feet below the surface.
        let mut phases: Vec<Phase> = Vec::new();
        for (i, &t) in plan.t.iter().enumerate() {
            let below: Vec<String> = feet
                .iter()
                .zip(&depth)
                .filter(|(_, d)| d[i] < 0.0)
                .map(|(f, _)| f.clone())
                .collect();
            match phases.last_mut() {
                Some(last) if last.contacts == below => last.end = t,
                _ => {
                    if let Some(last) = phases.last_mut() {
                        last.end = t;
                    }
                    phases.push(Phase {
                        contacts: below,
                        start: t,
                        end: t,
                    });
                }
            }
            plan.phase.push(phases.len() - 1);
        }
        let extra = wrench_panels(&feet, &table, None)?;
        let summary = json.get("summary");
        let number = |key: &str| summary.and_then(|s| s.get(key)).and_then(Value::as_f64);
        let mut key_figures = Vec::new();
        if let Some(base) = summary
            .and_then(|s| s.get("final_base"))
            .and_then(Value::as_array)
        {
            let b: Vec<f64> = base.iter().filter_map(Value::as_f64).collect();
            if b.len() == 3 {
                key_figures.push(format!(
                    "end x {} m, z {} m, pitch {} rad",
                    trim_number(b[0]),
                    trim_number(b[1]),
                    trim_number(b[2])
                ));
            }
        }
        if let Some(clamped) = number("clamped_steps").filter(|c| *c > 0.0) {
            key_figures.push(format!("{clamped} steps clamped into the data"));
        }
        Ok(PlanarRun {
            name: scenario.name.clone().unwrap_or_default(),
            kind: RunKind::Simulation {
                time_step: scenario.time_step,
            },
            slope: scenario.terrain.slope,
            extra,
            replay_label: "replay.csv (simulated)".to_string(),
            robot,
            phases,
            key_figures,
            plan,
            replay: None,
            dem: None,
        })
    }

    pub(super) fn title(&self, what: &str) -> String {
        let what = match self.kind {
            RunKind::Plan { .. } => format!("{what}, "),
            RunKind::Simulation { .. } => "on wrench-space terrain (MDP simulator)".into(),
        };
        format!(
            "{}: {} {what}{}{}{}",
            self.name,
            self.robot.name,
            match self.kind {
                RunKind::Plan { converged: true } => "converged",
                RunKind::Plan { converged: false } => "NOT converged",
                RunKind::Simulation { .. } => "",
            },
            if self.key_figures.is_empty() {
                ""
            } else {
                "; "
            },
            self.key_figures.join(", ")
        )
    }
}
