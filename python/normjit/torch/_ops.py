"""normjit's backward ops for PyTorch: torch.library custom ops with fake (meta) kernels, so
torch.compile traces them without graph breaks and CUDA graphs capture them, and the public
functions, which skip the dispatcher when nothing is tracing (see _plain_eager).
"""
from typing import Optional

import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode

from .. import _capi
from . import _launch

Tensor = torch.Tensor
_Parameter = torch.nn.Parameter


def _absent(x):
    # Custom ops cannot return None (the schema has no Tensor? outputs): an empty tensor stands
    # for "no weight/bias gradient" and the public functions turn it back into None.
    return x.new_empty(0)


@torch.library.custom_op("normjit::layer_norm_backward", mutates_args=())
def layer_norm_backward_op(dy: Tensor, x: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], mean: Tensor,
                           rstd: Tensor, normalized_ndim: int) -> tuple[Tensor, Tensor, Tensor]:
    dx, dw, db = _launch.backward(_capi.LAYERNORM, dy, x, weight, bias, mean, rstd, normalized_ndim)
    return dx, _absent(x) if dw is None else dw, _absent(x) if db is None else db


@layer_norm_backward_op.register_fake
def _layer_norm_backward_fake(dy, x, weight, bias, mean, rstd, normalized_ndim):
    return (x.new_empty(x.shape), _absent(x) if weight is None else weight.new_empty(weight.shape),
            _absent(x) if bias is None else bias.new_empty(bias.shape))


@torch.library.custom_op("normjit::rms_norm_backward", mutates_args=())
def rms_norm_backward_op(dy: Tensor, x: Tensor, weight: Optional[Tensor], rstd: Tensor,
                         normalized_ndim: int) -> tuple[Tensor, Tensor]:
    dx, dw, _ = _launch.backward(_capi.RMSNORM, dy, x, weight, None, None, rstd, normalized_ndim)
    return dx, _absent(x) if dw is None else dw


@rms_norm_backward_op.register_fake
def _rms_norm_backward_fake(dy, x, weight, rstd, normalized_ndim):
    return x.new_empty(x.shape), _absent(x) if weight is None else weight.new_empty(weight.shape)


def _plain_eager(*tensors):
    """True when calling the implementation directly is exactly what the op would do: no
    torch.compile/export tracing, no dispatch mode (fake tensors, make_fx, functionalization),
    no functorch transform, and plain tensors only. The dispatcher round trip of a Python
    custom op costs several microseconds, a good part of the host budget of a cache hit."""
    if torch.compiler.is_compiling() or _get_current_dispatch_mode() is not None:
        return False
    if torch._C._are_functorch_transforms_active():
        return False
    for t in tensors:
        if t is not None and type(t) is not Tensor and type(t) is not _Parameter:
            return False
    return True


def layer_norm_backward(dy, x, weight, bias, mean, rstd, normalized_ndim=1):
    """LayerNorm backward: returns (dx, dweight, dbias); dweight/dbias are None when weight/bias is.

    dy, x: [..., *normalized_shape], any strides (copied only when rows lack unit inner stride);
    float32, float16 or bfloat16. weight/bias: normalized_shape, float32 or x's dtype (or None).
    mean, rstd: fp32 per row, as torch.ops.aten.native_layer_norm returns them on CUDA.
    normalized_ndim: how many trailing dims are normalized (N is their product).
    Runs on the current CUDA stream; the workspace comes from PyTorch's caching allocator.
    """
    if _plain_eager(dy, x, weight, bias, mean, rstd):
        return _launch.backward(_capi.LAYERNORM, dy, x, weight, bias, mean, rstd, normalized_ndim)
    dx, dw, db = layer_norm_backward_op(dy, x, weight, bias, mean, rstd, normalized_ndim)
    return dx, None if weight is None else dw, None if bias is None else db


def rms_norm_backward(dy, x, weight, rstd, normalized_ndim=1):
    """RMSNorm backward: returns (dx, dweight); dweight is None when weight is. As
    layer_norm_backward, with rstd = rsqrt(mean(x^2) + eps) per row in fp32."""
    if _plain_eager(dy, x, weight, rstd):
        dx, dw, _ = _launch.backward(_capi.RMSNORM, dy, x, weight, None, None, rstd, normalized_ndim)
        return dx, dw
    dx, dw = rms_norm_backward_op(dy, x, weight, rstd, normalized_ndim)
    return dx, None if weight is None else dw
