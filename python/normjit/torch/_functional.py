"""layer_norm and rms_norm on normjit's kernels: an autograd.Function whose forward is normjit's
forward op, saving the fp32 row statistics, and whose backward is normjit's backward op, which
reads them as they are.

torch.nn.functional's own forward and backward run instead wherever normjit's kernels cannot:
CPU tensors, float64, and parameters in a dtype the kernels do not take (see _params_fit).
normjit's forward takes no fused options yet; these functions have none to route elsewhere.
"""
import torch
import torch.nn.functional as F

from ._ops import FP32_EPS, layer_norm_backward, layer_norm_forward, rms_norm_backward, rms_norm_forward

_KERNEL_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def _takes(x, *params):
    return x.is_cuda and x.dtype in _KERNEL_DTYPES and all(p is None or p.dtype in _KERNEL_DTYPES for p in params)


def _params_fit(x, *params):
    """True when normjit's kernels take the parameters as they are: fp32 or x's dtype, one dtype
    for all. Otherwise (a bf16 weight for fp16 x, say) torch's norm runs: its composite RMSNorm
    takes such mixes, and for the rest its error is the one the caller would get from torch."""
    dtype = None
    for p in params:
        if p is None:
            continue
        if dtype is None:
            dtype = p.dtype
            if dtype != x.dtype and dtype != torch.float32:
                return False
        elif p.dtype != dtype:
            return False
    return True


def _check_shape(x, normalized_shape, name):
    # The ops see only how many trailing dims are normalized; torch's own forward, which these
    # functions replace, also checks that those dims are normalized_shape.
    nd = len(normalized_shape)
    if x.dim() < nd or tuple(x.shape[x.dim() - nd:]) != normalized_shape:
        raise ValueError("normjit: %s was given normalized_shape=%s for an input of shape %s; the input's last %d "
                         "dims must be normalized_shape. Pass the shape of the dims to normalize."
                         % (name, list(normalized_shape), list(x.shape), nd))


class _LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, normalized_shape, weight, bias, eps):
        nd = len(normalized_shape)
        y, mean, rstd = layer_norm_forward(x, weight, bias, eps, nd)
        ctx.save_for_backward(x, weight, bias, mean, rstd)
        ctx.normalized_ndim = nd
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, bias, mean, rstd = ctx.saved_tensors
        dx, dw, db = layer_norm_backward(dy, x, weight, bias, mean, rstd, ctx.normalized_ndim)
        return dx, None, dw, db, None


class _RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, normalized_shape, weight, eps):
        nd = len(normalized_shape)
        y, rstd = rms_norm_forward(x, weight, eps, nd)
        ctx.save_for_backward(x, weight, rstd)
        ctx.normalized_ndim = nd
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
    """torch.nn.functional.layer_norm on normjit's forward and backward kernels."""
    normalized_shape = tuple(normalized_shape) if not isinstance(normalized_shape, int) else (normalized_shape,)
    if not _takes(input, weight, bias):
        return F.layer_norm(input, normalized_shape, weight, bias, eps)
    _check_shape(input, normalized_shape, "layer_norm")
    if _autocast_fp32("layer_norm", input):
        with torch.autocast("cuda", enabled=False):
            return _LayerNormFunction.apply(input.float(), normalized_shape, _fp32(weight), _fp32(bias), eps)
    if not _params_fit(input, weight, bias):
        return F.layer_norm(input, normalized_shape, weight, bias, eps)
    return _LayerNormFunction.apply(input, normalized_shape, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """torch.nn.functional.rms_norm on normjit's forward and backward kernels. eps None: fp32's
    machine epsilon, as torch's kernels use (the epsilon of the fp32 computation type, also for
    fp16/bf16 inputs)."""
    normalized_shape = tuple(normalized_shape) if not isinstance(normalized_shape, int) else (normalized_shape,)
    if not _takes(input, weight):
        return F.rms_norm(input, normalized_shape, weight, eps)
    _check_shape(input, normalized_shape, "rms_norm")
    kernel_eps = FP32_EPS if eps is None else eps
    if _autocast_fp32("rms_norm", input):
        with torch.autocast("cuda", enabled=False):
            return _RMSNormFunction.apply(input.float(), normalized_shape, _fp32(weight), kernel_eps)
    if not _params_fit(input, weight):
        return F.rms_norm(input, normalized_shape, weight, eps)
    return _RMSNormFunction.apply(input, normalized_shape, weight, kernel_eps)
