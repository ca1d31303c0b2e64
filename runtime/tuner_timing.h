// Timing on the GPU, shared by the tuner and `normjit bench`: device buffers, random inputs,
// CUDA-event timers, an L2 flush between repetitions and the median of repetitions.
// Everything here needs a GPU and a current context; errors are normjit::Error naming `what`.
#pragma once
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "normjit/norm_problem.hpp"

namespace normjit::runtime {

// The median of v (the upper middle for an even count); 0 for none.
double median(std::vector<double> v);

// Random values of a dtype as bytes to upload: a normal distribution, never zeros (zeros can
// time differently).
std::vector<char> random_bytes(DType dtype, size_t count, uint32_t seed);

// cuMemAlloc'd memory of at least `bytes` (256 at least), freed on scope exit.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(size_t bytes, const std::string& what);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept : ptr_(other.ptr_), bytes_(other.bytes_) { other.ptr_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUdeviceptr ptr() const { return ptr_; }
  void* get() const { return reinterpret_cast<void*>(ptr_); }
  size_t bytes() const { return bytes_; }
  // Uploads `data` (at most bytes()) synchronously.
  void upload(const std::vector<char>& data, const std::string& what);
  // `count` random values of a dtype (random_bytes), from a block of at most 2^20 drawn on the
  // host and repeated on the device: drawing tens of millions of normals on one core took
  // seconds of every tuning. For timing, a repeating pattern of 1 Mi values is as good.
  void fill_random(DType dtype, size_t count, uint32_t seed, const std::string& what);

 private:
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

// Elapsed GPU time of work enqueued on a stream, between two events.
class EventTimer {
 public:
  explicit EventTimer(std::string what);
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  template <class Work>
  double microseconds(CUstream stream, Work&& work) {
    start(stream);
    work();
    return stop(stream);
  }

 private:
  void start(CUstream stream);
  double stop(CUstream stream);  // waits for the stop event
  std::string what_;
  CUevent start_ = nullptr, stop_ = nullptr;
};

// Work enqueued on a stream, captured once into a CUDA graph and replayed: the kernels of one
// backward then follow each other as in a training step's graph (or a busy stream), without the
// host's launch latency between them that a lone launch timed by events includes.
class CapturedLaunch {
 public:
  CapturedLaunch(CUstream stream, const std::function<void()>& enqueue, const std::string& what);
  ~CapturedLaunch();
  CapturedLaunch(const CapturedLaunch&) = delete;
  CapturedLaunch& operator=(const CapturedLaunch&) = delete;
  void replay(CUstream stream);

 private:
  std::string what_;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

// Overwrites a buffer twice the size of the device's L2 so the next repetition reads its
// inputs from DRAM, as a training step does, rather than from a warm L2.
class L2Flush {
 public:
  explicit L2Flush(const std::string& what);
  void operator()(CUstream stream);

 private:
  std::string what_;
  DeviceBuffer scratch_;
};

}  // namespace normjit::runtime
