//! The sparse NLP of a transcribed [`Ocp`]: variables, bounds, named constraint rows, and
//! exact derivatives assembled from small compiled element functions.
//!
//! Every constraint and cost term comes from an *element*: a CasADi function of a few
//! variables (one collocation interval, one node's path constraints, one phase link). Each
//! kind of element is traced and differentiated once; its instances differ only in which
//! global variables they read and which rows they write. The global Jacobian pattern is the
//! union of the instances' patterns; the Hessian pattern is deduplicated into slots when the
//! NLP is built, so IPOPT's callbacks only gather, evaluate and scatter.

mod held;
mod links;
mod total;
use std::collections::HashMap;

use super::ocp::{Bounded, Node, Ocp, Point};
use super::scheme::{self, Scheme};
use crate::symbolic::{Function, Sx, SymbolicError};

/// One compiled kind of element.
struct ElementKind {
    n_z: usize,
    n_con: usize,
    con_names: Vec<String>,
    con_lower: Vec<f64>,
    con_upper: Vec<f64>,
    con_nominal: Vec<f64>,
    /// z -> [objective, constraints]
    value: Function,
    /// z -> [gradient of objective (sparse), Jacobian of constraints (sparse)]
    first: Function,
    grad_index: Vec<usize>,
    jac_rows: Vec<usize>,
    jac_cols: Vec<usize>,
    /// [z, sigma, lambda] -> lower Hessian of sigma*objective + lambda'constraints
    second: Function,
    hess_rows: Vec<usize>,
    hess_cols: Vec<usize>,
}

impl ElementKind {
    fn build(
        name: &str,
        n_z: usize,
        z: &Sx,
        cost: Option<Sx>,
        cons: Vec<Bounded>,
    ) -> Result<Self, SymbolicError> {
        // Rows folded to constants within their bounds by held variables (`held`).
        let cons: Vec<Bounded> = cons
            .into_iter()
            .filter(|c| !held::trivially_satisfied(c))
            .collect();
        let n_con = cons.len();
        let con_names = cons.iter().map(|c| c.name.clone()).collect();
        let con_lower = cons.iter().map(|c| c.lower).collect();
        let con_upper = cons.iter().map(|c| c.upper).collect();
        let con_nominal = cons.iter().map(|c| c.nominal).collect();
        let exprs: Vec<Sx> = cons.into_iter().map(|c| c.expr).collect();
        let con = Sx::vertcat(&exprs);
        let obj = cost.unwrap_or_else(|| Sx::from(0.0));
        let value = Function::new(&format!("{name}_value"), &[z], &[&obj, &con])?;

        let grad = obj.gradient(z)?;
        let jac = con.jacobian(z)?;
        let first = Function::new(&format!("{name}_first"), &[z], &[&grad, &jac])?;
        let (grad_index, _) = grad.sparsity();
        let (jac_rows, jac_cols) = jac.sparsity();

        let sigma = Sx::symbol("sigma", 1);
        let lambda = Sx::symbol("lambda", n_con);
        let lagrangian = sigma.clone() * obj + lambda.dot(&con);
        let hess = lagrangian.hessian_lower(z)?;
        let second = Function::new(&format!("{name}_second"), &[z, &sigma, &lambda], &[&hess])?;
        let (hess_rows, hess_cols) = hess.sparsity();
        Ok(ElementKind {
            n_z,
            n_con,
            con_names,
            con_lower,
            con_upper,
            con_nominal,
            value,
            first,
            grad_index,
            jac_rows,
            jac_cols,
            second,
            hess_rows,
            hess_cols,
        })
    }
}

/// One instance of an element kind.
struct Element {
    kind: usize,
    label: String,
    vars: Vec<usize>,
    row: usize,
    jac_start: usize,
    hess_slots: Vec<usize>,
    /// Per local Hessian entry: 2 where an off-diagonal local entry lands on the global
    /// diagonal (the element reads one variable twice, e.g. a point constraint over the last
    /// node and node N−1 of the same phase), since the local lower triangle holds that
    /// mixed derivative once but the global diagonal needs both halves; 1 elsewhere.
    hess_weights: Vec<f64>,
}

/// The transcribed NLP, ready for IPOPT.
pub struct Nlp {
    pub scheme: Scheme,
    n_x: usize,
    n_u: usize,
    /// The state names, then the control names (for [`Nlp::variable_name`]).
    point_names: Vec<String>,
    phases: Vec<PhaseLayout>,
    pub x_lower: Vec<f64>,
    pub x_upper: Vec<f64>,
    pub g_lower: Vec<f64>,
    pub g_upper: Vec<f64>,
    /// Typical magnitude of every variable and every constraint row, for scaling.
    pub x_nominal: Vec<f64>,
    pub g_nominal: Vec<f64>,
    pub jac_rows: Vec<usize>,
    pub jac_cols: Vec<usize>,
    pub hess_rows: Vec<usize>,
    pub hess_cols: Vec<usize>,
    kinds: Vec<ElementKind>,
    elements: Vec<Element>,
    z: Vec<f64>,
    out: Vec<f64>,
}

#[derive(Clone, Debug)]
struct PhaseLayout {
    name: String,
    nodes: usize,
    /// First variable of the phase's nodes; node k's state starts at base + k*(n_x+n_u).
    base: usize,
    /// First variable of the midpoints (Hermite-Simpson).
    mid_base: usize,
    duration: usize,
}

/// A trajectory in the NLP's shape: per phase, duration and node values.
#[derive(Clone, Debug, Default)]
pub struct Trajectory {
    pub phases: Vec<PhaseTrajectory>,
}

#[derive(Clone, Debug, Default)]
pub struct PhaseTrajectory {
    pub name: String,
    pub duration: f64,
    /// Per node: state and control.
    pub states: Vec<Vec<f64>>,
    pub controls: Vec<Vec<f64>>,
    /// Per interval, for Hermite-Simpson: midpoint state and control.
    pub mid_states: Vec<Vec<f64>>,
    pub mid_controls: Vec<Vec<f64>>,
}

impl PhaseTrajectory {
    /// Time of node k from the phase's start.
    pub fn node_time(&self, k: usize) -> f64 {
        self.duration * k as f64 / (self.states.len() - 1) as f64
    }
}

/// A constraint row and how far it is outside its bounds.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Violation {
    pub name: String,
    pub value: f64,
    pub lower: f64,
    pub upper: f64,
    pub violation: f64,
}

impl Nlp {
    pub fn build(ocp: &Ocp, scheme: Scheme) -> Result<Nlp, SymbolicError> {
        // CasADi work, one thread at a time (see `symbolic::exclusive`).
        let _native = crate::symbolic::exclusive();
        let (n_x, n_u) = (ocp.n_states(), ocp.n_controls());
        let w = n_x + n_u;

        // Variable layout.
        let mut phases = Vec::new();
        let mut n = 0;
        for phase in &ocp.phases {
            let base = n;
            n += phase.nodes * w;
            let mid_base = n;
            if scheme.has_midpoint() {
                n += (phase.nodes - 1) * w;
            }
            let duration = n;
            n += 1;
            phases.push(PhaseLayout {
                name: phase.name.clone(),
                nodes: phase.nodes,
                base,
                mid_base,
                duration,
            });
        }

        let mut x_lower = vec![f64::NEG_INFINITY; n];
        let mut x_upper = vec![f64::INFINITY; n];
        let mut x_nominal = vec![1.0; n];
        for (phase, layout) in ocp.phases.iter().zip(&phases) {
            let points = layout.nodes
                + if scheme.has_midpoint() {
                    layout.nodes - 1
                } else {
                    0
                };
            for k in 0..points {
                let start = if k < layout.nodes {
                    layout.base + k * w
                } else {
                    layout.mid_base + (k - layout.nodes) * w
                };
                for i in 0..n_x {
                    (x_lower[start + i], x_upper[start + i]) = phase.state_bounds[i];
                    x_nominal[start + i] = ocp.state_nominal[i];
                }
                for j in 0..n_u {
                    (x_lower[start + n_x + j], x_upper[start + n_x + j]) = phase.control_bounds[j];
                    x_nominal[start + n_x + j] = ocp.control_nominal[j];
                }
            }
            (x_lower[layout.duration], x_upper[layout.duration]) = phase.duration;
            x_nominal[layout.duration] = match phase.duration {
                (lo, hi) if lo.is_finite() && hi.is_finite() => 0.5 * (lo + hi).abs().max(1e-3),
                (lo, _) if lo > 0.0 && lo.is_finite() => lo,
                _ => 1.0,
            };
        }
        let mut nlp = Nlp {
            scheme,
            n_x,
            n_u,
            point_names: ocp
                .state_names
                .iter()
                .chain(&ocp.control_names)
                .cloned()
                .collect(),
            phases,
            x_lower,
            x_upper,
            g_lower: Vec::new(),
            g_upper: Vec::new(),
            x_nominal,
            g_nominal: Vec::new(),
            jac_rows: Vec::new(),
            jac_cols: Vec::new(),
            hess_rows: Vec::new(),
            hess_cols: Vec::new(),
            kinds: Vec::new(),
            elements: Vec::new(),
            z: Vec::new(),
            out: Vec::new(),
        };
        for bounds in &ocp.point_bounds {
            let start = nlp.point_start(bounds.point);
            for (i, b) in bounds.state_bounds.iter().enumerate() {
                if let Some((lo, hi)) = b {
                    nlp.x_lower[start + i] = nlp.x_lower[start + i].max(*lo);
                    nlp.x_upper[start + i] = nlp.x_upper[start + i].min(*hi);
                }
            }
        }

        let mut hess_slots: HashMap<(usize, usize), usize> = HashMap::new();

        // Collocation intervals and path constraints of each phase.
        for (p, phase) in ocp.phases.iter().enumerate() {
            let points = if scheme.has_midpoint() { 3 } else { 2 };
            let z = Sx::symbol(&format!("z_{}", phase.name), points * w + 1);
            let (hx, hu) = (
                held::held(&phase.state_bounds),
                held::held(&phase.control_bounds),
            );
            let mut zs: Vec<Sx> = (0..points)
                .flat_map(|q| held::point(&z, q * w, &hx, &hu))
                .collect();
            zs.push(z.get(points * w));
            let h = zs[points * w].clone() / (phase.nodes - 1) as f64;
            let xs: Vec<&[Sx]> = (0..points).map(|q| &zs[q * w..q * w + n_x]).collect();
            let us: Vec<&[Sx]> = (0..points).map(|q| &zs[q * w + n_x..(q + 1) * w]).collect();
            let l: Vec<Sx> = (0..points)
                .map(|q| {
                    phase
                        .running_cost
                        .as_ref()
                        .map_or_else(|| Sx::from(0.0), |c| c(xs[q], us[q]))
                })
                .collect();
            let (defects, cost, names) = match &phase.step {
                Some(step) => {
                    assert!(
                        !scheme.has_midpoint(),
                        "phase `{}` is a discrete step: the scheme must have no midpoints",
                        phase.name
                    );
                    let next = step(xs[0], us[0], &h);
                    let defects = (0..n_x).map(|i| xs[1][i].clone() - next[i].clone());
                    let names = ocp.state_names.iter().map(|s| format!("step {s}"));
                    (defects.collect(), h.clone() * l[0].clone(), names.collect())
                }
                None => {
                    let f: Vec<Vec<Sx>> = (0..points)
                        .map(|q| (phase.dynamics)(xs[q], us[q]))
                        .collect();
                    let (defects, cost) = scheme::interval(scheme, &h, &xs, &f, &l);
                    (
                        defects,
                        cost,
                        scheme::defect_names(scheme, &ocp.state_names),
                    )
                }
            };
            let mut nominal = Vec::new();
            for _ in 0..defects.len() / n_x {
                nominal.extend_from_slice(&ocp.state_nominal);
            }
            let cons = defects
                .into_iter()
                .zip(names)
                .zip(&nominal)
                .map(|((expr, name), &scale)| Bounded::equal(name, expr, 0.0).nominal(scale))
                .collect();
            let kind = nlp.add_kind(ElementKind::build(
                &format!("interval_{}", phase.name),
                points * w + 1,
                &z,
                Some(cost),
                cons,
            )?);
            let layout = nlp.phases[p].clone();
            for k in 0..layout.nodes - 1 {
                let mut vars: Vec<usize> =
                    (layout.base + k * w..layout.base + (k + 1) * w).collect();
                if scheme.has_midpoint() {
                    vars.extend(layout.mid_base + k * w..layout.mid_base + (k + 1) * w);
                }
                vars.extend(layout.base + (k + 1) * w..layout.base + (k + 2) * w);
                vars.push(layout.duration);
                nlp.add_element(
                    kind,
                    format!("{} interval {k}", layout.name),
                    vars,
                    &mut hess_slots,
                );
            }

            if let Some(path) = &phase.path {
                let z = Sx::symbol(&format!("node_{}", phase.name), w);
                let zs = held::point(&z, 0, &hx, &hu);
                let cons = path(&zs[..n_x], &zs[n_x..]);
                let kind = nlp.add_kind(ElementKind::build(
                    &format!("path_{}", phase.name),
                    w,
                    &z,
                    None,
                    cons,
                )?);
                for k in 0..layout.nodes {
                    let vars = (layout.base + k * w..layout.base + (k + 1) * w).collect();
                    nlp.add_element(
                        kind,
                        format!("{} node {k}", layout.name),
                        vars,
                        &mut hess_slots,
                    );
                }
                if scheme.has_midpoint() {
                    for k in 0..layout.nodes - 1 {
                        let vars =
                            (layout.mid_base + k * w..layout.mid_base + (k + 1) * w).collect();
                        nlp.add_element(
                            kind,
                            format!("{} midpoint {k}", layout.name),
                            vars,
                            &mut hess_slots,
                        );
                    }
                }
            }
        }

        nlp.add_links(ocp, &mut hess_slots)?;

        // Constraints on chosen points.
        for constraint in &ocp.point_constraints {
            let Some(first) = constraint.instances.first() else {
                continue;
            };
            let n_points = first.len();
            let z = Sx::symbol(&constraint.name, n_points * w);
            let points: Vec<Vec<Sx>> = (0..n_points)
                .map(|q| (0..w).map(|i| z.get(q * w + i)).collect())
                .collect();
            let cons = (constraint.f)(&points);
            let kind = nlp.add_kind(ElementKind::build(
                &constraint.name.replace(' ', "_"),
                n_points * w,
                &z,
                None,
                cons,
            )?);
            for (i, instance) in constraint.instances.iter().enumerate() {
                let vars = instance.iter().flat_map(|&pt| {
                    let s = nlp.point_start(pt);
                    s..s + w
                });
                let vars = vars.collect();
                let label = if constraint.instances.len() == 1 {
                    constraint.name.clone()
                } else {
                    format!("{} {i}", constraint.name)
                };
                nlp.add_element(kind, label, vars, &mut hess_slots);
            }
        }

        if let Some(bounds) = ocp.total_duration {
            nlp.add_total_duration(bounds, &mut hess_slots)?;
        }

        let mut hess: Vec<((usize, usize), usize)> = hess_slots.into_iter().collect();
        hess.sort_by_key(|&(_, slot)| slot);
        nlp.hess_rows = hess.iter().map(|&((r, _), _)| r).collect();
        nlp.hess_cols = hess.iter().map(|&((_, c), _)| c).collect();
        let max_z = nlp
            .kinds
            .iter()
            .map(|k| k.n_z + 1 + k.n_con)
            .max()
            .unwrap_or(0);
        let max_out = nlp
            .kinds
            .iter()
            .map(|k| {
                k.value
                    .output_len()
                    .max(k.first.output_len())
                    .max(k.second.output_len())
            })
            .max()
            .unwrap_or(0);
        nlp.z = vec![0.0; max_z];
        nlp.out = vec![0.0; max_out];
        Ok(nlp)
    }

    fn add_kind(&mut self, kind: ElementKind) -> usize {
        self.kinds.push(kind);
        self.kinds.len() - 1
    }

    fn add_element(
        &mut self,
        kind: usize,
        label: String,
        vars: Vec<usize>,
        hess_slots: &mut HashMap<(usize, usize), usize>,
    ) {
        let k = &self.kinds[kind];
        debug_assert_eq!(vars.len(), k.n_z);
        let row = self.g_lower.len();
        self.g_lower.extend_from_slice(&k.con_lower);
        self.g_upper.extend_from_slice(&k.con_upper);
        self.g_nominal.extend_from_slice(&k.con_nominal);
        let jac_start = self.jac_rows.len();
        for (&r, &c) in k.jac_rows.iter().zip(&k.jac_cols) {
            self.jac_rows.push(row + r);
            self.jac_cols.push(vars[c]);
        }
        let (hess_slots, hess_weights) = k
            .hess_rows
            .iter()
            .zip(&k.hess_cols)
            .map(|(&r, &c)| {
                let (a, b) = (vars[r], vars[c]);
                let key = (a.max(b), a.min(b));
                let next = hess_slots.len();
                let weight = if r != c && a == b { 2.0 } else { 1.0 };
                (*hess_slots.entry(key).or_insert(next), weight)
            })
            .unzip();
        self.elements.push(Element {
            kind,
            label,
            vars,
            row,
            jac_start,
            hess_slots,
            hess_weights,
        });
    }

    /// Index of the first variable (the state) of a point.
    pub fn point_start(&self, point: Point) -> usize {
        let layout = &self.phases[point.phase];
        let k = match point.node {
            Node::First => 0,
            Node::Last => layout.nodes - 1,
            Node::Index(k) => k,
        };
        layout.base + k * (self.n_x + self.n_u)
    }

    /// Index of phase `phase`'s duration variable.
    pub fn duration_index(&self, phase: usize) -> usize {
        self.phases[phase].duration
    }

    pub fn n_variables(&self) -> usize {
        self.x_lower.len()
    }

    pub fn n_constraints(&self) -> usize {
        self.g_lower.len()
    }

    pub fn constraint_name(&self, row: usize) -> String {
        let e = self.elements.partition_point(|e| e.row <= row) - 1;
        let element = &self.elements[e];
        format!(
            "{}: {}",
            element.label,
            self.kinds[element.kind].con_names[row - element.row]
        )
    }

    /// The name of variable `i`: `stance node 3: z_m`, `stance midpoint 3: u`,
    /// `flight duration`.
    pub fn variable_name(&self, i: usize) -> String {
        let w = self.n_x + self.n_u;
        let layout = self
            .phases
            .iter()
            .rfind(|layout| layout.base <= i)
            .expect("variable within the NLP");
        if i == layout.duration {
            return format!("{} duration", layout.name);
        }
        let (point, offset) = if i < layout.mid_base {
            ("node", i - layout.base)
        } else {
            ("midpoint", i - layout.mid_base)
        };
        format!(
            "{} {point} {}: {}",
            layout.name,
            offset / w,
            self.point_names[offset % w]
        )
    }

    fn gather(z: &mut [f64], vars: &[usize], x: &[f64]) {
        for (zi, &v) in z.iter_mut().zip(vars) {
            *zi = x[v];
        }
    }

    /// Objective and constraint values.
    pub fn eval_value(&mut self, x: &[f64], g: &mut [f64]) -> Result<f64, SymbolicError> {
        let mut objective = 0.0;
        for element in &self.elements {
            let kind = &mut self.kinds[element.kind];
            let z = &mut self.z[..kind.n_z];
            Self::gather(z, &element.vars, x);
            let out = &mut self.out[..1 + kind.n_con];
            kind.value.eval(z, out)?;
            objective += out[0];
            g[element.row..element.row + kind.n_con].copy_from_slice(&out[1..]);
        }
        Ok(objective)
    }

    /// Gradient of the objective and the Jacobian's values (in `jac_rows`/`jac_cols` order).
    pub fn eval_first(
        &mut self,
        x: &[f64],
        grad: &mut [f64],
        jac: &mut [f64],
    ) -> Result<(), SymbolicError> {
        grad.fill(0.0);
        for element in &self.elements {
            let kind = &mut self.kinds[element.kind];
            let z = &mut self.z[..kind.n_z];
            Self::gather(z, &element.vars, x);
            let n_grad = kind.grad_index.len();
            let out = &mut self.out[..n_grad + kind.jac_rows.len()];
            kind.first.eval(z, out)?;
            for (&i, v) in kind.grad_index.iter().zip(&out[..n_grad]) {
                grad[element.vars[i]] += v;
            }
            jac[element.jac_start..element.jac_start + kind.jac_rows.len()]
                .copy_from_slice(&out[n_grad..]);
        }
        Ok(())
    }

    /// Lower triangle of the Hessian of `sigma * f + lambda' g` (in `hess_rows`/`hess_cols` order).
    pub fn eval_second(
        &mut self,
        x: &[f64],
        sigma: f64,
        lambda: &[f64],
        hess: &mut [f64],
    ) -> Result<(), SymbolicError> {
        hess.fill(0.0);
        for element in &self.elements {
            let kind = &mut self.kinds[element.kind];
            let n_in = kind.n_z + 1 + kind.n_con;
            let z = &mut self.z[..n_in];
            Self::gather(&mut z[..kind.n_z], &element.vars, x);
            z[kind.n_z] = sigma;
            z[kind.n_z + 1..].copy_from_slice(&lambda[element.row..element.row + kind.n_con]);
            let out = &mut self.out[..kind.hess_rows.len()];
            kind.second.eval(z, out)?;
            for ((&slot, &weight), v) in element
                .hess_slots
                .iter()
                .zip(&element.hess_weights)
                .zip(out.iter())
            {
                hess[slot] += weight * v;
            }
        }
        Ok(())
    }

    /// Rows outside their bounds by more than `tolerance`, worst first (in units of each
    /// row's nominal magnitude, so that rows of different units compare).
    pub fn violations(&self, g: &[f64], tolerance: f64) -> Vec<Violation> {
        let mut rows: Vec<Violation> = (0..g.len())
            .filter_map(|r| {
                let v = (self.g_lower[r] - g[r])
                    .max(g[r] - self.g_upper[r])
                    .max(0.0);
                (v > tolerance).then(|| Violation {
                    name: self.constraint_name(r),
                    value: g[r],
                    lower: self.g_lower[r],
                    upper: self.g_upper[r],
                    violation: v,
                })
            })
            .collect();
        rows.sort_by(|a, b| b.violation.total_cmp(&a.violation));
        rows
    }

    /// Inequality rows within `tolerance` (relative to the bound or the row's nominal
    /// magnitude) of a bound, grouped by what they constrain (e.g. "motor
    /// force", "stroke"), with how many rows of each: the constraints that limit the plan.
    pub fn binding(&self, g: &[f64], tolerance: f64) -> Vec<(String, usize)> {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for element in &self.elements {
            let kind = &self.kinds[element.kind];
            for (i, name) in kind.con_names.iter().enumerate() {
                let r = element.row + i;
                let (lo, hi) = (self.g_lower[r], self.g_upper[r]);
                let near = |b: f64| {
                    b.is_finite()
                        && (g[r] - b).abs() <= tolerance * b.abs().max(kind.con_nominal[i])
                };
                if lo < hi && (near(lo) || near(hi)) {
                    match counts.iter_mut().find(|(n, _)| n == name) {
                        Some((_, count)) => *count += 1,
                        None => counts.push((name.clone(), 1)),
                    }
                }
            }
        }
        counts.sort_by(|a, b| b.1.cmp(&a.1));
        counts
    }

    /// Largest violation of any constraint row or variable bound.
    pub fn max_violation(&self, x: &[f64], g: &[f64]) -> f64 {
        let rows = (0..g.len()).map(|r| (self.g_lower[r] - g[r]).max(g[r] - self.g_upper[r]));
        let vars = (0..x.len()).map(|i| (self.x_lower[i] - x[i]).max(x[i] - self.x_upper[i]));
        rows.chain(vars).fold(0.0, f64::max)
    }

    /// The trajectory a variable vector holds: per phase, duration, node and midpoint values.
    pub fn unpack(&self, x: &[f64]) -> Trajectory {
        let w = self.n_x + self.n_u;
        let split = |start: usize| {
            (
                x[start..start + self.n_x].to_vec(),
                x[start + self.n_x..start + w].to_vec(),
            )
        };
        let phases = self
            .phases
            .iter()
            .map(|layout| {
                let (states, controls) = (0..layout.nodes)
                    .map(|k| split(layout.base + k * w))
                    .unzip();
                let (mid_states, mid_controls) = if self.scheme.has_midpoint() {
                    (0..layout.nodes - 1)
                        .map(|k| split(layout.mid_base + k * w))
                        .unzip()
                } else {
                    (Vec::new(), Vec::new())
                };
                PhaseTrajectory {
                    name: layout.name.clone(),
                    duration: x[layout.duration],
                    states,
                    controls,
                    mid_states,
                    mid_controls,
                }
            })
            .collect();
        Trajectory { phases }
    }

    /// The variable vector of a trajectory with the NLP's node counts; missing midpoints
    /// are the average of their neighbours.
    pub fn pack(&self, trajectory: &Trajectory) -> Vec<f64> {
        let w = self.n_x + self.n_u;
        let mut x = vec![0.0; self.n_variables()];
        for (layout, phase) in self.phases.iter().zip(&trajectory.phases) {
            x[layout.duration] = phase.duration;
            for k in 0..layout.nodes {
                let s = layout.base + k * w;
                x[s..s + self.n_x].copy_from_slice(&phase.states[k]);
                x[s + self.n_x..s + w].copy_from_slice(&phase.controls[k]);
            }
            if self.scheme.has_midpoint() {
                for k in 0..layout.nodes - 1 {
                    let s = layout.mid_base + k * w;
                    for i in 0..w {
                        x[s + i] = match (phase.mid_states.get(k), i < self.n_x) {
                            (Some(m), true) => m[i],
                            (_, false) if phase.mid_controls.get(k).is_some() => {
                                phase.mid_controls[k][i - self.n_x]
                            }
                            _ => {
                                0.5 * (x[layout.base + k * w + i]
                                    + x[layout.base + (k + 1) * w + i])
                            }
                        };
                    }
                }
            }
        }
        x
    }
}
