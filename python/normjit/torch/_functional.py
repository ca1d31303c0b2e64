"""layer_norm and rms_norm on normjit's kernels: an autograd.Function whose forward is normjit's
forward, saving the fp32 row statistics, and whose backward is normjit's backward, which reads
them as they are.

Two ways through the Function, decided per call (the custom ops' fake kernels and
torch.compile's graphs see only the second):
- eager (nothing tracing: _ops._plain_eager): the Function is applied through autograd's C entry
  point (what autograd.Function.apply calls after its Python-level work, which outside functorch
  transforms is unwrapping dead functorch wrappers), its forward calls _launch_forward directly
  and saves the statistics as one packed tensor with the call's plan, and its backward calls
  _launch.backward_packed directly. A call outside autocast whose shapes, dtypes and devices have
  a forward plan (_launch_forward.forward_key) and whose tensors are contiguous skips the checks
  of layer_norm/rms_norm too (_planned): the plan's key covers what they look at. With nothing to
  differentiate (grad mode off, or no input requiring grad, and no forward-mode AD) the forward
  runs alone, without the Function: what the Function would return then, less its node.
- traced (torch.compile, make_fx, fake tensors, functorch, torch.jit.trace): Function.apply, whose
  forward and backward are the registered ops (torch.ops.normjit.*), the statistics separate.

torch.nn.functional's own forward and backward run instead wherever normjit's kernels cannot:
CPU tensors, float64, and parameters in a dtype the kernels do not take (see _params_fit).
normjit's forward takes no fused options yet; these functions have none to route elsewhere.
"""
import torch
import torch.nn.functional as F
from torch.autograd import forward_ad as _forward_ad

from .. import _capi
from . import _launch, _launch_forward
from ._ops import (FP32_EPS, _eps, _plain_eager, layer_norm_backward, layer_norm_forward, rms_norm_backward,
                   rms_norm_forward)

_KERNEL_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
_LAYERNORM = _capi.LAYERNORM
_RMSNORM = _capi.RMSNORM
_plans = _launch._plans
_forward_key = _launch_forward.forward_key
_LN_EPS_HINT = "torch.nn.LayerNorm's default is 1e-5"
_RMS_EPS_HINT = "None for torch.nn.RMSNorm's default, torch.finfo(torch.float32).eps"


def _takes(x, *params):
    if not x.is_cuda or x.dtype not in _KERNEL_DTYPES:
        return False
    for p in params:
        if p is not None and p.dtype not in _KERNEL_DTYPES:
            return False
    return True


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
    """eager: None when traced (the ops); in eager calls (_layer_norm_eager) the forward's plan, or
    False for none (_launch_forward then looks it up, or makes it)."""

    @staticmethod
    def forward(ctx, x, normalized_shape, weight, bias, eps, eager):
        nd = len(normalized_shape)
        ctx.normalized_ndim = nd
        if eager is None:
            y, mean, rstd = layer_norm_forward(x, weight, bias, eps, nd)
            ctx.save_for_backward(x, weight, bias, mean, rstd)
            ctx.packed = False
            return y
        y, stats, ctx.plan = _launch_forward.forward(_LAYERNORM, x, weight, bias, eps, nd, True, eager or None)
        ctx.save_for_backward(x, weight, bias, stats)
        ctx.packed = True
        return y

    @staticmethod
    def backward(ctx, dy):
        if ctx.packed:
            x, weight, bias, stats = ctx.saved_tensors
            if _plain_eager(dy):
                dx, dw, db = _launch.backward_packed(ctx.plan, _LAYERNORM, dy, x, weight, bias, stats,
                                                     ctx.normalized_ndim)
                return dx, None, dw, db, None, None
            mean, rstd = stats[0], stats[1]  # a backward traced after an eager forward (compiled autograd)
        else:
            x, weight, bias, mean, rstd = ctx.saved_tensors
        dx, dw, db = layer_norm_backward(dy, x, weight, bias, mean, rstd, ctx.normalized_ndim)
        return dx, None, dw, db, None, None


class _RMSNormFunction(torch.autograd.Function):
    """eager: as for _LayerNormFunction."""

    @staticmethod
    def forward(ctx, x, normalized_shape, weight, eps, eager):
        nd = len(normalized_shape)
        ctx.normalized_ndim = nd
        if eager is None:
            y, rstd = rms_norm_forward(x, weight, eps, nd)
            ctx.save_for_backward(x, weight, rstd)
            ctx.packed = False
            return y
        y, rstd, ctx.plan = _launch_forward.forward(_RMSNORM, x, weight, None, eps, nd, True, eager or None)
        ctx.save_for_backward(x, weight, rstd)
        ctx.packed = True
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, rstd = ctx.saved_tensors
        if ctx.packed and _plain_eager(dy):
            dx, dw, _ = _launch.backward_packed(ctx.plan, _RMSNORM, dy, x, weight, None, rstd, ctx.normalized_ndim)
            return dx, None, dw, None, None
        dx, dw = rms_norm_backward(dy, x, weight, rstd, ctx.normalized_ndim)
        return dx, None, dw, None, None


# ---- the eager calls -----------------------------------------------------------------------------

# autograd.Function.apply is a Python classmethod that, outside functorch transforms (which
# _plain_eager rules out), unwraps dead functorch wrappers among the arguments (a generator over
# them: a few microseconds) and calls this C entry point; the eager calls do the same for their
# tensors, cheaper. Under tracing, Function.apply itself is called (Dynamo knows it by name).
_c_apply = getattr(getattr(torch._C, "_FunctionBase", None), "__dict__", {}).get("apply")
_unwrap_if_dead = getattr(getattr(torch._C, "_functorch", None), "unwrap_if_dead", None)
if _c_apply is None or _unwrap_if_dead is None:  # pragma: no cover - other torch versions
    _layer_norm_apply = _LayerNormFunction.apply
    _rms_norm_apply = _RMSNormFunction.apply
else:
    _apply_ln = _c_apply.__get__(None, _LayerNormFunction)
    _apply_rms = _c_apply.__get__(None, _RMSNormFunction)

    def _layer_norm_apply(x, normalized_shape, weight, bias, eps, eager):
        return _apply_ln(_unwrap_if_dead(x), normalized_shape, None if weight is None else _unwrap_if_dead(weight),
                         None if bias is None else _unwrap_if_dead(bias), eps, eager)

    def _rms_norm_apply(x, normalized_shape, weight, eps, eager):
        return _apply_rms(_unwrap_if_dead(x), normalized_shape, None if weight is None else _unwrap_if_dead(weight),
                          eps, eager)


def _differentiable(x, weight, bias=None):
    """Whether the Function is needed: a graph to record, or forward-mode AD to refuse (the
    Functions have no jvp, so dual tensors raise there, as they always did)."""
    return ((torch.is_grad_enabled() and (x.requires_grad or (weight is not None and weight.requires_grad) or
                                          (bias is not None and bias.requires_grad))) or
            _forward_ad._current_level >= 0)


def _layer_norm_eager(x, normalized_shape, weight, bias, eps, plan):
    """An eager call past the checks (plan: the forward's, or False to have _launch_forward look)."""
    eps = _eps(eps, "layer_norm_forward", _LN_EPS_HINT)
    if _differentiable(x, weight, bias):
        return _layer_norm_apply(x, normalized_shape, weight, bias, eps, plan)
    return _launch_forward.forward(_LAYERNORM, x, weight, bias, eps, len(normalized_shape), True, plan or None)[0]


def _rms_norm_eager(x, normalized_shape, weight, eps, plan):
    eps = _eps(eps, "rms_norm_forward", _RMS_EPS_HINT)
    if _differentiable(x, weight):
        return _rms_norm_apply(x, normalized_shape, weight, eps, plan)
    return _launch_forward.forward(_RMSNORM, x, weight, None, eps, len(normalized_shape), True, plan or None)[0]


def _planned(kind, x, normalized_shape, weight, bias):
    """The forward plan of an eager call outside autocast (the caller checked both) that the checks
    of layer_norm/rms_norm would pass and _launch_forward's fast path would take, or None. A plan
    exists only for a key whose call normjit ran: x on CUDA in a kernel dtype, parameters on its
    device in one dtype, fp32 or x's (what _takes and _params_fit ask), and normalized_shape what
    x's last dims are (_check_shape)."""
    plan = _plans.get(_forward_key(kind, x, weight, bias, len(normalized_shape)))
    if (plan is None or plan.normalized_shape != normalized_shape or not x.is_contiguous() or
            (weight is not None and not weight.is_contiguous()) or (bias is not None and not bias.is_contiguous())):
        return None
    return plan


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


def _normalized(normalized_shape):
    if type(normalized_shape) is tuple:
        return normalized_shape
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """torch.nn.functional.layer_norm on normjit's forward and backward kernels."""
    normalized_shape = _normalized(normalized_shape)
    eager = _plain_eager(input, weight, bias)
    if eager and not torch.is_autocast_enabled("cuda"):
        plan = _planned(_LAYERNORM, input, normalized_shape, weight, bias)
        if plan is not None:
            return _layer_norm_eager(input, normalized_shape, weight, bias, eps, plan)
    if not _takes(input, weight, bias):
        return F.layer_norm(input, normalized_shape, weight, bias, eps)
    _check_shape(input, normalized_shape, "layer_norm")
    if _autocast_fp32("layer_norm", input):
        x, weight, bias = input.float(), _fp32(weight), _fp32(bias)
        if eager:  # nothing autocast acts on runs inside (_launch*: allocations and the C calls)
            return _layer_norm_eager(x, normalized_shape, weight, bias, eps, False)
        with torch.autocast("cuda", enabled=False):
            return _LayerNormFunction.apply(x, normalized_shape, weight, bias, eps, None)
    if not _params_fit(input, weight, bias):
        return F.layer_norm(input, normalized_shape, weight, bias, eps)
    if eager:
        return _layer_norm_eager(input, normalized_shape, weight, bias, eps, False)
    return _LayerNormFunction.apply(input, normalized_shape, weight, bias, eps, None)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """torch.nn.functional.rms_norm on normjit's forward and backward kernels. eps None: fp32's
    machine epsilon, as torch's kernels use (the epsilon of the fp32 computation type, also for
    fp16/bf16 inputs)."""
    normalized_shape = _normalized(normalized_shape)
    kernel_eps = FP32_EPS if eps is None else eps
    eager = _plain_eager(input, weight)
    if eager and not torch.is_autocast_enabled("cuda"):
        plan = _planned(_RMSNORM, input, normalized_shape, weight, None)
        if plan is not None:
            return _rms_norm_eager(input, normalized_shape, weight, kernel_eps, plan)
    if not _takes(input, weight):
        return F.rms_norm(input, normalized_shape, weight, eps)
    _check_shape(input, normalized_shape, "rms_norm")
    if _autocast_fp32("rms_norm", input):
        x, weight = input.float(), _fp32(weight)
        if eager:
            return _rms_norm_eager(x, normalized_shape, weight, kernel_eps, False)
        with torch.autocast("cuda", enabled=False):
            return _RMSNormFunction.apply(x, normalized_shape, weight, kernel_eps, None)
    if not _params_fit(input, weight):
        return F.rms_norm(input, normalized_shape, weight, eps)
    if eager:
        return _rms_norm_eager(input, normalized_shape, weight, kernel_eps, False)
    return _RMSNormFunction.apply(input, normalized_shape, weight, kernel_eps, None)
