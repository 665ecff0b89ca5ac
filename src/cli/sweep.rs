//! `loam sweep FILE --vary PATH=RANGE`: solve a problem over a grid of values, replay every
//! plan on its own terrain and on the other, and write `sweep.csv` and its figures.
//!
//! Cold sweeps solve in parallel, one `loam solve` process per plan: CasADi's expression graph
//! and MUMPS are not safe to share between threads, processes are. Warm-started sweeps solve
//! in order in this process, each from its neighbour's plan (`planner::warm_start`).
//!
//! Each plan is solved, replayed and marked done in its own folder before the next starts, so
//! that a sweep stopped by Ctrl-C (or SIGTERM, as Slurm sends) resumes where it stopped when
//! run again with the same arguments (`point.rs`); `--shard I/N` runs one slice of the
//! combinations and `loam sweep merge` joins the slices (`shard.rs`).
//!
//! A planar robot's problem is swept by `planar.rs`: each point planned and replayed on its
//! own terrain, cold, in processes of their own, into one `sweep.csv`.

mod planar;
mod point;
mod replays;
mod shard;
mod table;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::Context;
use indicatif::ProgressBar;
use loam::output::{self, Provenance};
use loam::planner::{self, warm_start};
use loam::problem::{self, Problem};
use loam::sim::replay::terrain_label;
use loam::solver::SolveSettings;
use loam::sweep::chain::{settings, usable_start};
use loam::sweep::{combinations, other_terrain, parse_axis, point_dir, Axis};

use self::shard::{Manifest, Shard};
use self::table::Row;
use super::interrupt::{self, Interrupted};
use super::{progress, simulate, BadInput};

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<SweepCommand>,
    /// The problem file (YAML).
    #[arg(required = true)]
    pub file: Option<PathBuf>,
    /// A field and its values: `task.apex_height=0.03:0.10:0.01` (start:stop:step, stop
    /// included; a stop below the start counts down: 0.10:0.03:0.01) or
    /// `terrain.model=rigid,added_mass` (a list). Repeatable: every combination is solved;
    /// the first --vary changes fastest.
    #[arg(long = "vary", value_name = "PATH=RANGE", required = true)]
    pub vary: Vec<String>,
    /// The hopper's problems: start each solve from its neighbour's plan (as `loam solve
    /// --warm-start` does, across terrains too: `--vary terrain.model=rigid,added_mass`):
    /// along the first --vary, in order, in this process; each value of the other --vary
    /// starts a new chain, solved cold first. A chain follows its first plan's local optimum:
    /// sweep heights from the top down (task.apex_height=0.10:0.03:0.01), where the measured
    /// plans are the cold ones' or better (README, "Warm starts").
    #[arg(long)]
    pub warm_start: bool,
    /// Fixed overrides applied to every point: --set phases.0.nodes=41 (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub overrides: Vec<String>,
    /// Output folder (default: runs/<problem name>-sweep). Run again with the same
    /// arguments, the sweep keeps the plans already done there (e.g. before a Ctrl-C) and
    /// solves the rest.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Parallel solves for a cold sweep (default: the available cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
    /// Solve only slice I of N (1 ≤ I ≤ N) of the combinations, into the same --out as the
    /// other slices (e.g. one Slurm array task each): every N-th combination, or with
    /// --warm-start every N-th chain (the first --vary's values at one value of the others).
    /// `loam sweep merge DIR` then joins them.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
}

#[derive(clap::Subcommand)]
enum SweepCommand {
    /// Join the shards of a sweep (run with --shard I/N) into sweep.csv and draw its figures.
    Merge(shard::MergeArgs),
}

/// One plan of the sweep, loaded and validated.
struct Point {
    /// 0-based index of the combination in the whole sweep.
    index: usize,
    problem: Problem,
    overrides: Vec<String>,
    dir: PathBuf,
    /// (path, value) of every --vary at this point, in --vary order.
    varied: Vec<(String, String)>,
    /// `apex_height=0.05 drag_scaling=10`, for progress.
    label: String,
    /// Names the plan and its start (see `point.rs`).
    identity: String,
    /// A warm sweep's point solved from the point at this position of the list.
    after: Option<usize>,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    if let Some(SweepCommand::Merge(merge)) = args.command {
        return shard::merge(merge);
    }
    let file = args
        .file
        .clone()
        .expect("clap requires FILE without a subcommand");
    let axes: Vec<Axis> = args
        .vary
        .iter()
        .map(|s| parse_axis(s).map_err(|e| BadInput(e.to_string())))
        .collect::<Result<_, _>>()?;
    if args.warm_start && !args.quiet && rises(&axes[0]) {
        eprintln!(
            "note: this warm chain climbs in apex height; a chain follows its first plan's local \
             optimum, and on rigid ground one from 30 mm up ended up to 65 % above the cold \
             plans where one from the top down reached them or better (README, \"Warm starts\"): \
             write the range from the top, e.g. task.apex_height=0.10:0.03:0.01"
        );
    }
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    if problem::is_planar(&text, &args.overrides) {
        let base = super::ProblemArgs {
            file: file.clone(),
            overrides: args.overrides.clone(),
        }
        .load_any()?;
        let name = match &base {
            problem::AnyProblem::Planar(p) => p.name().to_string(),
            problem::AnyProblem::Hopper(p) => p.name().to_string(),
        };
        let out = args
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from("runs").join(format!("{name}-sweep")));
        interrupt::install();
        return planar::run(&args, &file, &axes, &out);
    }
    // The hopper's sweep names its folders and sweep.csv's fields by the values as given.
    let section = |v: &String| v.contains(',') || v.starts_with(['{', '[']);
    if let Some(axis) = axes.iter().find(|a| a.values.iter().any(section)) {
        return Err(BadInput(format!(
            "--vary {}: the hopper's sweep varies single values (a range or a list of them), \
             not whole sections; a planar robot's problem (the hopper as `problems/hopper_jump.yaml`) \
             takes a YAML list of sections",
            axis.path
        ))
        .into());
    }
    let base = super::ProblemArgs {
        file: file.clone(),
        overrides: args.overrides.clone(),
    }
    .load()?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("runs").join(format!("{}-sweep", base.name())));

    // Every point is loaded and validated (those of the other shards too) before anything is
    // solved or written.
    let combos = combinations(&axes);
    let mut problems = Vec::new();
    for combo in &combos {
        let mut overrides = args.overrides.clone();
        overrides.extend(combo.iter().map(|(p, v)| format!("{p}={v}")));
        problems.push((problem::load(&file, &overrides)?, overrides));
    }
    // A warm sweep's chain: the values of the first --vary at one value of the others.
    let chain = if args.warm_start {
        axes[0].values.len()
    } else {
        1
    };
    let selected = match args.shard {
        Some(shard) => shard.select(combos.len(), chain),
        None => (0..combos.len()).collect(),
    };
    let points = points_of(&selected, chain, &combos, problems, &out)?;

    interrupt::install();
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    // A table of the whole sweep no longer describes the folder once any part of it is redone.
    remove_file(&out.join("sweep.csv"))?;
    let header = table::header(&axes);
    if let Some(shard) = args.shard {
        remove_file(&shard.csv_path(&out))?;
        let manifest = Manifest {
            sweep: point::fingerprint(&format!(
                "{}\n{:?}\n{}",
                serde_json::to_string(&base)?,
                shard::vary_specs(&axes),
                args.warm_start
            )),
            shard: shard.index,
            shards: shard.count,
            combinations: combos.len(),
            problem: base.name().to_string(),
            file: file.display().to_string(),
            vary: shard::vary_specs(&axes),
            set: args.overrides.clone(),
            warm_start: args.warm_start,
            header: header.clone(),
        };
        manifest.write(&shard.json_path(&out))?;
    }

    // What an earlier, interrupted run finished is kept.
    let mut done: Vec<Option<Vec<String>>> = points
        .iter()
        .map(|p| point::finished(&p.dir, &p.identity))
        .collect();
    let resumed = done.iter().filter(|d| d.is_some()).count();
    let started = Instant::now();
    let bar = progress::bar(points.len() as u64, args.quiet, "plans");
    bar.set_position(resumed as u64);
    let solved = if args.warm_start {
        solve_warm(&points, &mut done, &out, &bar)
    } else {
        let jobs = args.jobs.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        });
        solve_cold(&file, &points, &mut done, jobs.max(1), &out, &bar)
    };
    bar.finish_and_clear();
    if solved.is_err() || interrupt::requested() {
        for p in &points {
            point::remove_temporaries(&p.dir);
        }
    }
    if interrupt::requested() {
        let finished = done.iter().filter(|d| d.is_some()).count();
        return Err(Interrupted(format!(
            "{finished} of {} plans are done and kept in {}; run the same command again to resume",
            points.len(),
            out.display()
        ))
        .into());
    }
    solved?;
    let solve_seconds = started.elapsed().as_secs_f64();

    let finished: Vec<(usize, Vec<String>)> = points
        .iter()
        .zip(done)
        .map(|(p, lines)| (p.index, lines.expect("every plan is done")))
        .collect();
    let written = match args.shard {
        Some(shard) => {
            let path = shard.csv_path(&out);
            output::write_atomic(&path, shard::shard_csv(&header, &finished).as_bytes())?;
            path
        }
        None => {
            let mut csv = header.clone() + "\n";
            for line in finished.iter().flat_map(|(_, lines)| lines) {
                csv.push_str(line);
                csv.push('\n');
            }
            let path = out.join("sweep.csv");
            output::write_atomic(&path, csv.as_bytes())?;
            path
        }
    };

    if !args.quiet {
        let rows: Vec<Row> = finished
            .iter()
            .flat_map(|(_, lines)| lines)
            .filter_map(|line| Row::parse(line, &axes))
            .collect();
        table::print(&rows);
        let shard = args.shard.map_or(String::new(), |s| {
            format!(
                " (shard {}/{} of {} in all)",
                s.index,
                s.count,
                combos.len()
            )
        });
        let kept = match resumed {
            0 => String::new(),
            n => format!("; {n} done by an earlier run, kept"),
        };
        println!(
            "{} plans{shard}: {} solved in {:.2} s ({}){kept}, replayed on two terrains each; wrote {}",
            points.len(),
            points.len() - resumed,
            solve_seconds,
            if args.warm_start {
                "warm-started in order"
            } else {
                "cold, in parallel"
            },
            written.display()
        );
        if args.shard.is_some() {
            println!(
                "when every shard is done: loam sweep merge {}",
                out.display()
            );
        }
    }
    Ok(0)
}

/// Whether `axis` is the apex height, rising from its first value to its last.
fn rises(axis: &Axis) -> bool {
    let first = axis.values.first().and_then(|v| v.parse::<f64>().ok());
    let last = axis.values.last().and_then(|v| v.parse::<f64>().ok());
    axis.path == "task.apex_height" && matches!((first, last), (Some(a), Some(b)) if b > a)
}

/// The points of the `selected` combinations (0-based, in order), `problems` being every
/// combination's problem and overrides; a warm sweep's chains are `chain` combinations long.
fn points_of(
    selected: &[usize],
    chain: usize,
    combos: &[Vec<(String, String)>],
    mut problems: Vec<(Problem, Vec<String>)>,
    out: &Path,
) -> anyhow::Result<Vec<Point>> {
    let mut points = Vec::new();
    for (position, &k) in selected.iter().enumerate() {
        let (problem, overrides) = std::mem::take(&mut problems[k]);
        let varied = combos[k].clone();
        let (name, label) = point_dir(&problem, &varied);
        let dir = out.join(name);
        // Within a chain, from the previous point (a shard holds whole chains, in order).
        let after = (k % chain != 0).then(|| position - 1);
        let start = match after {
            None => "cold".to_string(),
            Some(previous) => format!("warm from combination {}", selected[previous] + 1),
        };
        let identity =
            point::fingerprint(&format!("{}\n{start}", serde_json::to_string(&problem)?));
        points.push(Point {
            index: k,
            problem,
            overrides,
            dir,
            varied,
            label,
            identity,
            after,
        });
    }
    Ok(points)
}

fn remove_file(path: &Path) -> anyhow::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Solves the points not yet `done`, each in its own `loam solve` process, `jobs` at a time,
/// replays each and marks it done. Returns early, leaving the rest undone, on Ctrl-C.
fn solve_cold(
    file: &Path,
    points: &[Point],
    done: &mut [Option<Vec<String>>],
    jobs: usize,
    out: &Path,
    bar: &ProgressBar,
) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("locating the loam binary")?;
    let pending: Vec<usize> = (0..points.len()).filter(|&i| done[i].is_none()).collect();
    let next = AtomicUsize::new(0);
    let failure = Mutex::new(None);
    let finished = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(pending.len()) {
            scope.spawn(|| loop {
                if interrupt::requested() || failure.lock().unwrap().is_some() {
                    break;
                }
                let Some(&i) = pending.get(next.fetch_add(1, Ordering::SeqCst)) else {
                    break;
                };
                bar.set_message(points[i].label.clone());
                match solve_cold_point(&exe, file, &points[i], out) {
                    Ok(Some(lines)) => {
                        finished.lock().unwrap().push((i, lines));
                        bar.inc(1);
                    }
                    Ok(None) => break,
                    Err(e) => {
                        failure.lock().unwrap().get_or_insert(e);
                    }
                }
            });
        }
    });
    for (i, lines) in finished.into_inner().unwrap() {
        done[i] = Some(lines);
    }
    match failure.into_inner().unwrap() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// `loam solve FILE --out DIR -q --set O...`: one sweep point's solve, to be run by `exe`.
fn solve_command(exe: &Path, file: &Path, dir: &Path, overrides: &[String]) -> Command {
    let mut command = Command::new(exe);
    command
        .arg("solve")
        .arg(file)
        .arg("--out")
        .arg(dir)
        .arg("-q");
    for o in overrides {
        command.arg("--set").arg(o);
    }
    command
}

/// One plan of a cold sweep: `loam solve` in a process of its own, then the replays and the
/// marker. None when Ctrl-C stopped it (its folder then lacks the marker and is redone).
fn solve_cold_point(
    exe: &Path,
    file: &Path,
    point: &Point,
    out: &Path,
) -> anyhow::Result<Option<Vec<String>>> {
    use std::os::unix::process::CommandExt;
    point::begin(&point.dir)?;
    let mut command = solve_command(exe, file, &point.dir, &point.overrides);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        // A process group of its own: Ctrl-C on the terminal reaches this process alone,
        // which stops each solve itself and cleans up after it.
        .process_group(0);
    let mut child = command
        .spawn()
        .with_context(|| format!("running {}", exe.display()))?;
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        text
    });
    let status = loop {
        if let Some(status) = child.try_wait().context("waiting for loam solve")? {
            break Some(status);
        }
        if interrupt::requested() {
            interrupt::forward(&child);
            child.wait().context("waiting for loam solve")?;
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = reader.join().unwrap_or_default();
    let status = match status {
        Some(status) if !(interrupt::requested() && status.code().is_none()) => status,
        // Stopped by us, or by the signal that stopped us (Slurm signals every process).
        _ => {
            point::remove_temporaries(&point.dir);
            return Ok(None);
        }
    };
    match status.code() {
        // 0: converged, 1: not converged (a status, recorded in the run).
        Some(0 | 1) => {}
        Some(2) => {
            return Err(BadInput(format!(
                "solving {}: {}",
                point.dir.display(),
                stderr.trim()
            ))
            .into())
        }
        _ => anyhow::bail!(
            "solving {}: loam solve ended with {status}: {}",
            point.dir.display(),
            stderr.trim()
        ),
    }
    Ok(Some(replay_and_finish(point, out)?))
}

/// Replays a solved plan on both terrains and marks it done; its lines of `sweep.csv`.
fn replay_and_finish(point: &Point, out: &Path) -> anyhow::Result<Vec<String>> {
    let lines: Vec<String> = replay_point(point, out)?
        .iter()
        .map(Row::csv_line)
        .collect();
    point::finish(&point.dir, &point.identity, point.index + 1, &lines)?;
    Ok(lines)
}

/// Solves the points not yet `done` in order, each from its neighbour's plan as `loam solve
/// --warm-start` reads it from the neighbour's folder (so that a resumed sweep starts its next
/// plan exactly as an uninterrupted one would), across terrains too.
fn solve_warm(
    points: &[Point],
    done: &mut [Option<Vec<String>>],
    out: &Path,
    bar: &ProgressBar,
) -> anyhow::Result<()> {
    let mut kept = planner::Transcriptions::default();
    for (i, point) in points.iter().enumerate() {
        if done[i].is_some() {
            continue;
        }
        let start = match point.after {
            Some(j) => usable_start(super::warm_start::read(&points[j].dir)?, &point.problem)?,
            None => None,
        };
        point::begin(&point.dir)?;
        bar.set_message(point.label.clone());
        let mut on_iteration = progress::ipopt(bar, &point.label);
        // IPOPT's log, as `loam solve` writes it: a temporary moved in with the plan (the warm
        // start and its cold retry, if any, in turn).
        let log = point
            .dir
            .join(format!(".ipopt.log.tmp{}", std::process::id()));
        std::fs::remove_file(&log).ok();
        let logged = SolveSettings {
            log_file: Some(log.clone()),
            ..settings(&point.problem)
        };
        let solved = warm_start::plan_from_with(
            &point.problem,
            &logged,
            start.as_ref().map(|s| &s.0),
            Some(&mut on_iteration),
            &mut kept,
        );
        let (plan, warm) = match solved {
            Ok(solved) if !interrupt::requested() => solved,
            other => {
                std::fs::remove_file(&log).ok();
                other?;
                return Ok(());
            }
        };
        let source = start.map(|(_, source)| source);
        let provenance =
            Provenance::new(super::warm_start::provenance(&point.problem, source, warm));
        output::write_run_with(&point.dir, &point.problem, &plan, provenance, Some(&log))?;
        done[i] = Some(replay_and_finish(point, out)?);
        bar.inc(1);
    }
    Ok(())
}

/// Replays the plan in `point.dir` on its own terrain and on the other.
fn replay_point(point: &Point, out: &Path) -> anyhow::Result<Vec<Row>> {
    let plan = simulate::read_plan(&point.dir)?;
    let objective = std::fs::read_to_string(point.dir.join("solution.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|json| json.get("objective").and_then(serde_json::Value::as_f64))
        .unwrap_or(f64::NAN);
    let mut rows = Vec::new();
    for terrain in [point.problem.terrain.clone(), other_terrain(&point.problem)] {
        let settings = loam::sim::reduced::Settings::default();
        // A plan that did not converge may not replay at all; its row records no apex.
        let achieved = loam::api::replay_and_write(&plan, &terrain, settings)
            .ok()
            .and_then(|s| s.apex_rise_m);
        rows.push(Row {
            plan_terrain: terrain_label(&point.problem.terrain),
            target: point.problem.task.apex_height,
            status: plan.status.clone(),
            converged: plan.converged,
            planned: plan.apex_rise,
            solve_s: plan.solve_seconds,
            iterations: plan.iterations,
            objective,
            varied: point.varied.clone(),
            replay_terrain: terrain_label(&terrain),
            achieved,
            run_dir: loam::sweep::table::run_dir(&point.dir, out),
        });
    }
    Ok(rows)
}
