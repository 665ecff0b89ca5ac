//! The panels against time: coordinates, inputs, forces, and the wrench-space and depth panels.

use super::{ExtraCurve, PlanarRun, RunKind, Series};
use crate::model::planar::PlanarRobot;
use crate::plot::table::Table;
use crate::plot::PlotError;

/// The wrench-space panels (each foot's depth, tilt, F_x, τ) of a table with the columns
/// `<foot>_depth`, `_tilt`, `_fx`, `_tau` (an MDP run, a plan on a wrench space), with the
/// replay's where `replay` has them; empty when `table` lacks them.
pub(super) fn wrench_panels(
    feet: &[String],
    table: &Table,
    replay: Option<&Table>,
) -> Result<Vec<(String, Vec<ExtraCurve>)>, PlotError> {
    if !feet.iter().all(|f| table.has(&format!("{f}_depth"))) {
        return Ok(Vec::new());
    }
    let mut extra = Vec::new();
    for (what, label) in [
        ("depth", "foot depth d [m]"),
        ("tilt", "foot tilt φ [rad]"),
        ("fx", "terrain F_x [N]"),
        ("tau", "terrain τ [N m]"),
    ] {
        let curves = feet
            .iter()
            .map(|f| {
                let name = format!("{f}_{what}");
                Ok(ExtraCurve {
                    name: f.clone(),
                    plan: table.numbers(&name)?,
                    replay: match replay {
                        Some(r) if r.has(&name) => Some(r.numbers(&name)?),
                        _ => None,
                    },
                })
            })
            .collect::<Result<Vec<_>, PlotError>>()?;
        extra.push((label.to_string(), curves));
    }
    Ok(extra)
}

/// Each foot's depth in an added-mass bed, d = −z of its sole centre, from the coordinates of
/// the plan's table (and the replay's).
pub(super) fn depth_panel(
    robot: &PlanarRobot,
    table: &Table,
    replay: Option<&Table>,
) -> Result<(String, Vec<ExtraCurve>), PlotError> {
    let depths = |table: &Table, c: usize| -> Result<Vec<f64>, PlotError> {
        let columns = robot
            .coordinates
            .iter()
            .map(|q| table.numbers(&q.name))
            .collect::<Result<Vec<_>, PlotError>>()?;
        let rows = columns.first().map_or(0, Vec::len);
        Ok((0..rows)
            .map(|k| {
                let q: Vec<f64> = columns.iter().map(|col| col[k]).collect();
                -robot.contact_point(&q, c)[1]
            })
            .collect())
    };
    let curves = (0..robot.contacts.len())
        .map(|c| {
            Ok(ExtraCurve {
                name: robot.contacts[c].name.clone(),
                plan: depths(table, c)?,
                replay: replay.map(|r| depths(r, c)).transpose()?,
            })
        })
        .collect::<Result<Vec<_>, PlotError>>()?;
    Ok(("depth d below surface [m]".to_string(), curves))
}

pub(super) struct Curve {
    pub(super) label: String,
    pub(super) plan: Vec<(f64, f64)>,
    pub(super) replay: Option<Vec<(f64, f64)>>,
    pub(super) dem: Option<Vec<(f64, f64)>>,
}

pub(super) struct Panel {
    pub(super) y_label: String,
    pub(super) curves: Vec<Curve>,
    /// Faint horizontal lines: (value, curve index, label).
    pub(super) limits: Vec<(f64, usize)>,
}

fn pairs(t: &[f64], v: &[f64]) -> Vec<(f64, f64)> {
    t.iter().copied().zip(v.iter().copied()).collect()
}

/// Words for a unit in an axis label.
fn quantity(unit: &str, joint: bool) -> &'static str {
    match (unit, joint) {
        ("rad", true) => "joint angles",
        ("m", true) => "joint displacements",
        ("N m", _) => "torques",
        ("N", _) => "forces",
        (_, true) => "joint coordinates",
        _ => "inputs",
    }
}

impl PlanarRun {
    fn curve(&self, label: String, pick: impl Fn(&Series) -> Option<&Vec<f64>>) -> Curve {
        Curve {
            label,
            plan: pick(&self.plan).map_or_else(Vec::new, |v| pairs(&self.plan.t, v)),
            replay: self
                .replay
                .as_ref()
                .and_then(|r| pick(r).map(|v| pairs(&r.t, v))),
            dem: self
                .dem
                .as_ref()
                .and_then(|(d, _)| pick(d).map(|v| pairs(&d.t, v))),
        }
    }

    pub(super) fn panels(&self) -> Vec<Panel> {
        let robot = &self.robot;
        let mut panels = Vec::new();
        let coordinate = |k: usize| {
            let c = &robot.coordinates[k];
            self.curve(format!("{} [{}]", c.name, c.unit), |s| s.q[k].as_ref())
        };
        // (a) the base.
        let base_units: Vec<&str> = (0..3.min(robot.coordinates.len()))
            .map(|k| robot.coordinates[k].unit.as_str())
            .collect();
        let mut units: Vec<&str> = Vec::new();
        for u in &base_units {
            if !units.contains(u) {
                units.push(u);
            }
        }
        for unit in units {
            let ks: Vec<usize> = (0..base_units.len())
                .filter(|&k| base_units[k] == unit)
                .collect();
            let names: Vec<&str> = ks
                .iter()
                .map(|&k| robot.coordinates[k].name.as_str())
                .collect();
            panels.push(Panel {
                y_label: format!("base {} [{unit}]", names.join(", ")),
                curves: ks.iter().map(|&k| coordinate(k)).collect(),
                limits: Vec::new(),
            });
        }
        // (b) the joints, one panel per unit.
        let mut units: Vec<&str> = Vec::new();
        for c in robot.coordinates.iter().skip(3) {
            if !units.contains(&c.unit.as_str()) {
                units.push(&c.unit);
            }
        }
        for unit in units {
            let ks: Vec<usize> = (3..robot.coordinates.len())
                .filter(|&k| robot.coordinates[k].unit == unit)
                .collect();
            panels.push(Panel {
                y_label: format!("{} [{unit}]", quantity(unit, true)),
                curves: ks.iter().map(|&k| coordinate(k)).collect(),
                limits: Vec::new(),
            });
        }
        // (c) the inputs, one panel per unit, with their limits.
        let mut units: Vec<&str> = Vec::new();
        for i in &robot.inputs {
            if !units.contains(&i.unit.as_str()) {
                units.push(&i.unit);
            }
        }
        for unit in units {
            let js: Vec<usize> = (0..robot.inputs.len())
                .filter(|&j| robot.inputs[j].unit == unit)
                .collect();
            let mut limits = Vec::new();
            for (n, &j) in js.iter().enumerate() {
                let (lo, hi) = robot.inputs[j].limit;
                for v in [lo, hi] {
                    if v.is_finite() && !limits.iter().any(|&(w, _)| w == v) {
                        limits.push((v, n));
                    }
                }
            }
            panels.push(Panel {
                y_label: format!("input {} [{unit}]", quantity(unit, false)),
                curves: js
                    .iter()
                    .map(|&j| {
                        let i = &robot.inputs[j];
                        self.curve(format!("{} [{}]", i.name, i.unit), |s| s.u[j].as_ref())
                    })
                    .collect(),
                limits,
            });
        }
        // (d) the contacts' normal forces.
        if !robot.contacts.is_empty() {
            panels.push(Panel {
                y_label: match self.kind {
                    RunKind::Plan { .. } => "normal force F_z [N]".into(),
                    RunKind::Simulation { .. } => "terrain F_z [N]".into(),
                },
                curves: (0..robot.contacts.len())
                    .map(|c| {
                        self.curve(format!("F_z {} [N]", robot.contacts[c].name), |s| {
                            s.fz[c].as_ref()
                        })
                    })
                    .collect(),
                limits: Vec::new(),
            });
        }
        // (e) what the run adds (the MDP's feet: depth, tilt, F_x, τ).
        for (label, curves) in &self.extra {
            panels.push(Panel {
                y_label: label.clone(),
                curves: curves
                    .iter()
                    .map(|curve| Curve {
                        label: curve.name.clone(),
                        plan: pairs(&self.plan.t, &curve.plan),
                        replay: curve
                            .replay
                            .as_ref()
                            .zip(self.replay.as_ref())
                            .map(|(values, replay)| pairs(&replay.t, values)),
                        dem: None,
                    })
                    .collect(),
                limits: Vec::new(),
            });
        }
        panels
    }
}
