//! Variables a phase's bounds hold at one value enter that phase's elements as the value.
//!
//! A guide's locked coordinates (the hopper's rail holds its base's x and pitch), a point
//! foot's torque, a lifted foot's force: the phase's bounds fix them at every node. Traced as
//! symbols, they leave rows among fixed variables only (the locked coordinate's collocation
//! defects, x₁ − x₀ − h/2 (v₀ + v₁) with x and v fixed). IPOPT removes the fixed variables,
//! finds more equality rows than free variables, and then relaxes *every* fixed bound into a
//! narrow box instead (`fixed_variable_treatment = relax_bounds`, "Too few degrees of
//! freedom" in its log): the hopper as a robot file solved with 1490 variables where 804 are
//! free. Traced as constants, CasADi folds those rows to the constant 0, and an element drops
//! every row that is a constant within its bounds ([`trivially_satisfied`]). The NLP is the
//! same problem, with fewer rows: the fixed variables keep their columns, and IPOPT still
//! sees their bounds.
//!
//! Only the phase's own bounds (the same at every node, so one element kind serves the
//! phase) are traced as constants; a point's bounds (a start at rest, say) are not.

use crate::symbolic::Sx;
use crate::transcription::ocp::Bounded;

/// The value each entry's bounds hold it at, if they hold it at one finite value.
pub(super) fn held(bounds: &[(f64, f64)]) -> Vec<Option<f64>> {
    bounds
        .iter()
        .map(|&(lo, hi)| (lo == hi && lo.is_finite()).then_some(lo))
        .collect()
}

/// A point's symbols: entry i of `point` (state then control, `w` in all) from `z` at
/// `offset + i`, or the constant its phase holds it at.
pub(super) fn point(
    z: &Sx,
    offset: usize,
    state: &[Option<f64>],
    control: &[Option<f64>],
) -> Vec<Sx> {
    state
        .iter()
        .chain(control)
        .enumerate()
        .map(|(i, value)| match value {
            Some(v) => Sx::from(*v),
            None => z.get(offset + i),
        })
        .collect()
}

/// Whether a row is a constant within its bounds (it constrains nothing).
pub(super) fn trivially_satisfied(row: &Bounded) -> bool {
    let tolerance = 1e-12 * (1.0 + row.lower.abs().min(row.upper.abs()).min(1e12));
    row.expr
        .as_constant()
        .is_some_and(|v| v >= row.lower - tolerance && v <= row.upper + tolerance)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_defect_among_held_entries_folds_to_zero_and_is_dropped() {
        // x₁ − x₀ − h/2 (v₀ + v₁) with x held at 0.3 and v at 0 at both ends.
        let h = Sx::symbol("h", 1);
        let (x0, v0, x1, v1) = (Sx::from(0.3), Sx::from(0.0), Sx::from(0.3), Sx::from(0.0));
        let defect = x1 - x0 - h * 0.5 * (v0 + v1);
        assert!(trivially_satisfied(&Bounded::equal("d", defect, 0.0)));
        // A held entry with a nonzero rate is a real row: it stays.
        let h = Sx::symbol("h", 1);
        let defect = Sx::from(0.3) - Sx::from(0.3) - h * 0.5 * (Sx::from(1.0) + Sx::from(0.0));
        assert!(!trivially_satisfied(&Bounded::equal("d", defect, 0.0)));
        // A constant outside its bounds stays, for IPOPT to report.
        assert!(!trivially_satisfied(&Bounded::equal(
            "c",
            Sx::from(1.0),
            0.0
        )));
    }

    #[test]
    fn only_entries_held_at_one_finite_value_are_held() {
        let bounds = [
            (0.0, 0.0),
            (-1.0, 1.0),
            (f64::INFINITY, f64::INFINITY),
            (2.5, 2.5),
        ];
        assert_eq!(held(&bounds), vec![Some(0.0), None, None, Some(2.5)]);
    }
}
