//! The rows of `replays.csv`, a sweep over grounds with every plan replayed on every ground of
//! the sweep (`cli/sweep/replays.rs`), in the columns the apex figure (the paper's Fig. 5)
//! reads; older loams wrote the hopper planner's `sweep.csv` in them too.

use super::Axis;

/// One row of replays.csv: a plan replayed on one ground.
pub struct Row {
    pub plan_terrain: String,
    pub target: f64,
    pub status: String,
    pub converged: bool,
    pub planned: f64,
    pub solve_s: f64,
    pub iterations: u64,
    /// The plan's objective, from its solution.json (NaN if absent).
    pub objective: f64,
    /// (path, value) of every --vary.
    pub varied: Vec<(String, String)>,
    pub replay_terrain: String,
    pub achieved: Option<f64>,
    pub run_dir: String,
}

/// The fixed columns of `replays.csv`, in their stable order; one column per --vary follows,
/// named by its path (README documents each with its unit).
const FIXED_COLUMNS: &str = "plan_terrain,apex_target_m,status,converged,planned_apex_m,solve_s,iterations,replay_terrain,achieved_apex_m,error_m,run_dir,objective";

/// A plan's folder as `replays.csv`'s `run_dir` names it: relative to the sweep's folder `out`.
pub fn run_dir(dir: &std::path::Path, out: &std::path::Path) -> String {
    dir.strip_prefix(out).unwrap_or(dir).display().to_string()
}

/// The header line of `replays.csv` (no newline).
pub fn header(axes: &[Axis]) -> String {
    let mut s = String::from(FIXED_COLUMNS);
    for axis in axes {
        s.push(',');
        s.push_str(&axis.path);
    }
    s
}

impl Row {
    /// The row as a line of `replays.csv` (no newline).
    pub fn csv_line(&self) -> String {
        let (achieved, error) = match self.achieved {
            Some(a) => (format!("{a:.6e}"), format!("{:.6e}", a - self.target)),
            None => ("nan".into(), "nan".into()),
        };
        let mut s = format!(
            "{},{:.6},{},{},{:.6e},{:.4},{},{},{achieved},{error},{},{:.6e}",
            self.plan_terrain,
            self.target,
            self.status,
            self.converged,
            self.planned,
            self.solve_s,
            self.iterations,
            self.replay_terrain,
            self.run_dir,
            self.objective
        );
        for (_, value) in &self.varied {
            s.push(',');
            // A planar sweep's section value (`{model: rigid}`) holds commas: quoted.
            s.push_str(&crate::output::csv_field(value));
        }
        s
    }

    /// Reads back a line written by [`Row::csv_line`] for a sweep over `axes`.
    pub fn parse(line: &str, axes: &[Axis]) -> Option<Row> {
        let fields: Vec<&str> = line.split(',').collect();
        if fields.len() != 12 + axes.len() {
            return None;
        }
        let number = |i: usize| fields[i].parse::<f64>().ok();
        Some(Row {
            plan_terrain: fields[0].to_string(),
            target: number(1)?,
            status: fields[2].to_string(),
            converged: fields[3].parse().ok()?,
            planned: number(4)?,
            solve_s: number(5)?,
            iterations: fields[6].parse().ok()?,
            replay_terrain: fields[7].to_string(),
            achieved: number(8).filter(|a| a.is_finite()),
            run_dir: fields[10].to_string(),
            objective: number(11)?,
            varied: axes
                .iter()
                .zip(&fields[12..])
                .map(|(axis, value)| (axis.path.clone(), value.to_string()))
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_reads_back_as_written() {
        let axes = [super::super::parse_axis("terrain.drag_scaling=5,10").unwrap()];
        let row = Row {
            plan_terrain: "poppy_seeds".into(),
            target: 0.05,
            status: "Solve_Succeeded".into(),
            converged: true,
            planned: 0.0500001,
            solve_s: 0.25,
            iterations: 31,
            objective: 1.25e-2,
            varied: vec![("terrain.drag_scaling".into(), "10".into())],
            replay_terrain: "rigid".into(),
            achieved: None,
            run_dir: "poppy_seeds-drag_scaling=10".into(),
        };
        let line = row.csv_line();
        let back = Row::parse(&line, &axes).expect("parses");
        assert_eq!(back.csv_line(), line);
        assert!(back.achieved.is_none());
        assert!(Row::parse(&line, &[]).is_none(), "a column short");
    }
}
