#include "support/gpu.h"

#include <memory>
#include <stdexcept>

#include "runtime/cuda_driver.h"

namespace normjit::test {

using runtime::driver;

namespace {

struct GpuState {
  bool available = false;
  std::string why;
};

const GpuState& gpu_state() {
  static const GpuState state = [] {
    GpuState s;
    s.available = runtime::cuda_available(&s.why);
    return s;
  }();
  return state;
}

}  // namespace

GpuContext* GpuContext::get() {
  if (!gpu_state().available) return nullptr;
  // Deliberately leaked: see the class comment. A constructor that throws leaves the static
  // uninitialised, so every test that asks reports the error.
  static GpuContext* const context = new GpuContext();
  return context;
}

std::string GpuContext::why_unavailable() { return gpu_state().why; }

GpuContext::GpuContext() {
  const auto& d = driver();
  NJ_CU(d.cuDeviceGet(&device_, 0), "test setup: getting CUDA device 0");
  NJ_CU(d.cuDevicePrimaryCtxRetain(&context_, device_), "test setup: retaining device 0's primary context");
  make_current();
}

void GpuContext::make_current() const {
  NJ_CU(driver().cuCtxSetCurrent(context_), "test setup: making device 0's context current");
}

std::string GpuContext::description() const {
  const auto& d = driver();
  char name[256] = {};
  NJ_CU(d.cuDeviceGetName(name, sizeof name, device_), "reading the device name");
  auto attribute = [&](CUdevice_attribute a) {
    int value = 0;
    NJ_CU(d.cuDeviceGetAttribute(&value, a, device_), "reading a device attribute");
    return value;
  };
  return std::string(name) + ", sm_" + std::to_string(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)) +
         std::to_string(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)) + ", " +
         std::to_string(attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)) + " SMs";
}

// ---- DeviceBuffer ------------------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes > 0) NJ_CU(driver().cuMemAlloc(&ptr_, bytes), "test: allocating " + std::to_string(bytes) + " bytes");
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept : ptr_(other.ptr_), bytes_(other.bytes_) {
  other.ptr_ = 0;
  other.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    ptr_ = other.ptr_;
    bytes_ = other.bytes_;
    other.ptr_ = 0;
    other.bytes_ = 0;
  }
  return *this;
}

void DeviceBuffer::release() {
  if (ptr_) driver().cuMemFree(ptr_);
  ptr_ = 0;
  bytes_ = 0;
}

void* DeviceBuffer::ptr(size_t byte_offset) const {
  return ptr_ ? reinterpret_cast<void*>(ptr_ + byte_offset) : nullptr;
}

void DeviceBuffer::upload(const void* host, size_t bytes, size_t byte_offset) {
  if (byte_offset + bytes > bytes_) throw std::out_of_range("DeviceBuffer::upload past the end");
  if (bytes > 0) NJ_CU(driver().cuMemcpyHtoD(ptr_ + byte_offset, host, bytes), "test: uploading");
}

void DeviceBuffer::download(void* host, size_t bytes, size_t byte_offset) const {
  if (byte_offset + bytes > bytes_) throw std::out_of_range("DeviceBuffer::download past the end");
  if (bytes > 0) NJ_CU(driver().cuMemcpyDtoH(host, ptr_ + byte_offset, bytes), "test: downloading");
}

std::vector<unsigned char> DeviceBuffer::download_all() const {
  std::vector<unsigned char> bytes(bytes_);
  download(bytes.data(), bytes_);
  return bytes;
}

void DeviceBuffer::fill(unsigned char byte) {
  if (bytes_ > 0) NJ_CU(driver().cuMemsetD8(ptr_, byte, bytes_), "test: filling a buffer");
}

// ---- CudaStream --------------------------------------------------------------------------------

CudaStream::CudaStream() { NJ_CU(driver().cuStreamCreate(&stream_, CU_STREAM_DEFAULT), "test: creating a stream"); }

CudaStream::~CudaStream() {
  if (stream_) driver().cuStreamDestroy(stream_);
}

void CudaStream::synchronize() const {
  NJ_CU(driver().cuStreamSynchronize(stream_), "test: waiting for the stream");
}

// ---- GpuTest -----------------------------------------------------------------------------------

void GpuTest::SetUp() {
  NJ_REQUIRE_GPU();
  GpuContext::get()->make_current();
  stream_ = std::make_unique<CudaStream>();
}

void GpuTest::TearDown() { stream_.reset(); }

}  // namespace normjit::test
