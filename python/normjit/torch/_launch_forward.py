"""One normjit forward on torch tensors: y = norm(x) * weight (+ bias) by normjit's kernel on the
current stream, with the fp32 row statistics the backward reads (LayerNorm: mean and rstd;
RMSNorm: rstd) in the shape the backward ops take. Eager only: the custom ops (_ops.py) call
this, and so do the public functions and the autograd Functions when nothing is tracing.

Two ways through, as for the backward (_launch.py):
- the general one (_forward): every check (N and the rows from x's shape and strides, the
  parameters, the cached nj_problem: _launch's helpers, shared with the backward), any strides;
  a call with M > 0 that it completes leaves a _launch._Plan under the call's forward_key;
- the fast one (_run): a call whose key has a plan and whose x, weight and bias are contiguous
  allocates y and the statistics, packs the C args into a per-thread struct and calls the entry
  point with addresses only.
The forward needs no workspace. With packed=True (the autograd Functions) the statistics are
one tensor (LayerNorm: mean and rstd stacked, one allocation fewer) and the plan comes back
with them, for _launch.backward_packed.

The fused options (docs/FORWARD.md, "Fused options") take a third way, forward_fused: the general
path's checks and more (the option tensors against x), every nj_forward_args field set in one
ctypes constructor call on a struct of the call's own (the per-thread struct of FORWARD_ARGS is
never touched, so its fused fields stay zero for the option-free calls), and no plan.
"""
import collections
import ctypes

import torch

from .. import _capi
from ._context import pop_context, push_context
from ._launch import (_LAST_SPECIAL_STREAM, _check_normalized_ndim, _new_plan, _normalized_size, _plans, _problem,
                      _raw_stream, _read_rows, _rows, _rowscale, _same_device, _second_parameter, _vector)

_F32 = torch.float32


def stat_shape(shape, normalized_ndim):
    """mean's and rstd's shape for an x of `shape`: its leading dims, then 1 for each normalized
    dim, as aten.native_layer_norm returns them (so the statistics broadcast against x). The
    fake kernels use it too."""
    _check_normalized_ndim(shape, normalized_ndim)
    return tuple(shape[:len(shape) - normalized_ndim]) + (1,) * normalized_ndim


def forward_key(kind, x, weight, bias, normalized_ndim):
    """The forward's plan key: every shape, dtype and device the general path's checks look at
    (strides aside, which each fast call checks). Devices as torch.device (type and index), so a
    tensor of another device type never matches a CUDA plan."""
    if weight is None:
        if bias is None:
            return kind, x.shape, x.dtype, x.device, normalized_ndim
        return kind, x.shape, x.dtype, x.device, normalized_ndim, None, None, None, bias.shape, bias.dtype, bias.device
    if bias is None:
        return kind, x.shape, x.dtype, x.device, normalized_ndim, weight.shape, weight.dtype, weight.device
    return (kind, x.shape, x.dtype, x.device, normalized_ndim, weight.shape, weight.dtype, weight.device,
            bias.shape, bias.dtype, bias.device)


def forward(kind, x, weight, bias, eps, normalized_ndim, packed=False, plan=None):
    """(y, mean, rstd): y of x's shape and dtype (contiguous), mean (None for RMSNorm) and rstd
    fp32 of stat_shape. kind is _capi.LAYERNORM or _capi.RMSNORM; bias is None for RMSNorm; eps
    a float. packed=True: (y, stats, plan) instead, stats the statistics in one fp32 tensor
    (LayerNorm: [2, *stat_shape], mean then rstd; RMSNorm: rstd) and plan the call's plan (None
    when it has none, M = 0). plan: a plan the caller looked up by forward_key and whose
    tensors it found contiguous (the functional forms do, to skip their own checks)."""
    if plan is None:
        key = forward_key(kind, x, weight, bias, normalized_ndim)
        plan = _plans.get(key)
        if (plan is None or not x.is_contiguous() or (weight is not None and not weight.is_contiguous()) or
                (bias is not None and not bias.is_contiguous())):
            return _forward(kind, x, weight, bias, eps, normalized_ndim, packed, key)
    return _run(plan, x, weight, bias, eps, packed)


def _run(plan, x, weight, bias, eps, packed):
    """The fast call: x, weight and bias contiguous, of the plan's shapes, dtypes and device."""
    y = torch.empty_like(x)  # x is contiguous: so is y
    m = plan.m
    n = plan.n
    if packed:
        stats = x.new_empty(size=plan.packed_shape, dtype=_F32)  # size= (keyword): parsed faster than a tuple
        rstd_ptr = mean_ptr = stats.data_ptr()
        if plan.layer_norm:
            rstd_ptr += 4 * m  # the second M fp32 values
        else:
            mean_ptr = 0
    elif plan.layer_norm:
        mean = x.new_empty(size=plan.stat_shape, dtype=_F32)
        rstd = x.new_empty(size=plan.stat_shape, dtype=_F32)
        mean_ptr = mean.data_ptr()
        rstd_ptr = rstd.data_ptr()
    else:
        mean = None
        rstd = x.new_empty(size=plan.stat_shape, dtype=_F32)
        mean_ptr = 0
        rstd_ptr = rstd.data_ptr()
    device = plan.device
    stream = _raw_stream(device)
    # Only the legacy and per-thread default streams take their device from the current context.
    pushed = stream <= _LAST_SPECIAL_STREAM and push_context(device)
    try:
        a, address = _capi.thread_forward_args()
        _capi.FORWARD_ARGS.pack_into(a, 0, m, x.data_ptr(), n, 0 if weight is None else weight.data_ptr(),
                                     0 if bias is None else bias.data_ptr(), y.data_ptr(), n, mean_ptr, rstd_ptr, eps)
        status = plan.forward(plan.engine, plan.problem_address, address, stream)
    finally:
        if pushed:
            pop_context()
    if status != _capi.OK:
        _capi.check(status)  # on this thread: the library's message is thread-local
    if packed:
        return y, stats, plan
    return y, mean, rstd


def _parameters(weight, bias, x, n, affine, keep):
    """The addresses of weight and bias (0 where None), each checked against x and made one
    contiguous row of affine's dtype (a copy only for odd strides), appended to keep: held until
    the launch is queued, a copy's memory is then reused stream-ordered."""
    ptrs = []
    for t, name in ((weight, "weight"), (bias, "bias")):
        if t is None:
            ptrs.append(0)
            continue
        _same_device(t, x, name)
        row = _vector(t, n, affine.dtype, name)
        keep.append(row)
        ptrs.append(row.data_ptr())
    return ptrs


def _queue(kind, problem, args_address, device):
    """The general and fused paths' launch: the forward of `problem` (a ctypes struct) with the
    nj_forward_args at args_address, on the current stream of x's device; raises the library's
    error. (The fast path, _run, spells this out: its host time is what the bench measures.)"""
    engine = _capi.default_engine()
    stream = _raw_stream(device)
    # Only the legacy and per-thread default streams take their device from the current context.
    pushed = stream <= _LAST_SPECIAL_STREAM and push_context(device)
    try:
        status = engine.raw_forward[kind](engine.address, ctypes.addressof(problem), args_address, stream)
    finally:
        if pushed:
            pop_context()
    if status != _capi.OK:
        _capi.check(status)  # on this thread: the library's message is thread-local


def _cuda_rows(x, normalized_ndim):
    """x's shape, its row length N, the statistics' shape and the number of rows M; x must be a
    CUDA tensor."""
    if not x.is_cuda:
        raise ValueError("normjit: x is on %s; normjit's kernels run on CUDA tensors." % x.device)
    shape = x.shape
    n = _normalized_size(shape, normalized_ndim)
    return shape, n, stat_shape(shape, normalized_ndim), x.numel() // n


def _forward(kind, x, weight, bias, eps, normalized_ndim, packed, key):
    """The general path: every check, rows copied where their strides need it; a call with M > 0
    leaves a plan under key."""
    shape, n, stats, m = _cuda_rows(x, normalized_ndim)
    has_weight = weight is not None
    has_bias = bias is not None
    affine = weight if has_weight else bias
    keep = []  # the parameters' rows (copies only for odd strides), held until the launch is queued
    w_ptr, b_ptr = _parameters(weight, bias, x, n, affine, keep)
    # The backward's problem with dy in x's dtype: the forward ignores dy_dtype, so both share it.
    problem_key = (kind, n, x.dtype, x.dtype, None if affine is None else affine.dtype, has_weight, has_bias)
    p = _problem(problem_key, kind, n, x, x, affine, has_weight, has_bias)
    rows, x_stride = _rows(x, n, "x")
    y = x.new_empty(size=shape)
    layer_norm = kind == _capi.LAYERNORM
    if packed:
        out = x.new_empty(size=((2,) + stats) if layer_norm else stats, dtype=_F32)
        rstd_ptr = mean_ptr = out.data_ptr()
        if layer_norm:
            rstd_ptr += 4 * m
        else:
            mean_ptr = 0
    else:
        mean = x.new_empty(size=stats, dtype=_F32) if layer_norm else None
        rstd = x.new_empty(size=stats, dtype=_F32)
        mean_ptr = 0 if mean is None else mean.data_ptr()
        rstd_ptr = rstd.data_ptr()
    a, address = _capi.thread_forward_args()
    _capi.FORWARD_ARGS.pack_into(a, 0, m, rows.data_ptr(), x_stride, w_ptr, b_ptr, y.data_ptr(), n, mean_ptr, rstd_ptr,
                                 float(eps))
    device = x.get_device()
    _queue(kind, p, address, device)
    plan = None
    if m > 0:
        # A plan of this key may be there already (this call's strides kept it from the fast
        # path): it stays, with the backward's workspace size it may have learned. A new one does
        # not know that size yet; the first backward through _launch.backward_packed finds it.
        plan = _plans.get(key) or _new_plan(key, kind, p, m, n, device, x, normalized_ndim, weight, bias, None,
                                            (problem_key, m, device))
    if packed:
        return y, out, plan
    return y, mean, rstd



# ---- the fused options ---------------------------------------------------------------------------
#
# One call's options as the public functions pass them on (a namedtuple: torch.compile traces its
# construction), already checked for what only Python can see (_ops._forward_options):
#   residual: [..., N] in x's dtype, added to the branch. rowscale: one scale per row (fp32, other
#   floating dtypes converted). dropout: _capi.DROPOUT_* (NONE: off; on, the form of the mask
#   written, BYTES when none is), dropout_p, dropout_seed, dropout_offset (0 <= seed, offset < 2^64;
#   all 0 when off), write_mask: write the keep-mask (dropout on). z, gate: the gated RMSNorm's
#   input (x's shape and dtype) and _capi.GATE_*. parallel: a second output y1 = norm(h) * weight1
#   (+ bias1), weight1/bias1 given exactly when weight/bias are. zero_centered_weight: weight (and
#   weight1) stored as gamma - 1. y_dtype: y's (and y1's) torch dtype, None for x's.
ForwardFused = collections.namedtuple("ForwardFused", ("residual", "rowscale", "dropout", "dropout_p", "dropout_seed",
                                                       "dropout_offset", "write_mask", "z", "gate", "weight1", "bias1",
                                                       "parallel", "zero_centered_weight", "y_dtype"))


def forms_h(residual, rowscale, dropout):
    """Whether h = dropout(x) * rowscale + residual is formed (and written): x itself otherwise."""
    return residual is not None or rowscale is not None or dropout != _capi.DROPOUT_NONE


def mask_row_bytes(n, dropout):
    """Bytes of one row of the keep-mask of N elements: N as bytes, ceil(N/8) as bits."""
    return (n + 7) // 8 if dropout == _capi.DROPOUT_BITS else n


def mask_shape(shape, normalized_ndim, dropout):
    """The keep-mask's shape for an x of `shape`: bytes, x's own; bits, x's leading dims and then
    ceil(N/8) bytes a row. Exactly what the backward's dropout_mask= / dropout_mask_bits= take."""
    if dropout != _capi.DROPOUT_BITS:
        return tuple(shape)
    lead = len(shape) - normalized_ndim
    n = 1
    for s in shape[lead:]:
        n *= s
    return tuple(shape[:lead]) + (mask_row_bytes(n, dropout),)


def forward_fused(kind, x, weight, bias, eps, normalized_ndim, fused):
    """The forward with fused options (a ForwardFused): (y, mean, rstd, h, mask, y1), y (and y1) in
    fused.y_dtype (x's when None), contiguous; mean (None for RMSNorm) and rstd fp32 of stat_shape;
    h in x's dtype and shape when forms_h says it is formed, the keep-mask (uint8, mask_shape) when fused.write_mask,
    y1 when fused.parallel, each None otherwise. Every check before the launch; no plan."""
    shape, n, stats, m = _cuda_rows(x, normalized_ndim)
    lead = shape[:len(shape) - normalized_ndim]
    has_weight = weight is not None
    has_bias = bias is not None
    affine = weight if has_weight else bias
    # keep: the parameters' and inputs' rows (copies only for odd strides), held until the launch is
    # queued; a copy's memory is then reused stream-ordered.
    keep = []
    w_ptr, b_ptr = _parameters(weight, bias, x, n, affine, keep)
    y_dtype = x.dtype if fused.y_dtype is None else fused.y_dtype
    y = x.new_empty(size=shape, dtype=y_dtype)
    flags = (int(fused.residual is not None), int(bool(fused.zero_centered_weight)), int(fused.rowscale is not None),
             fused.dropout, fused.gate, int(bool(fused.parallel)), 0)
    # The backward's problem with dy in y's dtype (what the backward's dy, the gradient of y, has).
    problem_key = (kind, n, x.dtype, y_dtype, None if affine is None else affine.dtype, has_weight, has_bias) + flags
    p = _problem(problem_key, kind, n, x, y, affine, has_weight, has_bias, flags)
    rows, x_stride = _rows(x, n, "x")
    res_ptr, res_stride = 0, 0
    if fused.residual is not None:
        res_ptr, res_stride = _read_rows(fused.residual, "residual", x, "x", x, n, keep, "x",
                                         "the residual is added in x's dtype.",
                                         "it is the residual stream added to the branch x, element by element.")
    rs_ptr = 0
    if fused.rowscale is not None:
        rs_ptr = _rowscale(fused.rowscale, x, m, lead, keep)
    z_ptr, z_stride = 0, 0
    if fused.z is not None:
        z_ptr, z_stride = _read_rows(fused.z, "z", x, "x", x, n, keep, "x", "the gate's input is read in x's dtype.",
                                     "the gate's input has one value per element of x.")
    w1_ptr = b1_ptr = 0
    y1 = None
    if fused.parallel:
        w1 = _second_parameter(fused.weight1, has_weight, n, affine, x, "weight1", "weight")
        b1 = _second_parameter(fused.bias1, has_bias, n, affine, x, "bias1", "bias")
        if w1 is not None:
            keep.append(w1)
            w1_ptr = w1.data_ptr()
        if b1 is not None:
            keep.append(b1)
            b1_ptr = b1.data_ptr()
        y1 = x.new_empty(size=shape, dtype=y_dtype)
    h = None
    if forms_h(fused.residual, fused.rowscale, fused.dropout):
        h = x.new_empty(size=shape)
    mask = None
    mask_stride = 0
    if fused.write_mask:
        mask = x.new_empty(size=mask_shape(shape, normalized_ndim, fused.dropout), dtype=torch.uint8)
        mask_stride = mask_row_bytes(n, fused.dropout)
    layer_norm = kind == _capi.LAYERNORM
    mean = x.new_empty(size=stats, dtype=_F32) if layer_norm else None
    rstd = x.new_empty(size=stats, dtype=_F32)
    dropout = fused.dropout != _capi.DROPOUT_NONE
    # One constructor call, fields in header order; a struct of this call's own.
    a = _capi.ForwardArgs(m, rows.data_ptr(), x_stride, w_ptr, b_ptr, y.data_ptr(), n,
                          0 if mean is None else mean.data_ptr(), rstd.data_ptr(), float(eps),
                          res_ptr, res_stride, 0 if h is None else h.data_ptr(), n if h is not None else 0, rs_ptr,
                          0 if mask is None else mask.data_ptr(), mask_stride,
                          float(fused.dropout_p) if dropout else 0.0, fused.dropout_seed if dropout else 0,
                          fused.dropout_offset if dropout else 0, z_ptr, z_stride, w1_ptr, b1_ptr,
                          0 if y1 is None else y1.data_ptr(), n if y1 is not None else 0)
    _queue(kind, p, ctypes.addressof(a), x.get_device())
    del keep
    return y, mean, rstd, h, mask, y1
