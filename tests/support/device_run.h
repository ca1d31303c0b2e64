// Runs one backward case on the GPU the way a careful caller would, with every output
// poisoned first: uploads the inputs, calls the engine, waits, downloads what was written.
#pragma once
#include <cuda.h>

#include <cstdint>

#include "normjit/normjit.hpp"
#include "support/compare.h"
#include "support/gpu.h"
#include "support/norm_inputs.h"

namespace normjit::test {

struct RunOptions {
  // Pass a workspace of workspace_size(problem, m) bytes (filled with NaN: its old contents
  // must not matter) instead of letting the engine allocate one on the stream.
  bool caller_workspace = false;
  // Shift every base pointer by this many of its tensor's elements (x, dy, dx, γ, dγ, dβ,
  // mean, rstd), so 16-byte vectors no longer fit; the bytes skipped are NaN.
  int64_t misalign_elements = 0;
  // The byte every dx slot (rows and gaps) holds before the call: NaN poison by default; a
  // non-NaN pattern lets a test check that gaps between rows are left untouched.
  unsigned char dx_fill = kPoisonByte;
  // Fused residual: dx is the dresidual buffer itself (in-place accumulation); dx then starts
  // out holding dresidual, with dresidual's stride, instead of dx_fill.
  bool dx_is_dresidual = false;
  // dx is x's (or dy's) buffer itself, the other in-place aliases the call accepts: dx starts
  // out holding that input, with its stride; dx's dtype must be that input's.
  bool dx_is_x = false;
  bool dx_is_dy = false;
};

// The device copies of one case's tensors, laid out as RunOptions says. `inputs` must
// outlive it.
class DeviceCase {
 public:
  DeviceCase(const NormInputs& inputs, const RunOptions& options);

  // Fills dx with options.dx_fill (or dresidual, in place), and dγ/dβ, dresidual_in, dz and
  // dγ1/dβ1 with NaN poison.
  void poison_outputs();
  BackwardArgs args() const;  // workspace left null
  Gradients download() const;

 private:
  const NormInputs& inputs_;
  RunOptions options_;
  int64_t dx_stride() const;  // the stride dx is written with
  const DeviceBuffer& dx_buffer() const;  // dx's own, or the input it is written over
  DeviceBuffer x_, dy_, mean_, rstd_, weight_, dx_, dweight_, dbias_;
  DeviceBuffer dresidual_, rowscale_, keep_mask_, dresidual_in_, z_, dz_;  // fused options
  DeviceBuffer dy1_, weight1_, dweight1_, dbias1_;                        // parallel norms
  DeviceBuffer y_, bias_;                                                 // recompute from the output
};

// The problem the engine runs for these inputs: resolved with the alignment their device
// copies' pointers and strides allow, as runtime::check_backward_call derives it. A config
// pinned or tuned for it is the one a call with these inputs uses.
NormProblem resolved_problem(const NormInputs& inputs);

// Poisons, runs engine.backward on `stream`, synchronizes and downloads. Throws what the
// engine throws.
Gradients run_backward_on_gpu(Engine& engine, const NormInputs& inputs, CUstream stream,
                              const RunOptions& options = {});

// run_backward_on_gpu, then gradients_match against reference_backward(inputs). An exception
// from the engine is a failure that names the case too.
::testing::AssertionResult backward_matches_reference(Engine& engine, const NormInputs& inputs, CUstream stream,
                                                      const RunOptions& options = {});

// run_backward_on_gpu twice on the same inputs: whether the two results have the same bits (the
// determinism every config promises: no race, sums added in a fixed order).
::testing::AssertionResult same_bits_twice(Engine& engine, const NormInputs& inputs, CUstream stream);

}  // namespace normjit::test
