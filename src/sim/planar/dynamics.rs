//! The replay's dynamics in one mode: the held feet's constraints (Baumgarte-stabilised), a
//! sinking foot's bed force and added mass, the servos' inputs, the guards of every contact,
//! and the plastic impact of a switch.

use nalgebra::{DMatrix, DVector};

use super::{PlanTable, PlanarSimError};
use crate::model::planar::PlanarRobot;
use crate::terrain::contact::Normal;
use crate::terrain::rigid::{self, RigidGround};
use crate::terrain::ContactModel;

/// The contacts held in the current mode and where each landed (x, z and, for a flat sole,
/// its angle); which of them move along the normal under the ground's law, and where each
/// foot in the air lands (a bed's crater floor).
pub(super) struct Mode {
    pub(super) contacts: Vec<usize>,
    pub(super) anchors: Vec<[f64; 3]>,
    /// Per held contact: free along the normal under the ground's law (a bed's sinking foot,
    /// a foot on a spring), not held there.
    pub(super) sinking: Vec<bool>,
    /// Per robot contact: the height a foot in the air lands at (0 on rigid ground).
    pub(super) floors: Vec<f64>,
}

/// The state's derivative and the held contacts' wrenches at one point.
pub(super) struct Evaluation {
    pub(super) dx: Vec<f64>,
    pub(super) wrenches: Vec<[f64; 3]>,
}

pub(super) struct Sim<'a> {
    pub(super) robot: &'a PlanarRobot,
    pub(super) ground: RigidGround,
    pub(super) contact: Box<dyn ContactModel<f64>>,
    pub(super) plan: &'a PlanTable,
    pub(super) kp: Vec<f64>,
    pub(super) kd: Vec<f64>,
    pub(super) n: usize,
}

/// Baumgarte stabilisation of the contacts' drift.
pub(super) const BAUMGARTE: f64 = 2.0 * std::f64::consts::PI * 30.0;

impl Sim<'_> {
    /// The inputs at `t`: the plan's, plus the servo on each ideal source (clamped to its
    /// limits); a drive gets the plan's command rate alone, open loop (it is a servo itself).
    pub(super) fn inputs(&self, piece: usize, t: f64, x: &[f64]) -> Vec<f64> {
        let (xr, ur) = self.plan.at_piece(piece, t);
        let n = self.n;
        super::plan::servo_command(
            self.robot,
            &self.kp,
            &self.kd,
            (&xr, &ur),
            &x[..n],
            &x[n..2 * n],
        )
    }

    /// The state's derivative and the held contacts' wrenches (F_x, F_z, τ each) in `mode`:
    /// M a + h = Q + Gᵀλ with every held direction's acceleration Baumgarte-stabilised.
    pub(super) fn evaluate(
        &self,
        piece: usize,
        t: f64,
        x: &[f64],
        mode: &Mode,
    ) -> Result<Evaluation, PlanarSimError> {
        let n = self.n;
        let (q, v) = (&x[..n], &x[n..2 * n]);
        let body = &self.robot.body;
        let h = body.bias_forces(q, v);
        let u = self.inputs(piece, t, x);
        let efforts = self.robot.efforts(x, &u);
        let f = self.robot.generalized_forces(q, v, &efforts);
        let mut force: Vec<f64> = f.iter().zip(&h).map(|(f, h)| f - h).collect();
        let mut mass = body.mass_matrix(q);
        let mut jacobian = Vec::new();
        let mut rhs = Vec::new();
        // Per contact under the law: the law's force before its added-mass term (a bed's
        // F_hyd + drag), its added mass, and the vertical J̇ v and Jacobian row, to recover F_z
        // afterwards.
        let mut sinking = Vec::new();
        for ((&c, anchor), &sinks) in mode.contacts.iter().zip(&mode.anchors).zip(&mode.sinking) {
            let bias = rigid::bias_acceleration(self.robot, c, q, v);
            let vel = rigid::velocity(self.robot, c, q, v);
            let error = self.hold_error(c, q, anchor);
            let rows = rigid::jacobian(self.robot, c, q);
            for (d, row) in rows.into_iter().enumerate() {
                if sinks && d == 1 {
                    let z = self.robot.contact_point(q, c)[1];
                    let r = self.contact.law(&z, &vel[1]);
                    for i in 0..n {
                        force[i] += row[i] * (r.force - r.added_mass * bias[1]);
                        for j in 0..n {
                            mass[i][j] += r.added_mass * row[i] * row[j];
                        }
                    }
                    sinking.push((r, bias[1], row));
                    continue;
                }
                if self.guided(&row) {
                    continue;
                }
                rhs.push(-bias[d] - 2.0 * BAUMGARTE * vel[d] - BAUMGARTE * BAUMGARTE * error[d]);
                jacobian.push(row);
            }
        }
        // The guide holds its coordinates (after the contacts' rows, whose wrenches come first).
        for &j in &self.robot.locked {
            let mut row = vec![0.0; n];
            row[j] = 1.0;
            jacobian.push(row);
            rhs.push(
                -2.0 * BAUMGARTE * v[j] - BAUMGARTE * BAUMGARTE * (q[j] - self.robot.standing[j]),
            );
        }
        let solution = saddle_point(&mass, &jacobian, &force, &rhs).ok_or_else(|| {
            PlanarSimError::Singular {
                t,
                mode: self.mode_name(&mode.contacts),
            }
        })?;
        let mut dx = v.to_vec();
        dx.extend_from_slice(&solution[..n]);
        dx.extend(self.robot.drive_rates(x, &u));
        if !dx.iter().all(|d| d.is_finite()) {
            return Err(PlanarSimError::Diverged { t });
        }
        let mut wrenches = Vec::new();
        let mut r = n;
        let mut sinking = sinking.into_iter();
        for (&c, &sinks) in mode.contacts.iter().zip(&mode.sinking) {
            let mut w = [0.0; 3];
            for (d, wd) in w
                .iter_mut()
                .enumerate()
                .take(rigid::held_directions(self.robot, c))
            {
                if sinks && d == 1 {
                    let (bed, bias, row) = sinking.next().expect("one per sinking contact");
                    let az: f64 = bias
                        + row
                            .iter()
                            .zip(&dx[n..2 * n])
                            .map(|(j, a)| j * a)
                            .sum::<f64>();
                    *wd = bed.on_foot(&az);
                } else if self.guided(&rigid::jacobian(self.robot, c, q)[d]) {
                    *wd = 0.0;
                } else {
                    *wd = solution[r];
                    r += 1;
                }
            }
            wrenches.push(w);
        }
        Ok(Evaluation { dx, wrenches })
    }

    /// Whether a held direction (its Jacobian row) moves only coordinates a guide holds:
    /// then the guide carries that direction's load (the hopper's foot sideways, on its rail)
    /// and holding it again would make the constraints redundant.
    pub(super) fn guided(&self, row: &[f64]) -> bool {
        !self.robot.locked.is_empty()
            && row
                .iter()
                .enumerate()
                .all(|(j, r)| self.robot.locked.contains(&j) || r.abs() < 1e-12)
    }

    /// Drift of a held contact from where it landed: x, z of the sole centre (and angle).
    pub(super) fn hold_error(&self, c: usize, q: &[f64], anchor: &[f64; 3]) -> Vec<f64> {
        let p = self.robot.contact_point(q, c);
        let mut e = vec![p[0] - anchor[0], p[1] - anchor[1]];
        if rigid::held_directions(self.robot, c) == 3 {
            e.push(self.robot.body.frames(q)[self.robot.contacts[c].body].angle - anchor[2]);
        }
        e
    }

    /// Guards, one per contact, crossing below 0 when the contact switches: a held foot's
    /// (its normal force; on a bed also its margin to F_hyd, past which it sinks), a foot
    /// under the law's (a bed's sinking rate −ż, a spring's depth −z), a free foot's lowest
    /// sole height above its floor.
    pub(super) fn guards(&self, x: &[f64], mode: &Mode, at: &Evaluation) -> Vec<f64> {
        let (q, v) = (&x[..self.n], &x[self.n..2 * self.n]);
        (0..self.robot.contacts.len())
            .map(|c| match mode.contacts.iter().position(|&m| m == c) {
                Some(k) if mode.sinking[k] => self.contact.law_guard(
                    self.robot.contact_point(q, c)[1],
                    rigid::velocity(self.robot, c, q, v)[1],
                ),
                Some(k) => self.contact.held_guard(at.wrenches[k][1], self.depth(c, q)),
                None => {
                    rigid::clearance(self.robot, c, q)
                        .into_iter()
                        .fold(f64::INFINITY, f64::min)
                        - mode.floors[c]
                }
            })
            .collect()
    }

    /// Held contact `k` of `mode` leaves the ground; on a ground that remembers footprints
    /// (a bed's crater) its floor is where it left from.
    pub(super) fn lift_off(&self, mode: &mut Mode, k: usize, q: &[f64]) {
        let c = mode.contacts.remove(k);
        mode.anchors.remove(k);
        mode.sinking.remove(k);
        if self.contact.remembers_footprint() {
            mode.floors[c] = self.robot.contact_point(q, c)[1].min(0.0);
        }
    }

    /// How deep contact `c` is below the surface (0 above it).
    pub(super) fn depth(&self, c: usize, q: &[f64]) -> f64 {
        (-self.robot.contact_point(q, c)[1]).max(0.0)
    }

    /// A foot put on the ground (touchdown, or on the ground at the start): held along the
    /// normal, or under the ground's law, as the contact model says.
    pub(super) fn hold(&self, mode: &mut Mode, c: usize, q: &[f64]) {
        mode.contacts.push(c);
        mode.anchors.push(self.anchor(c, q));
        mode.sinking.push(self.contact.touchdown() == Normal::Law);
    }

    /// Plastic impact: v⁺ with every held contact stopped, M (v⁺ − v⁻) = Gᵀ Λ.
    pub(super) fn impact(&self, t: f64, x: &mut [f64], mode: &Mode) -> Result<(), PlanarSimError> {
        let n = self.n;
        let (q, rest) = x.split_at_mut(n);
        let v = &mut rest[..n];
        let m = self.robot.body.mass_matrix(&*q);
        // Every held direction stops; a foot under the law is free along the normal.
        let jacobian: Vec<Vec<f64>> = mode
            .contacts
            .iter()
            .zip(&mode.sinking)
            .flat_map(|(&c, &sinks)| {
                let mut rows = rigid::jacobian(self.robot, c, &*q);
                if sinks {
                    rows.remove(1);
                }
                rows.retain(|row| !self.guided(row));
                rows
            })
            .chain(self.robot.locked.iter().map(|&j| {
                let mut row = vec![0.0; n];
                row[j] = 1.0;
                row
            }))
            .collect();
        let momentum: Vec<f64> = m
            .iter()
            .map(|row| row.iter().zip(v.iter()).map(|(m, v)| m * v).sum())
            .collect();
        let stopped = vec![0.0; jacobian.len()];
        let solution = saddle_point(&m, &jacobian, &momentum, &stopped).ok_or_else(|| {
            PlanarSimError::Singular {
                t,
                mode: self.mode_name(&mode.contacts),
            }
        })?;
        v.copy_from_slice(&solution[..n]);
        Ok(())
    }

    pub(super) fn anchor(&self, c: usize, q: &[f64]) -> [f64; 3] {
        let p = self.robot.contact_point(q, c);
        if self.contact.yields() {
            // In a ground that yields a foot is held where it is, as it is.
            let angle = self.robot.body.frames(q)[self.robot.contacts[c].body].angle;
            return [p[0], p[1], angle];
        }
        // A flat sole lands level on the ground; a point foot where it touches.
        let angle = if rigid::held_directions(self.robot, c) == 3 {
            0.0
        } else {
            self.robot.body.frames(q)[self.robot.contacts[c].body].angle
        };
        [p[0], 0.0, angle]
    }

    pub(super) fn mode_name(&self, contacts: &[usize]) -> String {
        super::mode_name(self.robot, contacts)
    }

    /// A row of `replay.csv` (t, state, inputs, every contact's wrench), how far the held
    /// feet's wrenches are outside the friction cone where the ground carries them, and the
    /// largest sideways force on a held foot the ground carries nothing of (F_z = 0: a spring
    /// that has let go of a rising foot), where a ratio to μ F_z would mean nothing.
    pub(super) fn sample(
        &self,
        piece: usize,
        t: f64,
        x: &[f64],
        mode: &Mode,
        at: &Evaluation,
    ) -> (Vec<f64>, f64, f64) {
        let mut row = vec![t];
        row.extend_from_slice(x);
        row.extend(self.inputs(piece, t, x));
        let mut excess: f64 = 0.0;
        let mut unloaded: f64 = 0.0;
        for (c, contact) in self.robot.contacts.iter().enumerate() {
            match mode.contacts.iter().position(|&m| m == c) {
                Some(k) => {
                    let w = &at.wrenches[k];
                    row.extend_from_slice(w);
                    if mode.sinking[k] && w[1] <= 0.0 {
                        unloaded = unloaded.max(w[0].abs());
                    } else {
                        excess = excess.max(self.ground.cone_excess(w, contact.half_width));
                    }
                }
                None => row.extend_from_slice(&[0.0; 3]),
            }
        }
        (row, excess, unloaded)
    }
}

/// Solves [[M, −Gᵀ], [G, 0]] (y, λ) = (top, bottom): constrained dynamics (y = a, λ the held
/// wrenches) and impacts (y = v⁺, λ the impulses) alike. None when singular.
pub(super) fn saddle_point(
    m: &[Vec<f64>],
    g: &[Vec<f64>],
    top: &[f64],
    bottom: &[f64],
) -> Option<Vec<f64>> {
    let (n, k) = (m.len(), g.len());
    let mut a = DMatrix::zeros(n + k, n + k);
    let mut b = DVector::zeros(n + k);
    for i in 0..n {
        for j in 0..n {
            a[(i, j)] = m[i][j];
        }
        b[i] = top[i];
    }
    for (r, row) in g.iter().enumerate() {
        for j in 0..n {
            a[(n + r, j)] = row[j];
            a[(j, n + r)] = -row[j];
        }
        b[n + r] = bottom[r];
    }
    a.lu().solve(&b).map(|s| s.as_slice().to_vec())
}
