//! Rules shared by the problem sections beyond their types (a medium's ranges, a usable name,
//! IPOPT option values). Each message carries the value, its unit and what is accepted.

use super::field_path::FieldPath;
use super::fields::unit_of;
use super::schema::{OptionValue, SolverOptions};

/// One rule a problem breaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Dotted path of the offending field, e.g. `robot.motor_mass` or `phases[1].duration`.
    pub field: String,
    /// What is wrong and what is accepted, e.g. `must be > 0 kg, got -0.5`.
    pub message: String,
}

/// The rules on a problem's `name` (it names the results' folder) and its IPOPT options
/// (a name, and a finite number where it is a number).
pub(crate) fn name_and_solver_violations(
    name: Option<&str>,
    solver: &SolverOptions,
) -> Vec<Violation> {
    let mut checks = Checks::default();
    if let Some(name) = name {
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
    for (option, value) in solver {
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
    checks.violations
}

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
