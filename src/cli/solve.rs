use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Context;
use loam::output;
use loam::planner::{self, Plan};
use loam::solver::{IterationInfo, SolveSettings};

use super::ProblemArgs;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    problem: ProblemArgs,
    /// Where to write the results (default: results/<problem name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print nothing but errors.
    #[arg(long, short)]
    quiet: bool,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    if args.problem.is_planar()? {
        return run_planar(args);
    }
    let problem = args.problem.load()?;
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from("results").join(problem.name()));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let log = out.join(format!(".ipopt.log.tmp{}", std::process::id()));
    let settings = SolveSettings {
        options: planner::solver_options(&problem),
        log_file: Some(log.clone()),
        ..SolveSettings::default()
    };

    let interactive = !args.quiet && std::io::stderr().is_terminal();
    let mut progress = |info: &IterationInfo| {
        eprint!(
            "\r  iteration {:4}  objective {:+.6e}  infeasibility {:.2e}  {}",
            info.iteration,
            info.objective,
            info.inf_pr,
            if info.restoration {
                "(restoration)"
            } else {
                "             "
            }
        );
        true
    };
    let plan = planner::plan(
        &problem,
        &settings,
        None,
        interactive.then_some(&mut progress as _),
    );
    if interactive {
        eprint!("\r{:80}\r", "");
    }
    let plan = match plan {
        Ok(plan) => plan,
        Err(e) => {
            std::fs::remove_file(&log).ok();
            return Err(e.into());
        }
    };
    std::fs::rename(&log, out.join("ipopt.log")).context("keeping IPOPT's log")?;
    output::write_run(&out, &problem, &plan)?;
    if !args.quiet {
        print_summary(&plan, &out);
    }
    Ok(if plan.report.converged { 0 } else { 1 })
}

fn print_summary(plan: &Plan, out: &std::path::Path) {
    let r = &plan.report;
    let verdict = if r.converged {
        "converged"
    } else {
        "NOT CONVERGED"
    };
    println!(
        "{verdict}: IPOPT {} after {} iterations",
        r.status, r.iterations
    );
    println!("  objective      {:.6e} (½∫u² dt)", r.objective);
    println!(
        "  apex rise      {:.2} mm (target {:.2} mm)",
        plan.apex_rise * 1e3,
        plan.jump.task.apex_height * 1e3
    );
    let phases: Vec<String> = plan
        .trajectory
        .phases
        .iter()
        .map(|p| format!("{} {:.1} ms", p.name, p.duration * 1e3))
        .collect();
    println!("  phases         {}", phases.join(", "));
    println!("  max violation  {:.2e}", r.max_violation);
    let binding: Vec<String> = r
        .binding
        .iter()
        .map(|(name, n)| format!("{name} ({n})"))
        .collect();
    println!(
        "  binding        {}",
        if binding.is_empty() {
            "none".to_string()
        } else {
            binding.join(", ")
        }
    );
    println!(
        "  time           {:.1} ms set-up + {:.1} ms solve",
        plan.setup_seconds * 1e3,
        r.solve_seconds * 1e3
    );
    if !r.converged {
        println!("  worst violated constraints (best iterate kept, marked not converged):");
        for v in r.violations.iter().take(8) {
            println!(
                "    {:<60} {:+.3e}  bounds [{:.3e}, {:.3e}]",
                v.name, v.value, v.lower, v.upper
            );
        }
    }
    println!(
        "  wrote          {}/{{solution.json, trajectory.csv, ipopt.log}}",
        out.display()
    );
}

/// A planar robot's problem: the same steps, the planar planner and outputs.
fn run_planar(args: Args) -> anyhow::Result<u8> {
    use loam::planner::planar;
    let problem = args.problem.load_planar()?;
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from("results").join(problem.name()));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let log = out.join(format!(".ipopt.log.tmp{}", std::process::id()));
    let options = planar::solver_options(&problem);
    let settings = SolveSettings {
        options: options.clone(),
        log_file: Some(log.clone()),
        ..SolveSettings::default()
    };
    let interactive = !args.quiet && std::io::stderr().is_terminal();
    let mut progress = |info: &IterationInfo| {
        eprint!(
            "\r  iteration {:4}  objective {:+.6e}  infeasibility {:.2e}",
            info.iteration, info.objective, info.inf_pr
        );
        true
    };
    let plan = planar::plan(
        &problem,
        &settings,
        interactive.then_some(&mut progress as _),
    );
    if interactive {
        eprint!("\r{:80}\r", "");
    }
    let plan = match plan {
        Ok(plan) => plan,
        Err(e) => {
            std::fs::remove_file(&log).ok();
            return Err(e.into());
        }
    };
    std::fs::rename(&log, out.join("ipopt.log")).context("keeping IPOPT's log")?;
    output::planar::write_planar_run(&out, &problem, &plan, &options)?;
    if !args.quiet {
        let r = &plan.report;
        let key = output::planar::key_figures(&plan);
        let verdict = if r.converged {
            "converged"
        } else {
            "NOT CONVERGED"
        };
        println!(
            "{verdict}: IPOPT {} after {} iterations",
            r.status, r.iterations
        );
        println!(
            "  objective      {:.6e} ({:?})",
            r.objective, problem.task.objective
        );
        println!(
            "  distance       {:.4} m, centre of mass rise {:.4} m, duration {:.3} s",
            key.distance_m, key.com_rise_m, key.duration_s
        );
        let phases: Vec<String> = plan
            .trajectory
            .phases
            .iter()
            .map(|p| format!("{} {:.1} ms", p.name, p.duration * 1e3))
            .collect();
        println!("  phases         {}", phases.join(", "));
        println!("  max violation  {:.2e}", r.max_violation);
        println!(
            "  time           {:.1} ms set-up + {:.1} ms solve",
            plan.setup_seconds * 1e3,
            r.solve_seconds * 1e3
        );
        if !r.converged {
            println!("  worst violated constraints (best iterate kept, marked not converged):");
            for v in r.violations.iter().take(8) {
                println!(
                    "    {:<60} {:+.3e}  bounds [{:.3e}, {:.3e}]",
                    v.name, v.value, v.lower, v.upper
                );
            }
        }
        println!(
            "  wrote          {}/{{solution.json, trajectory.csv, ipopt.log}}",
            out.display()
        );
    }
    Ok(if plan.report.converged { 0 } else { 1 })
}
