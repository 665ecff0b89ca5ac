//! What reproduces a plan, recorded in `solution.json` under `provenance` (README, "Results of
//! `loam solve`").

use serde::Serialize;

use crate::problem::InitialGuess;

/// Where the optimiser started.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WarmStart {
    /// Every variable zero (`initial_guess: zero`).
    Zero,
    /// The start at rest at every node (`initial_guess: rest`, the default).
    Rest,
    /// The schedule's footholds (`initial_guess: footholds`).
    Footholds,
    /// Another plan's primal and dual solution (a warm-started sweep): its identity and folder.
    Plan { plan_id: String, dir: String },
}

impl From<InitialGuess> for WarmStart {
    fn from(guess: InitialGuess) -> Self {
        match guess {
            InitialGuess::Zero => WarmStart::Zero,
            InitialGuess::Rest => WarmStart::Rest,
            InitialGuess::Footholds => WarmStart::Footholds,
        }
    }
}

/// The `provenance` of `solution.json` (loam's version is the top-level `loam_version`).
#[derive(Clone, Debug, Serialize)]
pub struct Provenance {
    /// `git rev-parse --short HEAD` of the tree loam was built from; `unknown` outside git.
    pub loam_commit: &'static str,
    /// Whether that tree's sources differed from the commit; null when unknown.
    pub loam_commit_dirty: Option<bool>,
    /// The command line, as given (the program first).
    pub command_line: Vec<String>,
    /// Where the optimiser started.
    pub warm_start: WarmStart,
    /// The CasADi library's own version (`CasadiMeta::version()`).
    pub casadi_version: String,
    /// The IPOPT library's own version (`GetIpoptVersion`).
    pub ipopt_version: String,
    /// The folder both libraries were linked from and are loaded from (the binary's rpath;
    /// `LOAM_CASADI_DIR` at build time, else loam's cache).
    pub casadi_dir: &'static str,
    /// When the plan was written, UTC, RFC 3339.
    pub written_at: String,
    /// The data files the problem read (a wrench space's `terrain.data`): where, and their
    /// SHA-256, so a run names exactly the data it was solved on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub data_files: Vec<DataFile>,
}

/// A data file a problem read.
#[derive(Clone, Debug, Serialize)]
pub struct DataFile {
    /// The problem's field that names it (`terrain.data`).
    pub field: String,
    /// Its absolute path when the run was solved.
    pub path: String,
    /// SHA-256 of its bytes, in hex.
    pub sha256: String,
}

impl Provenance {
    /// This process's provenance for a plan started from `warm_start`.
    pub fn new(warm_start: WarmStart) -> Provenance {
        Provenance {
            loam_commit: env!("LOAM_GIT_COMMIT"),
            loam_commit_dirty: match env!("LOAM_GIT_DIRTY") {
                "true" => Some(true),
                "false" => Some(false),
                _ => None,
            },
            command_line: std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            warm_start,
            casadi_version: crate::symbolic::casadi_version(),
            ipopt_version: crate::symbolic::ipopt_version(),
            casadi_dir: env!("LOAM_CASADI_DIR"),
            written_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            data_files: Vec::new(),
        }
    }

    /// Records the data file at `path` that the problem's `field` names (its absolute path
    /// and SHA-256); a file that cannot be read is recorded without a hash.
    pub fn with_data(mut self, field: &str, path: &std::path::Path) -> Provenance {
        let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
        let sha256 = std::fs::read(path)
            .map(|bytes| crate::problem::sha256_hex(&bytes))
            .unwrap_or_default();
        self.data_files.push(DataFile {
            field: field.into(),
            path: absolute.display().to_string(),
            sha256,
        });
        self
    }
}
