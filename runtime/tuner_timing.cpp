#include "runtime/tuner_timing.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "codegen/norm_problem.h"
#include "runtime/cuda_driver.h"

namespace normjit::runtime {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

std::vector<char> random_bytes(DType dtype, size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  const int size = codegen::dtype_size(dtype);
  std::vector<char> out(count * size);
  for (size_t i = 0; i < count; ++i) {
    float f = normal(rng);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (dtype == DType::F32) {
      std::memcpy(&out[i * 4], &f, 4);
    } else if (dtype == DType::BF16) {
      const uint16_t h = static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
      std::memcpy(&out[i * 2], &h, 2);
    } else {  // fp16 from a value well inside its range: sign, 5-bit exponent, 10-bit mantissa
      const uint32_t sign = bits >> 31;
      const int exp = static_cast<int>((bits >> 23) & 0xff) - 127;
      const int e = std::clamp(exp, -14, 15) + 15;
      const uint16_t h = static_cast<uint16_t>(sign << 15 | e << 10 | ((bits >> 13) & 0x3ff));
      std::memcpy(&out[i * 2], &h, 2);
    }
  }
  return out;
}

DeviceBuffer::DeviceBuffer(size_t bytes, const std::string& what) : bytes_(std::max<size_t>(bytes, 256)) {
  NJ_CU(driver().cuMemAlloc(&ptr_, bytes_), what + ": allocating " + std::to_string(bytes_) + " bytes");
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) driver().cuMemFree(ptr_);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_) driver().cuMemFree(ptr_);
    ptr_ = other.ptr_;
    bytes_ = other.bytes_;
    other.ptr_ = 0;
  }
  return *this;
}

void DeviceBuffer::upload(const std::vector<char>& data, const std::string& what) {
  NJ_CU(driver().cuMemcpyHtoD(ptr_, data.data(), std::min(data.size(), bytes_)), what + ": uploading");
}

void DeviceBuffer::fill_random(DType dtype, size_t count, uint32_t seed, const std::string& what) {
  const size_t total = std::min(count * static_cast<size_t>(codegen::dtype_size(dtype)), bytes_);
  upload(random_bytes(dtype, std::min(count, size_t{1} << 20), seed), what);
  // Doubling copies of what is already there.
  for (size_t filled = std::min(total, (size_t{1} << 20) * codegen::dtype_size(dtype)); filled < total;) {
    const size_t bytes = std::min(filled, total - filled);
    NJ_CU(driver().cuMemcpyDtoD(ptr_ + filled, ptr_, bytes), what + ": filling with random values");
    filled += bytes;
  }
}

EventTimer::EventTimer(std::string what) : what_(std::move(what)) {
  NJ_CU(driver().cuEventCreate(&start_, CU_EVENT_DEFAULT), what_ + ": creating an event");
  NJ_CU(driver().cuEventCreate(&stop_, CU_EVENT_DEFAULT), what_ + ": creating an event");
}

EventTimer::~EventTimer() {
  driver().cuEventDestroy(start_);
  driver().cuEventDestroy(stop_);
}

void EventTimer::start(CUstream stream) { NJ_CU(driver().cuEventRecord(start_, stream), what_ + ": recording"); }

double EventTimer::stop(CUstream stream) {
  NJ_CU(driver().cuEventRecord(stop_, stream), what_ + ": recording");
  NJ_CU(driver().cuEventSynchronize(stop_), what_ + ": waiting for the timed work");
  float ms = 0;
  NJ_CU(driver().cuEventElapsedTime(&ms, start_, stop_), what_ + ": reading the elapsed time");
  return ms * 1000.0;
}

CapturedLaunch::CapturedLaunch(CUstream stream, const std::function<void()>& enqueue, const std::string& what)
    : what_(what) {
  const auto& d = driver();
  NJ_CU(d.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), what + ": beginning a graph capture");
  try {
    enqueue();
  } catch (...) {
    if (d.cuStreamEndCapture(stream, &graph_) == CUDA_SUCCESS && graph_) d.cuGraphDestroy(graph_);
    throw;
  }
  NJ_CU(d.cuStreamEndCapture(stream, &graph_), what + ": ending a graph capture");
  const CUresult instantiated = d.cuGraphInstantiateWithFlags(&exec_, graph_, 0);
  if (instantiated != CUDA_SUCCESS) {
    d.cuGraphDestroy(graph_);
    NJ_CU(instantiated, what + ": instantiating a captured graph");
  }
}

CapturedLaunch::~CapturedLaunch() {
  if (exec_) driver().cuGraphExecDestroy(exec_);
  if (graph_) driver().cuGraphDestroy(graph_);
}

void CapturedLaunch::replay(CUstream stream) { NJ_CU(driver().cuGraphLaunch(exec_, stream), what_ + ": replaying a graph"); }

L2Flush::L2Flush(const std::string& what) : what_(what) {
  CUdevice dev;
  NJ_CU(driver().cuCtxGetDevice(&dev), what + ": reading the context's device");
  int l2 = 0;
  NJ_CU(driver().cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev), what + ": reading the L2 size");
  scratch_ = DeviceBuffer(2 * static_cast<size_t>(std::max(l2, 1 << 20)), what + ": L2 flush buffer");
}

void L2Flush::operator()(CUstream stream) {
  NJ_CU(driver().cuMemsetD32Async(scratch_.ptr(), 0x5a5a5a5a, scratch_.bytes() / 4, stream), what_ + ": flushing L2");
}

}  // namespace normjit::runtime
