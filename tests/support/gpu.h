// The GPU side of the tests: the device context, device buffers and streams, all through the
// library's own dlopen-ed driver table (runtime/cuda_driver.h), and the rule that on a machine
// without a GPU every GPU test is reported SKIPPED with the reason, never passed.
#pragma once
#include <cuda.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace normjit::test {

// Device 0's primary context, retained for the life of the process (never released: the
// shared Engine unloads its modules at exit and needs the context alive then).
class GpuContext {
 public:
  // The context, made current on the first call's thread; nullptr when no usable CUDA driver
  // or device is present (why_unavailable() says why). A GPU that is present but cannot be
  // opened throws normjit::Error: that is a failure, not a reason to skip.
  static GpuContext* get();
  static std::string why_unavailable();

  // Each thread has its own current context: call this on every thread that uses the GPU.
  void make_current() const;
  CUcontext context() const { return context_; }
  // "NVIDIA H100 80GB HBM3, sm_90, 132 SMs"
  std::string description() const;

 private:
  GpuContext();
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
};

// In a test body or SetUp: skip with the reason when there is no GPU.
#define NJ_REQUIRE_GPU()                                                                     \
  do {                                                                                       \
    if (::normjit::test::GpuContext::get() == nullptr)                                       \
      GTEST_SKIP() << "no CUDA GPU: " << ::normjit::test::GpuContext::why_unavailable();     \
  } while (0)

// All-ones bytes: NaN in fp32, fp16 and bf16, so an output element never written is caught.
constexpr unsigned char kPoisonByte = 0xFF;

// Device memory from cuMemAlloc (256-byte aligned), freed on destruction. Size 0 is allowed
// and allocates nothing (address 0).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  size_t size() const { return bytes_; }
  CUdeviceptr address() const { return ptr_; }
  // The address `byte_offset` bytes in, as a pointer for BackwardArgs (null for an empty buffer).
  void* ptr(size_t byte_offset = 0) const;

  void upload(const void* host, size_t bytes, size_t byte_offset = 0);
  void download(void* host, size_t bytes, size_t byte_offset = 0) const;
  std::vector<unsigned char> download_all() const;
  void fill(unsigned char byte);  // every byte of the buffer
  void poison() { fill(kPoisonByte); }

 private:
  void release();
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

class CudaStream {
 public:
  CudaStream();
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  CUstream get() const { return stream_; }
  void synchronize() const;

 private:
  CUstream stream_ = nullptr;
};

// Base fixture of GPU tests: skips without a GPU, makes the context current, gives a stream.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  CUstream stream() const { return stream_ ? stream_->get() : nullptr; }
  void synchronize() const { stream_->synchronize(); }

 private:
  std::unique_ptr<CudaStream> stream_;
};

}  // namespace normjit::test
