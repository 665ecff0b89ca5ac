//! IPOPT's C interface (the `loam_` functions of `ipopt_shim.cc`) and its callback types.

use std::ffi::{c_char, c_int, c_void};

pub(super) type IpNumber = f64;
pub(super) type IpIndex = c_int;

#[repr(C)]
pub(super) struct IpoptProblemInfo {
    _private: [u8; 0],
}
pub(super) type IpoptProblemPtr = *mut IpoptProblemInfo;
pub(super) type UserDataPtr = *mut c_void;

pub(super) type EvalFCb =
    unsafe extern "C" fn(IpIndex, *mut IpNumber, bool, *mut IpNumber, UserDataPtr) -> bool;
pub(super) type EvalGradFCb =
    unsafe extern "C" fn(IpIndex, *mut IpNumber, bool, *mut IpNumber, UserDataPtr) -> bool;
pub(super) type EvalGCb =
    unsafe extern "C" fn(IpIndex, *mut IpNumber, bool, IpIndex, *mut IpNumber, UserDataPtr) -> bool;
pub(super) type EvalJacGCb = unsafe extern "C" fn(
    IpIndex,
    *mut IpNumber,
    bool,
    IpIndex,
    IpIndex,
    *mut IpIndex,
    *mut IpIndex,
    *mut IpNumber,
    UserDataPtr,
) -> bool;
pub(super) type EvalHCb = unsafe extern "C" fn(
    IpIndex,
    *mut IpNumber,
    bool,
    IpNumber,
    IpIndex,
    *mut IpNumber,
    bool,
    IpIndex,
    *mut IpIndex,
    *mut IpIndex,
    *mut IpNumber,
    UserDataPtr,
) -> bool;
pub(super) type IntermediateCb = unsafe extern "C" fn(
    IpIndex,
    IpIndex,
    IpNumber,
    IpNumber,
    IpNumber,
    IpNumber,
    IpNumber,
    IpNumber,
    IpNumber,
    IpNumber,
    IpIndex,
    UserDataPtr,
) -> bool;

// IPOPT's C interface as re-implemented on its C++ interface by `ipopt_shim.cc` (same
// signatures, `loam_` names), so that a linear solver of loam's can be handed to IPOPT.
unsafe extern "C" {
    #[allow(clippy::too_many_arguments)]
    #[link_name = "loam_CreateIpoptProblem"]
    pub(super) fn CreateIpoptProblem(
        n: IpIndex,
        x_l: *mut IpNumber,
        x_u: *mut IpNumber,
        m: IpIndex,
        g_l: *mut IpNumber,
        g_u: *mut IpNumber,
        nele_jac: IpIndex,
        nele_hess: IpIndex,
        index_style: IpIndex,
        eval_f: EvalFCb,
        eval_g: EvalGCb,
        eval_grad_f: EvalGradFCb,
        eval_jac_g: EvalJacGCb,
        eval_h: EvalHCb,
    ) -> IpoptProblemPtr;
    #[link_name = "loam_FreeIpoptProblem"]
    pub(super) fn FreeIpoptProblem(problem: IpoptProblemPtr);
    #[link_name = "loam_AddIpoptStrOption"]
    pub(super) fn AddIpoptStrOption(
        problem: IpoptProblemPtr,
        keyword: *mut c_char,
        val: *mut c_char,
    ) -> bool;
    #[link_name = "loam_AddIpoptNumOption"]
    pub(super) fn AddIpoptNumOption(
        problem: IpoptProblemPtr,
        keyword: *mut c_char,
        val: IpNumber,
    ) -> bool;
    #[link_name = "loam_AddIpoptIntOption"]
    pub(super) fn AddIpoptIntOption(
        problem: IpoptProblemPtr,
        keyword: *mut c_char,
        val: IpIndex,
    ) -> bool;
    #[link_name = "loam_OpenIpoptOutputFile"]
    pub(super) fn OpenIpoptOutputFile(
        problem: IpoptProblemPtr,
        file_name: *mut c_char,
        print_level: c_int,
    ) -> bool;
    #[link_name = "loam_SetIpoptProblemScaling"]
    pub(super) fn SetIpoptProblemScaling(
        problem: IpoptProblemPtr,
        obj_scaling: IpNumber,
        x_scaling: *mut IpNumber,
        g_scaling: *mut IpNumber,
    ) -> bool;
    #[link_name = "loam_SetIntermediateCallback"]
    pub(super) fn SetIntermediateCallback(problem: IpoptProblemPtr, cb: IntermediateCb) -> bool;
    #[allow(clippy::too_many_arguments)]
    #[link_name = "loam_IpoptSolve"]
    pub(super) fn IpoptSolve(
        problem: IpoptProblemPtr,
        x: *mut IpNumber,
        g: *mut IpNumber,
        obj_val: *mut IpNumber,
        mult_g: *mut IpNumber,
        mult_x_l: *mut IpNumber,
        mult_x_u: *mut IpNumber,
        user_data: UserDataPtr,
    ) -> c_int;
    #[allow(clippy::too_many_arguments)]
    #[link_name = "loam_GetIpoptCurrentIterate"]
    pub(super) fn GetIpoptCurrentIterate(
        problem: IpoptProblemPtr,
        scaled: bool,
        n: IpIndex,
        x: *mut IpNumber,
        z_l: *mut IpNumber,
        z_u: *mut IpNumber,
        m: IpIndex,
        g: *mut IpNumber,
        lambda: *mut IpNumber,
    ) -> bool;
    /// Makes later solves factorise with `callbacks` (IPOPT's `linear_solver` set to
    /// `custom`), or, with null, with whatever `linear_solver` says.
    pub(super) fn loam_UseLinearSolver(
        problem: IpoptProblemPtr,
        callbacks: *const crate::solver::kkt::Callbacks,
    ) -> bool;
}
