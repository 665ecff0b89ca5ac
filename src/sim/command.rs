//! The open-loop command a plan hands to the robot: the actuator set-point z_d(t) and its rate
//! u = ż_d, interpolated between the collocation nodes the way the scheme implies.

use serde::Serialize;

/// How z_d varies between two nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Interpolation {
    /// Straight lines between node values (trapezoidal collocation: the defect
    /// z_d⁺ − z_d = h (u + u⁺)/2 is the chord's slope). u is the chord's slope.
    Linear,
    /// The cubic Hermite through the node values with the node rates u as end slopes
    /// (Hermite–Simpson collocation's own state interpolant). u is its derivative.
    CubicHermite,
}

/// z_d(t) and u(t) from node samples; before the first node and after the last the command
/// holds still.
#[derive(Clone, Debug)]
pub struct Command {
    times: Vec<f64>,
    positions: Vec<f64>,
    rates: Vec<f64>,
    interpolation: Interpolation,
}

#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error("the command needs at least two nodes, got {0}")]
    TooFewNodes(usize),
    #[error("node times must not decrease: node {index} is at {time} s after {previous} s")]
    Decreasing {
        index: usize,
        time: f64,
        previous: f64,
    },
    #[error("node {index} has a value that is not finite")]
    NotFinite { index: usize },
}

impl Command {
    /// From node times, positions z_d and rates u. Repeated times (the last node of one phase
    /// and the first of the next) are merged, keeping the later node.
    pub fn new(
        times: &[f64],
        positions: &[f64],
        rates: &[f64],
        interpolation: Interpolation,
    ) -> Result<Command, CommandError> {
        let mut command = Command {
            times: Vec::with_capacity(times.len()),
            positions: Vec::with_capacity(times.len()),
            rates: Vec::with_capacity(times.len()),
            interpolation,
        };
        for (index, ((&t, &z), &u)) in times.iter().zip(positions).zip(rates).enumerate() {
            if !(t.is_finite() && z.is_finite() && u.is_finite()) {
                return Err(CommandError::NotFinite { index });
            }
            if let Some(&previous) = command.times.last() {
                if t < previous {
                    return Err(CommandError::Decreasing {
                        index,
                        time: t,
                        previous,
                    });
                }
                if t - previous <= 1e-12 * (1.0 + t.abs()) {
                    command.times.pop();
                    command.positions.pop();
                    command.rates.pop();
                }
            }
            command.times.push(t);
            command.positions.push(z);
            command.rates.push(u);
        }
        if command.times.len() < 2 {
            return Err(CommandError::TooFewNodes(command.times.len()));
        }
        Ok(command)
    }

    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// The node times: the instants where the command's derivatives may jump.
    pub fn breakpoints(&self) -> &[f64] {
        &self.times
    }

    pub fn end_time(&self) -> f64 {
        *self.times.last().unwrap()
    }

    /// (z_d, u) at time `t`.
    pub fn at(&self, t: f64) -> (f64, f64) {
        self.eval(self.segment(t), t)
    }

    /// The piece of the command that holds `t`: before the first node, between nodes k and
    /// k + 1, or after the last node.
    pub fn segment(&self, t: f64) -> Segment {
        let n = self.times.len();
        if t < self.times[0] {
            Segment::Before
        } else if t >= self.times[n - 1] {
            Segment::After
        } else {
            Segment::Between(self.times.partition_point(|&s| s <= t) - 1)
        }
    }

    /// (z_d, u) at `t` from the polynomial of `segment`, also at or slightly past its ends: an
    /// integrator step that ends on a node evaluates the piece it started in, not the next.
    pub fn eval(&self, segment: Segment, t: f64) -> (f64, f64) {
        let k = match segment {
            Segment::Before => return (self.positions[0], 0.0),
            Segment::After => return (*self.positions.last().unwrap(), 0.0),
            Segment::Between(k) => k,
        };
        let h = self.times[k + 1] - self.times[k];
        let (z0, z1) = (self.positions[k], self.positions[k + 1]);
        match self.interpolation {
            Interpolation::Linear => {
                let slope = (z1 - z0) / h;
                (z0 + slope * (t - self.times[k]), slope)
            }
            Interpolation::CubicHermite => {
                let s = (t - self.times[k]) / h;
                let (m0, m1) = (self.rates[k] * h, self.rates[k + 1] * h);
                let s2 = s * s;
                let s3 = s2 * s;
                let z = (2.0 * s3 - 3.0 * s2 + 1.0) * z0
                    + (s3 - 2.0 * s2 + s) * m0
                    + (-2.0 * s3 + 3.0 * s2) * z1
                    + (s3 - s2) * m1;
                let dz = (6.0 * s2 - 6.0 * s) * z0
                    + (3.0 * s2 - 4.0 * s + 1.0) * m0
                    + (-6.0 * s2 + 6.0 * s) * z1
                    + (3.0 * s2 - 2.0 * s) * m1;
                (z, dz / h)
            }
        }
    }
}

/// A piece of a [`Command`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Segment {
    Before,
    Between(usize),
    After,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cubic_reproduces_a_cubic_and_its_derivative() {
        let p = |t: f64| 0.3 * t * t * t - t * t + 0.5 * t - 0.2;
        let dp = |t: f64| 0.9 * t * t - 2.0 * t + 0.5;
        let times = [0.0, 0.4, 0.4, 1.0, 1.7];
        let z: Vec<f64> = times.iter().map(|&t| p(t)).collect();
        let u: Vec<f64> = times.iter().map(|&t| dp(t)).collect();
        let c = Command::new(&times, &z, &u, Interpolation::CubicHermite).unwrap();
        assert_eq!(c.breakpoints().len(), 4, "the repeated node is merged");
        for t in [0.1, 0.5, 0.99, 1.3] {
            let (zt, ut) = c.at(t);
            assert!((zt - p(t)).abs() < 1e-14 && (ut - dp(t)).abs() < 1e-13);
        }
        assert_eq!(c.at(2.0), (p(1.7), 0.0), "holds after the last node");
    }

    #[test]
    fn the_linear_command_is_the_chord() {
        let c = Command::new(&[0.0, 1.0], &[0.0, 2.0], &[5.0, 5.0], Interpolation::Linear).unwrap();
        assert_eq!(c.at(0.25), (0.5, 2.0));
    }

    #[test]
    fn decreasing_times_are_refused() {
        let e = Command::new(
            &[0.0, 1.0, 0.5],
            &[0.0; 3],
            &[0.0; 3],
            Interpolation::Linear,
        );
        assert!(matches!(e, Err(CommandError::Decreasing { index: 2, .. })));
    }
}
