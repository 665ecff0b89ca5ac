//! Terrain models: how the ground holds the foot in stance. Each is closed-form and generic
//! over the scalar, so the planner and the simulators evaluate the same equations.

pub mod added_mass;
pub mod contact;
pub mod hull;
pub mod rigid;
pub mod spring;
pub mod wrench_set;
pub mod wrench_space;

use serde::{Deserialize, Serialize};

pub use added_mass::{AddedMass, Bed};
pub use contact::ContactModel;
pub use spring::SpringGround;

use crate::scalar::Scalar;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Terrain {
    /// The foot cannot move while it touches the ground.
    Rigid,
    /// A granular bed that yields under load (MODEL.md section 2).
    AddedMass(AddedMass),
}

/// The foot's acceleration in stance and the terrain's force on it (+ = up).
pub struct StanceFoot<S> {
    pub acceleration: S,
    pub force: S,
}

impl Terrain {
    /// The foot in stance under `load`, the downward force the leg and the foot's weight put
    /// on the ground (F_s + m_f g), for a foot of mass `foot_mass`.
    pub fn stance<S: Scalar>(&self, z_f: &S, v_f: &S, load: &S, foot_mass: f64) -> StanceFoot<S> {
        match self {
            Terrain::Rigid => StanceFoot {
                acceleration: S::zero(),
                force: load.clone(),
            },
            Terrain::AddedMass(bed) => {
                let r = bed.resistance(z_f, v_f);
                let acceleration =
                    (r.force.clone() - load.clone()) / (r.added_mass.clone() + foot_mass);
                let force = r.on_foot(&acceleration);
                StanceFoot {
                    acceleration,
                    force,
                }
            }
        }
    }

    /// Height of the foot at rest under `load`: 0 on rigid ground, below the surface on a bed.
    pub fn rest_height(&self, load: f64) -> f64 {
        match self {
            Terrain::Rigid => 0.0,
            Terrain::AddedMass(bed) => -bed.equilibrium_depth(load),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Terrain::Rigid => "rigid",
            Terrain::AddedMass(_) => "added_mass",
        }
    }
}
