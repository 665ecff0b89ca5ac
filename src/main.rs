//! loam's command line: parse, run, map the error to an exit code (2: bad input, 1: failure
//! or a solve that did not converge).

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args = <cli::Cli as clap::Parser>::parse();
    match cli::run(args) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(cli::exit_code(&error))
        }
    }
}
