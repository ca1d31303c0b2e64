/* normjit C API: run-time generated LayerNorm / RMSNorm backward kernels (and forward ones).
 *
 * Every call returns an nj_status; on failure nj_last_error() gives a message
 * (thread-local, valid until the next normjit call on this thread) that says what was
 * asked, what was wrong and what to do.
 *
 * Streams are CUstream / cudaStream_t (both are `struct CUstream_st*`); the stream's
 * context (or the current context for the null stream) selects the device.
 */
#ifndef NORMJIT_NORMJIT_H
#define NORMJIT_NORMJIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NJ_VERSION_MAJOR 0
#define NJ_VERSION_MINOR 1
#define NJ_VERSION_PATCH 0

typedef struct CUstream_st* nj_stream;
typedef struct nj_engine nj_engine;

typedef enum nj_status {
  NJ_OK = 0,
  NJ_ERR_INVALID_ARGUMENT = 1, /* a null pointer, n = 0, stride < n, misaligned pointer ... */
  NJ_ERR_UNSUPPORTED = 2,      /* a valid request this build or device cannot serve */
  NJ_ERR_NO_DRIVER = 3,        /* libcuda.so.1 could not be loaded or initialised */
  NJ_ERR_NO_DEVICE = 4,        /* no CUDA device, or no current context */
  NJ_ERR_NO_NVRTC = 5,         /* libnvrtc could not be loaded */
  NJ_ERR_COMPILE = 6,          /* NVRTC rejected the generated source (log in the message) */
  NJ_ERR_CUDA = 7,             /* a CUDA driver call failed */
  NJ_ERR_CONFIG = 8,           /* the config file or an environment variable is invalid */
  NJ_ERR_WORKSPACE = 9,        /* the workspace passed is smaller than nj_workspace_size */
  NJ_ERR_INTERNAL = 10
} nj_status;

typedef enum nj_norm_kind { NJ_LAYERNORM = 0, NJ_RMSNORM = 1 } nj_norm_kind;

/* NJ_DTYPE_DEFAULT (0) means "same as x", so a zeroed struct picks sensible dtypes. */
typedef enum nj_dtype { NJ_DTYPE_DEFAULT = 0, NJ_F32 = 1, NJ_F16 = 2, NJ_BF16 = 3 } nj_dtype;

/* The form of a saved dropout keep-mask (docs/FUSED.md). */
typedef enum nj_dropout_mask {
  NJ_DROPOUT_NONE = 0,
  NJ_DROPOUT_BYTES = 1, /* one byte per element, nonzero = kept */
  NJ_DROPOUT_BITS = 2   /* one bit per element: bit j of byte k of a row is element 8k + j */
} nj_dropout_mask;

/* Where a gated RMSNorm (Mamba-2 style) applies its gate silu(z) (docs/FUSED.md). */
typedef enum nj_gate {
  NJ_GATE_NONE = 0,
  NJ_GATE_AFTER_NORM = 1, /* y = rmsnorm(x) * gamma * silu(z)   ("norm before gate") */
  NJ_GATE_BEFORE_NORM = 2 /* y = rmsnorm(x * silu(z)) * gamma   ("gate before norm") */
} nj_gate;

typedef struct nj_problem {
  nj_norm_kind kind;
  int64_t n;             /* hidden size, >= 1 */
  nj_dtype x_dtype;      /* required */
  nj_dtype dy_dtype;     /* default: x_dtype */
  nj_dtype dx_dtype;     /* default: x_dtype */
  nj_dtype weight_dtype; /* gamma/beta and dgamma/dbeta: NJ_F32 or x_dtype; default: x_dtype */
  int has_weight;        /* gamma present and dgamma written */
  int has_bias;          /* LayerNorm only: dbeta written */
  int alignment;         /* bytes rows are known to be aligned to; 0 = 16 */
  /* Fused options (docs/FUSED.md), all 0 = off; appended so older fields keep their offsets. */
  int residual;             /* dresidual is added to dh */
  int zero_centered_weight; /* gamma stored as gamma - 1: the kernel uses gamma + 1 */
  int rowscale;             /* dx_in = dh * rowscale[row] */
  nj_dropout_mask dropout;  /* dx_in = dh * keep / (1 - p), with the mask in this form */
  nj_gate gate;             /* RMSNorm only: gated by silu(z); z is read and dz written */
  int parallel;             /* a second norm of the same x: dy1, weight1 in; dweight1, dbias1 out */
  int recompute_from_output; /* x-hat recovered from the forward's output y (and gamma, beta); x optional */
} nj_problem;

typedef struct nj_backward_args {
  int64_t m;             /* rows; 0 is a no-op apart from zeroing dgamma/dbeta */
  const void* x;
  int64_t x_stride;      /* elements between rows; 0 = n */
  const void* dy;
  int64_t dy_stride;
  const float* mean;     /* LayerNorm only: fp32, one per row */
  const float* rstd;     /* fp32, one per row */
  const void* weight;    /* gamma when has_weight */
  void* dx;
  int64_t dx_stride;
  void* dweight;         /* when has_weight */
  void* dbias;           /* when has_bias */
  void* workspace;       /* NULL: allocated stream-ordered (cuMemAllocAsync) and freed on the stream */
  size_t workspace_bytes;
  /* Fused options (docs/FUSED.md): each pointer given exactly when its option is on. */
  const void* dresidual;       /* residual: [m, n] in dx's dtype; dx may be this buffer */
  int64_t dresidual_stride;    /* elements; 0 = n */
  const float* rowscale;       /* rowscale: fp32, one per row */
  const void* dropout_mask;    /* dropout: the keep-mask */
  int64_t dropout_mask_stride; /* bytes between mask rows; 0 = n (bytes) or ceil(n/8) (bits) */
  double dropout_p;            /* dropout: 0 <= p < 1 */
  void* dresidual_in;          /* optional with rowscale or dropout: dh, [m, n] in dx's dtype */
  int64_t dresidual_in_stride; /* elements; 0 = n */
  const void* z;               /* gate: the gate's input, [m, n] in x's dtype */
  int64_t z_stride;            /* elements; 0 = n */
  void* dz;                    /* gate: z's gradient, [m, n] in dx's dtype */
  int64_t dz_stride;           /* elements; 0 = n */
  /* parallel: the second norm y1 = norm(x; gamma1, beta1), with the problem's has_weight/has_bias */
  const void* dy1;             /* its output gradient, [m, n] in dy's dtype */
  int64_t dy1_stride;          /* elements; 0 = n */
  const void* weight1;         /* gamma1, when has_weight */
  void* dweight1;              /* dgamma1, when has_weight */
  void* dbias1;                /* dbeta1, when has_bias */
  /* recompute_from_output: x-hat = (y - beta) / gamma from the forward's output instead of x. x is
   * then optional: given, it is read only in columns where gamma = 0 (LayerNorm: with mean);
   * without it those columns' dx and dgamma are NaN (docs/FUSED.md). */
  const void* y;               /* the forward's output, [m, n] in x's dtype */
  int64_t y_stride;            /* elements; 0 = n */
  const void* bias;            /* beta, when has_bias (LayerNorm): y = x-hat * gamma + beta */
} nj_backward_args;

/* The forward (docs/FORWARD.md): y = norm(h) * gamma (+ beta), saving mean (LayerNorm) and rstd
 * in exactly the form nj_backward_args takes them. The same nj_problem as the backward: y is
 * stored in dy_dtype (default x_dtype; dx_dtype is the backward's and ignored here); gamma/beta
 * in weight_dtype. Fused options: h = dropout(x, p) * rowscale[row] + residual is what is
 * normalised (x itself without them); the gate (RMSNorm) and parallel norms as in the backward;
 * recompute_from_output is ignored (docs/FORWARD.md). */
typedef struct nj_forward_args {
  int64_t m;             /* rows; 0 is a no-op */
  const void* x;
  int64_t x_stride;      /* elements between rows; 0 = n */
  const void* weight;    /* gamma when has_weight */
  const void* bias;      /* beta when has_bias (LayerNorm) */
  void* y;               /* [m, n] in dy_dtype (default x_dtype); may be x itself (same stride and dtype) */
  int64_t y_stride;      /* elements; 0 = n */
  float* mean;           /* out, LayerNorm only: fp32, one per row; NULL: not saved */
  float* rstd;           /* out: fp32, one per row; NULL: not saved */
  double eps;            /* rstd = 1 / sqrt(var + eps); finite and >= 0 (a zeroed struct: 0) */
  /* Fused options, appended so older fields keep their offsets; each pointer given only when its
   * option is on. */
  const void* residual;        /* residual: [m, n] in x's dtype */
  int64_t residual_stride;     /* elements; 0 = n */
  void* residual_out;          /* residual, rowscale or dropout, optional: h, [m, n] in x's dtype; */
  int64_t residual_out_stride; /* may be residual or x (same stride) */
  const float* rowscale;       /* rowscale: fp32, one per row */
  void* dropout_mask;          /* dropout, optional: the keep-mask written, in the problem's form */
  int64_t dropout_mask_stride; /* bytes between mask rows; 0 = n (bytes) or ceil(n/8) (bits) */
  double dropout_p;            /* dropout: 0 <= p < 1 */
  uint64_t dropout_seed;       /* dropout: keep(row, col) is a hash of (seed, offset, row, col) */
  uint64_t dropout_offset;
  const void* z;               /* gate: [m, n] in x's dtype */
  int64_t z_stride;            /* elements; 0 = n */
  const void* weight1;         /* parallel with has_weight: gamma1 */
  const void* bias1;           /* parallel with has_bias: beta1 */
  void* y1;                    /* parallel: the second output, [m, n] in y's dtype */
  int64_t y1_stride;           /* elements; 0 = n */
} nj_forward_args;

/* config_file: a TOML file, or NULL for the default lookup (NORMJIT_CONFIG, then
 * $XDG_CONFIG_HOME/normjit/config.toml or ~/.config/normjit/config.toml, if present).
 *
 * nj_engine_create is a macro: it passes the caller's sizes of the three structs, which the
 * engine keeps. The structs grow by appended fields, so without the sizes a program built against
 * an older header would hand the library a struct shorter than the one it reads (the new fields
 * read past its end), and one built against a newer header would set fields an older library
 * never reads. With them (docs/EMBEDDING.md, "The ABI guard"):
 *   - a size of one of the struct's earlier layouts (an older header) is accepted: the fields that
 *     layout lacks read as zero, which is each appended field's default (options off, pointers
 *     NULL, strides n). Two nj_problem layouts have the size of the next one (gate, and later
 *     recompute_from_output, went into their tail padding); such a size is read as the newer
 *     layout, so a program built against those headers must zero whole structs (= {0} or memset)
 *     rather than fill them field by field: a nonzero padding byte turns that option on, and a
 *     call with rows is then refused for the option's missing pointer (z, or y).
 *   - a larger size (a newer header), or one no header ever had, is refused with
 *     NJ_ERR_UNSUPPORTED and a message naming the struct and both sizes: rebuild against this
 *     library's normjit.h, or load the library the program was built with.
 * Bindings that mirror the structs (python/normjit/_capi.py) call nj_engine_create_abi with their
 * mirrors' sizes, so a mirror that drifts from this header is refused rather than misread.
 *
 * No symbol nj_engine_create is exported: a program built against a header from before the
 * macro called it with no sizes, and no layout can be assumed for it that is safe (the oldest
 * would leave the fused options such a program sets unread: a wrong result; the newest would
 * read past an older program's structs). Such a program fails to load (undefined symbol
 * nj_engine_create) instead; rebuild it against this header. */
nj_status nj_engine_create_abi(const char* config_file, nj_engine** engine, size_t problem_size,
                               size_t backward_args_size, size_t forward_args_size);
#define nj_engine_create(config_file, engine)                                                 \
  nj_engine_create_abi((config_file), (engine), sizeof(nj_problem), sizeof(nj_backward_args), \
                       sizeof(nj_forward_args))
void nj_engine_destroy(nj_engine* engine);

/* Workspace bytes a backward over m rows may use on the current context's device, for any
 * alignment its rows turn out to have; 0 when no call of m rows needs any (small m, where one
 * row group writes dgamma/dbeta itself). */
nj_status nj_workspace_size(nj_engine* engine, const nj_problem* problem, int64_t m,
                            size_t* bytes);
nj_status nj_layer_norm_backward(nj_engine* engine, const nj_problem* problem,
                                 const nj_backward_args* args, nj_stream stream);
nj_status nj_rms_norm_backward(nj_engine* engine, const nj_problem* problem,
                               const nj_backward_args* args, nj_stream stream);

nj_status nj_layer_norm_forward(nj_engine* engine, const nj_problem* problem,
                                const nj_forward_args* args, nj_stream stream);
nj_status nj_rms_norm_forward(nj_engine* engine, const nj_problem* problem,
                              const nj_forward_args* args, nj_stream stream);

const char* nj_last_error(void);
const char* nj_status_name(nj_status status);
const char* nj_version_string(void);

#ifdef __cplusplus
}
#endif
#endif /* NORMJIT_NORMJIT_H */
