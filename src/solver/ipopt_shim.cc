// IPOPT through its C++ interface, behind the C interface's own signatures.
//
// loam drove IPOPT through IpStdCInterface.h. That interface cannot hand IPOPT a linear solver
// of the caller's: only `IpoptApplication::OptimizeNLP(nlp, AlgorithmBuilder)` can, with a
// `SparseSymLinearSolverInterface` wrapped as IPOPT's custom augmented-system solver. So this
// file re-implements the handful of C functions loam uses (same arguments, same meaning, the
// names prefixed `loam_`) on a TNLP of its own, and adds one: `loam_UseLinearSolver`, which
// makes the next solves factorise the KKT systems with callbacks into Rust
// (`src/solver/kkt.rs`) instead of MUMPS.

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <vector>

#include "IpAlgBuilder.hpp"
#include "IpIpoptApplication.hpp"
#include "IpSparseSymLinearSolverInterface.hpp"
#include "IpStdAugSystemSolver.hpp"
#include "IpStdCInterface.h"
#include "IpTNLP.hpp"
#include "IpTNLPAdapter.hpp"
#include "IpTSymLinearSolver.hpp"

using namespace Ipopt;

extern "C" {
// The Rust side of the linear solver (src/solver/kkt.rs). Status codes are ESymSolverStatus.
struct LoamLinearSolverCallbacks {
    void* (*create)();
    int (*structure)(void* solver, int dim, int nonzeros, const int* ia, const int* ja);
    int (*solve)(void* solver, bool new_matrix, const double* values, int nrhs, double* rhs,
                 bool check_negative, int expected_negative, int* negative);
    void (*destroy)(void* solver);
    // Raises the pivot threshold; false when it is already at its largest.
    bool (*increase_quality)(void* solver);
};
}

namespace {

class RustLinearSolver : public SparseSymLinearSolverInterface {
public:
    explicit RustLinearSolver(const LoamLinearSolverCallbacks& callbacks)
        : callbacks_(callbacks), solver_(nullptr), negative_(0) {}

    ~RustLinearSolver() override {
        if (solver_ != nullptr) callbacks_.destroy(solver_);
    }

    bool InitializeImpl(const OptionsList&, const std::string&) override {
        if (solver_ != nullptr) callbacks_.destroy(solver_);
        solver_ = callbacks_.create();
        return solver_ != nullptr;
    }

    ESymSolverStatus InitializeStructure(Index dim, Index nonzeros, const Index* ia,
                                         const Index* ja) override {
        values_.assign(static_cast<size_t>(nonzeros), 0.0);
        return static_cast<ESymSolverStatus>(
            callbacks_.structure(solver_, dim, nonzeros, ia, ja));
    }

    Number* GetValuesArrayPtr() override { return values_.data(); }

    ESymSolverStatus MultiSolve(bool new_matrix, const Index*, const Index*, Index nrhs,
                                Number* rhs_vals, bool check_NegEVals,
                                Index numberOfNegEVals) override {
        int negative = negative_;
        int status = callbacks_.solve(solver_, new_matrix, values_.data(), nrhs, rhs_vals,
                                      check_NegEVals, numberOfNegEVals, &negative);
        negative_ = negative;
        return static_cast<ESymSolverStatus>(status);
    }

    Index NumberOfNegEVals() const override { return negative_; }

    // IPOPT asks for more accurate solves (a residual it cannot refine away): the
    // factorisation raises its pivot threshold, as IPOPT's MUMPS interface raises pivtol.
    bool IncreaseQuality() override { return callbacks_.increase_quality(solver_); }

    bool ProvidesInertia() const override { return true; }

    EMatrixFormat MatrixFormat() const override { return CSR_Format_0_Offset; }

private:
    LoamLinearSolverCallbacks callbacks_;
    void* solver_;
    Index negative_;
    std::vector<Number> values_;
};

struct Problem;

class Tnlp : public TNLP {
public:
    Tnlp(Problem* problem, Number* x, Number* g, Number* obj_val, Number* mult_g,
         Number* mult_x_L, Number* mult_x_U, UserDataPtr user_data)
        : problem_(problem), x_(x), g_(g), obj_val_(obj_val), mult_g_(mult_g),
          mult_x_L_(mult_x_L), mult_x_U_(mult_x_U), user_data_(user_data) {}

    bool get_nlp_info(Index& n, Index& m, Index& nnz_jac_g, Index& nnz_h_lag,
                      IndexStyleEnum& index_style) override;
    bool get_bounds_info(Index n, Number* x_l, Number* x_u, Index m, Number* g_l,
                         Number* g_u) override;
    bool get_scaling_parameters(Number& obj_scaling, bool& use_x_scaling, Index n,
                                Number* x_scaling, bool& use_g_scaling, Index m,
                                Number* g_scaling) override;
    bool get_starting_point(Index n, bool init_x, Number* x, bool init_z, Number* z_L,
                            Number* z_U, Index m, bool init_lambda, Number* lambda) override;
    bool eval_f(Index n, const Number* x, bool new_x, Number& obj_value) override;
    bool eval_grad_f(Index n, const Number* x, bool new_x, Number* grad_f) override;
    bool eval_g(Index n, const Number* x, bool new_x, Index m, Number* g) override;
    bool eval_jac_g(Index n, const Number* x, bool new_x, Index m, Index nele_jac, Index* iRow,
                    Index* jCol, Number* values) override;
    bool eval_h(Index n, const Number* x, bool new_x, Number obj_factor, Index m,
                const Number* lambda, bool new_lambda, Index nele_hess, Index* iRow,
                Index* jCol, Number* values) override;
    void finalize_solution(SolverReturn status, Index n, const Number* x, const Number* z_L,
                           const Number* z_U, Index m, const Number* g, const Number* lambda,
                           Number obj_value, const IpoptData* ip_data,
                           IpoptCalculatedQuantities* ip_cq) override;
    bool intermediate_callback(Ipopt::AlgorithmMode mode, Index iter, Number obj_value, Number inf_pr,
                               Number inf_du, Number mu, Number d_norm,
                               Number regularization_size, Number alpha_du, Number alpha_pr,
                               Index ls_trials, const IpoptData* ip_data,
                               IpoptCalculatedQuantities* ip_cq) override;

    bool current_iterate(bool scaled, Index n, Number* x, Number* z_L, Number* z_U, Index m,
                         Number* g, Number* lambda) {
        if (ip_data_ == nullptr || ip_cq_ == nullptr) return false;
        return get_curr_iterate(ip_data_, ip_cq_, scaled, n, x, z_L, z_U, m, g, lambda);
    }

private:
    Problem* problem_;
    Number* x_;
    Number* g_;
    Number* obj_val_;
    Number* mult_g_;
    Number* mult_x_L_;
    Number* mult_x_U_;
    UserDataPtr user_data_;
    const IpoptData* ip_data_ = nullptr;
    IpoptCalculatedQuantities* ip_cq_ = nullptr;
};

struct Problem {
    Index n = 0, m = 0, nele_jac = 0, nele_hess = 0, index_style = 0;
    std::vector<Number> x_L, x_U, g_L, g_U;
    Eval_F_CB eval_f = nullptr;
    Eval_G_CB eval_g = nullptr;
    Eval_Grad_F_CB eval_grad_f = nullptr;
    Eval_Jac_G_CB eval_jac_g = nullptr;
    Eval_H_CB eval_h = nullptr;
    Intermediate_CB intermediate_cb = nullptr;
    SmartPtr<IpoptApplication> app;
    Number obj_scaling = 1.0;
    std::vector<Number> x_scaling, g_scaling;
    bool use_linear_solver = false;
    LoamLinearSolverCallbacks linear_solver{};
    SmartPtr<Tnlp> tnlp;
};

bool Tnlp::get_nlp_info(Index& n, Index& m, Index& nnz_jac_g, Index& nnz_h_lag,
                        IndexStyleEnum& index_style) {
    n = problem_->n;
    m = problem_->m;
    nnz_jac_g = problem_->nele_jac;
    nnz_h_lag = problem_->nele_hess;
    index_style = problem_->index_style == 0 ? C_STYLE : FORTRAN_STYLE;
    return true;
}

bool Tnlp::get_bounds_info(Index n, Number* x_l, Number* x_u, Index m, Number* g_l,
                           Number* g_u) {
    std::memcpy(x_l, problem_->x_L.data(), sizeof(Number) * n);
    std::memcpy(x_u, problem_->x_U.data(), sizeof(Number) * n);
    if (m > 0) {
        std::memcpy(g_l, problem_->g_L.data(), sizeof(Number) * m);
        std::memcpy(g_u, problem_->g_U.data(), sizeof(Number) * m);
    }
    return true;
}

bool Tnlp::get_scaling_parameters(Number& obj_scaling, bool& use_x_scaling, Index n,
                                  Number* x_scaling, bool& use_g_scaling, Index m,
                                  Number* g_scaling) {
    obj_scaling = problem_->obj_scaling;
    use_x_scaling = !problem_->x_scaling.empty();
    if (use_x_scaling) std::memcpy(x_scaling, problem_->x_scaling.data(), sizeof(Number) * n);
    use_g_scaling = !problem_->g_scaling.empty();
    if (use_g_scaling) std::memcpy(g_scaling, problem_->g_scaling.data(), sizeof(Number) * m);
    return true;
}

bool Tnlp::get_starting_point(Index n, bool init_x, Number* x, bool init_z, Number* z_L,
                              Number* z_U, Index m, bool init_lambda, Number* lambda) {
    if (init_x) std::memcpy(x, x_, sizeof(Number) * n);
    if (init_z) {
        if (mult_x_L_ == nullptr || mult_x_U_ == nullptr) return false;
        std::memcpy(z_L, mult_x_L_, sizeof(Number) * n);
        std::memcpy(z_U, mult_x_U_, sizeof(Number) * n);
    }
    if (init_lambda && m > 0) {
        if (mult_g_ == nullptr) return false;
        std::memcpy(lambda, mult_g_, sizeof(Number) * m);
    }
    return true;
}

bool Tnlp::eval_f(Index n, const Number* x, bool new_x, Number& obj_value) {
    return problem_->eval_f(n, const_cast<Number*>(x), new_x, &obj_value, user_data_);
}

bool Tnlp::eval_grad_f(Index n, const Number* x, bool new_x, Number* grad_f) {
    return problem_->eval_grad_f(n, const_cast<Number*>(x), new_x, grad_f, user_data_);
}

bool Tnlp::eval_g(Index n, const Number* x, bool new_x, Index m, Number* g) {
    return problem_->eval_g(n, const_cast<Number*>(x), new_x, m, g, user_data_);
}

bool Tnlp::eval_jac_g(Index n, const Number* x, bool new_x, Index m, Index nele_jac,
                      Index* iRow, Index* jCol, Number* values) {
    return problem_->eval_jac_g(n, const_cast<Number*>(x), new_x, m, nele_jac, iRow, jCol,
                                values, user_data_);
}

bool Tnlp::eval_h(Index n, const Number* x, bool new_x, Number obj_factor, Index m,
                  const Number* lambda, bool new_lambda, Index nele_hess, Index* iRow,
                  Index* jCol, Number* values) {
    return problem_->eval_h(n, const_cast<Number*>(x), new_x, obj_factor, m,
                            const_cast<Number*>(lambda), new_lambda, nele_hess, iRow, jCol,
                            values, user_data_);
}

void Tnlp::finalize_solution(SolverReturn, Index n, const Number* x, const Number* z_L,
                             const Number* z_U, Index m, const Number* g,
                             const Number* lambda, Number obj_value, const IpoptData*,
                             IpoptCalculatedQuantities*) {
    if (x_ != nullptr) std::memcpy(x_, x, sizeof(Number) * n);
    if (z_L != nullptr && mult_x_L_ != nullptr) std::memcpy(mult_x_L_, z_L, sizeof(Number) * n);
    if (z_U != nullptr && mult_x_U_ != nullptr) std::memcpy(mult_x_U_, z_U, sizeof(Number) * n);
    if (m > 0) {
        if (g_ != nullptr) std::memcpy(g_, g, sizeof(Number) * m);
        if (mult_g_ != nullptr) std::memcpy(mult_g_, lambda, sizeof(Number) * m);
    }
    if (obj_val_ != nullptr) *obj_val_ = obj_value;
}

bool Tnlp::intermediate_callback(Ipopt::AlgorithmMode mode, Index iter, Number obj_value,
                                 Number inf_pr, Number inf_du, Number mu, Number d_norm,
                                 Number regularization_size, Number alpha_du, Number alpha_pr,
                                 Index ls_trials, const IpoptData* ip_data,
                                 IpoptCalculatedQuantities* ip_cq) {
    if (problem_->intermediate_cb == nullptr) return true;
    ip_data_ = ip_data;
    ip_cq_ = ip_cq;
    bool go_on = problem_->intermediate_cb(static_cast<Index>(mode), iter, obj_value, inf_pr,
                                           inf_du, mu, d_norm, regularization_size, alpha_du,
                                           alpha_pr, ls_trials, user_data_);
    ip_data_ = nullptr;
    ip_cq_ = nullptr;
    return go_on;
}

// One BLAS thread unless the user asks for more with OPENBLAS_NUM_THREADS. MUMPS calls the BLAS
// of CasADi's wheel (OpenBLAS, libcasadi-tp-openblas, loaded with IPOPT), which starts a thread
// per core. loam's KKT systems are small: threads do not help, and they cost twice over.
// (1) Speed: on a busy machine (a sweep's parallel solves, other work) its threads wait on each
// other; measured on 2 cores beside two other busy processes, quadruped_stand took 94 s with
// OpenBLAS's default against 6.5 s with one thread. (2) Reproducibility: a threaded dgemm sums
// in another order, so MUMPS's plans depended on the machine's core count (quadruped_stand:
// 294 iterations with 2 threads, 463 with 1; the hopper's plans, whose fronts are too small
// to thread, were the same bit for bit). Looked up at run time: another BLAS has no such call.
void one_blas_thread() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (std::getenv("OPENBLAS_NUM_THREADS") != nullptr) return;
        using SetThreads = void (*)(int);
        auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
        if (set == nullptr) return;
        set(1);
        // OpenBLAS started its thread pool when it was loaded, and an idle server thread spins
        // (sched_yield) for about 0.1 s before it sleeps: a whole core for a solve's lifetime
        // (20 rigid-ground solves: 2.1 s of CPU for 1.25 s of wall time; 1.1 s with the pool
        // shut). With one thread OpenBLAS never hands the pool work, so shut it down.
        using Shutdown = int (*)();
        auto shutdown = reinterpret_cast<Shutdown>(dlsym(RTLD_DEFAULT, "blas_thread_shutdown_"));
        if (shutdown != nullptr) shutdown();
    });
}

}  // namespace

extern "C" {

void* loam_CreateIpoptProblem(Index n, Number* x_L, Number* x_U, Index m, Number* g_L,
                              Number* g_U, Index nele_jac, Index nele_hess, Index index_style,
                              Eval_F_CB eval_f, Eval_G_CB eval_g, Eval_Grad_F_CB eval_grad_f,
                              Eval_Jac_G_CB eval_jac_g, Eval_H_CB eval_h) {
    if (n < 1 || m < 0 || x_L == nullptr || x_U == nullptr ||
        (m > 0 && (g_L == nullptr || g_U == nullptr)) || (m == 0 && nele_jac != 0) ||
        (m > 0 && nele_jac < 1) || nele_hess < 0 || eval_f == nullptr ||
        eval_grad_f == nullptr || (m > 0 && (eval_g == nullptr || eval_jac_g == nullptr)))
        return nullptr;
    try {
        auto* problem = new Problem;
        problem->n = n;
        problem->m = m;
        problem->nele_jac = nele_jac;
        problem->nele_hess = nele_hess;
        problem->index_style = index_style;
        problem->x_L.assign(x_L, x_L + n);
        problem->x_U.assign(x_U, x_U + n);
        if (m > 0) {
            problem->g_L.assign(g_L, g_L + m);
            problem->g_U.assign(g_U, g_U + m);
        }
        problem->eval_f = eval_f;
        problem->eval_g = eval_g;
        problem->eval_grad_f = eval_grad_f;
        problem->eval_jac_g = eval_jac_g;
        problem->eval_h = eval_h;
        one_blas_thread();
        problem->app = new IpoptApplication();
        return problem;
    } catch (...) {
        return nullptr;
    }
}

void loam_FreeIpoptProblem(void* p) { delete static_cast<Problem*>(p); }

bool loam_AddIpoptStrOption(void* p, char* keyword, char* val) {
    return static_cast<Problem*>(p)->app->Options()->SetStringValue(keyword, val);
}

bool loam_AddIpoptNumOption(void* p, char* keyword, Number val) {
    return static_cast<Problem*>(p)->app->Options()->SetNumericValue(keyword, val);
}

bool loam_AddIpoptIntOption(void* p, char* keyword, Index val) {
    return static_cast<Problem*>(p)->app->Options()->SetIntegerValue(keyword, val);
}

// Appends: one log holds every solve of a run (a warm start and its cold retry, the starts of
// `initial_guess: best`); the caller starts the file empty.
bool loam_OpenIpoptOutputFile(void* p, char* file_name, int print_level) {
    return static_cast<Problem*>(p)->app->OpenOutputFile(
        file_name, static_cast<EJournalLevel>(print_level), true);
}

bool loam_SetIpoptProblemScaling(void* p, Number obj_scaling, Number* x_scaling,
                                 Number* g_scaling) {
    auto* problem = static_cast<Problem*>(p);
    problem->obj_scaling = obj_scaling;
    if (x_scaling != nullptr)
        problem->x_scaling.assign(x_scaling, x_scaling + problem->n);
    else
        problem->x_scaling.clear();
    if (g_scaling != nullptr && problem->m > 0)
        problem->g_scaling.assign(g_scaling, g_scaling + problem->m);
    else
        problem->g_scaling.clear();
    return true;
}

bool loam_SetIntermediateCallback(void* p, Intermediate_CB cb) {
    static_cast<Problem*>(p)->intermediate_cb = cb;
    return true;
}

// Makes the following solves use the Rust linear solver (`callbacks` non-null) or IPOPT's
// `linear_solver` option again (null). IPOPT's option is set to `custom` or to `mumps`.
bool loam_UseLinearSolver(void* p, const LoamLinearSolverCallbacks* callbacks) {
    auto* problem = static_cast<Problem*>(p);
    problem->use_linear_solver = callbacks != nullptr;
    if (callbacks != nullptr) {
        problem->linear_solver = *callbacks;
        return problem->app->Options()->SetStringValue("linear_solver", "custom");
    }
    return true;
}

int loam_IpoptSolve(void* p, Number* x, Number* g, Number* obj_val, Number* mult_g,
                    Number* mult_x_L, Number* mult_x_U, UserDataPtr user_data) {
    auto* problem = static_cast<Problem*>(p);
    // One solve at a time per process: a test run with parallel solves through this driver
    // crashed once (SIGSEGV) in a fresh-clone CI run; not yet diagnosed, so serialised.
    static std::mutex one_at_a_time;
    std::lock_guard<std::mutex> lock(one_at_a_time);
    Ipopt::ApplicationReturnStatus status;
    try {
        status = problem->app->Initialize();
        if (status != Ipopt::Solve_Succeeded) return static_cast<int>(status);
        if (x == nullptr) return static_cast<int>(Ipopt::Invalid_Problem_Definition);
        problem->tnlp =
            new Tnlp(problem, x, g, obj_val, mult_g, mult_x_L, mult_x_U, user_data);
        if (problem->use_linear_solver) {
            SmartPtr<SymLinearSolver> linear =
                new TSymLinearSolver(new RustLinearSolver(problem->linear_solver), nullptr);
            SmartPtr<AugSystemSolver> augmented = new StdAugSystemSolver(*linear);
            SmartPtr<AlgorithmBuilder> builder = new AlgorithmBuilder(augmented, "loam");
            // What OptimizeTNLP does, with a builder of ours.
            SmartPtr<NLP> adapter =
                new TNLPAdapter(GetRawPtr(problem->tnlp), ConstPtr(problem->app->Jnlst()));
            status = problem->app->OptimizeNLP(adapter, builder);
        } else {
            status = problem->app->OptimizeTNLP(GetRawPtr(problem->tnlp));
        }
    } catch (IpoptException& exc) {
        exc.ReportException(*problem->app->Jnlst(), J_ERROR);
        status = Ipopt::Unrecoverable_Exception;
    } catch (std::bad_alloc&) {
        status = Ipopt::Insufficient_Memory;
    } catch (...) {
        status = Ipopt::NonIpopt_Exception_Thrown;
    }
    problem->tnlp = nullptr;
    return static_cast<int>(status);
}

bool loam_GetIpoptCurrentIterate(void* p, bool scaled, Index n, Number* x, Number* z_L,
                                 Number* z_U, Index m, Number* g, Number* lambda) {
    auto* problem = static_cast<Problem*>(p);
    if (!IsValid(problem->tnlp)) return false;
    return problem->tnlp->current_iterate(scaled, n, x, z_L, z_U, m, g, lambda);
}

}  // extern "C"
