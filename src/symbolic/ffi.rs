//! The cxx bridge to `casadi_shim.{h,cc}`: the only place loam declares C++ functions.

#[cxx::bridge(namespace = "loam")]
pub(crate) mod bridge {
    unsafe extern "C++" {
        include!("casadi_shim.h");

        type Sx;
        type SxList;
        type Func;

        fn casadi_version() -> String;
        fn ipopt_version() -> String;

        fn sx_symbol(name: &str, n: usize) -> UniquePtr<Sx>;
        fn sx_constant(value: f64) -> UniquePtr<Sx>;
        fn sx_clone(x: &Sx) -> UniquePtr<Sx>;
        fn sx_unary(op: u8, x: &Sx) -> Result<UniquePtr<Sx>>;
        fn sx_binary(op: u8, a: &Sx, b: &Sx) -> Result<UniquePtr<Sx>>;
        fn sx_if_else(condition: &Sx, if_true: &Sx, if_false: &Sx) -> Result<UniquePtr<Sx>>;
        fn sx_element(x: &Sx, i: usize) -> Result<UniquePtr<Sx>>;
        fn sx_numel(x: &Sx) -> usize;
        fn sx_nnz(x: &Sx) -> usize;
        fn sx_size1(x: &Sx) -> usize;
        fn sx_size2(x: &Sx) -> usize;
        fn sx_is_constant(x: &Sx) -> bool;
        fn sx_to_double(x: &Sx) -> Result<f64>;
        fn sx_triplet_rows(x: &Sx) -> Vec<i64>;
        fn sx_triplet_cols(x: &Sx) -> Vec<i64>;
        fn sx_to_string(x: &Sx) -> String;
        fn sx_jacobian(f: &Sx, x: &Sx) -> Result<UniquePtr<Sx>>;
        fn sx_gradient(f: &Sx, x: &Sx) -> Result<UniquePtr<Sx>>;
        fn sx_hessian_lower(f: &Sx, x: &Sx) -> Result<UniquePtr<Sx>>;
        fn sx_dot(a: &Sx, b: &Sx) -> Result<UniquePtr<Sx>>;

        fn sxlist_new() -> UniquePtr<SxList>;
        fn sxlist_push(list: Pin<&mut SxList>, x: &Sx);
        fn sx_vertcat(list: &SxList) -> Result<UniquePtr<Sx>>;

        fn func_new(name: &str, inputs: &SxList, outputs: &SxList) -> Result<UniquePtr<Func>>;
        fn func_n_in(f: &Func) -> usize;
        fn func_n_out(f: &Func) -> usize;
        fn func_nnz_in(f: &Func, i: usize) -> usize;
        fn func_nnz_out(f: &Func, i: usize) -> usize;
        fn func_eval(f: Pin<&mut Func>, input: &[f64], output: &mut [f64]) -> Result<()>;
    }
}
