"""normjit's ops for PyTorch, backward and forward: torch.library custom ops with fake (meta)
kernels, so torch.compile traces them without graph breaks and CUDA graphs capture them, and the
public functions, which skip the dispatcher when nothing is tracing (see _plain_eager).
"""
import collections
import inspect
import operator
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


# The forward's fused options (docs/FORWARD.md, "Fused options") go through ops of their own too, so
# the option-free forward ops and their graphs stay as they were. Their options, positional after
# normalized_ndim: residual, rowscale, dropout (a _capi.DROPOUT_* number: NONE is off; on, the
# form of the mask, BYTES when none is written), dropout_p, dropout_seed and dropout_offset (the
# schema's int is int64: the uint64 values go as their two's complement, see _int64), write_mask,
# z and gate (RMSNorm), weight1[, bias1], parallel, zero_centered_weight, y_dtype (a _capi dtype
# number, DTYPE_DEFAULT for x's). Their results: y[, mean], rstd, h, mask, y1, the last three
# absent (see _absent) unless formed.

_UINT64 = 1 << 64
_Y_DTYPES = {_capi.DTYPE_DEFAULT: None, _capi.F32: torch.float32, _capi.F16: torch.float16,
             _capi.BF16: torch.bfloat16}


def _int64(v):
    """A uint64 (a seed or an offset) as the int64 of the same bits, for a custom op's int."""
    return v - _UINT64 if v >= 1 << 63 else v


def _forward_fused_of(residual, rowscale, dropout, dropout_p, dropout_seed, dropout_offset, write_mask, z, gate,
                      weight1, bias1, parallel, zero_centered_weight, y_dtype):
    """The op's arguments as the _launch_forward.ForwardFused they stand for."""
    return _launch_forward.ForwardFused(residual, rowscale, dropout, dropout_p, dropout_seed % _UINT64,
                                        dropout_offset % _UINT64, write_mask, z, gate, weight1, bias1, parallel,
                                        zero_centered_weight, _Y_DTYPES[y_dtype])


def _forward_fused_fake(x, normalized_ndim, layer_norm, residual, rowscale, dropout, write_mask, parallel, y_dtype):
    """The fake kernels' y[, mean], rstd, h, mask, y1, as _launch_forward.forward_fused allocates them."""
    y_dtype = _Y_DTYPES[y_dtype] or x.dtype
    stats = tuple(_stats_fake(x, normalized_ndim) for _ in range(2 if layer_norm else 1))  # [mean,] rstd
    out = (x.new_empty(x.shape, dtype=y_dtype),) + stats
    formed = _launch_forward.forms_h(residual, rowscale, dropout)
    mask = _launch_forward.mask_shape(x.shape, normalized_ndim, dropout)
    return out + (x.new_empty(x.shape) if formed else _absent(x),
                  x.new_empty(mask, dtype=torch.uint8) if write_mask else _absent(x),
                  x.new_empty(x.shape, dtype=y_dtype) if parallel else _absent(x))


def _layer_norm_forward_fused_cuda(x: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], eps: float,
                                   normalized_ndim: int, residual: Optional[Tensor], rowscale: Optional[Tensor],
                                   dropout: int, dropout_p: float, dropout_seed: int, dropout_offset: int,
                                   write_mask: bool, weight1: Optional[Tensor], bias1: Optional[Tensor], parallel: bool,
                                   zero_centered_weight: bool, y_dtype: int
                                   ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    fused = _forward_fused_of(residual, rowscale, dropout, dropout_p, dropout_seed, dropout_offset, write_mask, None,
                              _capi.GATE_NONE, weight1, bias1, parallel, zero_centered_weight, y_dtype)
    out = _launch_forward.forward_fused(_capi.LAYERNORM, x, weight, bias, eps, normalized_ndim, fused)
    return tuple(_or_absent(t, x) for t in out)


layer_norm_forward_fused_op = _op("layer_norm_forward_fused", _layer_norm_forward_fused_cuda)


@layer_norm_forward_fused_op.register_fake
def _layer_norm_forward_fused_fake(x, weight, bias, eps, normalized_ndim, residual, rowscale, dropout, dropout_p,
                                   dropout_seed, dropout_offset, write_mask, weight1, bias1, parallel,
                                   zero_centered_weight, y_dtype):
    return _forward_fused_fake(x, normalized_ndim, True, residual, rowscale, dropout, write_mask, parallel, y_dtype)


def _rms_norm_forward_fused_cuda(x: Tensor, weight: Optional[Tensor], eps: float, normalized_ndim: int,
                                 residual: Optional[Tensor], rowscale: Optional[Tensor], dropout: int,
                                 dropout_p: float, dropout_seed: int, dropout_offset: int, write_mask: bool,
                                 z: Optional[Tensor], gate: int, weight1: Optional[Tensor], parallel: bool,
                                 zero_centered_weight: bool, y_dtype: int
                                 ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    fused = _forward_fused_of(residual, rowscale, dropout, dropout_p, dropout_seed, dropout_offset, write_mask, z, gate,
                              weight1, None, parallel, zero_centered_weight, y_dtype)
    y, _, rstd, h, mask, y1 = _launch_forward.forward_fused(_capi.RMSNORM, x, weight, None, eps, normalized_ndim, fused)
    return tuple(_or_absent(t, x) for t in (y, rstd, h, mask, y1))


rms_norm_forward_fused_op = _op("rms_norm_forward_fused", _rms_norm_forward_fused_cuda)


@rms_norm_forward_fused_op.register_fake
def _rms_norm_forward_fused_fake(x, weight, eps, normalized_ndim, residual, rowscale, dropout, dropout_p, dropout_seed,
                                 dropout_offset, write_mask, z, gate, weight1, parallel, zero_centered_weight,
                                 y_dtype):
    return _forward_fused_fake(x, normalized_ndim, False, residual, rowscale, dropout, write_mask, parallel, y_dtype)


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


def _gate(z, gate):
    """The gate= keyword as a _capi.GATE_* number, checked against z (each needs the other)."""
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
    return gate_value


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
    gate_value = _gate(z, gate)
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


# ---- the forward's fused options ----------------------------------------------------------------
#
# A call with option keywords returns one of these (namedtuples: torch.compile traces their
# construction); a call without keywords returns the plain tuple, as before. Which one depends on
# the call's keywords only, never on their values: a call that passes dropout_p (0 at eval time,
# say) gets the same type whether dropout is on or not.
#   h: what was normalised, the backward's x: dropout(x) * rowscale + residual, rounded to x's
#     dtype (a new tensor), or x itself when none of residual, rowscale and dropout is on.
#   mask: the keep-mask written (dropout_mask="bytes": uint8, x's shape, 1 = kept, the backward's
#     dropout_mask=; "bits": uint8, x's leading dims + (ceil(N/8),), the backward's
#     dropout_mask_bits=), else None.
#   y1: the second of two parallel norms (y's shape and dtype), else None.
LayerNormForwardResult = collections.namedtuple("LayerNormForwardResult", ("y", "mean", "rstd", "h", "mask", "y1"))
RMSNormForwardResult = collections.namedtuple("RMSNormForwardResult", ("y", "rstd", "h", "mask", "y1"))

_DROPOUT_FORMS = {"bytes": _capi.DROPOUT_BYTES, "bits": _capi.DROPOUT_BITS}
_INTS = (int, torch.SymInt) if hasattr(torch, "SymInt") else (int,)


def _uint64(value, name):
    """A dropout seed or offset: an int in [0, 2^64) (numpy integers too; a SymInt as it is)."""
    if isinstance(value, bool):
        raise TypeError("normjit: %s = %r is not an integer; pass an int in [0, 2^64)." % (name, value))
    if not isinstance(value, _INTS):
        try:
            value = operator.index(value)
        except TypeError:
            raise TypeError("normjit: %s = %r is not an integer; pass an int in [0, 2^64) (the keep-mask is a "
                            "function of dropout_seed, dropout_offset, the row and the column)."
                            % (name, value)) from None
    if not 0 <= value < _UINT64:
        raise ValueError("normjit: %s = %r is outside [0, 2^64); pass an int in that range (e.g. seed %% 2**64)."
                         % (name, value))
    return value


def _forward_options(x, weight, residual, rowscale, dropout_p, dropout_seed, dropout_offset, dropout_mask, z, gate,
                     weight1, bias1, parallel, zero_centered_weight, y_dtype):
    """The forward's keyword arguments as a _launch_forward.ForwardFused, or None when every option is
    off (the option-free call is then made), after the checks only the Python API can make, before
    any launch: the mask form, dropout_p and the seed and offset, the gate with z, parallel with
    weight1/bias1 and not with a gate, zero_centered_weight with a weight, y_dtype. Tensors (shapes,
    devices, dtypes) are checked by _launch_forward.forward_fused, values by the C API.

    Dropout is on when dropout_p > 0 or a mask form is given (dropout_p = 0 then keeps every
    element and writes a mask of ones); seed and offset are read only then. Parallel norms are on
    with parallel=True, or, parallel left None, when weight1 or bias1 is given."""
    if dropout_mask is not None and (not isinstance(dropout_mask, str) or dropout_mask not in _DROPOUT_FORMS):
        raise ValueError("normjit: dropout_mask = %r is not a mask form; pass \"bytes\" (uint8, one per element of "
                         "x: the backward's dropout_mask=) or \"bits\" (uint8, ceil(N/8) a row: the backward's "
                         "dropout_mask_bits=), or None to write no mask." % (dropout_mask,))
    try:
        p = float(dropout_p)
    except (TypeError, ValueError):
        raise TypeError("normjit: dropout_p = %r is not a number; pass the drop probability (0 <= p < 1)."
                        % (dropout_p,)) from None
    if not 0.0 <= p < 1.0:
        raise ValueError("normjit: dropout_p = %r is not in [0, 1); pass the drop probability (0 <= p < 1)."
                         % (dropout_p,))
    dropout = _capi.DROPOUT_NONE
    seed = offset = 0
    if p > 0 or dropout_mask is not None:
        dropout = _DROPOUT_FORMS[dropout_mask or "bytes"]  # no mask written: either form draws the same keeps
        seed = _uint64(dropout_seed, "dropout_seed")
        offset = _uint64(dropout_offset, "dropout_offset")
    gate_value = _gate(z, gate)
    if parallel is None:
        parallel = weight1 is not None or bias1 is not None
    elif not parallel and (weight1 is not None or bias1 is not None):
        raise ValueError("normjit: %s is given but parallel=False; the second norm's parameters are those of "
                         "parallel norms: pass parallel=True (or leave parallel None), or drop %s."
                         % (("weight1",) * 2 if weight1 is not None else ("bias1",) * 2))
    parallel = bool(parallel)
    if parallel and gate_value != _capi.GATE_NONE:
        raise ValueError("normjit: parallel norms and a gate (z=, gate=) together are not supported (which of the "
                         "two norms the gate belongs to is not defined); use one or the other.")
    if zero_centered_weight and weight is None:
        raise ValueError("normjit: zero_centered_weight=True but weight is None; there is no weight stored as "
                         "gamma - 1 to add 1 to. Pass the weight, or drop zero_centered_weight.")
    if y_dtype is not None:
        if _y_code(y_dtype) == _capi.DTYPE_DEFAULT:
            raise TypeError("normjit: y_dtype = %r; y is written as torch.float32, torch.float16 or torch.bfloat16 "
                            "(None: x's dtype)." % (y_dtype,))
        if y_dtype == x.dtype:
            y_dtype = None
    if (residual is None and rowscale is None and dropout == _capi.DROPOUT_NONE and z is None and not parallel and
            not zero_centered_weight and y_dtype is None):
        return None
    return _launch_forward.ForwardFused(residual, rowscale, dropout, p, seed, offset, dropout_mask is not None, z,
                                        gate_value, weight1, bias1, parallel, bool(zero_centered_weight), y_dtype)


_Y_CODES = ((torch.float32, _capi.F32), (torch.float16, _capi.F16), (torch.bfloat16, _capi.BF16))


def _y_code(y_dtype):
    """y_dtype as the _capi dtype number the ops take: DTYPE_DEFAULT for None (x's) and for anything
    that is none of the three (comparisons only: what torch.compile traces without a dict of dtypes)."""
    for dtype, code in _Y_CODES:
        if y_dtype == dtype:
            return code
    return _capi.DTYPE_DEFAULT


def _formed(f, h, mask, y1, x):
    """The op's h, mask, y1 with absent markers as None (h as x when it is not formed)."""
    return (h if _launch_forward.forms_h(f.residual, f.rowscale, f.dropout) else x, mask if f.write_mask else None,
            y1 if f.parallel else None)


def _layer_norm_forward_options(x, weight, bias, eps, normalized_ndim=1, *, residual=None, rowscale=None,
                                dropout_p=0.0, dropout_seed=0, dropout_offset=0, dropout_mask=None, weight1=None,
                                bias1=None, parallel=None, zero_centered_weight=False, y_dtype=None):
    """layer_norm_forward with option keywords (eps already a float): a LayerNormForwardResult."""
    f = _forward_options(x, weight, residual, rowscale, dropout_p, dropout_seed, dropout_offset, dropout_mask, None,
                         None, weight1, bias1, parallel, zero_centered_weight, y_dtype)
    if f is None:  # every option off: the option-free call (the public function without options)
        y, mean, rstd = layer_norm_forward(x, weight, bias, eps, normalized_ndim)
        return LayerNormForwardResult(y, mean, rstd, x, None, None)
    if _plain_eager(x, weight, bias, f.residual, f.rowscale, f.weight1, f.bias1):
        y, mean, rstd, h, mask, y1 = _launch_forward.forward_fused(_capi.LAYERNORM, x, weight, bias, eps,
                                                                   normalized_ndim, f)
        return LayerNormForwardResult(y, mean, rstd, x if h is None else h, mask, y1)
    y, mean, rstd, h, mask, y1 = layer_norm_forward_fused_op(
        x, weight, bias, eps, normalized_ndim, f.residual, f.rowscale, f.dropout, f.dropout_p, _int64(f.dropout_seed),
        _int64(f.dropout_offset), f.write_mask, f.weight1, f.bias1, f.parallel, f.zero_centered_weight,
        _y_code(f.y_dtype))
    return LayerNormForwardResult(y, mean, rstd, *_formed(f, h, mask, y1, x))


def _rms_norm_forward_options(x, weight, eps, normalized_ndim=1, *, residual=None, rowscale=None, dropout_p=0.0,
                              dropout_seed=0, dropout_offset=0, dropout_mask=None, z=None, gate=None, weight1=None,
                              parallel=None, zero_centered_weight=False, y_dtype=None):
    """rms_norm_forward with option keywords (eps already a float): an RMSNormForwardResult."""
    f = _forward_options(x, weight, residual, rowscale, dropout_p, dropout_seed, dropout_offset, dropout_mask, z, gate,
                         weight1, None, parallel, zero_centered_weight, y_dtype)
    if f is None:  # every option off: the option-free call (the public function without options)
        y, rstd = rms_norm_forward(x, weight, eps, normalized_ndim)
        return RMSNormForwardResult(y, rstd, x, None, None)
    if _plain_eager(x, weight, f.residual, f.rowscale, f.z, f.weight1):
        y, _, rstd, h, mask, y1 = _launch_forward.forward_fused(_capi.RMSNORM, x, weight, None, eps, normalized_ndim, f)
        return RMSNormForwardResult(y, rstd, x if h is None else h, mask, y1)
    y, rstd, h, mask, y1 = rms_norm_forward_fused_op(
        x, weight, eps, normalized_ndim, f.residual, f.rowscale, f.dropout, f.dropout_p, _int64(f.dropout_seed),
        _int64(f.dropout_offset), f.write_mask, f.z, f.gate, f.weight1, f.parallel, f.zero_centered_weight,
        _y_code(f.y_dtype))
    return RMSNormForwardResult(y, rstd, *_formed(f, h, mask, y1, x))


# An unknown keyword is reported in the public function's name.
for _f, _name in ((_layer_norm_forward_options, "layer_norm_forward"), (_rms_norm_forward_options, "rms_norm_forward")):
    _f.__name__ = _f.__qualname__ = _name
del _f, _name


# The option keywords arrive as **options, so that a call without them (the usual one, whose host
# time is measured in microseconds) pays for one test of an empty dict, not for filling eleven
# keyword-only defaults (about 0.12 us on CPython 3.11); __signature__ shows them all (help(),
# inspect.signature), and an unknown one raises TypeError naming the function, as a keyword-only
# parameter would.

def layer_norm_forward(x, weight, bias, eps, normalized_ndim=1, **options):
    """LayerNorm forward by normjit's kernel: returns (y, mean, rstd).

    x: [..., *normalized_shape], float32, float16 or bfloat16, any strides (copied only when rows
    lack unit inner stride). weight/bias: normalized_shape, float32 or x's dtype, one dtype for
    both (or None). eps: added to the (biased) variance. normalized_ndim: how many trailing dims
    are normalized (N is their product).
    y = (x - mean) * rstd * weight + bias, contiguous, in x's dtype; mean and rstd are fp32,
    x's leading dims followed by normalized_ndim ones (as torch.ops.aten.native_layer_norm
    returns them), exactly what layer_norm_backward takes. Runs on the current CUDA stream.

    Fused options (keyword-only; docs/PYTHON.md, docs/FORWARD.md), for the pre-norm block
        h = dropout(x, p) * rowscale[row] + residual,   y = layer_norm(h) * weight + bias:
      residual: [..., N] like x (shape and dtype), added to the branch.
      rowscale: one scale per row (fp32; other floating dtypes are converted).
      dropout_p: the drop probability (0 <= p < 1); kept elements are scaled by 1 / (1 - p).
      dropout_seed, dropout_offset: ints in [0, 2^64): element (row, col) is kept by Philox4x32-10
        of (seed, offset, row, col) alone, so pass a new offset (or seed) each step.
      dropout_mask: None, "bytes" or "bits": the form of the keep-mask to return. Dropout is on
        when dropout_p > 0 or a form is given.
      weight1, bias1, parallel: a second norm of the same h, y1 = layer_norm(h) * weight1 + bias1
        (the same statistics); on with parallel=True or when weight1/bias1 is given. weight1/bias1
        are given exactly when weight/bias are, in their dtype.
      zero_centered_weight: weight (and weight1) hold gamma - 1; the kernel uses weight + 1.
      y_dtype: y's (and y1's) dtype, float32, float16 or bfloat16 (None: x's).
    With any option keyword (any value) the result is a LayerNormForwardResult(y, mean, rstd, h,
    mask, y1): h is what was normalised (x itself when none of residual, rowscale and dropout is
    on), the backward's x; mask the keep-mask (None unless dropout_mask is given), the backward's
    dropout_mask= (bytes) or dropout_mask_bits= (bits); y1 None unless parallel.
    """
    eps = _eps(eps, "layer_norm_forward", "torch.nn.LayerNorm's default is 1e-5")
    if options:
        return _layer_norm_forward_options(x, weight, bias, eps, normalized_ndim, **options)
    if _plain_eager(x, weight, bias):
        return _launch_forward.forward(_capi.LAYERNORM, x, weight, bias, eps, normalized_ndim)
    return layer_norm_forward_op(x, weight, bias, eps, normalized_ndim)


def rms_norm_forward(x, weight, eps, normalized_ndim=1, **options):
    """RMSNorm forward by normjit's kernel: returns (y, rstd), y = x * rstd * weight with
    rstd = rsqrt(mean(x^2) + eps) per row in fp32, as layer_norm_forward (no bias, no mean).
    eps None: torch.nn.functional.rms_norm's default, fp32's machine epsilon.

    Fused options (keyword-only): those of layer_norm_forward but bias1, and Mamba-2's gate:
      z, gate: the gate's input (x's shape and dtype) and where silu(z) acts:
        gate="after_norm": y = rms_norm(h) * weight * silu(z);
        gate="before_norm": y = rms_norm(h * silu(z)) * weight, rstd that of h * silu(z).
      Not with parallel norms.
    With any option keyword the result is an RMSNormForwardResult(y, rstd, h, mask, y1), as
    layer_norm_forward's; the backward takes h as x, with z= and gate= for a gated norm.
    """
    eps = FP32_EPS if eps is None else _eps(eps, "rms_norm_forward",
                                            "None for torch.nn.RMSNorm's default, torch.finfo(torch.float32).eps")
    if options:
        return _rms_norm_forward_options(x, weight, eps, normalized_ndim, **options)
    if _plain_eager(x, weight):
        y, _, rstd = _launch_forward.forward(_capi.RMSNORM, x, weight, None, eps, normalized_ndim)
        return y, rstd
    return rms_norm_forward_op(x, weight, eps, normalized_ndim)


layer_norm_forward.__signature__ = inspect.signature(_layer_norm_forward_options)
rms_norm_forward.__signature__ = inspect.signature(_rms_norm_forward_options)
