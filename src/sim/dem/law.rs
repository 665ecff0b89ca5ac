//! The soft-sphere contact law: Hertz-Mindlin with tangential spring history, a Coulomb
//! limit, viscous damping set by a coefficient of restitution, and optional rolling
//! resistance. One function, [`hertz_mindlin`], computes a contact's force; the CPU backend
//! ([`super::hertz`]) calls it and the CUDA kernel `kernels/hertz.cu` is its line-by-line
//! twin (same names, same order of operations).
//!
//! # The law (what LIGGGHTS calls `model hertz tangential history`, YADE `HertzMindlin`)
//!
//! Two spheres a, b (radii r_a, r_b, masses m_a, m_b) of one material (Young's modulus E,
//! Poisson's ratio ν) overlap by δ = r_a + r_b − |x_a − x_b| > 0 along n = (x_a − x_b)/|·|.
//! Effective values: R* = r_a r_b / (r_a + r_b), m* = m_a m_b / (m_a + m_b),
//! E* = E / (2 (1 − ν²)), G* = E / (4 (2 − ν)(1 + ν)) (both bodies of the same material).
//! A wall or a body counts as a sphere of infinite radius and mass of the same material
//! (R* = r_a, m* = m_a), as in LIGGGHTS when walls share the grains' material.
//!
//! - Stiffnesses: S_n = 2 E* √(R* δ), S_t = 8 G* √(R* δ); k_n = (4/3) E* √(R* δ), k_t = S_t.
//! - Damping: γ_n = D √(S_n m*), γ_t = D √(S_t m*), with D set by the restitution
//!   coefficient e. LIGGGHTS and EDEM take D = −2 √(5/6) β, β = ln e / √(ln² e + π²), a
//!   formula derived for a linear spring: on a Hertz contact it gives a rebound of 0.38
//!   for e = 0.3. loam instead solves for the D whose contact rebounds at exactly e
//!   ([`damping_for_restitution`]): in units of the overlap and time scale of the impact the
//!   contact is u″ = −u^{3/2} − D √(3/2) u^{1/4} u′, u(0) = 0, u′(0) = 1, and the rebound
//!   speed −u′ at separation depends on D alone (Tsuji et al. 1992, Powder Technol. 71;
//!   Thornton et al. 2013, Powder Technol. 233). The two agree at e = 1 and differ most at
//!   small e; [`HertzMindlin::liggghts_damping`] gives the other for comparisons.
//! - Normal force on a: F_n = max(0, k_n δ − γ_n u_n) n, where u_n = (v_a − v_b)·n is the
//!   normal relative velocity (negative when approaching). The clamp at zero is a choice: no
//!   cohesion, so damping never pulls separating grains together (LIGGGHTS does the same
//!   with its default `limitForce`-less Hertz model only at small overlaps; we clamp always).
//! - Contact-point velocity: u = v_a − v_b + ω_a × (−l_a n) − ω_b × (l_b n) with lever arms
//!   l_a = r_a − δ/2, l_b = r_b − δ/2; tangential part u_t = u − (u·n) n.
//! - Tangential spring ξ (the history, one vector per contact): first rotated onto the
//!   current tangent plane keeping its length (the contact frame turns with the pair), then
//!   ξ ← ξ + u_t Δt. Trial force F_t = −k_t ξ − γ_t u_t. If |F_t| > μ |F_n|, the contact
//!   slides: F_t ← μ |F_n| F_t / |F_t| and the spring is reset to the sliding force,
//!   ξ = −F_t / k_t (Coulomb's limit; the damping does not charge the spring).
//! - Torques: on a, T_a = (−l_a n) × F_t; on b, T_b = (l_b n) × (−F_t) = −(l_b / l_a) T_a.
//! - Rolling resistance (optional, coefficient μ_r ≥ 0, the "constant directional torque"
//!   model): T_r = −μ_r R* |F_n| ω_rel / |ω_rel| on a, and −T_r on b, with
//!   ω_rel = ω_a − ω_b. It resists rolling with a torque independent of the rolling speed, a
//!   stand-in for grain shape (poppy seeds are kidney-shaped); 0 turns it off. A constant
//!   torque overshoots a spin that is nearly stopped: it flips sign every step and averages
//!   to zero, so a grain never comes to rest (a dead band). Its magnitude is therefore capped
//!   at ½ I* |ω_rel| / Δt with I* = (2/5) m* R*²: half the torque that would stop the relative
//!   spin of a grain on a wall (I* = I_a) in one step, and an eighth of it for two equal grains
//!   (I* is a quarter of their relative inertia I/2). The half is needed because the
//!   velocity-Verlet kicks apply a step's torque across two half steps: a cap of the whole
//!   stopping torque overshoots into a steady two-step rattle. Capped, the torque never
//!   reverses the spin, and a rolling contact far from rest feels the full μ_r R* |F_n|.
//!
//! # The time step
//!
//! Hertz contacts have no fixed stiffness, so the stable step is the Rayleigh-wave estimate
//! used by EDEM and LIGGGHTS: T_R = π r_min √(ρ/G) / (0.1631 ν + 0.8766), with
//! G = E / (2 (1 + ν)) and r_min the smallest grain radius. loam steps at
//! [`DEFAULT_FRACTION`] T_R unless told otherwise and refuses steps above
//! [`MAX_FRACTION`] T_R (EDEM's guidance is 20-40 % of T_R; loaded contacts need less, see
//! [`DEFAULT_FRACTION`] and [`MAX_FRACTION`]).

use serde::{Deserialize, Serialize};

use super::sdf::Vec3;

/// Default step as a fraction of the Rayleigh time: 0.1, not EDEM's 0.2-0.4. The Rayleigh
/// estimate is a wave speed; it knows nothing of load, while a loaded contact stiffens as
/// E^1/3 F^1/6 and a grain's tangential-rotational mode (effective mass m/3.5, damped more
/// strongly than the normal mode) is what turns unstable first under explicit damping. On
/// the 12 cm bed under the 76 mm disc the intrusion force at 10 and 20 mm was about 20 % low
/// at 0.2 T_R and converged (within the pours' scatter, and within YADE's and LIGGGHTS's) at
/// 0.1 and 0.05 T_R (results/README.md, `dem/small_bed_steps.txt`).
pub const DEFAULT_FRACTION: f64 = 0.1;
/// A robot's replay steps at most this fraction of the Rayleigh time (unless told otherwise):
/// half the default. The slow intrusion converges at [`DEFAULT_FRACTION`]; a robot loads the
/// bed harder and faster (the hopper's foot lands its weight on the bed, then pushes with up
/// to 40 N in 0.1 s), and its replay did not: the granular 60 mm plan's apex over
/// realisations of the shipped bed was 46.7 ± 2.0 mm at 0.2 T_R, 38.5 ± 1.8 at 0.1,
/// 45.5 ± 1.9 at 0.05 (nine) and 46.8 (one realisation) at 0.025 (results/README.md).
pub const REPLAY_FRACTION: f64 = 0.05;
/// Largest accepted step as a fraction of the Rayleigh time. A grain pressed at 100 g into a
/// pocket of three grains (a soft, strongly damped material: E = 1e6 Pa, e = 0.2; the pocket
/// test of tests/suite/dem_bulk.rs) comes to rest at 0.125 T_R and gains energy without bound at
/// 0.15 T_R; a bed prepared at 0.35 T_R never came to rest.
pub const MAX_FRACTION: f64 = 0.125;

/// The material of the grains (and of the walls and bodies they touch).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HertzMindlin {
    /// E [Pa]. Default 1e7: soft enough for a 10-20 µs step on mm grains; forces of a slow
    /// intrusion do not change between 1e7 and 1e8 (issue 13's YADE and LIGGGHTS runs).
    #[serde(default = "default_youngs_modulus")]
    pub youngs_modulus: f64,
    /// ν. Default 0.3.
    #[serde(default = "default_poisson_ratio")]
    pub poisson_ratio: f64,
    /// Coefficient of normal restitution e in (0, 1]. Default 0.5.
    #[serde(default = "default_restitution")]
    pub restitution: f64,
    /// μ_r: rolling-resistance coefficient (constant directional torque). Default 0 (off).
    #[serde(default)]
    pub rolling_friction: f64,
}

fn default_youngs_modulus() -> f64 {
    1e7
}
fn default_poisson_ratio() -> f64 {
    0.3
}
fn default_restitution() -> f64 {
    0.5
}

impl Default for HertzMindlin {
    fn default() -> Self {
        HertzMindlin {
            youngs_modulus: default_youngs_modulus(),
            poisson_ratio: default_poisson_ratio(),
            restitution: default_restitution(),
            rolling_friction: 0.0,
        }
    }
}

impl HertzMindlin {
    /// E* of two bodies of this material.
    pub fn effective_modulus(&self) -> f64 {
        let nu = self.poisson_ratio;
        self.youngs_modulus / (2.0 * (1.0 - nu * nu))
    }

    /// G* of two bodies of this material.
    pub fn effective_shear_modulus(&self) -> f64 {
        let nu = self.poisson_ratio;
        self.youngs_modulus / (4.0 * (2.0 - nu) * (1.0 + nu))
    }

    /// β = ln e / √(ln² e + π²) (−1 < β ≤ 0; 0 for e = 1).
    pub fn damping_ratio(&self) -> f64 {
        let l = self.restitution.ln();
        l / (l * l + std::f64::consts::PI * std::f64::consts::PI).sqrt()
    }

    /// The Rayleigh time T_R of the smallest grain (radius `r_min`, density `density`).
    pub fn rayleigh_time(&self, r_min: f64, density: f64) -> f64 {
        let nu = self.poisson_ratio;
        let shear = self.youngs_modulus / (2.0 * (1.0 + nu));
        std::f64::consts::PI * r_min * (density / shear).sqrt() / (0.1631 * nu + 0.8766)
    }

    /// What is wrong with these values, if anything: (field, message).
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if !(self.youngs_modulus > 0.0 && self.youngs_modulus.is_finite()) {
            return Err((
                "youngs_modulus",
                format!(
                    "is {}; it must be a positive stiffness in Pa (e.g. 1.0e7)",
                    self.youngs_modulus
                ),
            ));
        }
        if !(self.poisson_ratio > -1.0 && self.poisson_ratio < 0.5) {
            return Err((
                "poisson_ratio",
                format!("is {}; it must be in (−1, 0.5)", self.poisson_ratio),
            ));
        }
        if !(self.restitution > 0.0 && self.restitution <= 1.0) {
            return Err((
                "restitution",
                format!("is {}; it must be in (0, 1]", self.restitution),
            ));
        }
        if !(self.rolling_friction >= 0.0 && self.rolling_friction <= 10.0) {
            return Err((
                "rolling_friction",
                format!("is {}; it must be in [0, 10]", self.rolling_friction),
            ));
        }
        Ok(())
    }

    /// D as LIGGGHTS and EDEM compute it: −2 √(5/6) β.
    pub fn liggghts_damping(&self) -> f64 {
        -2.0 * (5.0f64 / 6.0).sqrt() * self.damping_ratio()
    }

    /// The precomputed constants a step uses.
    pub fn constants(&self) -> LawConstants {
        let (e_star, g_star) = (self.effective_modulus(), self.effective_shear_modulus());
        LawConstants {
            e_star,
            g_star,
            damping: damping_for_restitution(self.restitution),
            rolling: self.rolling_friction,
            tangential: tangential_damping_ratio(e_star, g_star),
        }
    }
}

/// The rebound speed of the dimensionless Hertz impact u″ = −u^{3/2} − D √(3/2) u^{1/4} u′
/// from u = 0, u′ = 1: −u′ where the contact force first vanishes (the force is clamped at
/// zero, so the grains part there). Classical RK4 in 4000 steps over the contact.
pub fn restitution_of_damping(d: f64) -> f64 {
    let c = d * 1.5f64.sqrt();
    let accel = |u: f64, v: f64| {
        let u = u.max(0.0);
        -u * u.sqrt() - c * u.sqrt().sqrt() * v
    };
    // The undamped contact lasts 3.218 time units; damping shortens the rebound.
    let h = 3.3 / 4000.0;
    let (mut u, mut v) = (0.0f64, 1.0f64);
    for _ in 0..40_000 {
        let (k1u, k1v) = (v, accel(u, v));
        let (k2u, k2v) = (
            v + 0.5 * h * k1v,
            accel(u + 0.5 * h * k1u, v + 0.5 * h * k1v),
        );
        let (k3u, k3v) = (
            v + 0.5 * h * k2v,
            accel(u + 0.5 * h * k2u, v + 0.5 * h * k2v),
        );
        let (k4u, k4v) = (v + h * k3v, accel(u + h * k3u, v + h * k3v));
        u += h / 6.0 * (k1u + 2.0 * k2u + 2.0 * k3u + k4u);
        v += h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
        if u <= 0.0 || (v < 0.0 && accel(u, v) >= 0.0) {
            return -v;
        }
    }
    0.0
}

/// The damping constant D whose Hertz contact rebounds at exactly `restitution` (bisection
/// on [`restitution_of_damping`], which falls monotonically in D).
pub fn damping_for_restitution(restitution: f64) -> f64 {
    if restitution >= 1.0 {
        return 0.0;
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while restitution_of_damping(hi) > restitution {
        hi *= 2.0;
        if hi > 1e6 {
            break;
        }
    }
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if restitution_of_damping(mid) > restitution {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// γ_t / γ_n = √(S_t / S_n) = √(4 G*/E*) (the CUDA twin computes it the same way).
pub fn tangential_damping_ratio(e_star: f64, g_star: f64) -> f64 {
    (4.0 * g_star / e_star).sqrt()
}

/// What [`hertz_mindlin`] needs of the material, computed once per step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LawConstants {
    pub e_star: f64,
    pub g_star: f64,
    /// −2 √(5/6) β (≥ 0).
    pub damping: f64,
    pub rolling: f64,
    /// √(4 G*/E*) = γ_t / γ_n.
    pub tangential: f64,
}

/// One contact as the law sees it.
#[derive(Clone, Copy, Debug)]
pub struct ContactInput {
    /// Unit normal from b towards a.
    pub normal: Vec3,
    /// δ > 0: the overlap.
    pub overlap: f64,
    /// R*, m*.
    pub radius: f64,
    pub mass: f64,
    /// Lever arms from each centre to the contact point (l_b = 0 for a wall or body: its
    /// contact-point velocity is given in `velocity_b`).
    pub lever_a: f64,
    pub lever_b: f64,
    pub velocity_a: Vec3,
    pub velocity_b: Vec3,
    pub spin_a: Vec3,
    pub spin_b: Vec3,
    pub friction: f64,
}

/// The force on a, the torque on a and the torque on b.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactOutput {
    pub force: Vec3,
    pub torque_a: Vec3,
    pub torque_b: Vec3,
    /// |F_n|.
    pub normal: f64,
}

#[inline(always)]
fn dot(a: Vec3, b: Vec3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline(always)]
pub fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// The Hertz-Mindlin force of one contact over a step of `dt`, updating its tangential
/// spring `history` (see the module docs for every formula).
#[inline(always)]
pub fn hertz_mindlin(
    law: &LawConstants,
    c: &ContactInput,
    dt: f64,
    history: &mut Vec3,
) -> ContactOutput {
    let n = c.normal;
    let root = (c.radius * c.overlap).sqrt();
    let s_n = 2.0 * law.e_star * root;
    let s_t = 8.0 * law.g_star * root;
    let k_n = (2.0 / 3.0) * s_n;
    let gamma_n = law.damping * (s_n * c.mass).sqrt();
    // γ_t = D √(S_t m*) = γ_n √(S_t / S_n), and S_t / S_n = 4 G*/E* is the material's.
    let gamma_t = gamma_n * law.tangential;

    // Contact-point relative velocity.
    let wa = cross(c.spin_a, n);
    let wb = cross(c.spin_b, n);
    let u = [
        c.velocity_a[0] - c.velocity_b[0] - c.lever_a * wa[0] - c.lever_b * wb[0],
        c.velocity_a[1] - c.velocity_b[1] - c.lever_a * wa[1] - c.lever_b * wb[1],
        c.velocity_a[2] - c.velocity_b[2] - c.lever_a * wa[2] - c.lever_b * wb[2],
    ];
    let u_n = dot(u, n);
    let u_t = [u[0] - u_n * n[0], u[1] - u_n * n[1], u[2] - u_n * n[2]];
    let f_n = (k_n * c.overlap - gamma_n * u_n).max(0.0);

    // The spring, turned onto the current tangent plane with its length kept.
    let mut xi = *history;
    let old = dot(xi, xi);
    if old > 0.0 {
        let xn = dot(xi, n);
        xi = [xi[0] - xn * n[0], xi[1] - xn * n[1], xi[2] - xn * n[2]];
        // The length is restored by s = √(|ξ|² / |ξ − (ξ·n) n|²) = 1 / √(1 − e), e = (ξ·n)²/|ξ|².
        // A contact frame turns little in a step: for e ≤ 1e-8, s = 1 + e/2 to round-off
        // (the next term, 3e²/8, is below 4e-17), one division instead of a division and a
        // root on the step's longest chain.
        let xn2 = xn * xn;
        let s = if xn2 <= 1e-8 * old {
            1.0 + 0.5 * xn2 / old
        } else {
            let new = dot(xi, xi);
            if new > 0.0 {
                (old / new).sqrt()
            } else {
                1.0
            }
        };
        xi = [xi[0] * s, xi[1] * s, xi[2] * s];
    }
    xi = [
        xi[0] + u_t[0] * dt,
        xi[1] + u_t[1] * dt,
        xi[2] + u_t[2] * dt,
    ];
    let mut f_t = [
        -s_t * xi[0] - gamma_t * u_t[0],
        -s_t * xi[1] - gamma_t * u_t[1],
        -s_t * xi[2] - gamma_t * u_t[2],
    ];
    let limit = c.friction * f_n;
    let ft2 = dot(f_t, f_t);
    if ft2 > limit * limit {
        let s = if ft2 > 0.0 { limit / ft2.sqrt() } else { 0.0 };
        f_t = [f_t[0] * s, f_t[1] * s, f_t[2] * s];
        if s_t > 0.0 {
            let k = -1.0 / s_t;
            xi = [f_t[0] * k, f_t[1] * k, f_t[2] * k];
        }
    }
    *history = xi;

    let lever = cross(n, f_t);
    let mut torque_a = [
        -c.lever_a * lever[0],
        -c.lever_a * lever[1],
        -c.lever_a * lever[2],
    ];
    let mut torque_b = [
        -c.lever_b * lever[0],
        -c.lever_b * lever[1],
        -c.lever_b * lever[2],
    ];
    if law.rolling > 0.0 {
        let w = [
            c.spin_a[0] - c.spin_b[0],
            c.spin_a[1] - c.spin_b[1],
            c.spin_a[2] - c.spin_b[2],
        ];
        let wn = dot(w, w).sqrt();
        if wn > 0.0 {
            // Capped so that alone it cannot reverse the relative spin within the step.
            let stop = 0.2 * c.mass * c.radius * c.radius * wn / dt;
            let s = (law.rolling * c.radius * f_n).min(stop) / wn;
            for i in 0..3 {
                torque_a[i] -= s * w[i];
                torque_b[i] += s * w[i];
            }
        }
    }
    ContactOutput {
        force: [
            f_n * n[0] + f_t[0],
            f_n * n[1] + f_t[1],
            f_n * n[2] + f_t[2],
        ],
        torque_a,
        torque_b,
        normal: f_n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The law as written in the module docs, without the step's shortcuts (the spring's
    /// length restored by √(|ξ|²/|ξ'|²) always, γ_t = D √(S_t m*)): the shortcuts must agree
    /// with it to round-off on contacts that turn, slide and spin.
    fn reference(law: &LawConstants, c: &ContactInput, dt: f64, history: &mut Vec3) -> Vec3 {
        let n = c.normal;
        let root = (c.radius * c.overlap).sqrt();
        let (s_n, s_t) = (2.0 * law.e_star * root, 8.0 * law.g_star * root);
        let gamma_n = law.damping * (s_n * c.mass).sqrt();
        let gamma_t = law.damping * (s_t * c.mass).sqrt();
        let wa = cross(c.spin_a, n);
        let wb = cross(c.spin_b, n);
        let u: Vec3 = std::array::from_fn(|i| {
            c.velocity_a[i] - c.velocity_b[i] - c.lever_a * wa[i] - c.lever_b * wb[i]
        });
        let u_n = dot(u, n);
        let u_t: Vec3 = std::array::from_fn(|i| u[i] - u_n * n[i]);
        let f_n = ((2.0 / 3.0) * s_n * c.overlap - gamma_n * u_n).max(0.0);
        let old = dot(*history, *history);
        let xn = dot(*history, n);
        let mut xi: Vec3 = std::array::from_fn(|i| history[i] - xn * n[i]);
        let new = dot(xi, xi);
        if old > 0.0 && new > 0.0 {
            xi = xi.map(|v| v * (old / new).sqrt());
        }
        xi = std::array::from_fn(|i| xi[i] + u_t[i] * dt);
        let mut f_t: Vec3 = std::array::from_fn(|i| -s_t * xi[i] - gamma_t * u_t[i]);
        let limit = c.friction * f_n;
        let ft = dot(f_t, f_t).sqrt();
        if ft > limit {
            f_t = f_t.map(|v| v * limit / ft);
            xi = f_t.map(|v| -v / s_t);
        }
        *history = xi;
        std::array::from_fn(|i| f_n * n[i] + f_t[i])
    }

    #[test]
    fn the_steps_shortcuts_agree_with_the_written_law() {
        let law = HertzMindlin {
            youngs_modulus: 1e7,
            poisson_ratio: 0.3,
            restitution: 0.5,
            rolling_friction: 0.0,
        }
        .constants();
        let mut state = 0x2545F4914F6CDD1Du64;
        let mut uniform = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let (mut turned, mut slid) = (0, 0);
        for case in 0..2000 {
            let raw: Vec3 = [uniform(), uniform(), uniform()];
            let norm = dot(raw, raw).sqrt();
            let normal = raw.map(|v| v / norm);
            // Springs from nearly in-plane (the shortcut) to far out of it (the root).
            let tilt = if case % 2 == 0 { 1e-6 } else { 0.5 };
            let t = cross(normal, [0.3, -0.7, 0.2]);
            let spring: Vec3 =
                std::array::from_fn(|i| 1e-5 * (t[i] + tilt * uniform() * normal[i]));
            let c = ContactInput {
                normal,
                overlap: 1e-5 * (1.0 + uniform()),
                radius: 1.5e-3,
                mass: 1e-4,
                lever_a: 3e-3,
                lever_b: 3e-3,
                velocity_a: [uniform() * 0.01, uniform() * 0.01, uniform() * 0.01],
                velocity_b: [0.0; 3],
                spin_a: [uniform(), uniform(), uniform()],
                spin_b: [uniform(), 0.0, 0.0],
                friction: 0.5,
            };
            let (mut fast, mut slow) = (spring, spring);
            let out = hertz_mindlin(&law, &c, 2e-5, &mut fast);
            let expected = reference(&law, &c, 2e-5, &mut slow);
            let scale = dot(expected, expected).sqrt();
            for i in 0..3 {
                assert!(
                    (out.force[i] - expected[i]).abs() <= 1e-13 * scale,
                    "case {case}: force {:?} against {expected:?}",
                    out.force
                );
                assert!(
                    (fast[i] - slow[i]).abs() <= 1e-13 * dot(slow, slow).sqrt(),
                    "case {case}: spring {fast:?} against {slow:?}"
                );
            }
            let xn = dot(spring, normal);
            turned += usize::from(xn * xn <= 1e-8 * dot(spring, spring));
            // Sliding: the tangential force sits on the Coulomb limit μ |F_n| (μ = 0.5).
            let tangential: Vec3 = std::array::from_fn(|i| out.force[i] - out.normal * normal[i]);
            slid += usize::from(
                out.normal > 0.0
                    && dot(tangential, tangential).sqrt() >= 0.5 * out.normal * (1.0 - 1e-12),
            );
        }
        // Both branches of the spring's rescale and the Coulomb limit were exercised.
        assert!(
            turned > 500 && turned < 1500,
            "{turned} springs took the shortcut"
        );
        assert!(slid > 100, "{slid} contacts slid");
    }
}
