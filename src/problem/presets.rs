//! Named granular media: the parameter sets a problem picks with `terrain.medium` and may
//! override field by field.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A granular medium whose added-mass parameters loam knows (MODEL.md section 2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MediumPreset {
    /// Loosely packed poppy seeds, the bed of the added-mass paper's experiments.
    #[default]
    PoppySeeds,
}

impl MediumPreset {
    /// The preset's parameters.
    pub fn parameters(self) -> Medium {
        match self {
            // MODEL.md section 2 table; b is the paper's one fitted value.
            MediumPreset::PoppySeeds => Medium {
                recruitment_rate: 2.0,
                shear_band_angle_deg: 60.0,
                surrounding_mass_scaling: 2.7,
                volume_fraction: 0.57,
                grain_density: 1000.0,
                penetration_stiffness: 1600.0,
                resistive_stress: 1.2e5,
                drag_scaling: 17.2,
            },
        }
    }
}

/// The added-mass model's medium parameters, every one resolved (MODEL.md section 2).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Medium {
    /// μ: how fast the cone of jammed grains grows with depth \[-\].
    pub recruitment_rate: f64,
    /// θ: the shear band's angle from the horizontal \[deg\].
    pub shear_band_angle_deg: f64,
    /// c_g: scaling of the surrounding grains' mass \[-\].
    pub surrounding_mass_scaling: f64,
    /// φ: volume fraction of the packing \[-\].
    pub volume_fraction: f64,
    /// ρ: grain density \[kg/m³\].
    pub grain_density: f64,
    /// k_sh: penetration stiffness \[N/m\].
    pub penetration_stiffness: f64,
    /// σ_rft: depth-dependent resistive stress \[N/m³\].
    pub resistive_stress: f64,
    /// b: inertial drag scaling \[-\].
    pub drag_scaling: f64,
}

impl Medium {
    /// θ in radians.
    pub fn shear_band_angle(&self) -> f64 {
        self.shear_band_angle_deg.to_radians()
    }
}
