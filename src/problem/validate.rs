//! The rules a problem must meet beyond its types: positive masses, bounds in order, a
//! schedule of hops (stance and flight in turn). Each message carries the value, its unit
//! and what is accepted.

use super::field_path::FieldPath;
use super::fields::unit_of;
use super::schema::{Domain, OptionValue, Problem, StartPosition, TerrainModel};

/// One rule a problem breaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Dotted path of the offending field, e.g. `robot.motor_mass` or `phases[1].duration`.
    pub field: String,
    /// What is wrong and what is accepted, e.g. `must be > 0 kg, got -0.5`.
    pub message: String,
}

impl Problem {
    /// Checks every rule, in schema order; `Err` holds all the rules broken. Works on a
    /// resolved or unresolved problem (implied values are checked as resolved).
    pub fn validate(&self) -> Result<(), Vec<Violation>> {
        let mut checks = Checks::default();
        if let Some(name) = &self.name {
            if name.trim().is_empty() {
                checks.fail(
                    "name",
                    "must not be empty; accepted: text, used to name the results".to_owned(),
                );
            } else if name.contains(['/', '\\']) || name == "." || name == ".." {
                checks.fail(
                    "name",
                    format!("must be usable as a folder name (no `/` or `\\`), got `{name}`"),
                );
            }
        }
        checks.positive("gravity", self.gravity);

        let robot = &self.robot;
        checks.positive("robot.motor_mass", robot.motor_mass);
        checks.positive("robot.rod_mass", robot.rod_mass);
        checks.positive("robot.foot_mass", robot.foot_mass);
        checks.positive("robot.foot_radius", robot.foot_radius);
        checks.positive("robot.spring_stiffness", robot.spring_stiffness);
        checks.non_negative("robot.spring_damping", robot.spring_damping);
        checks.positive("robot.spring_rest_length", robot.spring_rest_length);
        checks.positive("robot.force_constant", robot.force_constant);
        checks.positive("robot.position_gain", robot.position_gain);
        // Zero feedforward is a plain feedback drive; a negative one fights the command.
        checks.non_negative("robot.velocity_feedforward", robot.velocity_feedforward);
        checks.positive("robot.velocity_gain", robot.velocity_gain);
        // The start state holds the motor's weight in the integrator: e = m_m g / (K_m V_i).
        checks.positive("robot.integral_gain", robot.integral_gain);

        check_medium(&mut checks, &self.terrain.medium_parameters());

        self.check_phases(&mut checks);

        let task = &self.task;
        checks.positive("task.apex_height", task.apex_height);
        checks.positive("task.max_motor_force", task.max_motor_force);
        checks.positive("task.stroke", task.stroke);
        checks.non_negative("task.min_rod_foot_gap", task.min_rod_foot_gap);
        if let StartPosition::Fixed(position) = task.start_position {
            let stroke = task.stroke;
            if !(position.is_finite() && position.abs() <= stroke) {
                checks.fail(
                    "task.start_position",
                    format!(
                        "must be `free` or within [-stroke, stroke] = [{}, {}] m, got {}",
                        number(-stroke),
                        number(stroke),
                        number(position)
                    ),
                );
            }
        }

        for (option, value) in &self.solver {
            if option.trim().is_empty() {
                checks.fail(
                    "solver",
                    "an option name is empty; accepted: IPOPT option names such as tol, max_iter, print_level"
                        .to_owned(),
                );
            } else if matches!(value, OptionValue::Num(number) if !number.is_finite()) {
                checks.fail(
                    &format!("solver.{option}"),
                    format!("must be a finite number, got {value}"),
                );
            }
        }

        if self.initial_guess == super::InitialGuess::Footholds {
            checks.fail(
                "initial_guess",
                "`footholds` is a planar robot's gait guess; the hopper starts from `rest`, \
                 `ballistic`, `best` or `zero`"
                    .to_owned(),
            );
        }

        if checks.violations.is_empty() {
            Ok(())
        } else {
            Err(checks.violations)
        }
    }

    fn check_phases(&self, checks: &mut Checks) {
        const SCHEDULE: &str = "loam plans hops: stance and flight phases in turn, the first \
             `stance`, the last `flight` (one hop on a granular bed, any number on rigid ground)";
        let (Some(first), Some(last)) = (self.phases.first(), self.phases.last()) else {
            checks.fail(
                "phases",
                format!("no phases; {SCHEDULE}, e.g. [{{domain: stance}}, {{domain: flight}}]"),
            );
            return;
        };
        if first.domain != Domain::Stance {
            checks.fail(
                "phases[0].domain",
                format!(
                    "the first phase must be `stance`, got `{}`; {SCHEDULE}",
                    first.domain
                ),
            );
        }
        if last.domain != Domain::Flight {
            let field = format!("phases[{}].domain", self.phases.len() - 1);
            checks.fail(
                &field,
                format!(
                    "the last phase must be `flight`, got `{}`; {SCHEDULE}",
                    last.domain
                ),
            );
        }
        for (index, pair) in self.phases.windows(2).enumerate() {
            if pair[0].domain == pair[1].domain {
                checks.fail(
                    &format!("phases[{}].domain", index + 1),
                    format!(
                        "two `{}` phases in a row (phases {index} and {}); {SCHEDULE}",
                        pair[1].domain,
                        index + 1
                    ),
                );
            }
        }
        let hops = self
            .phases
            .iter()
            .filter(|p| p.domain == Domain::Flight)
            .count();
        if hops > 1 && self.terrain.model != TerrainModel::Rigid {
            checks.fail(
                "phases",
                format!(
                    "{hops} hops on a granular bed: landing in a bed is not modelled; use \
                     `terrain: {{model: rigid}}` or one hop; {SCHEDULE}"
                ),
            );
        }
        for (index, phase) in self.phases.iter().enumerate() {
            if phase.nodes < 3 {
                checks.fail(
                    &format!("phases[{index}].nodes"),
                    format!("must be at least 3 nodes, got {}", phase.nodes),
                );
            }
            let [lower, upper] = phase.duration_bounds();
            let field = format!("phases[{index}].duration");
            const ACCEPTED: &str = "accepted: [min, max] in s with 0 < min <= max";
            if !(lower.is_finite() && upper.is_finite()) {
                checks.fail(
                    &field,
                    format!(
                        "bounds must be finite, got [{}, {}]; {ACCEPTED}",
                        number(lower),
                        number(upper)
                    ),
                );
            } else if lower <= 0.0 {
                checks.fail(
                    &field,
                    format!(
                        "lower bound must be > 0 s, got {}; {ACCEPTED}",
                        number(lower)
                    ),
                );
            } else if lower > upper {
                checks.fail(
                    &field,
                    format!(
                        "lower bound {} is above upper bound {}; {ACCEPTED}",
                        number(lower),
                        number(upper)
                    ),
                );
            }
        }
    }
}

/// The added-mass medium's rules, on the fields `terrain.<name>` of any schema that holds
/// one (the hopper's and the planar robots').
fn check_medium(checks: &mut Checks, medium: &super::Medium) {
    checks.positive("terrain.recruitment_rate", medium.recruitment_rate);
    checks.between(
        "terrain.shear_band_angle_deg",
        medium.shear_band_angle_deg,
        0.0,
        90.0,
    );
    // c_g = 0: no added mass, the bed's force is the static resistance F_hyd alone.
    checks.non_negative(
        "terrain.surrounding_mass_scaling",
        medium.surrounding_mass_scaling,
    );
    checks.between("terrain.volume_fraction", medium.volume_fraction, 0.0, 1.0);
    checks.positive("terrain.grain_density", medium.grain_density);
    checks.positive(
        "terrain.penetration_stiffness",
        medium.penetration_stiffness,
    );
    checks.positive("terrain.resistive_stress", medium.resistive_stress);
    checks.positive("terrain.drag_scaling", medium.drag_scaling);
}

/// The violations of a medium's parameters, named `terrain.<field>`.
pub(crate) fn medium_violations(medium: &super::Medium) -> Vec<Violation> {
    let mut checks = Checks::default();
    check_medium(&mut checks, medium);
    checks.violations
}

#[derive(Default)]
struct Checks {
    violations: Vec<Violation>,
}

impl Checks {
    fn fail(&mut self, field: &str, message: String) {
        self.violations.push(Violation {
            field: field.to_owned(),
            message,
        });
    }

    fn positive(&mut self, field: &str, value: f64) {
        if !value.is_finite() {
            self.fail(
                field,
                format!(
                    "must be a finite number > 0{}, got {}",
                    unit(field),
                    number(value)
                ),
            );
        } else if value <= 0.0 {
            self.fail(
                field,
                format!("must be > 0{}, got {}", unit(field), number(value)),
            );
        }
    }

    fn non_negative(&mut self, field: &str, value: f64) {
        if !value.is_finite() {
            self.fail(
                field,
                format!(
                    "must be a finite number >= 0{}, got {}",
                    unit(field),
                    number(value)
                ),
            );
        } else if value < 0.0 {
            self.fail(
                field,
                format!("must be >= 0{}, got {}", unit(field), number(value)),
            );
        }
    }

    /// Strictly between `low` and `high`.
    fn between(&mut self, field: &str, value: f64, low: f64, high: f64) {
        if !(value > low && value < high) {
            self.fail(
                field,
                format!(
                    "must be between {low} and {high}{} (exclusive), got {}",
                    unit(field),
                    number(value)
                ),
            );
        }
    }
}

/// ` kg` for a field in kg, nothing for a dimensionless one.
fn unit(field: &str) -> String {
    match FieldPath::parse(field).as_ref().and_then(unit_of) {
        Some(unit) if !unit.is_empty() => format!(" {unit}"),
        _ => String::new(),
    }
}

/// A number as a person would write it: `-0.5`, `120000`, `1e-9`.
pub(crate) fn number(value: f64) -> String {
    let magnitude = value.abs();
    if value == 0.0 || !value.is_finite() || (1e-4..1e7).contains(&magnitude) {
        format!("{value}")
    } else {
        format!("{value:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::schema::Phase;

    fn broken(problem: &Problem) -> Vec<Violation> {
        problem.validate().unwrap_err()
    }

    #[test]
    fn the_default_problem_is_valid() {
        let mut problem = Problem::default();
        assert_eq!(problem.validate(), Ok(()));
        problem.resolve();
        assert_eq!(problem.validate(), Ok(()));
    }

    #[test]
    fn numbers_carry_value_and_unit() {
        let mut problem = Problem::default();
        problem.robot.motor_mass = -0.5;
        problem.robot.spring_damping = f64::NAN;
        problem.terrain.volume_fraction = Some(1.0);
        let violations = broken(&problem);
        assert_eq!(
            violations[0],
            Violation {
                field: "robot.motor_mass".into(),
                message: "must be > 0 kg, got -0.5".into()
            }
        );
        assert_eq!(
            violations[1].message,
            "must be a finite number >= 0 N s/m, got NaN"
        );
        assert_eq!(violations[2].field, "terrain.volume_fraction");
        assert_eq!(
            violations[2].message,
            "must be between 0 and 1 (exclusive), got 1"
        );
    }

    #[test]
    fn the_schedule_is_stance_then_flight() {
        let mut problem = Problem {
            phases: vec![Phase::new(Domain::Flight), Phase::new(Domain::Stance)],
            ..Problem::default()
        };
        let violations = broken(&problem);
        assert_eq!(violations[0].field, "phases[0].domain");
        assert!(violations[0]
            .message
            .contains("stance and flight phases in turn"));
        assert_eq!(violations[1].field, "phases[1].domain");
        problem.phases.clear();
        assert_eq!(broken(&problem)[0].field, "phases");
    }

    #[test]
    fn durations_and_start_position() {
        let mut problem = Problem::default();
        problem.phases[1].duration = Some([0.3, 0.2]);
        problem.phases[0].nodes = 2;
        problem.task.start_position = StartPosition::Fixed(0.03);
        let violations = broken(&problem);
        assert_eq!(violations[0].message, "must be at least 3 nodes, got 2");
        assert_eq!(violations[1].field, "phases[1].duration");
        assert!(violations[1]
            .message
            .starts_with("lower bound 0.3 is above upper bound 0.2"));
        assert_eq!(
            violations[2].message,
            "must be `free` or within [-stroke, stroke] = [-0.0275, 0.0275] m, got 0.03"
        );
    }

    #[test]
    fn numbers_read_naturally() {
        assert_eq!(number(-1.0), "-1");
        assert_eq!(number(1.2e5), "120000");
        assert_eq!(number(1e-9), "1e-9");
    }
}
