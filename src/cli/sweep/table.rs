//! The console table of a sweep over grounds: `replays.csv`'s rows (`loam::sweep::table`).

use loam::sweep::table::Row;

/// The console table of every plan on every ground, and the mean apex error per (plan,
/// replay) group.
pub fn print(rows: &[Row]) {
    // One column per varied field (its last path segment), as wide as its values.
    let varied: Vec<(String, usize)> = rows
        .first()
        .map(|r| {
            r.varied
                .iter()
                .enumerate()
                .map(|(k, (path, _))| {
                    let name = path.rsplit('.').next().unwrap_or(path).to_string();
                    let width = rows
                        .iter()
                        .map(|r| r.varied[k].1.len())
                        .chain([name.len()])
                        .max()
                        .unwrap_or(0);
                    (name, width)
                })
                .collect()
        })
        .unwrap_or_default();
    let mut header = String::new();
    for (name, width) in &varied {
        header += &format!("{name:<width$} ");
    }
    println!(
        "{header}{:<12} {:>10} {:>10} {:<14} {:>12} {:>9} {:>12} {:>6} {:>8}",
        "plan",
        "target mm",
        "converged",
        "replayed on",
        "achieved mm",
        "error %",
        "objective",
        "iter",
        "solve s"
    );
    for r in rows {
        let (achieved, error) = match r.achieved {
            Some(a) => (
                format!("{:.1}", a * 1e3),
                format!("{:+.1}", 100.0 * (a - r.target) / r.target),
            ),
            None => ("-".into(), "-".into()),
        };
        let mut values = String::new();
        for ((_, width), (_, value)) in varied.iter().zip(&r.varied) {
            values += &format!("{value:<width$} ");
        }
        println!(
            "{values}{:<12} {:>10.1} {:>10} {:<14} {:>12} {:>9} {:>12.4e} {:>6} {:>8.3}",
            r.plan_terrain,
            r.target * 1e3,
            r.converged,
            r.replay_terrain,
            achieved,
            error,
            r.objective,
            r.iterations,
            r.solve_s
        );
    }
    // Mean absolute apex error per (plan, replay) group, the numbers of the paper's Fig. 5.
    let mut groups: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r.plan_terrain.clone(), r.replay_terrain.clone()))
        .collect();
    groups.sort();
    groups.dedup();
    for (plan, on) in groups {
        let errors: Vec<f64> = rows
            .iter()
            .filter(|r| r.plan_terrain == plan && r.replay_terrain == on && r.converged)
            .filter_map(|r| r.achieved.map(|a| (a - r.target).abs()))
            .collect();
        if !errors.is_empty() {
            println!(
                "{plan} plans on {on}: mean absolute apex error {:.1} mm over {} converged plans",
                1e3 * errors.iter().sum::<f64>() / errors.len() as f64,
                errors.len()
            );
        }
    }
}
