#include "support/device_run.h"

#include "runtime/backward_call.h"
#include "runtime/cuda_driver.h"
#include "support/reference.h"

namespace normjit::test {
namespace {

// A buffer holding `host_bytes` after `offset` bytes of NaN poison.
DeviceBuffer upload_after_poison(const void* host, size_t host_bytes, size_t offset) {
  DeviceBuffer buffer(offset + host_bytes);
  buffer.poison();
  buffer.upload(host, host_bytes, offset);
  return buffer;
}

DeviceBuffer upload_tensor(const HostTensor& t, int64_t misalign_elements) {
  return upload_after_poison(t.data(), t.size_bytes(), static_cast<size_t>(misalign_elements * t.element_bytes()));
}

DeviceBuffer upload_floats(const std::vector<float>& v, int64_t misalign_elements) {
  return upload_after_poison(v.data(), v.size() * sizeof(float), static_cast<size_t>(misalign_elements) * 4);
}

}  // namespace

DeviceCase::DeviceCase(const NormInputs& in, const RunOptions& options) : inputs_(in), options_(options) {
  const NormProblem& p = in.problem;
  const int64_t shift = options.misalign_elements;
  x_ = upload_tensor(in.x, shift);
  dy_ = upload_tensor(in.dy, shift);
  rstd_ = upload_floats(in.rstd, shift);
  if (p.kind == NormKind::LayerNorm) mean_ = upload_floats(in.mean, shift);
  if (p.has_weight) weight_ = upload_tensor(in.weight, shift);

  const int64_t dx_bytes = dtype_bytes(p.dx_dtype), w_bytes = dtype_bytes(p.weight_dtype);
  if (!options.dx_is_dresidual && !options.dx_is_x && !options.dx_is_dy)
    dx_ = DeviceBuffer(static_cast<size_t>((shift + in.m * in.dx_stride) * dx_bytes));
  if (p.has_weight) dweight_ = DeviceBuffer(static_cast<size_t>((shift + in.n()) * w_bytes));
  if (p.has_bias) dbias_ = DeviceBuffer(static_cast<size_t>((shift + in.n()) * w_bytes));

  const FusedInputs& f = in.fused;
  if (p.residual) dresidual_ = upload_tensor(f.dresidual, shift);
  if (p.rowscale) rowscale_ = upload_floats(f.rowscale, shift);
  if (p.dropout != DropoutMask::None)
    keep_mask_ = upload_after_poison(f.keep_mask.data(), f.keep_mask.size(), static_cast<size_t>(shift));
  if (f.dresidual_in) dresidual_in_ = DeviceBuffer(static_cast<size_t>((shift + in.m * in.n()) * dx_bytes));
  if (p.gate != Gate::None) {
    z_ = upload_tensor(f.z, shift);
    dz_ = DeviceBuffer(static_cast<size_t>((shift + in.m * f.dz_stride) * dx_bytes));
  }
  if (p.parallel) {
    dy1_ = upload_tensor(f.dy1, shift);
    if (p.has_weight) weight1_ = upload_tensor(f.weight1, shift);
    if (p.has_weight) dweight1_ = DeviceBuffer(static_cast<size_t>((shift + in.n()) * w_bytes));
    if (p.has_bias) dbias1_ = DeviceBuffer(static_cast<size_t>((shift + in.n()) * w_bytes));
  }
  if (p.recompute_from_output) {
    y_ = upload_tensor(f.y, shift);
    if (p.has_bias) bias_ = upload_tensor(f.bias, shift);
  }
}

int64_t DeviceCase::dx_stride() const {
  if (options_.dx_is_dresidual) return inputs_.fused.dresidual.stride();
  if (options_.dx_is_x) return inputs_.x.stride();
  if (options_.dx_is_dy) return inputs_.dy.stride();
  return inputs_.dx_stride;
}

const DeviceBuffer& DeviceCase::dx_buffer() const {
  if (options_.dx_is_dresidual) return dresidual_;
  if (options_.dx_is_x) return x_;
  if (options_.dx_is_dy) return dy_;
  return dx_;
}

void DeviceCase::poison_outputs() {
  // In place, dx overwrote the input it is written over: every run starts from that input again.
  auto restore = [&](DeviceBuffer& b, const HostTensor& t) {
    b.upload(t.data(), t.size_bytes(), static_cast<size_t>(options_.misalign_elements * t.element_bytes()));
  };
  if (options_.dx_is_dresidual) {
    restore(dresidual_, inputs_.fused.dresidual);
  } else if (options_.dx_is_x) {
    restore(x_, inputs_.x);
  } else if (options_.dx_is_dy) {
    restore(dy_, inputs_.dy);
  } else {
    dx_.fill(options_.dx_fill);
  }
  dweight_.poison();
  dbias_.poison();
  dresidual_in_.poison();
  dz_.poison();
  dweight1_.poison();
  dbias1_.poison();
}

BackwardArgs DeviceCase::args() const {
  const NormProblem& p = inputs_.problem;
  const size_t shift = static_cast<size_t>(options_.misalign_elements);
  auto shifted = [&](const DeviceBuffer& b, DType dtype) { return b.ptr(shift * dtype_bytes(dtype)); };
  // Contiguous rows are passed as stride 0 ("N"), exercising the default.
  auto stride_arg = [&](int64_t stride) { return stride == inputs_.n() ? 0 : stride; };
  BackwardArgs a;
  a.m = inputs_.m;
  a.x = shifted(x_, p.x_dtype);
  a.x_stride = stride_arg(inputs_.x.stride());
  a.dy = shifted(dy_, p.dy_dtype);
  a.dy_stride = stride_arg(inputs_.dy.stride());
  a.mean = static_cast<const float*>(shifted(mean_, DType::F32));
  a.rstd = static_cast<const float*>(shifted(rstd_, DType::F32));
  a.weight = shifted(weight_, p.weight_dtype);
  a.dx = shifted(dx_buffer(), p.dx_dtype);
  a.dx_stride = stride_arg(dx_stride());
  a.dweight = shifted(dweight_, p.weight_dtype);
  a.dbias = shifted(dbias_, p.weight_dtype);
  const FusedInputs& f = inputs_.fused;
  if (p.residual) {
    a.dresidual = shifted(dresidual_, p.dx_dtype);
    a.dresidual_stride = stride_arg(f.dresidual.stride());
  }
  if (p.rowscale) a.rowscale = static_cast<const float*>(shifted(rowscale_, DType::F32));
  if (p.dropout != DropoutMask::None) {
    a.dropout_mask = keep_mask_.ptr(shift);
    a.dropout_mask_stride = f.keep_mask_stride;
    a.dropout_p = f.dropout_p;
  }
  if (f.dresidual_in) a.dresidual_in = shifted(dresidual_in_, p.dx_dtype);  // contiguous: stride 0
  if (p.gate != Gate::None) {
    a.z = shifted(z_, p.x_dtype);
    a.z_stride = stride_arg(f.z.stride());
    a.dz = shifted(dz_, p.dx_dtype);
    a.dz_stride = stride_arg(f.dz_stride);
  }
  if (p.parallel) {
    a.dy1 = shifted(dy1_, p.dy_dtype);
    a.dy1_stride = stride_arg(f.dy1.stride());
    a.weight1 = shifted(weight1_, p.weight_dtype);
    a.dweight1 = shifted(dweight1_, p.weight_dtype);
    a.dbias1 = shifted(dbias1_, p.weight_dtype);
  }
  if (p.recompute_from_output) {
    a.y = shifted(y_, p.x_dtype);
    a.y_stride = stride_arg(f.y.stride());
    a.bias = shifted(bias_, p.weight_dtype);
    if (!f.x_given) {  // the memory-efficient call: neither x nor (LayerNorm) mean
      a.x = nullptr;
      a.x_stride = 0;
      a.mean = nullptr;
    }
  }
  return a;
}

Gradients DeviceCase::download() const {
  const NormProblem& p = inputs_.problem;
  const size_t shift = static_cast<size_t>(options_.misalign_elements);
  Gradients out;
  out.dx = HostTensor(p.dx_dtype, inputs_.m, inputs_.n(), dx_stride());
  dx_buffer().download(out.dx.data(), out.dx.size_bytes(), shift * dtype_bytes(p.dx_dtype));
  if (inputs_.fused.dresidual_in) {
    out.dresidual_in = HostTensor(p.dx_dtype, inputs_.m, inputs_.n());
    dresidual_in_.download(out.dresidual_in.data(), out.dresidual_in.size_bytes(), shift * dtype_bytes(p.dx_dtype));
  }
  if (p.gate != Gate::None) {
    out.dz = HostTensor(p.dx_dtype, inputs_.m, inputs_.n(), inputs_.fused.dz_stride);
    dz_.download(out.dz.data(), out.dz.size_bytes(), shift * dtype_bytes(p.dx_dtype));
  }
  // One row of the weight dtype: dγ, dβ and the second norm's.
  auto download_param_grad = [&](const DeviceBuffer& from, HostTensor& to) {
    to = HostTensor(p.weight_dtype, 1, inputs_.n());
    from.download(to.data(), to.size_bytes(), shift * dtype_bytes(p.weight_dtype));
  };
  if (p.has_weight) download_param_grad(dweight_, out.dweight);
  if (p.has_bias) download_param_grad(dbias_, out.dbias);
  if (p.parallel && p.has_weight) download_param_grad(dweight1_, out.dweight1);
  if (p.parallel && p.has_bias) download_param_grad(dbias1_, out.dbias1);
  return out;
}

NormProblem resolved_problem(const NormInputs& inputs) {
  const DeviceCase probe(inputs, {});
  return runtime::check_backward_call(inputs.problem, probe.args()).problem;
}

Gradients run_backward_on_gpu(Engine& engine, const NormInputs& inputs, CUstream stream, const RunOptions& options) {
  DeviceCase device(inputs, options);
  device.poison_outputs();
  BackwardArgs args = device.args();
  DeviceBuffer workspace;
  if (options.caller_workspace) {
    workspace = DeviceBuffer(engine.workspace_size(inputs.problem, inputs.m));
    workspace.poison();
    args.workspace = workspace.ptr();
    args.workspace_bytes = workspace.size();
  }
  engine.backward(inputs.problem, args, stream);
  NJ_CU(runtime::driver().cuStreamSynchronize(stream), "test: waiting for the backward");
  return device.download();
}

::testing::AssertionResult backward_matches_reference(Engine& engine, const NormInputs& inputs, CUstream stream,
                                                      const RunOptions& options) {
  Gradients out;
  try {
    out = run_backward_on_gpu(engine, inputs, stream, options);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << describe_case(inputs) << "\n  threw: " << e.what();
  }
  return gradients_match(inputs, out, reference_backward(inputs));
}

::testing::AssertionResult same_bits_twice(Engine& engine, const NormInputs& inputs, CUstream stream) {
  const Gradients first = run_backward_on_gpu(engine, inputs, stream);
  return same_bits(first, run_backward_on_gpu(engine, inputs, stream));
}

}  // namespace normjit::test
