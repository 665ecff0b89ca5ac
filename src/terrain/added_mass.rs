//! The added-mass granular model (MODEL.md section 2; Aguilar & Goldman 2016 as used by the
//! jumping-on-granular-media paper).

use serde::{Deserialize, Serialize};

use super::contact::{ContactModel, FootNormal, LawEnd, Normal};
use super::rigid::{RigidGround, Row};
use crate::scalar::Scalar;

/// A granular medium under a flat circular foot of radius `foot_radius`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AddedMass {
    pub foot_radius: f64,
    /// μ: how fast the jammed cone grows with depth.
    pub recruitment_rate: f64,
    /// θ: shear-band angle from the horizontal [rad].
    pub shear_band_angle: f64,
    pub surrounding_mass_scaling: f64,
    pub volume_fraction: f64,
    pub grain_density: f64,
    /// k_sh [N/m].
    pub penetration_stiffness: f64,
    /// σ_rft [N/m³].
    pub resistive_stress: f64,
    /// b: inertial drag scaling.
    pub drag_scaling: f64,
}

/// The bed's response at one foot state.
pub struct Resistance<S> {
    /// m_a: mass of the jammed grains moving with the foot.
    pub added_mass: S,
    /// F_hyd + b c_g φ ρ μ A_flat ż_f²: the bed's force on the foot before the added-mass
    /// inertia term −m_a z̈_f.
    pub force: S,
}

impl<S: Scalar> Resistance<S> {
    /// F_g = F − m_a z̈_f: the bed's force on a foot whose vertical acceleration is
    /// `acceleration` (+ = up).
    pub fn on_foot(self, acceleration: &S) -> S {
        self.force - self.added_mass * acceleration.clone()
    }
}

impl AddedMass {
    /// d_c: the depth at which the jammed cone is complete.
    pub fn cone_depth(&self) -> f64 {
        self.foot_radius * self.shear_band_angle.tan() / self.recruitment_rate
    }

    fn area(&self) -> f64 {
        std::f64::consts::PI * self.foot_radius * self.foot_radius
    }

    /// c_g φ ρ μ: added mass per unit of I_flat.
    fn mass_density(&self) -> f64 {
        self.surrounding_mass_scaling
            * self.volume_fraction
            * self.grain_density
            * self.recruitment_rate
    }

    /// Resistance at foot height `z_f` (the surface is z = 0) and velocity `v_f`.
    ///
    /// Above the surface the depth is 0 and so is every term. The drag term is written for
    /// a sinking foot (ż_f ≤ 0), the only case the model describes.
    pub fn resistance<S: Scalar>(&self, z_f: &S, v_f: &S) -> Resistance<S> {
        let area = self.area();
        let d_c = self.cone_depth();
        let depth = (-z_f.clone()).max_f(0.0);
        let s = (depth.clone() / d_c).min_f(1.0);
        let uncovered = -s + 1.0;
        let a_flat = uncovered.square() * area;
        let i_flat = (-(uncovered.square() * uncovered) + 1.0) * (area * d_c / 3.0);
        let i_cone = (depth * area - i_flat.clone()) / self.shear_band_angle.cos();
        let f_hyd =
            i_flat.clone() * (self.penetration_stiffness / area) + i_cone * self.resistive_stress;
        // Grains are only accelerated by a foot that is in them: no drag above the surface.
        let in_bed = z_f.lt(&S::zero());
        let drag = S::if_else(
            &in_bed,
            &(a_flat * v_f.square() * (self.drag_scaling * self.mass_density())),
            &S::zero(),
        );
        Resistance {
            added_mass: i_flat * self.mass_density(),
            force: f_hyd + drag,
        }
    }

    /// F_hyd(d): the static resistance at depth d ≥ 0.
    pub fn static_resistance(&self, depth: f64) -> f64 {
        self.resistance(&-depth, &0.0).force
    }

    /// The depth at which the static resistance carries `load` (the robot at rest).
    pub fn equilibrium_depth(&self, load: f64) -> f64 {
        // F_hyd grows monotonically with depth (at least σ_rft π R² tan-free slope past d_c),
        // so bisection on a bracket that is doubled until it holds the load is enough.
        let mut high = self.cone_depth();
        while self.static_resistance(high) < load {
            high *= 2.0;
        }
        let mut low = 0.0;
        for _ in 0..200 {
            let mid = 0.5 * (low + high);
            if self.static_resistance(mid) < load {
                low = mid;
            } else {
                high = mid;
            }
        }
        0.5 * (low + high)
    }
}

/// The added-mass bed as a contact model under each foot: sideways (and level) the bed holds
/// a foot like rigid ground within `friction`'s cone; along the normal a foot is stuck where
/// it is while its load stays within [0, F_hyd(d)], sinks under F_z = F_hyd + drag − m_a z̈
/// when its load passes F_hyd, and sticks again when its sinking stops (the hopper's stick
/// law, docs/MODEL.md section 2).
#[derive(Clone, Debug, PartialEq)]
pub struct Bed {
    pub friction: f64,
    pub law: AddedMass,
}

impl<S: Scalar> ContactModel<S> for Bed {
    fn name(&self) -> &'static str {
        "added_mass"
    }

    /// The bed's first stage, measured on the hopper: stance held at 0.1 s, the flight free
    /// (the stance's duration is what couples with the bed's law), at most 20 iterations.
    fn stage_one_duration(&self, stance: bool) -> Option<f64> {
        stance.then_some(0.1)
    }

    fn stage_one_iterations(&self) -> usize {
        20
    }
    fn ground(&self) -> RigidGround {
        RigidGround {
            friction: self.friction,
        }
    }
    fn yields(&self) -> bool {
        true
    }
    fn remembers_footprint(&self) -> bool {
        true
    }
    fn rest_depth(&self, load: f64) -> f64 {
        self.law.equilibrium_depth(load)
    }
    fn law(&self, z: &S, vz: &S) -> Resistance<S> {
        self.law.resistance(z, vz)
    }
    /// F_z = F_hyd + drag − m_a z̈ while the foot sinks (ż ≤ 0): in a plan a held foot in the
    /// bed is always on the verge of sinking or sinking.
    fn stance_rows(&self, foot: &FootNormal<S>, weight: f64) -> Vec<Row<S>> {
        let law = self.law.resistance(foot.z, foot.vz).on_foot(foot.az);
        vec![
            Row::equal(
                format!("{} bed", foot.name),
                foot.fz.clone() - law,
                0.0,
                weight,
            ),
            Row::at_most(format!("{} sinks", foot.name), foot.vz.clone(), 0.0, 0.1),
        ]
    }
    fn lifts_at_zero_force(&self) -> bool {
        false
    }
    /// The foot has stopped sinking (ż = 0 at the stance's last node) and, free of the bed,
    /// accelerates upward (z̈ ≥ `least_lift` at the next phase's first node).
    fn lift_off_rows(&self, foot: &FootNormal<S>, least_lift: f64) -> Vec<Row<S>> {
        let name = foot.name;
        vec![
            Row::equal(format!("{name} stops sinking"), foot.vz.clone(), 0.0, 0.1),
            Row::at_least(
                format!("{name} accelerates up"),
                foot.az.clone(),
                least_lift,
                1.0,
            ),
        ]
    }
    fn normal_impact(&self) -> bool {
        true
    }
    fn allows_landing(&self) -> bool {
        false
    }
    fn touchdown(&self) -> Normal {
        Normal::Held
    }
    /// F_z (lift-off) and F_hyd(d) − F_z (the foot sinks).
    fn held_guard(&self, fz: f64, depth: f64) -> f64 {
        fz.min(self.law.static_resistance(depth) - fz)
    }
    /// The guard nearer 0 decides: the foot sinks when its load is nearer F_hyd than 0.
    fn held_yields(&self, fz: f64, depth: f64) -> bool {
        self.law.static_resistance(depth) - fz < fz
    }
    /// −ż: a sinking foot sticks when it stops sinking.
    fn law_guard(&self, _z: f64, vz: f64) -> f64 {
        -vz
    }
    fn law_end(&self) -> LawEnd {
        LawEnd::Sticks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub fn poppy_seeds() -> AddedMass {
        AddedMass {
            foot_radius: 0.038,
            recruitment_rate: 2.0,
            shear_band_angle: 60f64.to_radians(),
            surrounding_mass_scaling: 2.7,
            volume_fraction: 0.57,
            grain_density: 1000.0,
            penetration_stiffness: 1600.0,
            resistive_stress: 1.2e5,
            drag_scaling: 17.2,
        }
    }

    #[test]
    fn the_robot_rests_about_7_6_mm_deep_in_poppy_seeds() {
        // MODEL.md: the static depth is about 7.6 mm for the 1.157 kg robot.
        let weight = (0.948 + 0.165 + 0.044) * 9.81;
        let depth = poppy_seeds().equilibrium_depth(weight);
        assert!((depth - 0.0076).abs() < 0.0002, "depth {depth}");
    }

    #[test]
    fn past_the_cone_depth_the_resistance_grows_linearly_and_the_added_mass_is_constant() {
        let bed = poppy_seeds();
        let d_c = bed.cone_depth();
        let area = std::f64::consts::PI * 0.038 * 0.038;
        let slope = (bed.static_resistance(d_c + 0.02) - bed.static_resistance(d_c + 0.01)) / 0.01;
        // Past d_c: dF/dd = σ_rft π R² / cos θ, and I_flat stays at π R² d_c / 3.
        assert!((slope - 1.2e5 * area / 0.5).abs() < 1e-6 * slope);
        let m1 = bed.resistance(&-(d_c + 0.01), &0.0).added_mass;
        let m2 = bed.resistance(&-(d_c + 0.03), &0.0).added_mass;
        assert_eq!(m1, m2);
        assert!((m1 - 2.7 * 0.57 * 1000.0 * 2.0 * area * d_c / 3.0).abs() < 1e-12);
    }

    #[test]
    fn above_the_surface_the_bed_does_nothing() {
        let r = poppy_seeds().resistance(&0.01, &-1.0);
        assert_eq!((r.added_mass, r.force), (0.0, 0.0));
    }
}
