"""One normjit backward on torch tensors: the C structs filled from tensors, the workspace from
PyTorch's caching allocator, the launch on the current stream. Eager only: the custom ops
(_ops.py) call this, and so does their fast path when nothing is tracing.
"""
import ctypes

import torch

from .. import _capi
from ._context import current_context

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
    """t as an [M, N] view with unit inner stride and its row stride; a copy only when no such
    view exists (inner stride != 1, or rows that overlap like an expanded tensor)."""
    v = t.reshape(-1, n)
    rows = v.size(0)
    if (rows > 0 and n > 1 and v.stride(1) != 1) or (rows > 1 and v.stride(0) < n):
        v = v.contiguous()
    stride = v.stride(0) if rows > 1 else n
    return v, stride


def _stats(t, m, name):
    """mean/rstd as M contiguous fp32 values ([..., 1] or [M] from the forward)."""
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


def backward(kind, dy, x, weight, bias, mean, rstd, normalized_ndim):
    """Returns (dx, dweight or None, dbias or None); dx has x's shape and dtype, dweight/dbias
    the weight's. kind is _capi.LAYERNORM or _capi.RMSNORM."""
    if not x.is_cuda:
        raise ValueError("normjit: x is on %s; normjit's kernels run on CUDA tensors." % x.device)
    if dy.shape != x.shape:
        raise ValueError("normjit: dy has shape %s but x has %s; they must match." % (tuple(dy.shape), tuple(x.shape)))
    if not 1 <= normalized_ndim <= x.dim():
        raise ValueError("normjit: normalized_ndim = %d for a %d-D x; it counts x's trailing dims that are "
                         "normalized (1 for [..., N])." % (normalized_ndim, x.dim()))
    n = 1
    for s in x.shape[x.dim() - normalized_ndim:]:
        n *= s
    m = x.numel() // n if n else 0
    if n == 0:
        raise ValueError("normjit: the normalized size N is 0 (x has shape %s); N must be at least 1." % (tuple(x.shape),))
    device = x.device.index if x.device.index is not None else torch.cuda.current_device()

    p = _capi.Problem()
    p.kind = kind
    p.n = n
    p.x_dtype = _nj_dtype(x, "x")
    p.dy_dtype = _nj_dtype(dy, "dy")
    affine = weight if weight is not None else bias
    if affine is not None:
        if affine.dtype != x.dtype and affine.dtype != torch.float32:
            raise TypeError("normjit: the weight is %s and x is %s; normjit takes a float32 weight or one of x's "
                            "dtype. Cast the weight." % (affine.dtype, x.dtype))
        p.weight_dtype = _NJ_DTYPE[affine.dtype]
    p.has_weight = weight is not None
    p.has_bias = bias is not None

    x2, x_stride = _rows(x, n, "x")
    dy2, dy_stride = _rows(dy, n, "dy")
    dx = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    a = _capi.BackwardArgs()
    a.m = m
    a.x, a.x_stride = x2.data_ptr(), x_stride
    a.dy, a.dy_stride = dy2.data_ptr(), dy_stride
    a.dx, a.dx_stride = dx.data_ptr(), n
    if kind == _capi.LAYERNORM:
        mean = _stats(mean, m, "mean")
        a.mean = mean.data_ptr()
    rstd = _stats(rstd, m, "rstd")
    a.rstd = rstd.data_ptr()
    dweight = dbias = None
    if weight is not None:
        # A copy here (or in _rows/_stats) is freed on return but stream-ordered: the caching
        # allocator hands its memory only to work queued after this launch on the same stream.
        w = _vector(weight, n, affine.dtype, "weight")
        a.weight = w.data_ptr()
        dweight = torch.empty(weight.shape, dtype=weight.dtype, device=x.device)
        a.dweight = dweight.data_ptr()
    if bias is not None:
        _vector(bias, n, affine.dtype, "bias")  # checked only: the backward never reads beta
        dbias = torch.empty(bias.shape, dtype=bias.dtype, device=x.device)
        a.dbias = dbias.data_ptr()
    if m == 0 and dweight is None and dbias is None:
        return dx, None, None

    engine = _capi.default_engine()
    with current_context(device):
        stream = _raw_stream(device)
        key = (kind, n, p.x_dtype, p.dy_dtype, p.weight_dtype, p.has_weight, p.has_bias, m, device)
        for attempt in (0, 1):
            nbytes = _workspace_bytes.get(key)
            if nbytes is None:
                if len(_workspace_bytes) > 4096:  # many distinct M (varying sequence lengths)
                    _workspace_bytes.clear()
                nbytes = _workspace_bytes[key] = engine.workspace_size(p, m)
            workspace = torch.empty(nbytes, dtype=torch.uint8, device=x.device) if nbytes else None
            a.workspace = workspace.data_ptr() if nbytes else None
            a.workspace_bytes = nbytes
            try:
                engine.backward(p, a, stream)
                break
            except _capi.NormjitError as e:
                if e.status != _capi.WORKSPACE or attempt:
                    raise
                del _workspace_bytes[key]
    return dx, dweight, dbias
