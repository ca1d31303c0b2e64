#include "support/host_tensor.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "support/float16.h"

namespace normjit::test {

int dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::F32: return 4;
    case DType::F16:
    case DType::BF16: return 2;
    default: throw std::invalid_argument("dtype_bytes: a concrete dtype is needed, got " +
                                         std::to_string(static_cast<int>(dtype)));
  }
}

const char* dtype_label(DType dtype) {
  switch (dtype) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    default: return "default";
  }
}

double round_to(DType dtype, double value) {
  switch (dtype) {
    case DType::F16: return fp16_to_float(float_to_fp16(static_cast<float>(value)));
    case DType::BF16: return bf16_to_float(float_to_bf16(static_cast<float>(value)));
    default: return static_cast<float>(value);
  }
}

HostTensor::HostTensor(DType dtype, int64_t rows, int64_t cols, int64_t stride)
    : dtype_(dtype), element_bytes_(dtype_bytes(dtype)), rows_(rows), cols_(cols),
      stride_(stride == 0 ? cols : stride) {
  if (rows < 0 || cols < 0 || stride_ < cols)
    throw std::invalid_argument("HostTensor: bad shape " + std::to_string(rows) + "x" + std::to_string(cols) +
                                " stride " + std::to_string(stride));
  bytes_.assign(static_cast<size_t>(rows_ * stride_ * element_bytes_), 0);
}

double HostTensor::load(int64_t slot) const {
  const unsigned char* p = bytes_.data() + slot * element_bytes_;
  if (dtype_ == DType::F32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return dtype_ == DType::F16 ? fp16_to_float(h) : bf16_to_float(h);
}

void HostTensor::store(int64_t slot, double value) {
  unsigned char* p = bytes_.data() + slot * element_bytes_;
  // double → float → 16 bits rounds twice; that can only matter for exact ties of the double,
  // and every comparison is against the value as stored, so it is harmless.
  const float f = static_cast<float>(value);
  if (dtype_ == DType::F32) {
    std::memcpy(p, &f, 4);
    return;
  }
  const uint16_t h = dtype_ == DType::F16 ? float_to_fp16(f) : float_to_bf16(f);
  std::memcpy(p, &h, 2);
}

void HostTensor::fill_bytes(unsigned char byte) { std::memset(bytes_.data(), byte, bytes_.size()); }

std::vector<double> widened(const HostTensor& t) {
  std::vector<double> out;
  out.reserve(static_cast<size_t>(t.rows() * t.cols()));
  for (int64_t r = 0; r < t.rows(); ++r)
    for (int64_t c = 0; c < t.cols(); ++c) out.push_back(t.get(r, c));
  return out;
}

}  // namespace normjit::test
