"""layer_norm and rms_norm with normjit's backward: PyTorch's forward (normjit has none yet),
saving the fp32 row statistics, and an autograd.Function whose backward is normjit's op.
Inputs normjit cannot take (CPU tensors, float64) go to torch.nn.functional unchanged.
"""
import torch
import torch.nn.functional as F

from ._ops import layer_norm_backward, rms_norm_backward

_KERNEL_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
_FP32_EPS = torch.finfo(torch.float32).eps


def _takes(x, *params):
    return x.is_cuda and x.dtype in _KERNEL_DTYPES and all(p is None or p.dtype in _KERNEL_DTYPES for p in params)


class _LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, normalized_shape, weight, bias, eps):
        y, mean, rstd = torch.ops.aten.native_layer_norm(x, normalized_shape, weight, bias, eps)
        ctx.save_for_backward(x, weight, bias, mean, rstd)
        ctx.normalized_ndim = len(normalized_shape)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, bias, mean, rstd = ctx.saved_tensors
        dx, dw, db = layer_norm_backward(dy, x, weight, bias, mean, rstd, ctx.normalized_ndim)
        return dx, None, dw, db, None


def _rms_forward(x, normalized_shape, weight, eps):
    """(y, rstd) as torch computes them; rstd fp32 per row."""
    fused = getattr(torch.ops.aten, "_fused_rms_norm", None)
    # The fused op's CUDA kernel wants the weight in x's dtype; otherwise the composite below.
    if fused is not None and (weight is None or weight.dtype == x.dtype):
        y, rstd = fused(x, list(normalized_shape), weight, eps)
        return y, rstd
    dims = tuple(range(x.dim() - len(normalized_shape), x.dim()))
    rstd = torch.rsqrt(x.float().pow(2).mean(dims, keepdim=True) + eps)
    y = x.float() * rstd  # as torch's composite rms_norm: scaled in fp32, then x's dtype
    if weight is not None:
        y = y * weight
    return y.to(x.dtype), rstd


class _RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, normalized_shape, weight, eps):
        y, rstd = _rms_forward(x, normalized_shape, weight, eps)
        ctx.save_for_backward(x, weight, rstd)
        ctx.normalized_ndim = len(normalized_shape)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, rstd = ctx.saved_tensors
        dx, dw = rms_norm_backward(dy, x, weight, rstd, ctx.normalized_ndim)
        return dx, None, dw, None


# Under autocast, torch runs layer_norm in fp32 (its CUDA fp32 list); rms_norm's policy has
# changed between releases, so it is asked once per autocast dtype by running torch's own op
# under autocast (see _autocast_fp32). The answer: cast x and the parameters to fp32 first.
_autocast_policy = {("layer_norm", torch.float16): True, ("layer_norm", torch.bfloat16): True}


def _autocast_fp32(op, x):
    if not (x.is_cuda and torch.is_autocast_enabled("cuda")):
        return False
    key = (op, torch.get_autocast_dtype("cuda"))
    fp32 = _autocast_policy.get(key)
    if fp32 is None:
        if torch.compiler.is_compiling():
            return True  # cannot probe while tracing; fp32 is what torch does for norms
        probe = torch.ones(1, 2, device=x.device, dtype=key[1])
        fp32 = _autocast_policy[key] = F.rms_norm(probe, (2,), torch.ones(2, device=x.device)).dtype == torch.float32
    return fp32


def _fp32(t):
    return None if t is None else t.float()


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """torch.nn.functional.layer_norm with normjit's backward."""
    normalized_shape = tuple(normalized_shape) if not isinstance(normalized_shape, int) else (normalized_shape,)
    if not _takes(input, weight, bias):
        return F.layer_norm(input, normalized_shape, weight, bias, eps)
    if _autocast_fp32("layer_norm", input):
        with torch.autocast("cuda", enabled=False):
            return _LayerNormFunction.apply(input.float(), normalized_shape, _fp32(weight), _fp32(bias), eps)
    return _LayerNormFunction.apply(input, normalized_shape, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """torch.nn.functional.rms_norm with normjit's backward. eps None: fp32's machine epsilon, as
    torch's kernels use (the epsilon of the fp32 computation type, also for fp16/bf16 inputs)."""
    normalized_shape = tuple(normalized_shape) if not isinstance(normalized_shape, int) else (normalized_shape,)
    if not _takes(input, weight):
        return F.rms_norm(input, normalized_shape, weight, eps)
    if _autocast_fp32("rms_norm", input):
        with torch.autocast("cuda", enabled=False):
            x = input.float()
            return _RMSNormFunction.apply(x, normalized_shape, _fp32(weight), _FP32_EPS if eps is None else eps)
    return _RMSNormFunction.apply(input, normalized_shape, weight, _FP32_EPS if eps is None else eps)
