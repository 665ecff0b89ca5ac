#include "casadi_shim.h"
#include "loam/src/symbolic/ffi.rs.h"

#include <coin-or/IpStdCInterface.h>

#include <stdexcept>
#include <string>

namespace loam {

using casadi::SX;

std::unique_ptr<Sx> wrap(SX value) { return std::unique_ptr<Sx>(new Sx{std::move(value)}); }

rust::String casadi_version() { return rust::String(casadi::CasadiMeta::version()); }

// IPOPT's own answer (since 3.14.18): the library that is linked, not the header compiled against.
rust::String ipopt_version() {
  int major = 0, minor = 0, release = 0;
  GetIpoptVersion(&major, &minor, &release);
  return rust::String(std::to_string(major) + "." + std::to_string(minor) + "." +
                      std::to_string(release));
}

std::unique_ptr<Sx> sx_symbol(rust::Str name, size_t n) {
  return wrap(SX::sym(std::string(name), static_cast<casadi_int>(n)));
}

std::unique_ptr<Sx> sx_constant(double value) { return wrap(SX(value)); }

std::unique_ptr<Sx> sx_clone(const Sx& x) { return wrap(x.value); }

// Operation codes shared with ffi.rs (UnaryOp / BinaryOp there).
std::unique_ptr<Sx> sx_unary(uint8_t op, const Sx& x) {
  const SX& v = x.value;
  switch (op) {
    case 0: return wrap(-v);
    case 1: return wrap(sin(v));
    case 2: return wrap(cos(v));
    case 3: return wrap(tan(v));
    case 4: return wrap(exp(v));
    case 5: return wrap(log(v));
    case 6: return wrap(sqrt(v));
    case 7: return wrap(tanh(v));
    case 8: return wrap(fabs(v));
    case 9: return wrap(sq(v));
    case 10: return wrap(atan(v));
    case 11: return wrap(sign(v));
  }
  throw std::invalid_argument("unknown unary operation code " + std::to_string(op));
}

std::unique_ptr<Sx> sx_binary(uint8_t op, const Sx& a, const Sx& b) {
  const SX& x = a.value;
  const SX& y = b.value;
  switch (op) {
    case 0: return wrap(x + y);
    case 1: return wrap(x - y);
    case 2: return wrap(x * y);
    case 3: return wrap(x / y);
    case 4: return wrap(pow(x, y));
    case 5: return wrap(fmin(x, y));
    case 6: return wrap(fmax(x, y));
    case 7: return wrap(atan2(x, y));
    case 8: return wrap(x < y);
    case 9: return wrap(x <= y);
    case 10: return wrap(x > y);
    case 11: return wrap(x >= y);
    case 12: return wrap(constpow(x, y));
  }
  throw std::invalid_argument("unknown binary operation code " + std::to_string(op));
}

std::unique_ptr<Sx> sx_if_else(const Sx& condition, const Sx& if_true, const Sx& if_false) {
  return wrap(if_else(condition.value, if_true.value, if_false.value));
}

std::unique_ptr<Sx> sx_element(const Sx& x, size_t i) {
  if (i >= static_cast<size_t>(x.value.numel())) {
    throw std::out_of_range("element " + std::to_string(i) + " of an expression with " +
                            std::to_string(x.value.numel()) + " elements");
  }
  return wrap(x.value(static_cast<casadi_int>(i)));
}

size_t sx_numel(const Sx& x) { return x.value.numel(); }
size_t sx_nnz(const Sx& x) { return x.value.nnz(); }
size_t sx_size1(const Sx& x) { return x.value.size1(); }
size_t sx_size2(const Sx& x) { return x.value.size2(); }
bool sx_is_constant(const Sx& x) { return x.value.is_constant(); }
double sx_to_double(const Sx& x) { return static_cast<double>(x.value); }

rust::Vec<int64_t> sx_triplet_rows(const Sx& x) {
  std::vector<casadi_int> rows, cols;
  x.value.sparsity().get_triplet(rows, cols);
  rust::Vec<int64_t> out;
  for (auto r : rows) out.push_back(r);
  return out;
}

rust::Vec<int64_t> sx_triplet_cols(const Sx& x) {
  std::vector<casadi_int> rows, cols;
  x.value.sparsity().get_triplet(rows, cols);
  rust::Vec<int64_t> out;
  for (auto c : cols) out.push_back(c);
  return out;
}

rust::String sx_to_string(const Sx& x) { return rust::String(x.value.get_str()); }

std::unique_ptr<Sx> sx_jacobian(const Sx& f, const Sx& x) { return wrap(jacobian(f.value, x.value)); }

std::unique_ptr<Sx> sx_gradient(const Sx& f, const Sx& x) { return wrap(gradient(f.value, x.value)); }

std::unique_ptr<Sx> sx_hessian_lower(const Sx& f, const Sx& x) {
  return wrap(tril(hessian(f.value, x.value)));
}

std::unique_ptr<Sx> sx_dot(const Sx& a, const Sx& b) { return wrap(dot(a.value, b.value)); }

std::unique_ptr<SxList> sxlist_new() { return std::unique_ptr<SxList>(new SxList()); }

void sxlist_push(SxList& list, const Sx& x) { list.items.push_back(x.value); }

std::unique_ptr<Sx> sx_vertcat(const SxList& list) { return wrap(SX::vertcat(list.items)); }

Func::~Func() {
  if (mem >= 0) function.release(mem);
}

std::unique_ptr<Func> func_new(rust::Str name, const SxList& inputs, const SxList& outputs) {
  std::unique_ptr<Func> f(new Func());
  f->mem = -1;
  // Common subexpression elimination: a model traced through several calls (M(q), h(q, v),
  // contact Jacobians) repeats its kinematics; evaluated in every IPOPT callback otherwise.
  f->function = casadi::Function(std::string(name), inputs.items, outputs.items,
                                 casadi::Dict{{"cse", true}});
  f->arg.resize(f->function.sz_arg());
  f->res.resize(f->function.sz_res());
  f->iw.resize(f->function.sz_iw());
  f->w.resize(f->function.sz_w());
  f->in_offsets.push_back(0);
  for (casadi_int i = 0; i < f->function.n_in(); ++i)
    f->in_offsets.push_back(f->in_offsets.back() + f->function.nnz_in(i));
  f->out_offsets.push_back(0);
  for (casadi_int i = 0; i < f->function.n_out(); ++i)
    f->out_offsets.push_back(f->out_offsets.back() + f->function.nnz_out(i));
  f->mem = f->function.checkout();
  return f;
}

size_t func_n_in(const Func& f) { return f.function.n_in(); }
size_t func_n_out(const Func& f) { return f.function.n_out(); }
size_t func_nnz_in(const Func& f, size_t i) { return f.function.nnz_in(static_cast<casadi_int>(i)); }
size_t func_nnz_out(const Func& f, size_t i) { return f.function.nnz_out(static_cast<casadi_int>(i)); }

void func_eval(Func& f, rust::Slice<const double> input, rust::Slice<double> output) {
  if (input.size() != f.in_offsets.back() || output.size() != f.out_offsets.back()) {
    throw std::invalid_argument("function " + f.function.name() + " takes " +
                                std::to_string(f.in_offsets.back()) + " inputs and " +
                                std::to_string(f.out_offsets.back()) + " outputs, got " +
                                std::to_string(input.size()) + " and " +
                                std::to_string(output.size()));
  }
  const size_t n_in = f.in_offsets.size() - 1;
  const size_t n_out = f.out_offsets.size() - 1;
  for (size_t i = 0; i < n_in; ++i) f.arg[i] = input.data() + f.in_offsets[i];
  for (size_t i = 0; i < n_out; ++i) f.res[i] = output.data() + f.out_offsets[i];
  int flag = f.function(f.arg.data(), f.res.data(), f.iw.data(), f.w.data(), f.mem);
  if (flag != 0) throw std::runtime_error("evaluation of " + f.function.name() + " failed");
}

}  // namespace loam
