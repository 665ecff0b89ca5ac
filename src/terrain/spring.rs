//! A linear spring-damper ground (Kelvin-Voigt, the soft-contact law of many simulators):
//! a foot that presses d = −z below the surface z = 0 meets F_z = k d + c ḋ = k d − c ż, and
//! the ground pushes but never pulls, F_z = max(0, k d − c ż). Sideways
//! a foot in the ground is held within the friction cone, as on rigid ground.
//!
//! A foot is under the law from touchdown until it comes back up through the surface (its
//! velocity carries on into the ground: there is no impact along the normal); so a foot that
//! rebounds fast leaves the law (F_z = 0, the clamp) before the surface, and flies out of
//! the last of its dent. The choice (rather than letting the ground pull until z = 0, the
//! undamped textbook restitution e = exp(−πζ/√(1−ζ²))) keeps F_z ≥ 0, which the friction cone
//! needs; a point mass dropped on it rebounds at the closed form of `tests/suite/contact_models.rs`.
//! At rest under a load W a foot sinks W / k.
//!
//! This file is the whole model: its parameters (as a problem file writes them), its law and
//! both faces of [`ContactModel`]; `problem::planar::PlanarTerrainConfig` registers it as
//! `terrain: {model: spring, stiffness: …, damping: …}`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::added_mass::Resistance;
use super::contact::{ContactModel, FootNormal, LawEnd, Normal};
use super::rigid::{RigidGround, Row};
use crate::scalar::Scalar;

/// A linear spring-damper ground under every foot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SpringGround {
    /// μ: Coulomb friction coefficient between a foot and the ground \[-\]. Default 0.8.
    pub friction: f64,
    /// k: normal stiffness per foot \[N/m\]. Default 50 000 (a 10 kg robot on one foot rests
    /// 2 mm deep).
    pub stiffness: f64,
    /// c: normal damping per foot \[N s/m\]. Default 400 (damping ratio about 0.28 for 10 kg).
    pub damping: f64,
}

impl Default for SpringGround {
    fn default() -> Self {
        SpringGround {
            friction: 0.8,
            stiffness: 5e4,
            damping: 400.0,
        }
    }
}

impl SpringGround {
    /// What is wrong with the parameters, as (field, message) pairs.
    pub fn violations(&self) -> Vec<(&'static str, String)> {
        let mut bad = Vec::new();
        if !(self.stiffness.is_finite() && self.stiffness > 0.0) {
            bad.push((
                "stiffness",
                format!("must be a finite number > 0 N/m, got {}", self.stiffness),
            ));
        }
        if !(self.damping.is_finite() && self.damping >= 0.0) {
            bad.push((
                "damping",
                format!("must be a finite number ≥ 0 N s/m, got {}", self.damping),
            ));
        }
        bad
    }
}

impl<S: Scalar> ContactModel<S> for SpringGround {
    fn name(&self) -> &'static str {
        "spring"
    }
    fn ground(&self) -> RigidGround {
        RigidGround {
            friction: self.friction,
        }
    }
    fn yields(&self) -> bool {
        true
    }
    fn rest_depth(&self, load: f64) -> f64 {
        load / self.stiffness
    }
    /// F_z = max(0, k d − c ż), d = −z; no added mass. The law is asked only of a foot in the
    /// ground (the plan's stance rows hold z ≤ 0; the replay's foot leaves the law when it
    /// rises through the surface), so it has no branch at z = 0: touchdown and lift-off nodes
    /// sit exactly there, and a branch would make the force jump under the planner.
    fn law(&self, z: &S, vz: &S) -> Resistance<S> {
        Resistance {
            added_mass: S::zero(),
            force: (-z.clone() * self.stiffness - vz.clone() * self.damping).max_f(0.0),
        }
    }
    /// F_z is the law's, and the foot is in the ground (z ≤ 0).
    fn stance_rows(&self, foot: &FootNormal<S>, weight: f64) -> Vec<Row<S>> {
        let law = <Self as ContactModel<S>>::law(self, foot.z, foot.vz).force;
        vec![
            Row::equal(
                format!("{} spring", foot.name),
                foot.fz.clone() - law,
                0.0,
                weight,
            ),
            Row::at_most(
                format!("{} in the ground", foot.name),
                foot.z.clone(),
                0.0,
                0.01,
            ),
        ]
    }
    fn lifts_at_zero_force(&self) -> bool {
        false
    }
    /// A foot leaves where it comes back up through the surface (z = 0 at the stance's last
    /// node; the law has let go of it there or before).
    fn lift_off_rows(&self, foot: &FootNormal<S>, _least_lift: f64) -> Vec<Row<S>> {
        vec![Row::equal(
            format!("{} at the surface", foot.name),
            foot.z.clone(),
            0.0,
            0.01,
        )]
    }
    fn normal_impact(&self) -> bool {
        false
    }
    fn touchdown(&self) -> Normal {
        Normal::Law
    }
    /// −z: the foot leaves when it rises through the surface.
    fn law_guard(&self, z: f64, _vz: f64) -> f64 {
        -z
    }
    fn law_end(&self) -> LawEnd {
        LawEnd::LiftsOff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ground_pushes_in_proportion_and_never_pulls() {
        let g = SpringGround {
            friction: 0.8,
            stiffness: 1000.0,
            damping: 10.0,
        };
        let f = |z: f64, vz: f64| <SpringGround as ContactModel<f64>>::law(&g, &z, &vz).force;
        assert_eq!(f(-0.01, 0.0), 10.0);
        assert_eq!(f(-0.01, -1.0), 20.0);
        // Rising fast out of a shallow dent: the damper would pull; the ground does not.
        assert_eq!(f(-0.001, 1.0), 0.0);
        let sink = <SpringGround as ContactModel<f64>>::rest_depth(&g, 9.81);
        assert!((sink - 0.00981).abs() < 1e-15, "{sink}");
    }
}
