//! The rigid foot of the wrench-space paper's accuracy test: a single body pushed by a
//! commanded body wrench onto the ground through a flat sole.
//!
//! The base frame's origin is the foot's centre of mass (so the three base coordinates are
//! the COM's x, z and the pitch, and a wrench (F_x, F_z, τ) about the COM is exactly the
//! generalized force on them: the inputs act directly on q[0], q[1], q[2]). The sole's centre
//! is `com_height` straight below the COM in the body frame.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{base_channels, ContactPoint, Input, PlanarRobot};
use crate::model::multibody::{Body, Multibody};

/// The test foot's parameters (SI units).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PlanarFootParams {
    /// Foot mass \[kg\]. Default 7.357 (wrench-space paper, accuracy test).
    pub mass: f64,
    /// Moment of inertia about the COM \[kg m²\]. Default 0.061 (wrench-space paper). A
    /// uniform 0.1 × 0.25 m block of this mass would have 0.044; the paper's value is kept.
    pub inertia: f64,
    /// Sole width along the body x axis \[m\]; the contact's half width is half of it.
    /// Default 0.1 (the paper's cylinder-section foot).
    pub width: f64,
    /// Height of the foot \[m\]. Default 0.25 (the paper's cylinder section, approximately);
    /// only used for the COM height's default and for drawing.
    pub height: f64,
    /// Height of the COM above the sole \[m\]. Default 0.125 (half the height: uniform body).
    pub com_height: f64,
    /// Bounds on the horizontal push F_x \[N\]. Default ±200 (loam's: ~2.8 m g).
    pub force_x_limit: (f64, f64),
    /// Bounds on the vertical push F_z \[N\]. Default (−500, 500) (loam's: ~7 m g).
    pub force_z_limit: (f64, f64),
    /// Bounds on the torque about the COM τ \[N m\]. Default ±50 (loam's).
    pub torque_limit: (f64, f64),
}

impl Default for PlanarFootParams {
    fn default() -> Self {
        PlanarFootParams {
            mass: 7.357,
            inertia: 0.061,
            width: 0.1,
            height: 0.25,
            com_height: 0.125,
            force_x_limit: (-200.0, 200.0),
            force_z_limit: (-500.0, 500.0),
            torque_limit: (-50.0, 50.0),
        }
    }
}

impl PlanarFootParams {
    pub fn build(&self, gravity: f64) -> PlanarRobot {
        let body = Multibody {
            gravity,
            guide_angle: 0.0,
            bodies: vec![Body {
                name: "foot".into(),
                mass: self.mass,
                inertia: self.inertia,
                com: [0.0, 0.0],
                joint: None,
            }],
        };
        let input = |name: &str, unit: &str, coordinate, limit| Input {
            name: name.into(),
            unit: unit.into(),
            coordinate,
            limit,
            drive: None,
        };
        PlanarRobot {
            name: "planar_foot".into(),
            body,
            coordinates: base_channels(self.height),
            inputs: vec![
                input("force_x", "N", 0, self.force_x_limit),
                input("force_z", "N", 1, self.force_z_limit),
                input("torque", "N m", 2, self.torque_limit),
            ],
            contacts: vec![ContactPoint {
                name: "foot".into(),
                body: 0,
                point: [0.0, -self.com_height],
                half_width: 0.5 * self.width,
                radius: None,
            }],
            springs: vec![],
            standing: vec![0.0, self.com_height, 0.0],
            locked: Vec::new(),
        }
    }
}
