// A row-major host tensor in one of the storage dtypes the kernels use (fp32, fp16, bf16),
// with a row stride that may exceed the row length, so its bytes can be copied to and from a
// device tensor of the same layout. Elements are read and written as double; writing rounds
// to the storage dtype (to nearest, ties to even).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "normjit/norm_problem.hpp"

namespace normjit::test {

int dtype_bytes(DType dtype);        // 4 or 2; throws std::invalid_argument for Default
const char* dtype_label(DType dtype);  // "f32", "f16", "bf16"
double round_to(DType dtype, double value);  // the value as stored in that dtype

class HostTensor {
 public:
  HostTensor() = default;
  // rows × cols elements, rows `stride` elements apart (0: stride = cols); zero-filled.
  HostTensor(DType dtype, int64_t rows, int64_t cols, int64_t stride = 0);

  DType dtype() const { return dtype_; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t stride() const { return stride_; }
  bool empty() const { return rows_ == 0 || cols_ == 0; }

  double get(int64_t row, int64_t col) const { return load(row * stride_ + col); }
  void set(int64_t row, int64_t col, double value) { store(row * stride_ + col, value); }

  // Every element slot, gaps between rows included (rows × stride).
  int64_t slot_count() const { return rows_ * stride_; }
  double load(int64_t slot) const;
  void store(int64_t slot, double value);

  // The raw bytes: rows × stride elements. Gap elements (col ≥ cols) are part of them.
  void* data() { return bytes_.data(); }
  const void* data() const { return bytes_.data(); }
  size_t size_bytes() const { return bytes_.size(); }
  const unsigned char* slot_bytes(int64_t slot) const { return bytes_.data() + slot * element_bytes_; }
  int element_bytes() const { return element_bytes_; }

  void fill_bytes(unsigned char byte);  // every slot, gaps included

 private:
  DType dtype_ = DType::F32;
  int element_bytes_ = 4;
  int64_t rows_ = 0, cols_ = 0, stride_ = 0;
  std::vector<unsigned char> bytes_;
};

// The stored values (as a kernel reads them) widened to double, rows × cols contiguous (the
// gaps between rows left out).
std::vector<double> widened(const HostTensor& t);

}  // namespace normjit::test
