//! loam's command line: parse, run, map the error to an exit code (2: bad input, 1: failure
//! or a solve that did not converge).

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, so a `println!` into a closed pipe (`loam solve ... | head -1`)
    // panics. Restore the default: the process ends quietly when its reader goes away, as
    // any Unix filter does. Results are written before anything is printed to stdout.
    // SAFETY: called first thing, before any other thread exists; SIG_DFL is a valid handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let args = <cli::Cli as clap::Parser>::parse();
    match cli::run(args) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(cli::exit_code(&error))
        }
    }
}
