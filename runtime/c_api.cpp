// The C API: each entry point converts normjit::Error (and anything else thrown) into a status
// and a thread-local message, so no exception ever crosses into C.
#include <cstring>
#include <new>
#include <string>
#include <type_traits>

#include "normjit/normjit.h"
#include "normjit/normjit.hpp"
#include "runtime/config.h"

struct nj_engine {
  normjit::Engine engine;
  explicit nj_engine(normjit::Config config) : engine(std::move(config)) {}
};

namespace {

thread_local std::string g_last_error;

template <class F>
nj_status guarded(F&& body) {
  try {
    g_last_error.clear();
    body();
    return NJ_OK;
  } catch (const normjit::Error& e) {
    g_last_error = e.what();
    return static_cast<nj_status>(e.status());
  } catch (const std::bad_alloc&) {
    g_last_error = "normjit: out of host memory";
    return NJ_ERR_INTERNAL;
  } catch (const std::exception& e) {
    g_last_error = std::string("normjit: internal error: ") + e.what();
    return NJ_ERR_INTERNAL;
  } catch (...) {
    g_last_error = "normjit: internal error: unknown exception";
    return NJ_ERR_INTERNAL;
  }
}

nj_status invalid(const std::string& message) {
  g_last_error = "normjit: " + message;
  return NJ_ERR_INVALID_ARGUMENT;
}

// A C caller may store any int in an enum field; loading an out-of-range value as the C++ enum
// type is undefined, so the bits are read as an int and validated later (validate_problem).
template <class Enum>
int bits_of(const Enum& field) {
  static_assert(sizeof(Enum) == sizeof(int), "C enums are int-sized here");
  int v;
  std::memcpy(&v, &field, sizeof v);
  return v;
}

normjit::NormProblem to_cpp(const nj_problem& p) {
  normjit::NormProblem out;
  out.kind = static_cast<normjit::NormKind>(bits_of(p.kind));
  out.n = p.n;
  out.x_dtype = static_cast<normjit::DType>(bits_of(p.x_dtype));
  out.dy_dtype = static_cast<normjit::DType>(bits_of(p.dy_dtype));
  out.dx_dtype = static_cast<normjit::DType>(bits_of(p.dx_dtype));
  out.weight_dtype = static_cast<normjit::DType>(bits_of(p.weight_dtype));
  out.has_weight = p.has_weight != 0;
  out.has_bias = p.has_bias != 0;
  out.alignment = p.alignment == 0 ? 16 : p.alignment;
  out.residual = p.residual != 0;
  out.zero_centered_weight = p.zero_centered_weight != 0;
  out.rowscale = p.rowscale != 0;
  out.dropout = static_cast<normjit::DropoutMask>(bits_of(p.dropout));
  out.gate = static_cast<normjit::Gate>(bits_of(p.gate));
  out.parallel = p.parallel != 0;
  out.recompute_from_output = p.recompute_from_output != 0;
  return out;
}

normjit::BackwardArgs to_cpp(const nj_backward_args& a) {
  normjit::BackwardArgs out;
  out.m = a.m;
  out.x = a.x;
  out.x_stride = a.x_stride;
  out.dy = a.dy;
  out.dy_stride = a.dy_stride;
  out.mean = a.mean;
  out.rstd = a.rstd;
  out.weight = a.weight;
  out.dx = a.dx;
  out.dx_stride = a.dx_stride;
  out.dweight = a.dweight;
  out.dbias = a.dbias;
  out.workspace = a.workspace;
  out.workspace_bytes = a.workspace_bytes;
  out.dresidual = a.dresidual;
  out.dresidual_stride = a.dresidual_stride;
  out.rowscale = a.rowscale;
  out.dropout_mask = a.dropout_mask;
  out.dropout_mask_stride = a.dropout_mask_stride;
  out.dropout_p = a.dropout_p;
  out.dresidual_in = a.dresidual_in;
  out.dresidual_in_stride = a.dresidual_in_stride;
  out.z = a.z;
  out.z_stride = a.z_stride;
  out.dz = a.dz;
  out.dz_stride = a.dz_stride;
  out.dy1 = a.dy1;
  out.dy1_stride = a.dy1_stride;
  out.weight1 = a.weight1;
  out.dweight1 = a.dweight1;
  out.dbias1 = a.dbias1;
  out.y = a.y;
  out.y_stride = a.y_stride;
  out.bias = a.bias;
  return out;
}

normjit::ForwardArgs to_cpp(const nj_forward_args& a) {
  normjit::ForwardArgs out;
  out.m = a.m;
  out.x = a.x;
  out.x_stride = a.x_stride;
  out.weight = a.weight;
  out.bias = a.bias;
  out.y = a.y;
  out.y_stride = a.y_stride;
  out.mean = a.mean;
  out.rstd = a.rstd;
  out.eps = a.eps;
  out.residual = a.residual;
  out.residual_stride = a.residual_stride;
  out.residual_out = a.residual_out;
  out.residual_out_stride = a.residual_out_stride;
  out.rowscale = a.rowscale;
  out.dropout_mask = a.dropout_mask;
  out.dropout_mask_stride = a.dropout_mask_stride;
  out.dropout_p = a.dropout_p;
  out.dropout_seed = a.dropout_seed;
  out.dropout_offset = a.dropout_offset;
  out.z = a.z;
  out.z_stride = a.z_stride;
  out.weight1 = a.weight1;
  out.bias1 = a.bias1;
  out.y1 = a.y1;
  out.y1_stride = a.y1_stride;
  return out;
}

// The four launch entry points: NULL checks naming the function, then the engine's call of
// that kind (forward or backward, by the args' type) with exceptions turned into a status.
template <class Args>
nj_status run(nj_engine* engine, const nj_problem* problem, const Args* args, nj_stream stream, nj_norm_kind kind,
              const char* fn) {
  if (!engine) return invalid(std::string(fn) + ": engine is NULL; create one with nj_engine_create.");
  if (!problem) return invalid(std::string(fn) + ": problem is NULL.");
  if (!args) return invalid(std::string(fn) + ": args is NULL.");
  return guarded([&] {
    const normjit::NormProblem p = to_cpp(*problem);
    normjit::Engine& e = engine->engine;
    if constexpr (std::is_same_v<Args, nj_forward_args>) {
      if (kind == NJ_LAYERNORM)
        e.layer_norm_forward(p, to_cpp(*args), stream);
      else
        e.rms_norm_forward(p, to_cpp(*args), stream);
    } else {
      if (kind == NJ_LAYERNORM)
        e.layer_norm_backward(p, to_cpp(*args), stream);
      else
        e.rms_norm_backward(p, to_cpp(*args), stream);
    }
  });
}

}  // namespace

extern "C" {

nj_status nj_engine_create(const char* config_file, nj_engine** engine) {
  if (!engine) return invalid("nj_engine_create: the engine out-pointer is NULL.");
  *engine = nullptr;
  return guarded([&] {
    normjit::Config config = normjit::runtime::load_config(config_file ? config_file : "");
    *engine = new nj_engine(std::move(config));
  });
}

void nj_engine_destroy(nj_engine* engine) { delete engine; }

nj_status nj_workspace_size(nj_engine* engine, const nj_problem* problem, int64_t m, size_t* bytes) {
  if (!engine) return invalid("nj_workspace_size: engine is NULL; create one with nj_engine_create.");
  if (!problem) return invalid("nj_workspace_size: problem is NULL.");
  if (!bytes) return invalid("nj_workspace_size: the bytes out-pointer is NULL.");
  return guarded([&] { *bytes = engine->engine.workspace_size(to_cpp(*problem), m); });
}

nj_status nj_layer_norm_backward(nj_engine* engine, const nj_problem* problem, const nj_backward_args* args,
                                 nj_stream stream) {
  return run(engine, problem, args, stream, NJ_LAYERNORM, "nj_layer_norm_backward");
}

nj_status nj_rms_norm_backward(nj_engine* engine, const nj_problem* problem, const nj_backward_args* args,
                               nj_stream stream) {
  return run(engine, problem, args, stream, NJ_RMSNORM, "nj_rms_norm_backward");
}

nj_status nj_layer_norm_forward(nj_engine* engine, const nj_problem* problem, const nj_forward_args* args,
                                nj_stream stream) {
  return run(engine, problem, args, stream, NJ_LAYERNORM, "nj_layer_norm_forward");
}

nj_status nj_rms_norm_forward(nj_engine* engine, const nj_problem* problem, const nj_forward_args* args,
                              nj_stream stream) {
  return run(engine, problem, args, stream, NJ_RMSNORM, "nj_rms_norm_forward");
}

const char* nj_last_error(void) { return g_last_error.c_str(); }

const char* nj_status_name(nj_status status) {
  switch (status) {
    case NJ_OK: return "NJ_OK";
    case NJ_ERR_INVALID_ARGUMENT: return "NJ_ERR_INVALID_ARGUMENT";
    case NJ_ERR_UNSUPPORTED: return "NJ_ERR_UNSUPPORTED";
    case NJ_ERR_NO_DRIVER: return "NJ_ERR_NO_DRIVER";
    case NJ_ERR_NO_DEVICE: return "NJ_ERR_NO_DEVICE";
    case NJ_ERR_NO_NVRTC: return "NJ_ERR_NO_NVRTC";
    case NJ_ERR_COMPILE: return "NJ_ERR_COMPILE";
    case NJ_ERR_CUDA: return "NJ_ERR_CUDA";
    case NJ_ERR_CONFIG: return "NJ_ERR_CONFIG";
    case NJ_ERR_WORKSPACE: return "NJ_ERR_WORKSPACE";
    case NJ_ERR_INTERNAL: return "NJ_ERR_INTERNAL";
  }
  return "NJ_ERR_UNKNOWN_STATUS";
}

const char* nj_version_string(void) { return normjit::version_string(); }

}  // extern "C"
