//! The links between consecutive phases: the state (and the control, when the OCP asks) is
//! continuous, or the next phase's `entry` constraints take the link's place (an impact
//! reset, say).

use std::collections::HashMap;

use super::{held, ElementKind, Nlp};
use crate::symbolic::{Sx, SymbolicError};
use crate::transcription::ocp::{Bounded, Node, Ocp, Point};

impl Nlp {
    /// One element per link, over [phase p's last point, phase p + 1's first point]. The
    /// entries each phase's bounds hold enter as their values (`held`), so a continuity row
    /// between two entries held at one value (a locked coordinate) is not written.
    pub(super) fn add_links(
        &mut self,
        ocp: &Ocp,
        hess_slots: &mut HashMap<(usize, usize), usize>,
    ) -> Result<(), SymbolicError> {
        let (n_x, w) = (self.n_x, self.n_x + self.n_u);
        let count = if ocp.control_continuity { w } else { n_x };
        for p in 0..ocp.phases.len().saturating_sub(1) {
            let (a, b) = (&ocp.phases[p], &ocp.phases[p + 1]);
            let z = Sx::symbol("link", 2 * w);
            let mut zs = held::point(
                &z,
                0,
                &held::held(&a.state_bounds),
                &held::held(&a.control_bounds),
            );
            zs.extend(held::point(
                &z,
                w,
                &held::held(&b.state_bounds),
                &held::held(&b.control_bounds),
            ));
            let (cons, name) = match &b.entry {
                None => {
                    let rows = (0..count)
                        .map(|i| {
                            let (name, scale) = if i < n_x {
                                (&ocp.state_names[i], ocp.state_nominal[i])
                            } else {
                                (&ocp.control_names[i - n_x], ocp.control_nominal[i - n_x])
                            };
                            Bounded::equal(
                                format!("continuity {name}"),
                                zs[w + i].clone() - zs[i].clone(),
                                0.0,
                            )
                            .nominal(scale)
                        })
                        .collect();
                    (rows, format!("link_{}", p + 1))
                }
                Some(entry) => {
                    let points = vec![zs[..w].to_vec(), zs[w..].to_vec()];
                    (entry(&points), format!("entry_{}", p + 1))
                }
            };
            let kind = self.add_kind(ElementKind::build(&name, 2 * w, &z, None, cons)?);
            let start_a = self.point_start(Point {
                phase: p,
                node: Node::Last,
            });
            let start_b = self.point_start(Point {
                phase: p + 1,
                node: Node::First,
            });
            let vars = (start_a..start_a + w).chain(start_b..start_b + w).collect();
            let label = format!("{} -> {}", self.phases[p].name, self.phases[p + 1].name);
            self.add_element(kind, label, vars, hess_slots);
        }
        Ok(())
    }
}
