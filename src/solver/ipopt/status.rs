//! `IpoptStatus`: IPOPT's return codes with their names.

use std::fmt;

/// IPOPT's `ApplicationReturnStatus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpoptStatus {
    SolveSucceeded,
    SolvedToAcceptableLevel,
    InfeasibleProblemDetected,
    SearchDirectionBecomesTooSmall,
    DivergingIterates,
    UserRequestedStop,
    FeasiblePointFound,
    MaximumIterationsExceeded,
    RestorationFailed,
    ErrorInStepComputation,
    MaximumCpuTimeExceeded,
    MaximumWallTimeExceeded,
    NotEnoughDegreesOfFreedom,
    InvalidProblemDefinition,
    InvalidOption,
    InvalidNumberDetected,
    UnrecoverableException,
    NonIpoptExceptionThrown,
    InsufficientMemory,
    InternalError,
    Unknown(i32),
}

impl IpoptStatus {
    const TABLE: [(IpoptStatus, i32, &'static str); 20] = [
        (IpoptStatus::SolveSucceeded, 0, "Solve_Succeeded"),
        (
            IpoptStatus::SolvedToAcceptableLevel,
            1,
            "Solved_To_Acceptable_Level",
        ),
        (
            IpoptStatus::InfeasibleProblemDetected,
            2,
            "Infeasible_Problem_Detected",
        ),
        (
            IpoptStatus::SearchDirectionBecomesTooSmall,
            3,
            "Search_Direction_Becomes_Too_Small",
        ),
        (IpoptStatus::DivergingIterates, 4, "Diverging_Iterates"),
        (IpoptStatus::UserRequestedStop, 5, "User_Requested_Stop"),
        (IpoptStatus::FeasiblePointFound, 6, "Feasible_Point_Found"),
        (
            IpoptStatus::MaximumIterationsExceeded,
            -1,
            "Maximum_Iterations_Exceeded",
        ),
        (IpoptStatus::RestorationFailed, -2, "Restoration_Failed"),
        (
            IpoptStatus::ErrorInStepComputation,
            -3,
            "Error_In_Step_Computation",
        ),
        (
            IpoptStatus::MaximumCpuTimeExceeded,
            -4,
            "Maximum_CpuTime_Exceeded",
        ),
        (
            IpoptStatus::MaximumWallTimeExceeded,
            -5,
            "Maximum_WallTime_Exceeded",
        ),
        (
            IpoptStatus::NotEnoughDegreesOfFreedom,
            -10,
            "Not_Enough_Degrees_Of_Freedom",
        ),
        (
            IpoptStatus::InvalidProblemDefinition,
            -11,
            "Invalid_Problem_Definition",
        ),
        (IpoptStatus::InvalidOption, -12, "Invalid_Option"),
        (
            IpoptStatus::InvalidNumberDetected,
            -13,
            "Invalid_Number_Detected",
        ),
        (
            IpoptStatus::UnrecoverableException,
            -100,
            "Unrecoverable_Exception",
        ),
        (
            IpoptStatus::NonIpoptExceptionThrown,
            -101,
            "NonIpopt_Exception_Thrown",
        ),
        (IpoptStatus::InsufficientMemory, -102, "Insufficient_Memory"),
        (IpoptStatus::InternalError, -199, "Internal_Error"),
    ];

    pub fn from_code(code: i32) -> Self {
        Self::TABLE
            .iter()
            .find(|(_, c, _)| *c == code)
            .map(|(s, _, _)| *s)
            .unwrap_or(IpoptStatus::Unknown(code))
    }

    pub fn code(&self) -> i32 {
        match self {
            IpoptStatus::Unknown(c) => *c,
            s => Self::TABLE
                .iter()
                .find(|(t, _, _)| t == s)
                .map(|(_, c, _)| *c)
                .unwrap_or(i32::MIN),
        }
    }

    /// True only for `SolveSucceeded` and `SolvedToAcceptableLevel`.
    pub fn is_success(&self) -> bool {
        matches!(
            self,
            IpoptStatus::SolveSucceeded | IpoptStatus::SolvedToAcceptableLevel
        )
    }

    /// IPOPT's own spelling, e.g. `"Solve_Succeeded"`; `"Unknown"` for unknown codes.
    pub fn name(&self) -> &'static str {
        match self {
            IpoptStatus::Unknown(_) => "Unknown",
            s => Self::TABLE
                .iter()
                .find(|(t, _, _)| t == s)
                .map(|(_, _, n)| *n)
                .unwrap_or("Unknown"),
        }
    }
}

impl fmt::Display for IpoptStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IpoptStatus::Unknown(c) => write!(f, "Unknown({c})"),
            s => f.write_str(s.name()),
        }
    }
}
