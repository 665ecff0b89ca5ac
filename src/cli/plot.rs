use std::path::PathBuf;

use loam::plot::{self, Formats, PlotError, PlotSettings};

use super::BadInput;

#[derive(clap::Args)]
pub struct Args {
    /// A result folder: a `loam solve` run (with its replays, DEM replays included), a sweep,
    /// an MDP run or a material calibration.
    run_dir: PathBuf,
    /// Where to write the figures (default: RUN_DIR/plots).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write PNG only.
    #[arg(long, conflicts_with = "svg_only")]
    png_only: bool,
    /// Write SVG only.
    #[arg(long)]
    svg_only: bool,
    /// Also write `animation.gif` (a planar robot's plan or simulation as a moving stick
    /// figure; slowed down to last at least 4 s).
    #[arg(long)]
    animate: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    quiet: bool,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let settings = PlotSettings {
        out_dir: args.out,
        formats: Formats {
            png: !args.svg_only,
            svg: !args.png_only,
        },
        animate: args.animate,
    };
    let report = plot::plot_dir(&args.run_dir, &settings).map_err(|e| match e {
        // The user pointed at the wrong folder or at a file that is not loam's: exit code 2.
        PlotError::NotAFolder { .. }
        | PlotError::NotALoamResult { .. }
        | PlotError::Empty { .. }
        | PlotError::Csv { .. }
        | PlotError::MissingColumn { .. }
        | PlotError::Json { .. }
        | PlotError::Identity(_) => anyhow::Error::new(BadInput(e.to_string())),
        other => anyhow::Error::new(other),
    })?;
    if !args.quiet {
        for group in &report.sweep_groups {
            match group.mean_abs_error_mm {
                Some(mae) => println!(
                    "{}: mean |apex error| {mae:.1} mm over {} converged plan(s)",
                    group.label, group.converged
                ),
                None => println!("{}: no converged plan", group.label),
            }
        }
        for file in &report.files {
            println!("{}", file.display());
        }
        for replay in &report.replays {
            println!("drawn over the plan: {}", replay.display());
        }
        for (figure, why) in &report.skipped {
            println!("skipped {figure}: {why}");
        }
    }
    Ok(0)
}
