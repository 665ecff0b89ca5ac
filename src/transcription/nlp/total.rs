//! The row that bounds the sum of the phases' durations (`Ocp::total_duration`): a gait's
//! stride time, which its mean speed fixes.

use std::collections::HashMap;

use super::{ElementKind, Nlp};
use crate::symbolic::{Sx, SymbolicError};
use crate::transcription::ocp::Bounded;

impl Nlp {
    /// Adds the row `lower <= Σ_p T_p <= upper` over every phase's duration variable.
    pub(super) fn add_total_duration(
        &mut self,
        (lower, upper): (f64, f64),
        hess_slots: &mut HashMap<(usize, usize), usize>,
    ) -> Result<(), SymbolicError> {
        let n = self.phases.len();
        let z = Sx::symbol("durations", n);
        let sum = (1..n).fold(z.get(0), |sum, p| sum + z.get(p));
        let nominal = if upper.is_finite() {
            upper.abs()
        } else {
            lower.abs()
        };
        let row = Bounded::between("total duration", sum, lower, upper).nominal(nominal.max(1e-3));
        let kind = self.add_kind(ElementKind::build(
            "total_duration",
            n,
            &z,
            None,
            vec![row],
        )?);
        let vars = self.phases.iter().map(|p| p.duration).collect();
        self.add_element(kind, "total duration".into(), vars, hess_slots);
        Ok(())
    }
}
