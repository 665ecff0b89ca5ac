// Thin facade over CasADi's SX and Function for the cxx bridge in ffi.rs.
// Nothing else in loam includes CasADi; everything that can throw is caught by cxx and
// returned to Rust as an error.
#pragma once
#include <casadi/casadi.hpp>
#include <memory>
#include <vector>
#include "rust/cxx.h"

namespace loam {

struct Sx {
  casadi::SX value;
};

struct SxList {
  std::vector<casadi::SX> items;
};

// A CasADi Function with its work vectors allocated once, evaluated on flat buffers:
// inputs and outputs are the concatenations of each argument's nonzeros.
struct Func {
  casadi::Function function;
  std::vector<const double*> arg;
  std::vector<double*> res;
  std::vector<casadi_int> iw;
  std::vector<double> w;
  std::vector<size_t> in_offsets;   // n_in + 1
  std::vector<size_t> out_offsets;  // n_out + 1
  int mem;
  ~Func();
};

// The versions of the libraries loam runs against, as the libraries report them.
rust::String casadi_version();
rust::String ipopt_version();

std::unique_ptr<Sx> sx_symbol(rust::Str name, size_t n);
std::unique_ptr<Sx> sx_constant(double value);
std::unique_ptr<Sx> sx_clone(const Sx& x);
std::unique_ptr<Sx> sx_unary(uint8_t op, const Sx& x);
std::unique_ptr<Sx> sx_binary(uint8_t op, const Sx& a, const Sx& b);
std::unique_ptr<Sx> sx_if_else(const Sx& condition, const Sx& if_true, const Sx& if_false);
std::unique_ptr<Sx> sx_element(const Sx& x, size_t i);
size_t sx_numel(const Sx& x);
size_t sx_nnz(const Sx& x);
size_t sx_size1(const Sx& x);
size_t sx_size2(const Sx& x);
bool sx_is_constant(const Sx& x);
double sx_to_double(const Sx& x);
rust::Vec<int64_t> sx_triplet_rows(const Sx& x);
rust::Vec<int64_t> sx_triplet_cols(const Sx& x);
rust::String sx_to_string(const Sx& x);
std::unique_ptr<Sx> sx_jacobian(const Sx& f, const Sx& x);
std::unique_ptr<Sx> sx_gradient(const Sx& f, const Sx& x);
std::unique_ptr<Sx> sx_hessian_lower(const Sx& f, const Sx& x);
std::unique_ptr<Sx> sx_dot(const Sx& a, const Sx& b);

std::unique_ptr<SxList> sxlist_new();
void sxlist_push(SxList& list, const Sx& x);
std::unique_ptr<Sx> sx_vertcat(const SxList& list);

std::unique_ptr<Func> func_new(rust::Str name, const SxList& inputs, const SxList& outputs);
size_t func_n_in(const Func& f);
size_t func_n_out(const Func& f);
size_t func_nnz_in(const Func& f, size_t i);
size_t func_nnz_out(const Func& f, size_t i);
void func_eval(Func& f, rust::Slice<const double> input, rust::Slice<double> output);

}  // namespace loam
