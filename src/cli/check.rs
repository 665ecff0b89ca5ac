use loam::planner;

use super::ProblemArgs;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    problem: ProblemArgs,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let problem = args.problem.load()?;
    let (jump, nlp) = planner::transcribe(&problem)?;
    println!(
        "{}: ok ({} on {} terrain, apex rise {:.1} mm; {} scheme, {} variables, {} constraints)",
        args.problem.file.display(),
        problem.name(),
        jump.terrain.name(),
        problem.task.apex_height * 1e3,
        jump.scheme.name(),
        nlp.n_variables(),
        nlp.n_constraints()
    );
    Ok(0)
}
