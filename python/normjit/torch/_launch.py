"""One normjit backward on torch tensors: the C structs filled from tensors, the workspace from
PyTorch's caching allocator, the launch on the current stream. Eager only: the custom ops
(_ops.py) call this, and so does their fast path when nothing is tracing.
"""
import ctypes

import torch

from .. import _capi
from ._context import pop_context, push_context

_NJ_DTYPE = {torch.float32: _capi.F32, torch.float16: _capi.F16, torch.bfloat16: _capi.BF16}
# (problem fields, m, device) -> workspace bytes. Sizes depend on the device and the tuning
# database; a database that changes mid-run is handled by the engine (it falls back to a
# kernel that fits) and by the retry in _run.
_workspace_bytes = {}

try:  # The int handle without building a torch.cuda.Stream object (what Inductor calls too).
    from torch._C import _cuda_getCurrentRawStream as _raw_stream
except ImportError:  # pragma: no cover - older torch
    def _raw_stream(device):
        return torch.cuda.current_stream(device).cuda_stream


def _nj_dtype(t, name):
    d = _NJ_DTYPE.get(t.dtype)
    if d is None:
        raise TypeError("normjit: %s has dtype %s; normjit takes float32, float16 and bfloat16. "
                        "Cast it, or use torch's own backward for this dtype." % (name, t.dtype))
    return d


def _rows(t, n, name):
    """t's rows as a tensor whose data_ptr() starts them and their row stride (elements): t
    itself when contiguous, else an [M, N] view with unit inner stride, and a copy only when no
    such view exists (inner stride != 1, or rows that overlap like an expanded tensor)."""
    if t.is_contiguous():
        return t, n  # the usual case, without a reshape (a few microseconds)
    v = t if t.dim() == 2 and t.size(1) == n else t.reshape(-1, n)
    rows = v.size(0)
    if (rows > 0 and n > 1 and v.stride(1) != 1) or (rows > 1 and v.stride(0) < n):
        v = v.contiguous()
    stride = v.stride(0) if rows > 1 else n
    return v, stride


def _stats(t, m, name):
    """mean/rstd as M contiguous fp32 values ([..., 1] or [M] from the forward)."""
    if t.dtype == torch.float32 and t.numel() == m and t.is_contiguous():
        return t  # the usual case, without a reshape
    if t.dtype != torch.float32:
        t = t.float()
    t = t.reshape(-1)
    if t.numel() != m:
        raise ValueError("normjit: %s has %d values for %d rows; pass the per-row statistics the forward "
                         "returned (torch.ops.aten.native_layer_norm's mean/rstd)." % (name, t.numel(), m))
    return t.contiguous()


def _vector(t, n, dtype, name):
    if t.numel() != n:
        raise ValueError("normjit: %s has %d elements but the normalized size N is %d." % (name, t.numel(), n))
    if t.dtype != dtype:
        raise TypeError("normjit: %s is %s but the weight is %s; weight and bias must share a dtype." %
                        (name, t.dtype, dtype))
    return t.reshape(-1).contiguous()


def _problem(key, kind, n, x, dy, affine, has_weight, has_bias):
    """The nj_problem for this call, built once per distinct problem and then shared (the C API
    only reads it; filling a ctypes struct field by field costs microseconds)."""
    p = _problems.get(key)
    if p is None:
        p = _capi.Problem()
        p.kind = kind
        p.n = n
        p.x_dtype = _nj_dtype(x, "x")
        p.dy_dtype = _nj_dtype(dy, "dy")
        if affine is not None:
            if affine.dtype != x.dtype and affine.dtype != torch.float32:
                raise TypeError("normjit: the weight is %s and x is %s; normjit takes a float32 weight or one of "
                                "x's dtype. Cast the weight." % (affine.dtype, x.dtype))
            p.weight_dtype = _NJ_DTYPE[affine.dtype]
        p.has_weight = has_weight
        p.has_bias = has_bias
        _problems[key] = p
    return p


_problems = {}


def backward(kind, dy, x, weight, bias, mean, rstd, normalized_ndim):
    """Returns (dx, dweight or None, dbias or None); dx has x's shape and dtype, dweight/dbias
    the weight's. kind is _capi.LAYERNORM or _capi.RMSNORM."""
    if not x.is_cuda:
        raise ValueError("normjit: x is on %s; normjit's kernels run on CUDA tensors." % x.device)
    shape = x.shape
    if dy.shape != shape:
        raise ValueError("normjit: dy has shape %s but x has %s; they must match." % (tuple(dy.shape), tuple(shape)))
    if normalized_ndim == 1 and len(shape) >= 1:
        n = shape[-1]
    else:
        if not 1 <= normalized_ndim <= len(shape):
            raise ValueError("normjit: normalized_ndim = %d for a %d-D x; it counts x's trailing dims that are "
                             "normalized (1 for [..., N])." % (normalized_ndim, len(shape)))
        n = 1
        for s in shape[len(shape) - normalized_ndim:]:
            n *= s
    if n == 0:
        raise ValueError("normjit: the normalized size N is 0 (x has shape %s); N must be at least 1." % (tuple(shape),))
    m = x.numel() // n
    device = x.get_device()
    affine = weight if weight is not None else bias
    has_weight = weight is not None
    has_bias = bias is not None
    problem_key = (kind, n, x.dtype, dy.dtype, None if affine is None else affine.dtype, has_weight, has_bias)
    p = _problem(problem_key, kind, n, x, dy, affine, has_weight, has_bias)

    x2, x_stride = _rows(x, n, "x")
    dy2, dy_stride = _rows(dy, n, "dy")
    dx = torch.empty_like(x, memory_format=torch.contiguous_format)
    mean_ptr = None
    if kind == _capi.LAYERNORM:
        mean = _stats(mean, m, "mean")
        mean_ptr = mean.data_ptr()
    rstd = _stats(rstd, m, "rstd")
    dweight = dbias = None
    w_ptr = dw_ptr = db_ptr = None
    if has_weight:
        # A copy here (or in _rows/_stats) is freed on return but stream-ordered: the caching
        # allocator hands its memory only to work queued after this launch on the same stream.
        w = _vector(weight, n, affine.dtype, "weight")
        w_ptr = w.data_ptr()
        dweight = torch.empty_like(weight, memory_format=torch.contiguous_format)
        dw_ptr = dweight.data_ptr()
    if has_bias:
        _vector(bias, n, affine.dtype, "bias")  # checked only: the backward never reads beta
        dbias = torch.empty_like(bias, memory_format=torch.contiguous_format)
        db_ptr = dbias.data_ptr()
    if m == 0 and not has_weight and not has_bias:
        return dx, None, None

    engine = _capi.default_engine()
    pushed = push_context(device)
    try:
        stream = _raw_stream(device)
        key = (problem_key, m, device)
        for attempt in (0, 1):
            nbytes = _workspace_bytes.get(key)
            if nbytes is None:
                if len(_workspace_bytes) > 4096:  # many distinct M (varying sequence lengths)
                    _workspace_bytes.clear()
                nbytes = _workspace_bytes[key] = engine.workspace_size(p, m)
            workspace = torch.empty(nbytes, dtype=torch.uint8, device=x.device) if nbytes else None
            # One constructor call, fields in header order (cheaper than setting them one by one).
            a = _capi.BackwardArgs(m, x2.data_ptr(), x_stride, dy2.data_ptr(), dy_stride, mean_ptr, rstd.data_ptr(),
                                   w_ptr, dx.data_ptr(), n, dw_ptr, db_ptr,
                                   workspace.data_ptr() if nbytes else None, nbytes)
            status = engine._backward[kind](engine.handle, ctypes.byref(p), ctypes.byref(a), stream)
            if status == _capi.OK:
                break
            if status != _capi.WORKSPACE or attempt:
                _capi.check(status)
            del _workspace_bytes[key]
    finally:
        if pushed:
            pop_context()
    return dx, dweight, dbias
