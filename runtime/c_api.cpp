// The C API: each entry point converts normjit::Error (and anything else thrown) into a status
// and a thread-local message, so no exception ever crosses into C.
#include <cstddef>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>

#include "normjit/normjit.h"
#include "normjit/normjit.hpp"
#include "runtime/config.h"

namespace {

// How many bytes of each struct the caller's layout holds (its fields, not its tail padding),
// fixed when the engine is created from the sizes the caller's header gave.
struct AbiLayout {
  size_t problem;
  size_t backward_args;
  size_t forward_args;
};

}  // namespace

struct nj_engine {
  normjit::Engine engine;
  AbiLayout layout;
  nj_engine(normjit::Config config, AbiLayout layout) : engine(std::move(config)), layout(layout) {}
};

namespace {

// Each struct's layouts, oldest first, each given by where its fields end: the offset of the
// first field a later header appended (git log -p include/normjit/normjit.h), then the current
// struct's size. Offsets rather than numbers, so the table holds on any ABI; every layout is a
// prefix of the current one, so the offsets are the older layouts' own.
constexpr size_t kProblemLayouts[] = {
    offsetof(nj_problem, residual),               // 314ee68: kind .. alignment
    offsetof(nj_problem, gate),                   // 7b82868: + residual .. dropout
    offsetof(nj_problem, parallel),               // fcdf3e2: + gate
    offsetof(nj_problem, recompute_from_output),  // c7867cd: + parallel
    sizeof(nj_problem),                           // 9440d96: + recompute_from_output
};
constexpr size_t kBackwardArgsLayouts[] = {
    offsetof(nj_backward_args, dresidual),  // 314ee68: m .. workspace_bytes
    offsetof(nj_backward_args, z),          // 7b82868: + dresidual .. dresidual_in_stride
    offsetof(nj_backward_args, dy1),        // fcdf3e2: + z .. dz_stride
    offsetof(nj_backward_args, y),          // c7867cd: + dy1 .. dbias1
    sizeof(nj_backward_args),               // 9440d96: + y, y_stride, bias
};
constexpr size_t kForwardArgsLayouts[] = {
    offsetof(nj_forward_args, residual),  // 6509c96: m .. eps
    sizeof(nj_forward_args),              // f78a3fe: + residual .. y1_stride
};

// A caller's sizeof is its layout's fields rounded up to the struct's alignment. Every layout holds
// an int64_t (n or m), so where that is as aligned as the current struct, so is every layout.
struct Int64Field {
  int64_t v;
};
static_assert(alignof(nj_problem) == alignof(Int64Field) && alignof(nj_backward_args) == alignof(Int64Field) &&
                  alignof(nj_forward_args) == alignof(Int64Field),
              "an older layout would be less aligned than the current struct: its sizeof needs its own alignment");

template <class T>
constexpr size_t sizeof_layout(size_t fields_end) {
  return (fields_end + alignof(T) - 1) / alignof(T) * alignof(T);
}

// The bytes of the caller's struct to read for a sizeof the caller passed, 0 for a size no
// layout has. Two layouts have one size where the older one's tail padding is the newer one's
// last field (nj_problem: 64 and 72 bytes on LP64); the newer is taken, so that its field is read.
template <class T, size_t N>
size_t fields_for_size(size_t size, const size_t (&layouts)[N]) {
  for (size_t i = N; i-- > 0;)
    if (sizeof_layout<T>(layouts[i]) == size) return layouts[i];
  return 0;
}

template <class T, size_t N>
std::string layout_sizes(const size_t (&layouts)[N]) {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    if (i > 0 && sizeof_layout<T>(layouts[i]) == sizeof_layout<T>(layouts[i - 1])) continue;
    out += (i > 0 ? ", " : "") + std::to_string(sizeof_layout<T>(layouts[i]));
  }
  return out;
}

// The caller's struct as the library's current type: the fields its layout lacks are zero, which
// is each appended field's default. Per call, so it stays one memcpy into a stack struct.
template <class T>
T widen(const T* caller, size_t caller_bytes) {
  T out{};
  std::memcpy(&out, caller, caller_bytes);
  return out;
}

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

// Empty when `size` is one of T's layouts, *fields then the bytes of it to read; otherwise the
// reason it is refused.
template <class T, size_t N>
std::string check_layout(const char* name, size_t size, const size_t (&layouts)[N], size_t* fields) {
  *fields = fields_for_size<T>(size, layouts);
  if (*fields != 0) return "";
  std::string why = std::string("nj_engine_create: the caller's ") + name + " is " + std::to_string(size) +
                    " bytes but this library's (libnormjit " + normjit::version_string() + ") is " +
                    std::to_string(sizeof(T)) + " bytes";
  if (size > sizeof(T))
    return why + ": the caller was built against a newer normjit.h (or mirrors the struct with fields it lacks), "
                 "whose added fields this library would not read. Rebuild it against this library's normjit.h, or "
                 "load the libnormjit it was built with.";
  return why + ", and no normjit.h has had a layout of that size (" + layout_sizes<T>(layouts) +
         " bytes): the caller's struct is not normjit.h's. Rebuild against this library's normjit.h (a binding "
         "that mirrors the struct: bring the mirror in line with it), or load the libnormjit whose header it matches.";
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
    const normjit::NormProblem p = to_cpp(widen(problem, engine->layout.problem));
    normjit::Engine& e = engine->engine;
    if constexpr (std::is_same_v<Args, nj_forward_args>) {
      const normjit::ForwardArgs a = to_cpp(widen(args, engine->layout.forward_args));
      if (kind == NJ_LAYERNORM)
        e.layer_norm_forward(p, a, stream);
      else
        e.rms_norm_forward(p, a, stream);
    } else {
      const normjit::BackwardArgs a = to_cpp(widen(args, engine->layout.backward_args));
      if (kind == NJ_LAYERNORM)
        e.layer_norm_backward(p, a, stream);
      else
        e.rms_norm_backward(p, a, stream);
    }
  });
}

}  // namespace

extern "C" {

nj_status nj_engine_create_abi(const char* config_file, nj_engine** engine, size_t problem_size,
                               size_t backward_args_size, size_t forward_args_size) {
  if (!engine) return invalid("nj_engine_create: the engine out-pointer is NULL.");
  *engine = nullptr;
  AbiLayout layout{};
  std::string why = check_layout<nj_problem>("nj_problem", problem_size, kProblemLayouts, &layout.problem);
  if (why.empty())
    why = check_layout<nj_backward_args>("nj_backward_args", backward_args_size, kBackwardArgsLayouts,
                                         &layout.backward_args);
  if (why.empty())
    why = check_layout<nj_forward_args>("nj_forward_args", forward_args_size, kForwardArgsLayouts,
                                        &layout.forward_args);
  if (!why.empty()) {
    g_last_error = "normjit: " + why;
    return NJ_ERR_UNSUPPORTED;
  }
  return guarded([&] {
    normjit::Config config = normjit::runtime::load_config(config_file ? config_file : "");
    *engine = new nj_engine(std::move(config), layout);
  });
}

void nj_engine_destroy(nj_engine* engine) { delete engine; }

nj_status nj_workspace_size(nj_engine* engine, const nj_problem* problem, int64_t m, size_t* bytes) {
  if (!engine) return invalid("nj_workspace_size: engine is NULL; create one with nj_engine_create.");
  if (!problem) return invalid("nj_workspace_size: problem is NULL.");
  if (!bytes) return invalid("nj_workspace_size: the bytes out-pointer is NULL.");
  return guarded([&] { *bytes = engine->engine.workspace_size(to_cpp(widen(problem, engine->layout.problem)), m); });
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
