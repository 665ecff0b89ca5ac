//! IPOPT options: `OptionValue`, setting them (with IPOPT's reason on rejection), scaling,
//! the output file, and the settings IPOPT lists for an option.

use std::ffi::{CStr, CString};
use std::fmt;
use std::path::Path;

use super::callbacks::capture_stdout;
use super::ffi::{
    loam_UseLinearSolver, AddIpoptIntOption, AddIpoptNumOption, AddIpoptStrOption, IpIndex,
    IpoptProblemPtr, OpenIpoptOutputFile, SetIpoptProblemScaling,
};
use super::{Ipopt, IpoptError, NlpStructure, LOAM_LINEAR_SOLVER};

/// An IPOPT option value.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum OptionValue {
    Str(String),
    Num(f64),
    Int(i64),
}

impl fmt::Display for OptionValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionValue::Str(s) => write!(f, "\"{s}\""),
            OptionValue::Num(v) => write!(f, "{v}"),
            OptionValue::Int(v) => write!(f, "{v}"),
        }
    }
}

/// Sets one option on `problem`; on rejection returns what IPOPT printed (maybe empty).
/// `str_val` is the C string of an `OptionValue::Str`.
fn add_option(
    problem: IpoptProblemPtr,
    key: &CStr,
    value: &OptionValue,
    str_val: Option<&CStr>,
) -> Result<(), String> {
    let k = key.as_ptr().cast_mut();
    let add_num = |v: f64| {
        // SAFETY: `problem` is a valid IpoptProblem; the keyword is only read.
        capture_stdout(|| unsafe { AddIpoptNumOption(problem, k, v) })
    };
    let add_int = |v: IpIndex| {
        // SAFETY: `problem` is a valid IpoptProblem; the keyword is only read.
        capture_stdout(|| unsafe { AddIpoptIntOption(problem, k, v) })
    };
    let add_str = |v: &CStr| {
        // SAFETY: `problem` is a valid IpoptProblem; IPOPT only reads the NUL-terminated
        // strings (the C signature is non-const, but they are copied into std::string).
        capture_stdout(|| unsafe { AddIpoptStrOption(problem, k, v.as_ptr().cast_mut()) })
    };
    let (ok, printed) = match (value, str_val) {
        (OptionValue::Str(_), Some(v)) => add_str(v),
        (OptionValue::Str(_), None) => (false, String::new()),
        (OptionValue::Num(v), _) => add_num(*v),
        (OptionValue::Int(v), _) => match IpIndex::try_from(*v) {
            // Retry as Num: `max_wall_time: 5` should set a Number option.
            Ok(iv) => match add_int(iv) {
                (true, _) => (true, String::new()),
                (false, printed) => (add_num(*v as f64).0, printed),
            },
            Err(_) => match add_num(*v as f64) {
                (true, _) => (true, String::new()),
                (false, printed) if printed.contains("not a valid option") => (false, printed),
                (false, _) => (
                    false,
                    format!("{v} does not fit in a 32-bit integer option"),
                ),
            },
        },
    };
    if ok {
        Ok(())
    } else {
        Err(printed)
    }
}

impl Ipopt {
    /// Sets one option. On rejection the error carries the text IPOPT printed.
    /// An `Int` rejected by IPOPT is retried as `Num` (for `tol: 1`-style input).
    ///
    /// IPOPT prints its reason through its console journal, which stays silent once a
    /// solve has run with `print_level = 0`; in that case the option is replayed on a
    /// throwaway problem (fresh journal) to obtain the reason.
    pub fn set_option(&mut self, name: &str, value: &OptionValue) -> Result<(), IpoptError> {
        let reject = |message: String| IpoptError::Option {
            name: name.to_string(),
            value: value.to_string(),
            message,
        };
        if name == "linear_solver" {
            let ours = *value == OptionValue::Str(LOAM_LINEAR_SOLVER.into());
            let callbacks: *const crate::solver::kkt::Callbacks = if ours {
                &crate::solver::kkt::CALLBACKS
            } else {
                std::ptr::null()
            };
            // SAFETY: valid problem; the callback table is a static.
            let ok = unsafe { loam_UseLinearSolver(self.problem, callbacks) };
            if ours {
                return if ok {
                    Ok(())
                } else {
                    Err(reject("IPOPT refused `linear_solver: custom`".into()))
                };
            }
        }
        let key = CString::new(name)
            .map_err(|_| reject("option name contains a NUL byte".to_string()))?;
        let str_val = match value {
            OptionValue::Str(s) => Some(
                CString::new(s.as_str())
                    .map_err(|_| reject("option value contains a NUL byte".to_string()))?,
            ),
            _ => None,
        };
        let mut message = match add_option(self.problem, &key, value, str_val.as_deref()) {
            Ok(()) => return Ok(()),
            Err(printed) => printed,
        };
        if message.is_empty() {
            let tiny = NlpStructure {
                x_lower: vec![0.0],
                x_upper: vec![1.0],
                ..Default::default()
            };
            message = Ipopt::new(&tiny)
                .ok()
                .and_then(|scratch| {
                    add_option(scratch.problem, &key, value, str_val.as_deref()).err()
                })
                .unwrap_or_default();
        }
        if message.is_empty() {
            message = "IPOPT returned false without printing a reason; the option name may be \
                       unknown, or the value of the wrong type or out of range"
                .to_string();
        }
        Err(reject(message))
    }

    /// Sets options in order, stopping at the first rejected one.
    pub fn set_options(&mut self, opts: &[(String, OptionValue)]) -> Result<(), IpoptError> {
        for (name, value) in opts {
            self.set_option(name, value)?;
        }
        Ok(())
    }

    /// Sets user scaling (objective factor, optional per-variable and per-constraint
    /// factors) and the option `nlp_scaling_method = user-scaling`.
    pub fn set_scaling(
        &mut self,
        objective: f64,
        x: Option<&[f64]>,
        g: Option<&[f64]>,
    ) -> Result<(), IpoptError> {
        let (n, m) = (self.structure.n(), self.structure.m());
        if let Some(x) = x.filter(|x| x.len() != n) {
            return Err(IpoptError::Length {
                what: "x scaling",
                expected: n,
                got: x.len(),
            });
        }
        if let Some(g) = g.filter(|g| g.len() != m) {
            return Err(IpoptError::Length {
                what: "g scaling",
                expected: m,
                got: g.len(),
            });
        }
        let mut xs = x.map(<[f64]>::to_vec);
        let mut gs = g.map(<[f64]>::to_vec);
        let px = xs.as_mut().map_or(std::ptr::null_mut(), |v| v.as_mut_ptr());
        let pg = gs.as_mut().map_or(std::ptr::null_mut(), |v| v.as_mut_ptr());
        // SAFETY: valid problem; px/pg are null or point to n/m doubles that IPOPT copies.
        let ok = unsafe { SetIpoptProblemScaling(self.problem, objective, px, pg) };
        if !ok {
            return Err(IpoptError::Scaling);
        }
        self.set_option(
            "nlp_scaling_method",
            &OptionValue::Str("user-scaling".to_string()),
        )
    }

    /// Makes IPOPT also write its log to `path` at `print_level` (0..=12), appended to what
    /// the file holds.
    pub fn open_output_file(&mut self, path: &Path, print_level: i32) -> Result<(), IpoptError> {
        let fail = || IpoptError::OutputFile {
            path: path.to_path_buf(),
            print_level,
        };
        let c_path = {
            use std::os::unix::ffi::OsStrExt;
            CString::new(path.as_os_str().as_bytes()).map_err(|_| fail())?
        };
        // SAFETY: valid problem; IPOPT only reads the NUL-terminated path.
        let ok =
            unsafe { OpenIpoptOutputFile(self.problem, c_path.as_ptr().cast_mut(), print_level) };
        if ok {
            Ok(())
        } else {
            Err(fail())
        }
    }
}

/// The settings IPOPT lists for the string option `name`, each with IPOPT's description
/// (asked by setting a value no option has, so that IPOPT prints the option's documentation).
pub fn valid_settings(name: &str) -> Vec<(String, String)> {
    let tiny = NlpStructure {
        x_lower: vec![0.0],
        x_upper: vec![1.0],
        ..Default::default()
    };
    let Ok(mut scratch) = Ipopt::new(&tiny) else {
        return Vec::new();
    };
    let message = match scratch.set_option(name, &OptionValue::Str("\u{1}none".into())) {
        Err(IpoptError::Option { message, .. }) => message,
        _ => return Vec::new(),
    };
    message
        .lines()
        .skip_while(|line| !line.starts_with("Valid Settings:"))
        .skip(1)
        .take_while(|line| line.starts_with(char::is_whitespace))
        .filter_map(|line| {
            let line = line.trim();
            let (value, description) = line.split_once(' ').unwrap_or((line, ""));
            (!value.is_empty()).then(|| (value.to_string(), description.trim().to_string()))
        })
        .collect()
}
