"""normjit's ops for PyTorch, backward and forward: torch.library custom ops with fake (meta)
kernels, so torch.compile traces them without graph breaks and CUDA graphs capture them, and the
public functions, which skip the dispatcher when nothing is tracing (see _plain_eager).
"""
from typing import Optional

import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode

from .. import _capi
from . import _launch, _launch_forward

Tensor = torch.Tensor
_Parameter = torch.nn.Parameter


# (op name, implementation) of each op, registered as its CUDA kernel by _register_cuda_kernels.
_cuda_kernels = []


def _op(name, impl, mutates_args=()):
    """The custom op normjit::name over impl (schema from impl's annotations); impl also becomes
    its CUDA kernel (see _register_cuda_kernels)."""
    op = torch.library.custom_op("normjit::" + name, mutates_args=mutates_args)(impl)
    _cuda_kernels.append((name, impl))
    return op


def _absent(x):
    # Custom ops cannot return None (the schema has no Tensor? outputs): an empty tensor stands
    # for "no weight/bias gradient" and the public functions turn it back into None.
    return x.new_empty(0)


def _fake_like(t, x):
    """A fake kernel's output of t's shape, or the absent marker when t is None."""
    return _absent(x) if t is None else t.new_empty(t.shape)


def _or_absent(t, x):
    return _absent(x) if t is None else t


def _rows_model(x, y):
    """The tensor dx is shaped like: x, or the forward's output y when x is None (recompute from
    the output)."""
    return y if x is None else x


def _layer_norm_backward_cuda(dy: Tensor, x: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], mean: Tensor,
                              rstd: Tensor, normalized_ndim: int) -> tuple[Tensor, Tensor, Tensor]:
    dx, dw, db = _launch.backward(_capi.LAYERNORM, dy, x, weight, bias, mean, rstd, normalized_ndim)
    return dx, _or_absent(dw, x), _or_absent(db, x)


layer_norm_backward_op = _op("layer_norm_backward", _layer_norm_backward_cuda)


@layer_norm_backward_op.register_fake
def _layer_norm_backward_fake(dy, x, weight, bias, mean, rstd, normalized_ndim):
    return x.new_empty(x.shape), _fake_like(weight, x), _fake_like(bias, x)


def _rms_norm_backward_cuda(dy: Tensor, x: Tensor, weight: Optional[Tensor], rstd: Tensor,
                            normalized_ndim: int) -> tuple[Tensor, Tensor]:
    dx, dw, _ = _launch.backward(_capi.RMSNORM, dy, x, weight, None, None, rstd, normalized_ndim)
    return dx, _or_absent(dw, x)


rms_norm_backward_op = _op("rms_norm_backward", _rms_norm_backward_cuda)


@rms_norm_backward_op.register_fake
def _rms_norm_backward_fake(dy, x, weight, rstd, normalized_ndim):
    return x.new_empty(x.shape), _fake_like(weight, x)


# The forward: (y, mean, rstd) and (y, rstd), the statistics fp32 in _launch_forward.stat_shape,
# which is what the backward ops above take.

def _layer_norm_forward_cuda(x: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], eps: float,
                             normalized_ndim: int) -> tuple[Tensor, Tensor, Tensor]:
    return _launch_forward.forward(_capi.LAYERNORM, x, weight, bias, eps, normalized_ndim)


layer_norm_forward_op = _op("layer_norm_forward", _layer_norm_forward_cuda)


def _stats_fake(x, normalized_ndim):
    return x.new_empty(_launch_forward.stat_shape(x.shape, normalized_ndim), dtype=torch.float32)


@layer_norm_forward_op.register_fake
def _layer_norm_forward_fake(x, weight, bias, eps, normalized_ndim):
    return x.new_empty(x.shape), _stats_fake(x, normalized_ndim), _stats_fake(x, normalized_ndim)


def _rms_norm_forward_cuda(x: Tensor, weight: Optional[Tensor], eps: float,
                           normalized_ndim: int) -> tuple[Tensor, Tensor]:
    y, _, rstd = _launch_forward.forward(_capi.RMSNORM, x, weight, None, eps, normalized_ndim)
    return y, rstd


rms_norm_forward_op = _op("rms_norm_forward", _rms_norm_forward_cuda)


@rms_norm_forward_op.register_fake
def _rms_norm_forward_fake(x, weight, eps, normalized_ndim):
    return x.new_empty(x.shape), _stats_fake(x, normalized_ndim)


# The fused options (docs/FUSED.md) go through ops of their own, so the option-free ops and
# their compiled graphs stay as they were. Two per norm: one that returns dx in a new tensor,
# and one that writes dx into dresidual (mutates_args: functionalization then knows). The
# options are plain positional arguments (a custom op's schema takes no Python objects):
# dropout_mask is the byte or bit mask, dropout_bits says which, write_dh asks for dh, gate is
# a _capi.GATE_* number (with z), dy1 turns on the second of two parallel norms, and y (the
# forward's output) recomputing x-hat from it (x may then be None: the ops' x is Optional).
# Their results: dx (not in the in-place ops), dweight[, dbias], dh, dz, dweight1[, dbias1],
# each absent (see _absent) unless asked for.

def _fused_fake_tail(x, write_dh, z, dy1, weight1, bias1=None, layer_norm=False):
    """The fake kernels' dh, dz, dweight1[, dbias1], as _launch.backward allocates them."""
    second = (_fake_like(weight1 if dy1 is not None else None, x),)
    if layer_norm:
        second += (_fake_like(bias1 if dy1 is not None else None, x),)
    return (x.new_empty(x.shape) if write_dh else _absent(x), x.new_empty(x.shape) if z is not None else _absent(x)) \
        + second


def _fused_cuda_tail(x, out, layer_norm=False):
    """dh, dz, dweight1[, dbias1] of _launch.backward's result, absent markers for None."""
    dh, dz, dw1, db1 = out[3:]
    tail = (_or_absent(dh, x), _or_absent(dz, x), _or_absent(dw1, x))
    return tail + (_or_absent(db1, x),) if layer_norm else tail


def _layer_norm_backward_fused_cuda(dy: Tensor, x: Optional[Tensor], weight: Optional[Tensor],
                                    bias: Optional[Tensor], mean: Optional[Tensor], rstd: Tensor, normalized_ndim: int,
                                    dresidual: Optional[Tensor], zero_centered_weight: bool,
                                    rowscale: Optional[Tensor], dropout_mask: Optional[Tensor], dropout_bits: bool,
                                    dropout_p: float, write_dh: bool, dy1: Optional[Tensor],
                                    weight1: Optional[Tensor], bias1: Optional[Tensor], y: Optional[Tensor]
                                    ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    fused = _launch.Fused(dresidual, False, zero_centered_weight, rowscale, dropout_mask, dropout_bits, dropout_p,
                          write_dh, None, _capi.GATE_NONE, dy1, weight1, bias1, y)
    out = _launch.backward(_capi.LAYERNORM, dy, x, weight, bias, mean, rstd, normalized_ndim, fused)
    rows = _rows_model(x, y)
    return (out[0], _or_absent(out[1], rows), _or_absent(out[2], rows)) + _fused_cuda_tail(rows, out, layer_norm=True)


layer_norm_backward_fused_op = _op("layer_norm_backward_fused", _layer_norm_backward_fused_cuda)


@layer_norm_backward_fused_op.register_fake
def _layer_norm_backward_fused_fake(dy, x, weight, bias, mean, rstd, normalized_ndim, dresidual,
                                    zero_centered_weight, rowscale, dropout_mask, dropout_bits, dropout_p, write_dh,
                                    dy1, weight1, bias1, y):
    x = _rows_model(x, y)
    return (x.new_empty(x.shape), _fake_like(weight, x), _fake_like(bias, x)) + \
        _fused_fake_tail(x, write_dh, None, dy1, weight1, bias1, layer_norm=True)


def _layer_norm_backward_fused_inplace_cuda(dy: Tensor, x: Optional[Tensor], weight: Optional[Tensor],
                                            bias: Optional[Tensor], mean: Optional[Tensor], rstd: Tensor,
                                            normalized_ndim: int, dresidual: Tensor, zero_centered_weight: bool,
                                            rowscale: Optional[Tensor], dropout_mask: Optional[Tensor],
                                            dropout_bits: bool, dropout_p: float, write_dh: bool,
                                            dy1: Optional[Tensor], weight1: Optional[Tensor], bias1: Optional[Tensor],
                                            y: Optional[Tensor]
                                            ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    """dx is written into dresidual (not returned: a custom op's outputs cannot alias its inputs)."""
    fused = _launch.Fused(dresidual, True, zero_centered_weight, rowscale, dropout_mask, dropout_bits, dropout_p,
                          write_dh, None, _capi.GATE_NONE, dy1, weight1, bias1, y)
    out = _launch.backward(_capi.LAYERNORM, dy, x, weight, bias, mean, rstd, normalized_ndim, fused)
    rows = _rows_model(x, y)
    return (_or_absent(out[1], rows), _or_absent(out[2], rows)) + _fused_cuda_tail(rows, out, layer_norm=True)


layer_norm_backward_fused_inplace_op = _op("layer_norm_backward_fused_inplace", _layer_norm_backward_fused_inplace_cuda,
                                           mutates_args=("dresidual",))


@layer_norm_backward_fused_inplace_op.register_fake
def _layer_norm_backward_fused_inplace_fake(dy, x, weight, bias, mean, rstd, normalized_ndim, dresidual,
                                            zero_centered_weight, rowscale, dropout_mask, dropout_bits, dropout_p,
                                            write_dh, dy1, weight1, bias1, y):
    x = _rows_model(x, y)
    return (_fake_like(weight, x), _fake_like(bias, x)) + \
        _fused_fake_tail(x, write_dh, None, dy1, weight1, bias1, layer_norm=True)


def _rms_norm_backward_fused_cuda(dy: Tensor, x: Optional[Tensor], weight: Optional[Tensor], rstd: Tensor,
                                  normalized_ndim: int, dresidual: Optional[Tensor], zero_centered_weight: bool,
                                  rowscale: Optional[Tensor], dropout_mask: Optional[Tensor], dropout_bits: bool,
                                  dropout_p: float, write_dh: bool, z: Optional[Tensor], gate: int,
                                  dy1: Optional[Tensor], weight1: Optional[Tensor],
                                  y: Optional[Tensor]) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    fused = _launch.Fused(dresidual, False, zero_centered_weight, rowscale, dropout_mask, dropout_bits, dropout_p,
                          write_dh, z, gate, dy1, weight1, None, y)
    out = _launch.backward(_capi.RMSNORM, dy, x, weight, None, None, rstd, normalized_ndim, fused)
    rows = _rows_model(x, y)
    return (out[0], _or_absent(out[1], rows)) + _fused_cuda_tail(rows, out)


rms_norm_backward_fused_op = _op("rms_norm_backward_fused", _rms_norm_backward_fused_cuda)


@rms_norm_backward_fused_op.register_fake
def _rms_norm_backward_fused_fake(dy, x, weight, rstd, normalized_ndim, dresidual, zero_centered_weight, rowscale,
                                  dropout_mask, dropout_bits, dropout_p, write_dh, z, gate, dy1, weight1, y):
    x = _rows_model(x, y)
    return (x.new_empty(x.shape), _fake_like(weight, x)) + _fused_fake_tail(x, write_dh, z, dy1, weight1)


def _rms_norm_backward_fused_inplace_cuda(dy: Tensor, x: Optional[Tensor], weight: Optional[Tensor], rstd: Tensor,
                                          normalized_ndim: int, dresidual: Tensor, zero_centered_weight: bool,
                                          rowscale: Optional[Tensor], dropout_mask: Optional[Tensor],
                                          dropout_bits: bool, dropout_p: float, write_dh: bool, z: Optional[Tensor],
                                          gate: int, dy1: Optional[Tensor], weight1: Optional[Tensor],
                                          y: Optional[Tensor]) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """dx is written into dresidual (not returned: a custom op's outputs cannot alias its inputs)."""
    fused = _launch.Fused(dresidual, True, zero_centered_weight, rowscale, dropout_mask, dropout_bits, dropout_p,
                          write_dh, z, gate, dy1, weight1, None, y)
    out = _launch.backward(_capi.RMSNORM, dy, x, weight, None, None, rstd, normalized_ndim, fused)
    rows = _rows_model(x, y)
    return (_or_absent(out[1], rows),) + _fused_cuda_tail(rows, out)


rms_norm_backward_fused_inplace_op = _op("rms_norm_backward_fused_inplace", _rms_norm_backward_fused_inplace_cuda,
                                         mutates_args=("dresidual",))


@rms_norm_backward_fused_inplace_op.register_fake
def _rms_norm_backward_fused_inplace_fake(dy, x, weight, rstd, normalized_ndim, dresidual, zero_centered_weight,
                                          rowscale, dropout_mask, dropout_bits, dropout_p, write_dh, z, gate, dy1,
                                          weight1, y):
    x = _rows_model(x, y)
    return (_fake_like(weight, x),) + _fused_fake_tail(x, write_dh, z, dy1, weight1)


def _register_cuda_kernels():
    """Registers each op's implementation directly as its kernel for the CUDA dispatch key.

    torch.library.custom_op registers one CompositeExplicitAutograd kernel per op that wraps the
    implementation in checks that no output aliases an input: it builds a Python storage object
    for every tensor argument and result (about 1 us each, 9 of them for layer_norm_backward)
    and walks them with generators, on every call through torch.ops.normjit.* (compiled graphs,
    tracing). The implementations never alias (every output is allocated by _launch or
    _launch_forward, and the in-place ops return no view of dresidual), so for CUDA tensors the
    dispatcher can call them directly: a backend kernel takes precedence over
    CompositeExplicitAutograd. The custom op's own Autograd, ADInplaceOrView (the version bump of
    the in-place ops) and fake kernels stay as they are, and other devices still reach its
    wrapper (and _launch's "runs on CUDA" error)."""
    lib = torch.library.Library("normjit", "IMPL")
    for name, impl in _cuda_kernels:
        lib.impl(name, impl, "CUDA")
    return lib


# Kept for the life of the module: a Library's registrations end when it is destroyed.
_cuda_library = _register_cuda_kernels()

# torch._C._len_torch_dispatch_stack counts the user modes and the infra modes (fake tensors,
# functionalization, proxy tracing) in one C call, which _get_current_dispatch_mode makes and
# then wraps in Python; nonzero exactly when _get_current_dispatch_mode() is not None.
_dispatch_stack_len = getattr(torch._C, "_len_torch_dispatch_stack", None)
if _dispatch_stack_len is None:  # pragma: no cover - older torch
    def _dispatch_stack_len():
        return _get_current_dispatch_mode() is not None
_functorch_active = torch._C._are_functorch_transforms_active
_jit_tracing = torch._C._get_tracing_state


def _plain_eager(*tensors):
    """True when calling the implementation directly is exactly what the op would do: no
    torch.compile/export tracing, no dispatch mode (fake tensors, make_fx, functionalization),
    no functorch transform, no torch.jit.trace (which records the op, not what it calls), and
    plain tensors only. The dispatcher round trip of a Python custom op costs several
    microseconds, a good part of the host budget of a cache hit."""
    # is_compiling first: under Dynamo it is a constant True, so the C calls after it are never
    # traced.
    if torch.compiler.is_compiling() or _dispatch_stack_len() or _functorch_active() or _jit_tracing():
        return False
    for t in tensors:
        if t is not None and type(t) is not Tensor and type(t) is not _Parameter:
            return False
    return True


# gate= keyword -> nj_gate. "after_norm" is Mamba-2's norm_before_gate=True.
_GATES = {None: _capi.GATE_NONE, "none": _capi.GATE_NONE, "after_norm": _capi.GATE_AFTER_NORM,
          "before_norm": _capi.GATE_BEFORE_NORM}


def _fused_options(dresidual, inplace_residual, zero_centered_weight, rowscale, dropout_mask, dropout_mask_bits,
                   dropout_p, return_dresidual_in, z=None, gate=None, dy1=None, weight1=None, bias1=None, y=None):
    """The keyword arguments as a _launch.Fused, after the checks that only the Python API can
    make (the C API has no such arguments to reject): one mask form, dropout_p with a mask,
    inplace_residual with dresidual, a known gate with z, the second norm's parameters with dy1.
    Everything else is checked by _launch (shapes, devices, dtypes) and by the C API (values,
    and which options may go together)."""
    if dropout_mask is not None and dropout_mask_bits is not None:
        raise ValueError("normjit: both dropout_mask and dropout_mask_bits are given; pass the keep-mask once, as "
                         "bytes (dropout_mask=, one per element) or as bits (dropout_mask_bits=, ceil(N/8) a row).")
    mask = dropout_mask if dropout_mask is not None else dropout_mask_bits
    if dropout_p and mask is None:
        raise ValueError("normjit: dropout_p = %r but no keep-mask is given; pass the forward's mask as "
                         "dropout_mask= (bytes) or dropout_mask_bits= (bits), or leave dropout_p at 0." % (dropout_p,))
    if inplace_residual and dresidual is None:
        raise ValueError("normjit: inplace_residual=True but dresidual is None; pass the residual gradient as "
                         "dresidual= to accumulate dx into it, or drop inplace_residual.")
    gate_value = _GATES.get(gate) if isinstance(gate, (str, type(None))) else None
    if gate_value is None:
        raise ValueError("normjit: gate = %r is not a gate; pass gate=\"after_norm\" (y = rms_norm(x) * weight * "
                         "silu(z)) or gate=\"before_norm\" (y = rms_norm(x * silu(z)) * weight), with the gate's "
                         "input as z=." % (gate,))
    if z is not None and gate_value == _capi.GATE_NONE:
        raise ValueError("normjit: z is given but gate is %r; say where silu(z) gates the norm: "
                         "gate=\"after_norm\" or gate=\"before_norm\"." % (gate,))
    if z is None and gate_value != _capi.GATE_NONE:
        raise ValueError("normjit: gate=%r but z is None; pass the gate's input (x's shape and dtype) as z=."
                         % (gate,))
    if dy1 is None and (weight1 is not None or bias1 is not None):
        raise ValueError("normjit: %s is given but dy1 is None; the second of two parallel norms is given by its "
                         "output gradient dy1= (with weight1=/bias1= as the first has weight/bias), or leave it out."
                         % ("weight1" if weight1 is not None else "bias1"))
    # dh is a separate output only when rowscale or dropout makes it differ from dx; otherwise
    # the C API refuses a dresidual_in buffer and dx is returned as dh.
    write_dh = bool(return_dresidual_in) and (rowscale is not None or mask is not None)
    return _launch.Fused(dresidual, bool(inplace_residual), bool(zero_centered_weight), rowscale, mask,
                         dropout_mask_bits is not None, float(dropout_p), write_dh, z, gate_value, dy1, weight1,
                         bias1, y)


def _no_options(dresidual, inplace_residual, zero_centered_weight, rowscale, dropout_mask, dropout_mask_bits,
                dropout_p, return_dresidual_in, z=None, gate=None, dy1=None, weight1=None, bias1=None, y=None):
    return (dresidual is None and rowscale is None and dropout_mask is None and dropout_mask_bits is None and
            not inplace_residual and not zero_centered_weight and not dropout_p and not return_dresidual_in and
            z is None and gate is None and dy1 is None and weight1 is None and bias1 is None and y is None)


def _need_x_or_y(x, y):
    if x is None and y is None:
        raise ValueError("normjit: x is None; pass x, or the forward's output as y= to recompute x-hat from it "
                         "(docs/FUSED.md, recompute from the output).")


def _fused_result(f, dx, dw, db, tail, weight, bias, return_dresidual_in, layer_norm):
    """The public functions' tuple: dx, dweight[, dbias], then dz with a gate, dweight1[, dbias1]
    with parallel norms, dh last with return_dresidual_in (docs/FUSED.md). tail is the op's or
    _launch's (dh, dz, dweight1[, dbias1]), absent markers or None for what was not asked for."""
    dh, dz, dw1 = tail[:3]
    out = (dx, dw, db) if layer_norm else (dx, dw)
    if f.z is not None:
        out += (dz,)
    if f.dy1 is not None:
        out += (None if weight is None else dw1,)
        if layer_norm:
            out += (None if bias is None else tail[3],)
    if return_dresidual_in:
        out += (dh if f.write_dh else dx,)
    return out


def _bump_version(t):
    """Tells autograd that t changed in place (what the dispatcher does for the in-place op)."""
    increment = getattr(torch.autograd.graph, "increment_version", None)
    if increment is not None:
        increment(t)


def layer_norm_backward(dy, x, weight, bias, mean, rstd, normalized_ndim=1, *, dresidual=None,
                        inplace_residual=False, zero_centered_weight=False, rowscale=None, dropout_mask=None,
                        dropout_mask_bits=None, dropout_p=0.0, return_dresidual_in=False, dy1=None, weight1=None,
                        bias1=None, y=None):
    """LayerNorm backward: returns (dx, dweight, dbias); dweight/dbias are None when weight/bias is.

    dy, x: [..., *normalized_shape], any strides (copied only when rows lack unit inner stride);
    float32, float16 or bfloat16. weight/bias: normalized_shape, float32 or x's dtype (or None).
    mean, rstd: fp32 per row, as torch.ops.aten.native_layer_norm returns them on CUDA.
    normalized_ndim: how many trailing dims are normalized (N is their product).
    Runs on the current CUDA stream; the workspace comes from PyTorch's caching allocator.

    Fused options (docs/FUSED.md), for the forward h = dropout(x_in, p) * rowscale + residual,
    y = layer_norm(h); x is h and dx is the gradient of x_in:
      dresidual: [..., N] in x's dtype, the residual stream's gradient of h, added to dh.
      inplace_residual: write dx into dresidual and return dresidual itself as dx.
      zero_centered_weight: weight is stored as gamma - 1 (the kernel uses weight + 1).
      rowscale: one scale per row (fp32; other float dtypes are converted), dx = dh * rowscale.
      dropout_mask: the forward's keep-mask, bool or uint8, one byte per element, shape of x;
      dropout_mask_bits: or bit-packed, uint8 [..., ceil(N/8)] (bit j of byte k is element 8k+j);
      dropout_p: the forward's drop probability (0 <= p < 1), dx = dh * keep / (1 - p).
      dy1, weight1, bias1: parallel norms, y1 = layer_norm(x; weight1, bias1) beside
        y = layer_norm(x; weight, bias): dy1 is y1's gradient (dy's shape and dtype), weight1/bias1
        are given exactly when weight/bias are (bias1, like bias, only says dbias1 is wanted).
        dx is the gradient through both norms; appends (dweight1, dbias1).
      return_dresidual_in: also return dh (the gradient of residual), last.
      y: recompute from the output (memory-efficient mode): the forward's output y = x_hat * weight
        + bias (x's shape and dtype), from which x_hat = (y - bias) / weight is recovered; bias is
        then read (it must be the forward's), and x may be None (mean too). Where weight is 0, x
        (with mean) is read if given; otherwise that column's dx and dweight are NaN. Not with
        dy1 (parallel norms).
    The result: (dx, dweight, dbias[, dweight1, dbias1][, dh]). Without rowscale and dropout dh is
    dx, returned as the same tensor. (No gate: the C API's gated norm is RMSNorm only.)
    """
    _need_x_or_y(x, y)
    if _no_options(dresidual, inplace_residual, zero_centered_weight, rowscale, dropout_mask, dropout_mask_bits,
                   dropout_p, return_dresidual_in, dy1=dy1, weight1=weight1, bias1=bias1, y=y):
        if _plain_eager(dy, x, weight, bias, mean, rstd):
            return _launch.backward(_capi.LAYERNORM, dy, x, weight, bias, mean, rstd, normalized_ndim)
        dx, dw, db = layer_norm_backward_op(dy, x, weight, bias, mean, rstd, normalized_ndim)
        return dx, None if weight is None else dw, None if bias is None else db
    f = _fused_options(dresidual, inplace_residual, zero_centered_weight, rowscale, dropout_mask, dropout_mask_bits,
                       dropout_p, return_dresidual_in, dy1=dy1, weight1=weight1, bias1=bias1, y=y)
    if _plain_eager(dy, x, weight, bias, mean, rstd, f.dresidual, f.rowscale, f.dropout_mask, f.dy1, f.weight1,
                    f.bias1, f.y):
        dx, dw, db, *tail = _launch.backward(_capi.LAYERNORM, dy, x, weight, bias, mean, rstd, normalized_ndim, f)
        if f.inplace_residual:
            _bump_version(dx)
    else:
        args = (dy, x, weight, bias, mean, rstd, normalized_ndim, f.dresidual, f.zero_centered_weight, f.rowscale,
                f.dropout_mask, f.dropout_bits, f.dropout_p, f.write_dh, f.dy1, f.weight1, f.bias1, f.y)
        if f.inplace_residual:
            dw, db, *tail = layer_norm_backward_fused_inplace_op(*args)
            dx = f.dresidual
        else:
            dx, dw, db, *tail = layer_norm_backward_fused_op(*args)
        dw = None if weight is None else dw
        db = None if bias is None else db
    return _fused_result(f, dx, dw, db, tail, weight, bias, return_dresidual_in, layer_norm=True)


def rms_norm_backward(dy, x, weight, rstd, normalized_ndim=1, *, dresidual=None, inplace_residual=False,
                      zero_centered_weight=False, rowscale=None, dropout_mask=None, dropout_mask_bits=None,
                      dropout_p=0.0, return_dresidual_in=False, z=None, gate=None, dy1=None, weight1=None, y=None):
    """RMSNorm backward: returns (dx, dweight); dweight is None when weight is. As
    layer_norm_backward, with rstd = rsqrt(mean(x^2) + eps) per row in fp32, and the same fused
    keyword arguments (no bias1), and Mamba-2's gated RMSNorm:
      z, gate: the gate's input z (x's shape and dtype) and where silu(z) acts:
        gate="after_norm": y = rms_norm(x) * weight * silu(z), rstd of x;
        gate="before_norm": y = rms_norm(x * silu(z)) * weight, rstd of x * silu(z) (what the
        forward saved), x being the input before the gate. Appends dz (x's dtype).
      y: recompute from the output: the forward's output y = x_hat * weight (x's shape and dtype),
        x_hat = y / weight recovered from it; x may then be None. Where weight is 0, x is read if
        given; otherwise that column's dx and dweight are NaN. Not with a gate or dy1.
    The result: (dx, dweight[, dz][, dweight1][, dh]). A gate and parallel norms together are
    refused by the C API (normjit.NormjitError), and so is y with either.
    """
    _need_x_or_y(x, y)
    if _no_options(dresidual, inplace_residual, zero_centered_weight, rowscale, dropout_mask, dropout_mask_bits,
                   dropout_p, return_dresidual_in, z=z, gate=gate, dy1=dy1, weight1=weight1, y=y):
        if _plain_eager(dy, x, weight, rstd):
            dx, dw, _ = _launch.backward(_capi.RMSNORM, dy, x, weight, None, None, rstd, normalized_ndim)
            return dx, dw
        dx, dw = rms_norm_backward_op(dy, x, weight, rstd, normalized_ndim)
        return dx, None if weight is None else dw
    f = _fused_options(dresidual, inplace_residual, zero_centered_weight, rowscale, dropout_mask, dropout_mask_bits,
                       dropout_p, return_dresidual_in, z=z, gate=gate, dy1=dy1, weight1=weight1, y=y)
    if _plain_eager(dy, x, weight, rstd, f.dresidual, f.rowscale, f.dropout_mask, f.z, f.dy1, f.weight1, f.y):
        dx, dw, _, *tail = _launch.backward(_capi.RMSNORM, dy, x, weight, None, None, rstd, normalized_ndim, f)
        if f.inplace_residual:
            _bump_version(dx)
    else:
        args = (dy, x, weight, rstd, normalized_ndim, f.dresidual, f.zero_centered_weight, f.rowscale,
                f.dropout_mask, f.dropout_bits, f.dropout_p, f.write_dh, f.z, f.gate, f.dy1, f.weight1, f.y)
        if f.inplace_residual:
            dw, *tail = rms_norm_backward_fused_inplace_op(*args)
            dx = f.dresidual
        else:
            dx, dw, *tail = rms_norm_backward_fused_op(*args)
        dw = None if weight is None else dw
    return _fused_result(f, dx, dw, None, tail, weight, None, return_dresidual_in, layer_norm=False)


# torch.nn.functional.rms_norm's eps=None: the epsilon of the type the norm is computed in, which
# is fp32 for float32, float16 and bfloat16 inputs (at::opmath_type; float64 never reaches
# normjit).
FP32_EPS = torch.finfo(torch.float32).eps


def _eps(eps, name, default_hint):
    try:
        return float(eps)
    except (TypeError, ValueError):
        raise TypeError("normjit: %s got eps = %r, which is not a number; pass the number added to the variance "
                        "or mean square (%s)." % (name, eps, default_hint)) from None


def layer_norm_forward(x, weight, bias, eps, normalized_ndim=1):
    """LayerNorm forward by normjit's kernel: returns (y, mean, rstd).

    x: [..., *normalized_shape], float32, float16 or bfloat16, any strides (copied only when rows
    lack unit inner stride). weight/bias: normalized_shape, float32 or x's dtype, one dtype for
    both (or None). eps: added to the (biased) variance. normalized_ndim: how many trailing dims
    are normalized (N is their product).
    y = (x - mean) * rstd * weight + bias, contiguous, in x's dtype; mean and rstd are fp32,
    x's leading dims followed by normalized_ndim ones (as torch.ops.aten.native_layer_norm
    returns them), exactly what layer_norm_backward takes. Runs on the current CUDA stream.
    """
    eps = _eps(eps, "layer_norm_forward", "torch.nn.LayerNorm's default is 1e-5")
    if _plain_eager(x, weight, bias):
        return _launch_forward.forward(_capi.LAYERNORM, x, weight, bias, eps, normalized_ndim)
    return layer_norm_forward_op(x, weight, bias, eps, normalized_ndim)


def rms_norm_forward(x, weight, eps, normalized_ndim=1):
    """RMSNorm forward by normjit's kernel: returns (y, rstd), y = x * rstd * weight with
    rstd = rsqrt(mean(x^2) + eps) per row in fp32, as layer_norm_forward (no bias, no mean).
    eps None: torch.nn.functional.rms_norm's default, fp32's machine epsilon."""
    eps = FP32_EPS if eps is None else _eps(eps, "rms_norm_forward",
                                            "None for torch.nn.RMSNorm's default, torch.finfo(torch.float32).eps")
    if _plain_eager(x, weight):
        y, _, rstd = _launch_forward.forward(_capi.RMSNORM, x, weight, None, eps, normalized_ndim)
        return y, rstd
    return rms_norm_forward_op(x, weight, eps, normalized_ndim)
