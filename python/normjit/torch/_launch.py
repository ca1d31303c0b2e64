"""One normjit backward on torch tensors: the C structs filled from tensors, the workspace from
PyTorch's caching allocator, the launch on the current stream. Eager only: the custom ops
(_ops.py) call this, and so do the public functions and the autograd Functions when nothing is
tracing.

Two ways through, for the host time of a kernel-cache hit (bench/python_overhead.py):
- the general one (_backward): every check, any strides, the fused options; a call without
  fused options that it completes leaves a _Plan under the call's _plan_key;
- the fast one (_run): a call whose key has a plan and whose x, dy, statistics and weight are
  contiguous needs none of those checks again (the key holds every shape and dtype they looked
  at), so it allocates the outputs, packs the C args into a per-thread struct and calls the C
  entry point with addresses only.
The autograd Functions' backward (backward_packed) takes the forward's plan instead of a key of
its own: their forward (_launch_forward) saved the statistics packed in one tensor, and the plan
it looked up already covers x, the parameters and the statistics.
The checks and conversions up to the C structs (_normalized_size, _rows, _vector, _problem, the
stream and context handling) and the plans serve the forward too (_launch_forward.py).
"""
import collections
import ctypes

import torch

from .. import _capi
from ._context import is_capturing, pop_context, push_context

_NJ_DTYPE = {torch.float32: _capi.F32, torch.float16: _capi.F16, torch.bfloat16: _capi.BF16}
# (problem fields, m, device) -> workspace bytes. Sizes depend on the device and the tuning
# database; a database that changes mid-run is handled by the engine (it falls back to a
# kernel that fits) and by the retry in _backward.
_workspace_bytes = {}
# CUstream handles that are not streams of their own: the legacy default stream (0, what
# torch's default stream is), CU_STREAM_LEGACY (1) and CU_STREAM_PER_THREAD (2). The library
# finds the device of these from the thread's current context, so only for these must that be
# x's device's context; any other stream names its context itself (cuStreamGetCtx).
_LAST_SPECIAL_STREAM = 2

try:  # The int handle without building a torch.cuda.Stream object (what Inductor calls too).
    from torch._C import _cuda_getCurrentRawStream as _raw_stream
except ImportError:  # pragma: no cover - older torch
    def _raw_stream(device):
        return torch.cuda.current_stream(device).cuda_stream


def _nj_dtype(t, name):
    d = _NJ_DTYPE.get(t.dtype)
    if d is None:
        raise TypeError("normjit: %s has dtype %s; normjit takes float32, float16 and bfloat16. "
                        "Cast it, or use torch's own norm for this dtype." % (name, t.dtype))
    return d


def _check_normalized_ndim(shape, normalized_ndim):
    if not 1 <= normalized_ndim <= len(shape):
        raise ValueError("normjit: normalized_ndim = %d for a %d-D x; it counts x's trailing dims that are "
                         "normalized (1 for [..., N])." % (normalized_ndim, len(shape)))


def _normalized_size(shape, normalized_ndim):
    """N: the product of x's last normalized_ndim dims (the rows are the leading dims, flattened)."""
    if normalized_ndim == 1 and len(shape) >= 1:
        n = shape[-1]
    else:
        _check_normalized_ndim(shape, normalized_ndim)
        n = 1
        for s in shape[len(shape) - normalized_ndim:]:
            n *= s
    if n == 0:
        raise ValueError("normjit: the normalized size N is 0 (x has shape %s); N must be at least 1."
                         % (tuple(shape),))
    return n


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
        raise TypeError("normjit: %s is %s but the weight is %s; the norm's parameters (weight, bias, and weight1, "
                        "bias1 of parallel norms) share one dtype." % (name, t.dtype, dtype))
    if t.dim() == 1 and t.is_contiguous():
        return t  # the usual case, without a reshape
    return t.reshape(-1).contiguous()


def _problem(key, kind, n, x, dy, affine, has_weight, has_bias, flags=None):
    """The nj_problem for this call, built once per distinct problem and then shared (the C API
    only reads it; filling a ctypes struct field by field costs microseconds). flags: the fused
    options' problem fields (_flags), or None."""
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
        if flags is not None:
            (p.residual, p.zero_centered_weight, p.rowscale, p.dropout, p.gate, p.parallel,
             p.recompute_from_output) = flags
        _problems[key] = p
    return p


_problems = {}


# The fused options of one call (docs/FUSED.md), as the public functions pass them on (a
# namedtuple: torch.compile traces its construction; a class of our own might break the graph).
#   dresidual: [..., N] in dx's dtype (x's), added to dh; inplace_residual: write dx into it.
#   zero_centered_weight: the weight is stored as gamma - 1. rowscale: one value per row.
#   dropout_mask: the keep-mask, bytes ([..., N], bool/uint8) or, when dropout_bits, bits
#   ([..., ceil(N/8)] uint8); dropout_p: the forward's drop probability. write_dh: also write
#   dh (the C API's dresidual_in); asked for only with rowscale or dropout.
#   z: the gate's input (x's shape and dtype), gate: _capi.GATE_* (RMSNorm only; dz is written).
#   dy1, weight1, bias1: the second of two parallel norms of x (dy1 of dy's shape and dtype,
#   weight1/bias1 like weight/bias; bias1, as bias, is only checked: it says dbias1 is wanted).
#   y: the forward's output (x's shape and dtype): recompute x-hat = (y - bias) / weight from it
#   (the C API's recompute_from_output); x is then optional (None, or the fallback where
#   weight = 0), and bias (beta) is read, not only checked.
Fused = collections.namedtuple("Fused", ("dresidual", "inplace_residual", "zero_centered_weight", "rowscale",
                                         "dropout_mask", "dropout_bits", "dropout_p", "write_dh", "z", "gate",
                                         "dy1", "weight1", "bias1", "y"))


def _flags(fused):
    """The problem fields of the fused options: (residual, zero_centered_weight, rowscale, dropout, gate,
    parallel, recompute_from_output)."""
    dropout = _capi.DROPOUT_NONE
    if fused.dropout_mask is not None:
        dropout = _capi.DROPOUT_BITS if fused.dropout_bits else _capi.DROPOUT_BYTES
    return (int(fused.dresidual is not None), int(bool(fused.zero_centered_weight)), int(fused.rowscale is not None),
            dropout, fused.gate, int(fused.dy1 is not None), int(fused.y is not None))


def _same_device(t, x, name):
    if t.device != x.device:
        raise ValueError("normjit: %s is on %s but x is on %s; pass it on x's device (%s.to(x.device))."
                         % (name, t.device, x.device, name))


def _in_place_rows(t, n):
    """dresidual's rows for writing dx into them: an [M, N] view with unit inner stride and
    rows that do not overlap, and its row stride; never a copy (that would lose the result)."""
    try:
        v = t if t.dim() == 2 and t.size(1) == n else t.view(-1, n)
    except RuntimeError:
        v = None
    rows = 0 if v is None else v.size(0)
    if v is None or (rows > 0 and n > 1 and v.stride(1) != 1) or (rows > 1 and v.stride(0) < n):
        raise ValueError("normjit: inplace_residual=True writes dx into dresidual, but dresidual (shape %s, strides "
                         "%s) has no row layout normjit can write in place (rows of N = %d elements with unit "
                         "inner stride that do not overlap). Pass a contiguous dresidual (or a slice of padded "
                         "rows), or inplace_residual=False to get dx in a new tensor."
                         % (tuple(t.shape), tuple(t.stride()), n))
    if t.is_contiguous():
        return t, n
    return v, (v.stride(0) if rows > 1 else n)


def _like(t, name, ref, ref_name, x, dtype_name, dtype_why, shape_why):
    """Checks a fused tensor that is read row for row with x against its model ref (device: x's;
    dtype and shape: ref's), in the words of each: dtype_name is whose dtype ref's stands for."""
    _same_device(t, x, name)
    if t.dtype != ref.dtype:
        raise TypeError("normjit: %s is %s but %s is %s; %s Cast it: %s.to(%s.dtype)."
                        % (name, t.dtype, dtype_name, ref.dtype, dtype_why, name, ref_name))
    if t.shape != ref.shape:
        raise ValueError("normjit: %s has shape %s but %s has %s; %s"
                         % (name, tuple(t.shape), ref_name, tuple(ref.shape), shape_why))


def _read_rows(t, name, ref, ref_name, x, n, keep, dtype_name, dtype_why, shape_why):
    """A fused input read row for row with x, checked as _like does: (its rows' address, their
    stride), the rows (a copy where _rows needs one) appended to keep."""
    _like(t, name, ref, ref_name, x, dtype_name, dtype_why, shape_why)
    rows, stride = _rows(t, n, name)
    keep.append(rows)
    return rows.data_ptr(), stride


def _second_parameter(t, given, n, affine, x, name, first):
    """weight1 or bias1 checked against the first norm's parameter (both norms have it, or neither,
    in one dtype: the C API's problem has one has_weight, has_bias and weight dtype): its contiguous
    values, or None."""
    if (t is None) != (not given):
        raise ValueError("normjit: %s is %s but %s is %s; the two parallel norms both have a %s or neither "
                         "(the C API's has_%s holds for both)." % (name, "None" if t is None else "given", first,
                                                                   "given" if given else "None", first, first))
    if t is None:
        return None
    _same_device(t, x, name)
    return _vector(t, n, affine.dtype, name)


def _rowscale(rs, x, m, lead, keep):
    """rowscale checked against x's M rows: the address of its M contiguous fp32 values (a converted
    copy where it is another floating dtype or strided, appended to keep). The backward's and the
    forward's."""
    _same_device(rs, x, "rowscale")
    if not rs.is_floating_point():
        raise TypeError("normjit: rowscale is %s; it holds one float32 scale per row (other floating dtypes are "
                        "converted). Cast it: rowscale.float()." % rs.dtype)
    if rs.numel() != m:
        raise ValueError("normjit: rowscale has %d values for %d rows; pass one scale per row ([M], [..., 1] "
                         "or x's leading dims %s)." % (rs.numel(), m, tuple(lead)))
    if rs.dtype != torch.float32 or not rs.is_contiguous():
        rs = rs.float().contiguous()
    keep.append(rs)
    return rs.data_ptr()


def _fused_args(fused, x, dy, weight, bias, n, m, lead):
    """Checks the fused tensors against x (device, dtype, shape: what the C API cannot see; x is y
    when recomputing from the output without x) and returns (dx, dx_stride, the args fields from
    dresidual on, outputs, tensors to keep alive); outputs are (dh, dz, dweight1, dbias1), each None
    when not asked for."""
    keep = []
    dres_ptr = None
    dres_stride = 0
    dx = None
    dx_stride = n
    if fused.dresidual is not None:
        r = fused.dresidual
        _like(r, "dresidual", x, "x", x, "dx", "the residual gradient is added in dx's dtype (x's).",
              "it is the gradient of the norm's input from the residual stream and must match x.")
        if fused.inplace_residual:
            rows, dres_stride = _in_place_rows(r, n)
            dx, dx_stride = r, dres_stride
        else:
            rows, dres_stride = _rows(r, n, "dresidual")
        keep.append(rows)
        dres_ptr = rows.data_ptr()
    elif fused.inplace_residual:
        raise ValueError("normjit: inplace_residual=True but dresidual is None; pass the residual gradient as "
                         "dresidual= to accumulate dx into it, or drop inplace_residual.")
    if dx is None:
        dx = torch.empty_like(x, memory_format=torch.contiguous_format)
    rs_ptr = None
    if fused.rowscale is not None:
        rs_ptr = _rowscale(fused.rowscale, x, m, lead, keep)
    mask_ptr = None
    mask_stride = 0
    if fused.dropout_mask is not None:
        mk = fused.dropout_mask
        _same_device(mk, x, "dropout_mask_bits" if fused.dropout_bits else "dropout_mask")
        if fused.dropout_bits:
            nb = (n + 7) // 8
            want = tuple(lead) + (nb,)
            if mk.dtype != torch.uint8:
                raise TypeError("normjit: dropout_mask_bits is %s; it is a bit-packed keep-mask in uint8 (bit j of "
                                "byte k of a row is element 8k + j, least significant bit first)." % mk.dtype)
            if tuple(mk.shape) != want:
                raise ValueError("normjit: dropout_mask_bits has shape %s; for x of shape %s (N = %d) it must be "
                                 "%s: x's leading dims, then ceil(N/8) = %d bytes a row."
                                 % (tuple(mk.shape), tuple(x.shape), n, want, nb))
            rows, mask_stride = _rows(mk, nb, "dropout_mask_bits")
        else:
            if mk.dtype != torch.bool and mk.dtype != torch.uint8:
                raise TypeError("normjit: dropout_mask is %s; it is a keep-mask of one byte per element (bool or "
                                "uint8, nonzero = kept). Cast it: dropout_mask.to(torch.uint8), or pass a "
                                "bit-packed mask as dropout_mask_bits=." % mk.dtype)
            if mk.shape != x.shape:
                raise ValueError("normjit: dropout_mask has shape %s but x has %s; it holds one byte per element "
                                 "of x (for a bit-packed mask use dropout_mask_bits=)."
                                 % (tuple(mk.shape), tuple(x.shape)))
            rows, mask_stride = _rows(mk, n, "dropout_mask")
        keep.append(rows)
        mask_ptr = rows.data_ptr()
    dh = None
    dh_ptr = None
    if fused.write_dh:
        dh = torch.empty_like(x, memory_format=torch.contiguous_format)
        dh_ptr = dh.data_ptr()
    z_ptr = dz_ptr = dz = None
    z_stride = 0
    if fused.z is not None:
        z_ptr, z_stride = _read_rows(fused.z, "z", x, "x", x, n, keep, "x", "the gate's input is read in x's dtype.",
                                     "the gate's input has one value per element of x.")
        dz = torch.empty_like(x, memory_format=torch.contiguous_format)  # dx's dtype, which is x's
        dz_ptr = dz.data_ptr()
    dy1_ptr = w1_ptr = dw1_ptr = db1_ptr = dweight1 = dbias1 = None
    dy1_stride = 0
    if fused.dy1 is not None:
        dy1_ptr, dy1_stride = _read_rows(fused.dy1, "dy1", dy, "dy", x, n, keep, "dy",
                                         "the second norm's output gradient is read in dy's dtype.",
                                         "it is the second norm's output gradient and must match dy.")
        affine = weight if weight is not None else bias
        w1 = _second_parameter(fused.weight1, weight is not None, n, affine, x, "weight1", "weight")
        if w1 is not None:
            keep.append(w1)
            w1_ptr = w1.data_ptr()
            dweight1 = torch.empty_like(fused.weight1, memory_format=torch.contiguous_format)
            dw1_ptr = dweight1.data_ptr()
        if _second_parameter(fused.bias1, bias is not None, n, affine, x, "bias1", "bias") is not None:
            dbias1 = torch.empty_like(fused.bias1, memory_format=torch.contiguous_format)
            db1_ptr = dbias1.data_ptr()
    y_ptr = beta_ptr = None
    y_stride = 0
    if fused.y is not None:
        # _backward checked y against x (or made it the model when x is None).
        rows, y_stride = _rows(fused.y, n, "y")
        keep.append(rows)
        y_ptr = rows.data_ptr()
        if bias is not None:  # beta, read to recover x-hat (y = x-hat * weight + bias)
            affine = weight if weight is not None else bias
            beta = _vector(bias, n, affine.dtype, "bias")
            keep.append(beta)
            beta_ptr = beta.data_ptr()
    fields = (dres_ptr, dres_stride, rs_ptr, mask_ptr, mask_stride, float(fused.dropout_p), dh_ptr,
              n if dh_ptr else 0, z_ptr, z_stride, dz_ptr, n if dz_ptr else 0, dy1_ptr, dy1_stride, w1_ptr, dw1_ptr,
              db1_ptr, y_ptr, y_stride, beta_ptr)
    return dx, dx_stride, fields, (dh, dz, dweight1, dbias1), keep


# ---- the workspace, one per (device, stream) -------------------------------------------------
#
# Kernels queued on one stream run in order, so every call on that stream can use the same
# workspace: it is allocated on that stream (the current one of x's device, which is where the
# kernel runs) and grown when a call needs more. Freeing it (growth, or too many streams) is
# stream-ordered in PyTorch's caching allocator: the memory goes only to work queued on that
# stream afterwards. A caller holds the entry it used until its launch is queued, so another
# thread growing the same stream's entry meanwhile cannot free it under that launch.
# During CUDA-graph capture each call gets its own workspace from the graph's pool instead: a
# graph keeps the addresses it captured, and a cached one could be grown and freed later.
_workspaces = {}  # (device, stream) -> (tensor, address, bytes)
_MAX_WORKSPACE_STREAMS = 64  # streams made and dropped in a loop would otherwise pin memory


def _workspace(device, stream, nbytes, like):
    """(tensor, address, bytes >= nbytes) of workspace for a launch on `stream` of cuda:device;
    `like` is a tensor on that device."""
    if stream > _LAST_SPECIAL_STREAM and is_capturing(stream, device):
        t = torch.empty(nbytes, dtype=torch.uint8, device=like.device)
        return t, t.data_ptr(), nbytes
    key = (device, stream)
    entry = _workspaces.get(key)
    if entry is None or entry[2] < nbytes:
        if entry is None and len(_workspaces) >= _MAX_WORKSPACE_STREAMS:
            _workspaces.clear()
        # Doubling: M growing a little at a time (sequence lengths) reallocates a few times, not
        # at each new M.
        size = nbytes if entry is None else max(nbytes, 2 * entry[2])
        t = torch.empty(size, dtype=torch.uint8, device=like.device)
        entry = _workspaces[key] = (t, t.data_ptr(), size)
    return entry


def clear_workspaces():
    """Drops the cached workspaces (one per device and stream used), so torch.cuda.empty_cache()
    can return their memory. The next call on each stream allocates one again."""
    _workspaces.clear()


# ---- the fast paths: plans ---------------------------------------------------------------------
#
# A plan is what a call needs beyond its tensors' addresses, taken from the first call of its key,
# which the general path checked in full: the nj_problem (by address), the C entry points, M, N,
# the device, the shapes of the outputs. Keys hold every shape, dtype and device the general
# path's checks look at, so two calls of one key pass or fail them alike; strides are not in the
# keys, and each fast call checks that its tensors are contiguous. The backward's plans are keyed
# by _plan_key, the forward's by _launch_forward.forward_key; one _Plan class and one dict serve
# both (the keys cannot collide: their lengths differ). A forward plan also serves that call's
# backward through the autograd Functions (backward_packed): its problem is the backward's with
# dy in x's dtype, and it learns the backward's workspace size from the first such backward.

class _Plan:
    __slots__ = ("problem", "problem_address", "engine", "forward", "backward", "layer_norm", "m", "n",
                 "device", "dtype", "shape", "normalized_shape", "stat_shape", "packed_shape", "weight_shape",
                 "bias_shape", "workspace_bytes", "workspace_key")


_plans = {}
_MAX_PLANS = 4096  # many distinct shapes (varying sequence lengths): start again


def _new_plan(key, kind, p, m, n, device, x, normalized_ndim, weight, bias, workspace_bytes, workspace_key):
    """Keeps and returns a _Plan under key for a call the general path completed: p is its
    nj_problem, workspace_bytes the backward's workspace size (None while unknown) and
    workspace_key its entry in _workspace_bytes."""
    engine = _capi.default_engine()
    plan = _Plan()
    plan.problem = p  # keeps the struct alive for problem_address
    plan.problem_address = ctypes.addressof(p)
    plan.engine = engine.address
    plan.forward = engine.raw_forward[kind]
    plan.backward = engine.raw_backward[kind]
    plan.layer_norm = kind == _capi.LAYERNORM
    plan.m = m
    plan.n = n
    plan.device = device
    plan.dtype = x.dtype
    shape = plan.shape = x.shape
    lead = len(shape) - normalized_ndim
    plan.normalized_shape = tuple(shape[lead:])
    plan.stat_shape = tuple(shape[:lead]) + (1,) * normalized_ndim
    plan.packed_shape = (2,) + plan.stat_shape if plan.layer_norm else plan.stat_shape
    plan.weight_shape = None if weight is None else weight.shape
    plan.bias_shape = None if bias is None else bias.shape
    plan.workspace_bytes = workspace_bytes
    plan.workspace_key = workspace_key
    if len(_plans) >= _MAX_PLANS:
        _plans.clear()
    _plans[key] = plan
    return plan


def _plan_key(kind, dy, x, weight, bias, mean, rstd, normalized_ndim):
    """The backward's key: every shape and dtype the general path's checks look at, and x's
    device (strides aside, which backward() checks per call)."""
    return (kind, x.shape, dy.shape, x.dtype, dy.dtype, x.device, normalized_ndim,
            None if weight is None else weight.shape, None if weight is None else weight.dtype,
            None if bias is None else bias.shape, None if bias is None else bias.dtype,
            None if mean is None else mean.shape, None if mean is None else mean.dtype,
            rstd.shape, rstd.dtype)


def _keep_plan(key, kind, p, m, n, device, x, weight, bias, mean, rstd, normalized_ndim, nbytes, workspace_key):
    """After a general call without fused options succeeded: a plan for its key, when the fast
    path could serve the key (statistics already fp32; the general path converts others)."""
    if m == 0 or rstd.dtype != torch.float32 or (mean is not None and mean.dtype != torch.float32):
        return
    _new_plan(key, kind, p, m, n, device, x, normalized_ndim, weight, bias, nbytes, workspace_key)


def _run(plan, dy, x, weight, bias, mean_ptr, rstd_ptr):
    """The fast path's call, x and weight contiguous: (dx, dweight, dbias), or None when the
    library asks for a larger workspace than the plan knew of (the tuning database changed): the
    caller then takes the general path, which sizes it again."""
    n = plan.n
    dx = torch.empty_like(x)  # x is contiguous: so is dx, in x's dtype and on its device
    if weight is None:
        dweight = None
        w_ptr = dw_ptr = 0
    else:
        dweight = weight.new_empty(size=plan.weight_shape)  # size= (keyword): parsed faster than a tuple
        w_ptr = weight.data_ptr()
        dw_ptr = dweight.data_ptr()
    if bias is None:
        dbias = None
        db_ptr = 0
    else:
        dbias = bias.new_empty(size=plan.bias_shape)  # contiguous whatever bias's strides (bias is never read)
        db_ptr = dbias.data_ptr()
    device = plan.device
    stream = _raw_stream(device)
    nbytes = plan.workspace_bytes
    ws = None
    ws_ptr = 0
    if nbytes:
        ws, ws_ptr, nbytes = _workspace(device, stream, nbytes, x)
    pushed = stream <= _LAST_SPECIAL_STREAM and push_context(device)
    try:
        a, address = _capi.thread_args()
        _capi.ARGS_HEAD.pack_into(a, 0, plan.m, x.data_ptr(), n, dy.data_ptr(), n, mean_ptr, rstd_ptr, w_ptr,
                                  dx.data_ptr(), n, dw_ptr, db_ptr, ws_ptr, nbytes)
        status = plan.backward(plan.engine, plan.problem_address, address, stream)
    finally:
        if pushed:
            pop_context()
    del ws  # held until the launch was queued (see _workspace)
    if status == _capi.OK:
        return dx, dweight, dbias
    if status == _capi.WORKSPACE:
        # Sized again by the general path, after which the plan learns the new size.
        _workspace_bytes.pop(plan.workspace_key, None)
        plan.workspace_bytes = None
        return None
    _capi.check(status)


def backward(kind, dy, x, weight, bias, mean, rstd, normalized_ndim, fused=None):
    """Returns (dx, dweight or None, dbias or None); dx has x's shape and dtype, dweight/dbias
    the weight's (x may be None when fused.y is given). kind is _capi.LAYERNORM or _capi.RMSNORM.
    With fused (a Fused), returns
    (dx, dweight, dbias, dh, dz, dweight1, dbias1), each of the last four None unless asked for,
    dx being fused.dresidual itself when inplace_residual."""
    key = None
    if fused is None and x is not None:
        key = _plan_key(kind, dy, x, weight, bias, mean, rstd, normalized_ndim)
        plan = _plans.get(key)
        if (plan is not None and plan.workspace_bytes is not None and x.is_contiguous() and dy.is_contiguous() and
                rstd.is_contiguous() and (mean is None or mean.is_contiguous()) and
                (weight is None or weight.is_contiguous())):
            out = _run(plan, dy, x, weight, bias, 0 if mean is None else mean.data_ptr(), rstd.data_ptr())
            if out is not None:
                return out
    return _backward(kind, dy, x, weight, bias, mean, rstd, normalized_ndim, fused, key)


def backward_packed(plan, kind, dy, x, weight, bias, stats, normalized_ndim):
    """The backward of the autograd Functions' eager forward (_launch_forward.forward with
    packed=True): stats is its packed fp32 statistics (LayerNorm: mean and rstd stacked, [2, ...];
    RMSNorm: rstd) and plan its plan, None when it had none. Autograd hands dy in y's shape and
    dtype (x's); a call with a plan that knows the workspace and contiguous dy is a fast call,
    any other goes through backward() with the statistics as the views the ops take."""
    if (plan is not None and plan.workspace_bytes is not None and dy.is_contiguous() and x.is_contiguous() and
            (weight is None or weight.is_contiguous()) and dy.dtype == plan.dtype and dy.shape == plan.shape):
        p = stats.data_ptr()
        if plan.layer_norm:
            out = _run(plan, dy, x, weight, bias, p, p + 4 * plan.m)  # rstd: the second M fp32 values
        else:
            out = _run(plan, dy, x, weight, bias, 0, p)
        if out is not None:
            return out
    if kind == _capi.LAYERNORM:
        mean, rstd = stats[0], stats[1]
    else:
        mean, rstd = None, stats
    out = backward(kind, dy, x, weight, bias, mean, rstd, normalized_ndim)
    if plan is not None:
        plan.workspace_bytes = _workspace_bytes.get(plan.workspace_key)
    return out


def _backward(kind, dy, x, weight, bias, mean, rstd, normalized_ndim, fused, plan_key):
    """The general path: every check, copies where strides need them, the fused options. With
    plan_key (a call without fused options), a successful call leaves a plan for the fast path."""
    x_given = x
    y = None if fused is None else fused.y
    if y is not None:
        # Recompute from the output: y stands where x would (x, when given, is only read where
        # the weight is 0, and must match y).
        if x is not None:
            _like(y, "y", x, "x", x, "x", "the forward's output is read in x's dtype.",
                  "it is the norm's output, one value per element of x.")
        x = y
    elif x is None:
        raise ValueError("normjit: x is None; pass x, or the forward's output as y= to recompute x-hat from it.")
    if not x.is_cuda:
        raise ValueError("normjit: x is on %s; normjit's kernels run on CUDA tensors." % x.device)
    shape = x.shape
    if dy.shape != shape:
        raise ValueError("normjit: dy has shape %s but x has %s; they must match." % (tuple(dy.shape), tuple(shape)))
    n = _normalized_size(shape, normalized_ndim)
    m = x.numel() // n
    device = x.get_device()
    affine = weight if weight is not None else bias
    has_weight = weight is not None
    has_bias = bias is not None
    problem_key = (kind, n, x.dtype, dy.dtype, None if affine is None else affine.dtype, has_weight, has_bias)
    flags = None
    if fused is not None:
        flags = _flags(fused)
        problem_key += flags
    p = _problem(problem_key, kind, n, x, dy, affine, has_weight, has_bias, flags)

    x_ptr, x_stride = None, 0
    if x_given is not None:
        x2, x_stride = _rows(x_given, n, "x")
        x_ptr = x2.data_ptr()
    dy2, dy_stride = _rows(dy, n, "dy")
    if fused is None:
        dx = torch.empty_like(x, memory_format=torch.contiguous_format)
        dx_stride = n
        fused_fields = ()
    else:
        # keep: copies made for the call (rows, rowscale), alive until the launch is queued.
        dx, dx_stride, fused_fields, fused_out, keep = _fused_args(fused, x, dy, weight, bias, n, m,
                                                                   shape[:len(shape) - normalized_ndim])
    mean_ptr = None
    mean_in, rstd_in = mean, rstd  # as given: what the plan's key describes
    if kind == _capi.LAYERNORM and (mean is not None or y is None):  # recompute without x: mean unused
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
        if y is None:  # recomputing from y, _fused_args has checked beta and reads it
            _vector(bias, n, affine.dtype, "bias")  # checked only: a backward from x never reads beta
        dbias = torch.empty_like(bias, memory_format=torch.contiguous_format)
        db_ptr = dbias.data_ptr()
    if m == 0 and not has_weight and not has_bias:
        return (dx, None, None) if fused is None else (dx, None, None) + fused_out

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
            # workspace: held until the launch is queued (see _workspace).
            workspace, ws_ptr, ws_bytes = _workspace(device, stream, nbytes, x) if nbytes else (None, None, 0)
            # One constructor call, fields in header order (cheaper than setting them one by one).
            a = _capi.BackwardArgs(m, x_ptr, x_stride, dy2.data_ptr(), dy_stride, mean_ptr, rstd.data_ptr(),
                                   w_ptr, dx.data_ptr(), dx_stride, dw_ptr, db_ptr, ws_ptr, ws_bytes, *fused_fields)
            status = engine._backward[kind](engine.handle, ctypes.byref(p), ctypes.byref(a), stream)
            if status == _capi.OK:
                break
            if status != _capi.WORKSPACE or attempt:
                _capi.check(status)
            del _workspace_bytes[key]
    finally:
        if pushed:
            pop_context()
    if fused is None:
        if plan_key is not None:
            _keep_plan(plan_key, kind, p, m, n, device, x, weight, bias, mean_in, rstd_in, normalized_ndim, nbytes,
                       key)
        return dx, dweight, dbias
    return (dx, dweight, dbias) + fused_out
