// Issue 6 (several GPUs): one process, one Engine, two devices. A kernel is a module loaded into
// one CUDA context, so the engine keeps them per context; the kernel cache (NVRTC's cubins) is
// shared, keyed by source and arch. Two host threads, each with device d's primary context
// current and a stream of its own, run the same list of problems at the same time (released
// together, so both contexts ask for the first kernel at once), and every result is checked
// against the float64 CPU reference. Then:
//   - the thread's current context is the one it made current, after every call (the engine
//     pushes a stream's context when it differs and must pop it again);
//   - a call with device 1's stream from a thread whose current context is device 0's runs on
//     device 1 (the stream, not the thread, says where) and leaves device 0's context current;
//   - with both devices of one arch and SM count, NVRTC compiled each kernel once: the second
//     context loads the cubin the first compiled.
// Skips, saying so, with fewer than two devices. Filter: --gtest_filter='MultiGpu.*'
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "codegen/norm_problem.h"
#include "runtime/backward_call.h"
#include "runtime/cuda_driver.h"
#include "support/device_run.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/reference.h"
#include "support/shared_engine.h"

namespace normjit::test {
namespace {

using runtime::driver;

constexpr int kDevices = 2;

struct Case {
  NormProblem problem;
  int64_t m;
  bool caller_workspace;  // a workspace from workspace_size on this thread's device, or none
};

// Both kinds, fp32 and bf16 (fp32 γ), N from one warp's reach to a grid cluster's, M from one
// row to many row groups (so dγ/dβ go through the workspace's partial rows).
std::vector<Case> make_cases() {
  std::vector<Case> cases;
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    const Affine affine = kind == NormKind::LayerNorm ? Affine::WeightAndBias : Affine::WeightOnly;
    cases.push_back({make_problem(kind, 1000, DType::F32, DType::F32, affine), 37, false});
    cases.push_back({make_problem(kind, 4096, DType::BF16, DType::F32, affine), 4096, true});
    cases.push_back({make_problem(kind, 8192, DType::BF16, DType::F32, affine), 199, false});
    cases.push_back({make_problem(kind, 65536, DType::BF16, DType::F32, affine), 2, true});
  }
  return cases;
}

int device_count() {
  int count = 0;
  NJ_CU(driver().cuDeviceGetCount(&count), "test: counting CUDA devices");
  return count;
}

// Device d's primary context, retained for the process (as GpuContext does for device 0).
CUcontext primary_context(int d) {
  CUdevice dev;
  CUcontext ctx;
  NJ_CU(driver().cuDeviceGet(&dev, d), "test: getting device " + std::to_string(d));
  NJ_CU(driver().cuDevicePrimaryCtxRetain(&ctx, dev), "test: retaining device " + std::to_string(d) + "'s context");
  return ctx;
}

// What the heuristic's launch configs depend on: the arch and the SM count.
std::pair<int, int> arch_and_sms(int d) {
  CUdevice dev;
  auto attribute = [&](CUdevice_attribute a) {
    int v = 0;
    NJ_CU(driver().cuDeviceGetAttribute(&v, a, dev), "test: reading a device attribute");
    return v;
  };
  NJ_CU(driver().cuDeviceGet(&dev, d), "test: getting a device");
  return {attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
              attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
          attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)};
}

CUcontext current_context() {
  CUcontext ctx = nullptr;
  NJ_CU(driver().cuCtxGetCurrent(&ctx), "test: reading the current context");
  return ctx;
}

class MultiGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    NJ_REQUIRE_GPU();
    const int count = device_count();
    if (count < kDevices)
      GTEST_SKIP() << "needs " << kDevices << " CUDA devices, this machine has " << count
                   << " (scripts/gpu-multi.sh runs it on a 2-GPU machine)";
    for (int d = 0; d < kDevices; ++d) contexts_[d] = primary_context(d);
  }
  CUcontext contexts_[kDevices] = {};
};

TEST_F(MultiGpu, TwoDevicesOnTheirOwnThreadsMatchTheReferenceAndShareCompiledKernels) {
  const std::vector<Case> cases = make_cases();
  const std::string cache_dir = make_temp_dir();
  Config config;
  config.cache_dir = cache_dir;
  config.disk_cache = true;
  config.tune_mode = TuneMode::Cached;  // empty directory, no database: heuristic configs only
  Engine engine(config);

  std::mutex mu;
  std::vector<std::string> failures;
  std::set<std::string> kernels[kDevices];  // resolved problems launched on each device
  int runs = 0;
  // One start for both threads once each has its context and stream, so they ask the engine for
  // the first kernel at the same moment and run side by side from there.
  std::promise<void> go;
  const std::shared_future<void> start = go.get_future().share();
  std::atomic<int> ready{0};

  auto worker = [&](int d) {
    auto fail = [&](const std::string& what) {
      std::lock_guard<std::mutex> lock(mu);
      failures.push_back("device " + std::to_string(d) + ": " + what);
    };
    CUstream stream = nullptr;
    try {
      NJ_CU(driver().cuCtxSetCurrent(contexts_[d]), "test: making the device's context current");
      NJ_CU(driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "test: the thread's stream");
    } catch (const std::exception& e) {
      fail(std::string("setting up the thread: ") + e.what());
    }
    ++ready;
    start.wait();
    for (const Case& c : cases) {
      std::unique_ptr<NormInputs> inputs;
      std::string resolved;
      try {
        if (stream) {
          inputs = std::make_unique<NormInputs>(make_inputs(c.problem, c.m, fresh_seed()));
          // The problem as the engine resolves it (the alignment its buffers give): one kernel each.
          const BackwardArgs args = DeviceCase(*inputs, {}).args();
          resolved = codegen::describe(runtime::check_backward_call(inputs->problem, args).problem);
        }
      } catch (const std::exception& e) {
        fail(describe_problem(c.problem) + ": preparing the inputs threw: " + e.what());
        inputs.reset();
      }
      if (!inputs) continue;
      RunOptions options;
      options.caller_workspace = c.caller_workspace;
      const ::testing::AssertionResult match = backward_matches_reference(engine, *inputs, stream, options);
      CUcontext after = nullptr;
      try {
        after = current_context();
      } catch (const std::exception& e) {
        fail(e.what());
      }
      std::lock_guard<std::mutex> lock(mu);
      ++runs;
      kernels[d].insert(resolved);
      if (!match) failures.push_back("device " + std::to_string(d) + ": " + match.message());
      if (after != contexts_[d])
        failures.push_back("device " + std::to_string(d) + ", " + describe_case(*inputs) +
                           ": the call left another context current (the engine must pop what it pushed)");
    }
    if (stream) driver().cuStreamDestroy(stream);
  };

  std::vector<std::thread> threads;
  for (int d = 0; d < kDevices; ++d) threads.emplace_back(worker, d);
  while (ready < kDevices) std::this_thread::yield();
  go.set_value();
  for (std::thread& t : threads) t.join();
  const CacheStats stats = engine.cache_stats();
  std::error_code ignored;
  std::filesystem::remove_all(cache_dir, ignored);

  for (const std::string& f : failures) ADD_FAILURE() << f;
  EXPECT_EQ(runs, kDevices * static_cast<int>(cases.size())) << "runs that completed";
  EXPECT_EQ(kernels[0], kernels[1]) << "both devices ran the same list";
  if (arch_and_sms(0) == arch_and_sms(1)) {
    // Same arch and SM count, so the same heuristic configs: one cubin per kernel for both
    // contexts. A second compile would mean compiled code was keyed by context, or the two
    // threads' requests for one kernel raced past each other.
    EXPECT_EQ(stats.compiles, kernels[0].size()) << "NVRTC compilations for " << kernels[0].size()
                                                 << " kernels run on two devices of one arch";
  }
}

TEST_F(MultiGpu, AStreamOfDevice1RunsThereWhileDevice0IsCurrent) {
  const NormProblem problem = make_problem(NormKind::LayerNorm, 4096, DType::BF16, DType::F32, Affine::WeightAndBias);
  const NormInputs inputs = make_inputs(problem, 199, fresh_seed());
  NJ_CU(driver().cuCtxSetCurrent(contexts_[1]), "test: device 1's context");
  CUstream stream = nullptr;
  NJ_CU(driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "test: a stream of device 1");
  Gradients out;
  {
    DeviceCase device(inputs, {});  // allocated on device 1 (its context is current)
    device.poison_outputs();
    const BackwardArgs args = device.args();
    NJ_CU(driver().cuCtxSetCurrent(contexts_[0]), "test: device 0's context");
    try {
      shared_engine().backward(problem, args, stream);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "device 1's stream with device 0 current: " << e.what();
    }
    EXPECT_EQ(current_context(), contexts_[0]) << "the engine must leave the caller's context current";
    NJ_CU(driver().cuCtxSetCurrent(contexts_[1]), "test: device 1's context");
    NJ_CU(driver().cuStreamSynchronize(stream), "test: waiting for device 1");
    out = device.download();
  }
  driver().cuStreamDestroy(stream);
  EXPECT_TRUE(gradients_match(inputs, out, reference_backward(inputs)));
  GpuContext::get()->make_current();  // as the other tests expect
}

}  // namespace
}  // namespace normjit::test
