#include "runtime/backward_call.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <sstream>

#include "codegen/norm_problem.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "normjit/normjit.hpp"
#include "runtime/buffer_overlap.h"

namespace normjit::runtime {
namespace {

[[noreturn]] void reject(const NormProblem& p, const std::string& what, const std::string& todo) {
  throw Error(Status::InvalidArgument,
              "normjit: bad argument to the " + codegen::describe(p) + " backward: " + what + ". " + todo);
}

std::string address(const void* p) {
  std::ostringstream s;
  s << p;
  return s.str();
}

int pow2_alignment(uint64_t value) {
  if (value == 0) return 16;
  // The lowest set bit, capped before narrowing: an address aligned to 2^31 or more (the bit
  // itself does not fit an int) is as aligned as any.
  return static_cast<int>(std::min<uint64_t>(value & (~value + 1), 16));
}

// Pointers and values of fused options (docs/FUSED.md) that the problem does not ask for:
// the caller and the problem disagree, and either reading would be a guess.
void check_fused_flags(const NormProblem& p, const BackwardArgs& a) {
  if (!p.residual && a.dresidual)
    reject(p, "dresidual is given but residual is off", "Set residual to add it to dh, or pass NULL for dresidual.");
  if (!p.rowscale && a.rowscale)
    reject(p, "rowscale is given but the rowscale option is off",
           "Set rowscale to scale dx by it, or pass NULL for rowscale.");
  const bool dropout = p.dropout != DropoutMask::None;
  if (!dropout && (a.dropout_mask || a.dropout_p != 0))
    reject(p, "dropout_mask or dropout_p is given but dropout is off",
           "Set dropout to the mask's form (bytes or bits), or pass NULL and 0.");
  if (!p.rowscale && !dropout && a.dresidual_in)
    reject(p, "dresidual_in is given but neither rowscale nor dropout is on, so dh is dx itself",
           "Pass NULL for dresidual_in and read dh from dx.");
  if (p.gate == Gate::None && (a.z || a.dz))
    reject(p, "z or dz is given but gate is off", "Set gate (after_norm or before_norm) for a gated RMSNorm, or pass NULL.");
  if (!p.parallel && (a.dy1 || a.weight1 || a.dweight1 || a.dbias1))
    reject(p, "dy1, weight1, dweight1 or dbias1 is given but parallel is off",
           "Set parallel for a second norm of the same x, or pass NULL for the second norm's pointers.");
  if (p.parallel && !p.has_weight && (a.weight1 || a.dweight1))
    reject(p, "weight1 or dweight1 is given but has_weight is false (both norms have γ, or neither)",
           "Set has_weight to compute dgamma1, or pass NULL for weight1 and dweight1.");
  if (p.parallel && !p.has_bias && a.dbias1)
    reject(p, "dbias1 is given but has_bias is false (both norms have β, or neither)",
           "Set has_bias to compute dbeta1, or pass NULL for dbias1.");
  if (!p.recompute_from_output && (a.y || a.bias))
    reject(p, std::string(a.y ? "y" : "bias") + " is given but recompute_from_output is off",
           "Set recompute_from_output to recover x̂ from the forward's output y (and β), or pass NULL for y and "
           "bias: a backward from x reads neither.");
  if (p.recompute_from_output && !p.has_bias && a.bias)
    reject(p, "bias is given but has_bias is false: the forward's output is then y = x̂·γ, with no β",
           "Set has_bias (y = x̂·γ + β, and dβ is written), or pass NULL for bias.");
  if (dropout) check_dropout_p(a.dropout_p, [&p](const std::string& what, const std::string& todo) { reject(p, what, todo); });
}

struct NamedBuffer {
  const char* name;
  const void* ptr;
};

// After the strides are resolved: the dropout mask's row stride, and buffers that may or
// must not be the same.
void check_fused_rows(const NormProblem& p, BackwardArgs& a) {
  if (p.dropout != DropoutMask::None)
    check_dropout_mask_stride(p.dropout, p.n, a.dropout_mask_stride,
                              [&p](const std::string& what, const std::string& todo) { reject(p, what, todo); });
  // The four parameter gradients are written by separate reductions: one buffer for two would
  // hold whichever came last.
  if (p.parallel) {
    const NamedBuffer grads[] = {
        {"dweight", a.dweight}, {"dbias", a.dbias}, {"dweight1", a.dweight1}, {"dbias1", a.dbias1}};
    for (size_t i = 0; i < std::size(grads); ++i)
      for (size_t j = i + 1; j < std::size(grads); ++j)
        if (grads[i].ptr && grads[i].ptr == grads[j].ptr)
          reject(p, std::string(grads[i].name) + " and " + grads[j].name + " are the same buffer",
                 "Pass a separate buffer for each norm's dgamma and dbeta.");
  }
  if (a.m == 0) return;
  if (p.residual && a.dx == a.dresidual && a.dx_stride != a.dresidual_stride)
    reject(p, "dx is dresidual (in place) but dx_stride = " + std::to_string(a.dx_stride) +
                  " and dresidual_stride = " + std::to_string(a.dresidual_stride) + " differ",
           "In-place accumulation needs the same rows: pass the same stride for both.");
  if (a.dresidual_in && a.dresidual_in == a.dx)
    reject(p, "dresidual_in and dx are the same buffer, but they receive different values (dh and dx_in)",
           "Pass separate buffers, or NULL for dresidual_in.");
  // dz is written before dresidual is read (the gate's gradient comes first), so it may not
  // be dresidual either.
  if (p.gate != Gate::None) {
    const NamedBuffer others[] = {{"dx", a.dx}, {"dresidual_in", a.dresidual_in}, {"dresidual", a.dresidual}};
    for (const NamedBuffer& other : others)
      if (other.ptr && a.dz == other.ptr)
        reject(p, std::string("dz and ") + other.name + " are the same buffer, but dz receives z's own gradient",
               "Pass a separate buffer for dz.");
  }
}

// The outputs, the workspace among them, against each other and against every input, with
// the strides resolved. dx may be dresidual itself: every family reads an element of dresidual
// before the same thread writes dx there (docs/FUSED.md). dx exactly over x or dy was accepted
// before these checks and tests/cpu/c_api_test.cpp passes it, so it stays accepted, on the same
// ground (BackwardFusedFamilies.WritesDxOverXOrDyInPlace; the messages do not offer it). Any
// other shared byte, and any overlap that is not the very same rows, loses a value.
void check_backward_overlaps(const NormProblem& p, const BackwardArgs& a) {
  const int64_t m = a.m, n = p.n;
  const int weight_size = codegen::dtype_size(p.weight_dtype);
  const int64_t mask_row = a.dropout_mask ? codegen::dropout_mask_row_bytes(p.dropout, n) : 0;
  const TensorBytes outputs[] = {
      row_tensor_bytes("dx", a.dx, m, a.dx_stride, n, p.dx_dtype),
      row_tensor_bytes("dresidual_in", a.dresidual_in, m, a.dresidual_in_stride, n, p.dx_dtype),
      row_tensor_bytes("dz", a.dz, m, a.dz_stride, n, p.dx_dtype),
      vector_bytes("dweight", a.dweight, n, weight_size),
      vector_bytes("dbias", a.dbias, n, weight_size),
      vector_bytes("dweight1", a.dweight1, n, weight_size),
      vector_bytes("dbias1", a.dbias1, n, weight_size),
      vector_bytes("workspace", a.workspace, static_cast<int64_t>(std::min<size_t>(a.workspace_bytes, INT64_MAX)), 1)};
  const TensorBytes inputs[] = {row_tensor_bytes("x", a.x, m, a.x_stride, n, p.x_dtype),
                                row_tensor_bytes("dy", a.dy, m, a.dy_stride, n, p.dy_dtype),
                                row_tensor_bytes("dresidual", a.dresidual, m, a.dresidual_stride, n, p.dx_dtype),
                                row_tensor_bytes("z", a.z, m, a.z_stride, n, p.x_dtype),
                                row_tensor_bytes("dy1", a.dy1, m, a.dy1_stride, n, p.dy_dtype),
                                row_tensor_bytes("y", a.y, m, a.y_stride, n, p.x_dtype),
                                mask_bytes("dropout_mask", a.dropout_mask, m, a.dropout_mask_stride, mask_row),
                                vector_bytes("mean", a.mean, m, 4),
                                vector_bytes("rstd", a.rstd, m, 4),
                                vector_bytes("rowscale", a.rowscale, m, 4),
                                vector_bytes("weight", a.weight, n, weight_size),
                                vector_bytes("weight1", a.weight1, n, weight_size),
                                vector_bytes("bias", a.bias, n, weight_size)};
  static constexpr InPlace in_place[] = {{"dx", "dresidual"}, {"dx", "x"}, {"dx", "dy"}};
  check_overlaps(outputs, inputs, in_place, "dx may be dresidual (in place) as that very tensor: the same pointer, "
                 "stride and dtype",
                 [&p](const std::string& what, const std::string& todo) { reject(p, what, todo); });
}

// Whether a row tensor is in phase with x: its base on a 16-byte boundary, its stride x's
// modulo 16 bytes, its elements of x's size. A null tensor bounds nothing.
bool row_in_phase(const RowTensor& r, int64_t x_stride, DType x_dtype) {
  if (!r.ptr) return true;
  const int x_size = codegen::dtype_size(x_dtype), size = codegen::dtype_size(r.dtype);
  return size == x_size && reinterpret_cast<uintptr_t>(r.ptr) % 16 == 0 &&
         static_cast<uint64_t>(*r.stride) * size % 16 == static_cast<uint64_t>(x_stride) * x_size % 16;
}

}  // namespace

bool rows_in_phase(llvm::ArrayRef<RowTensor> rows, int64_t x_stride, DType x_dtype) {
  return llvm::all_of(rows, [&](const RowTensor& r) { return row_in_phase(r, x_stride, x_dtype); });
}

int row_alignment(const void* base, int64_t stride, int element_size, int64_t rows) {
  int a = pow2_alignment(reinterpret_cast<uintptr_t>(base));
  if (rows > 1) a = std::min(a, pow2_alignment(static_cast<uint64_t>(stride) * element_size));
  return a;
}

int check_row_tensor(const char* name, const void* ptr, int64_t& stride, int64_t n, int64_t m, DType dtype,
                     RejectArgument reject) {
  if (stride == 0) stride = n;
  if (stride < n)
    reject(std::string(name) + "_stride = " + std::to_string(stride) + " is less than N",
           "Rows may be padded (stride >= N, in elements) but not overlap; pass 0 for contiguous rows.");
  if (m == 0) return 16;
  const int size = codegen::dtype_size(dtype);
  if (reinterpret_cast<uintptr_t>(ptr) % size != 0)
    reject(std::string(name) + " = " + address(ptr) + " is not aligned to its " + codegen::dtype_name(dtype) +
               " elements (" + std::to_string(size) + " bytes)",
           "Pass a pointer to the first element of a tensor of that dtype.");
  return row_alignment(ptr, stride, size, m);
}

void check_dropout_p(double p, RejectArgument reject) {
  if (!(p >= 0 && p < 1))
    reject("dropout_p = " + std::to_string(p) + " is not in [0, 1)",
           "Pass the drop probability (0 <= p < 1); a backward's is the one its forward used.");
}

void check_dropout_mask_stride(DropoutMask form, int64_t n, int64_t& stride, RejectArgument reject) {
  const bool bits = form == DropoutMask::Bits;
  const int64_t row_bytes = codegen::dropout_mask_row_bytes(form, n);
  if (stride == 0) stride = row_bytes;
  if (stride < row_bytes)
    reject("dropout_mask_stride = " + std::to_string(stride) + " bytes is less than a " +
               (bits ? "bit-packed" : "byte") + " mask row (" + std::to_string(row_bytes) + " bytes)",
           "Give the bytes between mask rows, or 0 for contiguous rows.");
}

void check_vector_alignment(const char* name, const void* ptr, int element_size, RejectArgument reject) {
  if (ptr && reinterpret_cast<uintptr_t>(ptr) % element_size != 0)
    reject(std::string(name) + " = " + address(ptr) + " is not aligned to its " + std::to_string(element_size) +
               "-byte elements",
           "Pass a pointer to the first element of a tensor of that dtype.");
}

CheckedCall check_backward_call(const NormProblem& problem, const BackwardArgs& in) {
  const NormProblem p = codegen::resolve_problem(problem);
  CheckedCall out{p, in};
  BackwardArgs& a = out.args;
  const bool layer_norm = p.kind == NormKind::LayerNorm;

  if (a.m < 0) reject(p, "m = " + std::to_string(a.m) + " is negative", "Pass the number of rows (0 or more).");

  // Conflicts between the flags and the pointers: a pointer the problem does not use means
  // the caller and the problem disagree, and guessing would give a wrong answer.
  if (!p.has_weight && (a.weight || a.dweight))
    reject(p, "weight or dweight is given but has_weight is false",
           "Set has_weight to compute dgamma, or pass NULL for weight and dweight.");
  if (!p.has_bias && a.dbias)
    reject(p, "dbias is given but has_bias is false", "Set has_bias to compute dbeta, or pass NULL for dbias.");
  if (!layer_norm && a.mean)
    reject(p, "mean is given for RMSNorm, which saves none", "Pass NULL for mean, or use LayerNorm.");

  check_fused_flags(p, a);

  // Recompute from the output reads y instead of x: x is then optional, the fallback where γ = 0,
  // and LayerNorm's mean is needed only to normalise it.
  const bool recompute = p.recompute_from_output;
  if (recompute && a.m > 0) {
    if (!a.y)
      reject(p, "y is NULL but recompute_from_output is on",
             "Pass the forward's output y ([m, n] in x's dtype), from which x̂ is recovered, or turn "
             "recompute_from_output off and pass x.");
    if (p.has_bias && !a.bias)
      reject(p, "bias is NULL but recompute_from_output is on and has_bias is set: x̂ = (y − β)/γ needs β",
             "Pass the forward's β (n values in the weight dtype), or clear has_bias if the forward had none.");
    if (layer_norm && a.x && !a.mean)
      reject(p, "mean is NULL but x is given with recompute_from_output: x is normalised where γ = 0, with the "
                "row's mean and rstd",
             "Pass the forward's mean too, or pass NULL for x (those columns' dx and dγ are then NaN).");
  }

  struct Required { const char* name; const void* ptr; bool needed; const char* option; };
  const Required required[] = {
      {"x", a.x, a.m > 0 && !recompute, nullptr}, {"dy", a.dy, a.m > 0, nullptr},
      {"rstd", a.rstd, a.m > 0, nullptr},  {"mean", a.mean, a.m > 0 && layer_norm && !recompute, nullptr},
      {"dx", a.dx, a.m > 0, nullptr},      {"weight", a.weight, a.m > 0 && p.has_weight, nullptr},
      {"dweight", a.dweight, p.has_weight, nullptr}, {"dbias", a.dbias, p.has_bias, nullptr},
      {"dresidual", a.dresidual, a.m > 0 && p.residual, "residual"},
      {"rowscale", a.rowscale, a.m > 0 && p.rowscale, "rowscale"},
      {"dropout_mask", a.dropout_mask, a.m > 0 && p.dropout != DropoutMask::None, "dropout"},
      {"z", a.z, a.m > 0 && p.gate != Gate::None, "gate"},
      {"dz", a.dz, a.m > 0 && p.gate != Gate::None, "gate"},
      {"dy1", a.dy1, a.m > 0 && p.parallel, "parallel"},
      {"weight1", a.weight1, a.m > 0 && p.parallel && p.has_weight, "parallel"},
      {"dweight1", a.dweight1, p.parallel && p.has_weight, "parallel"},
      {"dbias1", a.dbias1, p.parallel && p.has_bias, "parallel"},
  };
  for (const Required& r : required)
    if (r.needed && !r.ptr)
      reject(p, std::string(r.name) + " is NULL" + (r.option ? std::string(" but ") + r.option + " is on" : ""),
             std::string("Pass a device pointer for ") + r.name +
                 (r.option ? std::string(", or turn ") + r.option + " off." : "."));

  // Every row tensor a call can have (x, dy, dx, dresidual, dresidual_in, z, dz, dy1, y): kept
  // inline, since this runs on every launch.
  llvm::SmallVector<RowTensor, 8> rows = {{"x", a.x, &a.x_stride, p.x_dtype, !recompute},
                                    {"dy", a.dy, &a.dy_stride, p.dy_dtype},
                                    {"dx", a.dx, &a.dx_stride, p.dx_dtype}};
  // The fused rows are read and written with dx's vectors, so they bound the alignment too.
  if (p.residual) rows.push_back({"dresidual", a.dresidual, &a.dresidual_stride, p.dx_dtype});
  if (a.dresidual_in) rows.push_back({"dresidual_in", a.dresidual_in, &a.dresidual_in_stride, p.dx_dtype});
  if (p.gate != Gate::None) {
    rows.push_back({"z", a.z, &a.z_stride, p.x_dtype});
    rows.push_back({"dz", a.dz, &a.dz_stride, p.dx_dtype});
  }
  if (p.parallel) rows.push_back({"dy1", a.dy1, &a.dy1_stride, p.dy_dtype});
  if (recompute) rows.push_back({"y", a.y, &a.y_stride, p.x_dtype});  // read where x would be
  const auto rejected = [&p](const std::string& what, const std::string& todo) { reject(p, what, todo); };
  int alignment = p.alignment;
  for (RowTensor& r : rows) {
    const int rows_allow = check_row_tensor(r.name, r.ptr, *r.stride, p.n, a.m, r.dtype, rejected);
    if (r.vectors) alignment = std::min(alignment, rows_allow);
  }
  struct Vector { const char* name; const void* ptr; int size; };
  const int weight_size = codegen::dtype_size(p.weight_dtype);
  const Vector vectors[] = {{"weight", a.weight, weight_size}, {"dweight", a.dweight, weight_size},
                            {"dbias", a.dbias, weight_size},   {"mean", a.mean, 4},
                            {"rstd", a.rstd, 4},                {"rowscale", a.rowscale, 4},
                            {"weight1", a.weight1, weight_size}, {"dweight1", a.dweight1, weight_size},
                            {"dbias1", a.dbias1, weight_size},   {"bias", a.bias, weight_size}};
  for (const Vector& v : vectors) check_vector_alignment(v.name, v.ptr, v.size, rejected);
  // The weights (and β, recompute_from_output) are read with the rows' vectors, so they bound
  // their alignment too.
  if (a.weight && a.m > 0) alignment = std::min(alignment, row_alignment(a.weight, 0, weight_size, 1));
  if (a.weight1 && a.m > 0) alignment = std::min(alignment, row_alignment(a.weight1, 0, weight_size, 1));
  if (a.bias && a.m > 0) alignment = std::min(alignment, row_alignment(a.bias, 0, weight_size, 1));
  check_fused_rows(p, a);
  check_backward_overlaps(p, a);
  out.problem.alignment = std::max(alignment, 1);
  out.problem.rows_in_phase = p.rows_in_phase && rows_in_phase(rows, a.x_stride, p.x_dtype);
  return out;
}

}  // namespace normjit::runtime
