use super::ProblemArgs;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    problem: ProblemArgs,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let problem = args.problem.load_any()?;
    if let loam::problem::planar::PlanarTerrainConfig::WrenchSpace(_) = problem.terrain {
        let planner = loam::api::wrench_space_planner(&args.problem.file, &problem)?;
        let hop = planner.wrench_space.as_ref().expect("on a wrench space");
        let nlp =
            loam::transcription::Nlp::build(&hop.ocp()?, loam::transcription::Scheme::Trapezoidal)?;
        println!(
            "{}: ok ({}: {} on a wrench space of {} vertices, {} phases; {} variables, {} constraints)",
            args.problem.file.display(),
            problem.name(),
            problem.robot.model_name(),
            hop.space.n_directions(),
            hop.phases.len(),
            nlp.n_variables(),
            nlp.n_constraints()
        );
        return Ok(0);
    }
    let planner = std::rc::Rc::new(loam::planner::planar::PlanarPlanner::new(&problem));
    let nlp = loam::planner::Transcribe::nlp(&planner)?;
    println!(
        "{}: ok ({}: {} with {} coordinates, {} phases; {} variables, {} constraints)",
        args.problem.file.display(),
        problem.name(),
        problem.robot.model_name(),
        planner.layout.n_q,
        planner.phases.len(),
        nlp.n_variables(),
        nlp.n_constraints()
    );
    Ok(0)
}
