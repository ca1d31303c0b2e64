#include "runtime/buffer_overlap.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>

#include "codegen/norm_problem.h"

namespace normjit::runtime {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
static_assert(sizeof(uintptr_t) <= sizeof(uint64_t), "addresses are compared as 64-bit values");

// m and the strides are bounded only by int64_t: a span past the address space must not wrap
// around to a small one that overlaps nothing.
uint64_t saturating_mul(uint64_t a, uint64_t b) { return a != 0 && b > kMax / a ? kMax : a * b; }
uint64_t saturating_add(uint64_t a, uint64_t b) { return b > kMax - a ? kMax : a + b; }
uint64_t non_negative(int64_t v) { return v > 0 ? static_cast<uint64_t>(v) : 0; }

// m rows of `row` units, `pitch` units apart: m - 1 pitches and one row.
uint64_t rows_span(int64_t m, int64_t pitch, int64_t row) {
  if (m <= 0 || row <= 0) return 0;
  return saturating_add(saturating_mul(non_negative(m - 1), non_negative(pitch)), non_negative(row));
}

TensorBytes span(const char* name, const void* ptr, uint64_t bytes, int64_t stride, DType dtype) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(ptr);
  const uint64_t end = std::min<uint64_t>(saturating_add(begin, bytes), std::numeric_limits<uintptr_t>::max());
  return TensorBytes{name, ptr, begin, static_cast<uintptr_t>(end), stride, dtype};
}

std::string range(const TensorBytes& t) {
  std::ostringstream s;
  s << std::hex << std::showbase << '[' << t.begin << ", " << t.end << ')';
  return s.str();
}

bool may_write_in_place(const TensorBytes& out, const TensorBytes& in, llvm::ArrayRef<InPlace> in_place) {
  for (const InPlace& pair : in_place)
    if (std::strcmp(pair.output, out.name) == 0 && std::strcmp(pair.input, in.name) == 0) return true;
  return false;
}

const char* const kSpan = "its first element to its last, row padding included";

}  // namespace

TensorBytes row_tensor_bytes(const char* name, const void* ptr, int64_t m, int64_t stride, int64_t n, DType dtype) {
  const uint64_t elements = rows_span(m, stride, n);
  return span(name, ptr, saturating_mul(elements, static_cast<uint64_t>(codegen::dtype_size(dtype))), stride, dtype);
}

TensorBytes mask_bytes(const char* name, const void* ptr, int64_t m, int64_t stride_bytes, int64_t row_bytes) {
  return span(name, ptr, rows_span(m, stride_bytes, row_bytes), 0, DType::Default);
}

TensorBytes vector_bytes(const char* name, const void* ptr, int64_t count, int64_t element_size) {
  return span(name, ptr, saturating_mul(non_negative(count), non_negative(element_size)), 0, DType::Default);
}

bool overlaps(const TensorBytes& a, const TensorBytes& b) {
  return a.ptr && b.ptr && a.begin < b.end && b.begin < a.end;
}

void check_overlaps(llvm::ArrayRef<TensorBytes> outputs, llvm::ArrayRef<TensorBytes> inputs,
                    llvm::ArrayRef<InPlace> in_place, const char* in_place_rule, RejectArgument reject) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorBytes& out = outputs[i];
    if (!out.ptr) continue;
    // Two outputs in shared bytes: whichever is written last wins.
    for (size_t j = i + 1; j < outputs.size(); ++j) {
      const TensorBytes& other = outputs[j];
      if (!overlaps(out, other)) continue;
      if (other.ptr == out.ptr)
        reject(std::string(out.name) + " and " + other.name + " are the same buffer",
               "Pass a separate buffer for each output.");
      else
        reject(std::string(out.name) + " and " + other.name + " overlap: " + out.name + " spans bytes " + range(out) +
                   " and " + other.name + " " + range(other),
               std::string("Pass a separate buffer for each output, sharing no byte with another's span (") + kSpan +
                   ").");
    }
    for (const TensorBytes& in : inputs) {
      if (!overlaps(out, in)) continue;
      if (in.ptr != out.ptr) {
        // Not the input's own first element: some element is written where another thread, or
        // a later pass, still reads the input, and no kernel orders that.
        reject(std::string(out.name) + " overlaps " + in.name + " without being it: " + out.name + " spans bytes " +
                   range(out) + " and " + in.name + " " + range(in),
               std::string("Pass a buffer for ") + out.name + " that shares no byte with " + in.name + "'s span (" +
                   kSpan + "); " + in_place_rule + ".");
      } else if (!may_write_in_place(out, in, in_place)) {
        reject(std::string(out.name) + " is " + in.name + ", which it may not overwrite",
               std::string("Pass a separate buffer for ") + out.name + "; " + in_place_rule + ".");
      } else if (out.stride != in.stride) {
        reject(std::string(out.name) + " is " + in.name + " (in place) but " + out.name + "_stride = " +
                   std::to_string(out.stride) + " and " + in.name + "_stride = " + std::to_string(in.stride) +
                   " differ",
               "In place, each row must be written where it was read: pass the same stride for both.");
      } else if (out.dtype != in.dtype) {
        reject(std::string(out.name) + " is " + in.name + " (in place) but " + out.name + " is " +
                   codegen::dtype_name(out.dtype) + " and " + in.name + " is " + codegen::dtype_name(in.dtype),
               std::string("Write ") + out.name + " in " + in.name +
                   "'s dtype to work in place, or pass a separate buffer for it.");
      }
    }
  }
}

}  // namespace normjit::runtime
