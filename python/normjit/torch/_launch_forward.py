"""One normjit forward on torch tensors: y = norm(x) * weight (+ bias) by normjit's kernel on the
current stream, with the fp32 row statistics the backward reads (LayerNorm: mean and rstd;
RMSNorm: rstd) in the shape the backward ops take. Eager only: the custom ops (_ops.py) call
this, and so do the public functions when nothing is tracing.

Everything up to the C call is _launch's, shared with the backward: N and the rows from x's
shape and strides, the parameter checks, the cached nj_problem, the stream and its context.
The forward needs no workspace, so one path serves every call: the C args are packed into a
per-thread struct and the entry point is called with addresses only, as the backward's fast path
does (cheaper than building a ctypes struct per call).
"""
import ctypes

import torch

from .. import _capi
from ._context import pop_context, push_context
from ._launch import (_LAST_SPECIAL_STREAM, _check_normalized_ndim, _normalized_size, _problem, _raw_stream, _rows,
                      _same_device, _vector)


def stat_shape(shape, normalized_ndim):
    """mean's and rstd's shape for an x of `shape`: its leading dims, then 1 for each normalized
    dim, as aten.native_layer_norm returns them (so the statistics broadcast against x). The
    fake kernels use it too."""
    _check_normalized_ndim(shape, normalized_ndim)
    return tuple(shape[:len(shape) - normalized_ndim]) + (1,) * normalized_ndim


def forward(kind, x, weight, bias, eps, normalized_ndim):
    """(y, mean, rstd): y of x's shape and dtype (contiguous), mean (None for RMSNorm) and rstd
    fp32 of stat_shape. kind is _capi.LAYERNORM or _capi.RMSNORM; bias is None for RMSNorm."""
    if not x.is_cuda:
        raise ValueError("normjit: x is on %s; normjit's kernels run on CUDA tensors." % x.device)
    shape = x.shape
    n = _normalized_size(shape, normalized_ndim)
    stats = stat_shape(shape, normalized_ndim)
    m = x.numel() // n
    has_weight = weight is not None
    has_bias = bias is not None
    affine = weight if has_weight else bias
    w_ptr = b_ptr = 0
    # w, b: the parameters as one contiguous row each (copies only for odd strides), held until
    # the launch is queued; a copy's memory is then reused stream-ordered.
    if has_weight:
        _same_device(weight, x, "weight")
        w = _vector(weight, n, affine.dtype, "weight")
        w_ptr = w.data_ptr()
    if has_bias:
        _same_device(bias, x, "bias")
        b = _vector(bias, n, affine.dtype, "bias")
        b_ptr = b.data_ptr()
    # The backward's problem with dy in x's dtype: the forward ignores dy_dtype, so both share it.
    p = _problem((kind, n, x.dtype, x.dtype, None if affine is None else affine.dtype, has_weight, has_bias),
                 kind, n, x, x, affine, has_weight, has_bias)
    rows, x_stride = _rows(x, n, "x")
    y = x.new_empty(shape)
    mean = x.new_empty(stats, dtype=torch.float32) if kind == _capi.LAYERNORM else None
    rstd = x.new_empty(stats, dtype=torch.float32)
    engine = _capi.default_engine()
    device = x.get_device()
    stream = _raw_stream(device)
    # Only the legacy and per-thread default streams take their device from the current context.
    pushed = stream <= _LAST_SPECIAL_STREAM and push_context(device)
    try:
        a, address = _capi.thread_forward_args()
        _capi.FORWARD_ARGS.pack_into(a, 0, m, rows.data_ptr(), x_stride, w_ptr, b_ptr, y.data_ptr(), n,
                                     0 if mean is None else mean.data_ptr(), rstd.data_ptr(), float(eps))
        status = engine.raw_forward[kind](engine.address, ctypes.addressof(p), address, stream)
    finally:
        if pushed:
            pop_context()
    if status != _capi.OK:
        _capi.check(status)  # on this thread: the library's message is thread-local
    return y, mean, rstd
