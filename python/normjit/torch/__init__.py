"""normjit for PyTorch (any 2.x with torch.library.custom_op; nothing compiled against it).

    layer_norm_forward(x, weight, bias, eps) -> (y, mean, rstd)
    rms_norm_forward(x, weight, eps) -> (y, rstd)
        the statistics fp32, [..., 1], as the backward functions take them; with the fused
        options as keywords (docs/PYTHON.md): residual=, rowscale=, dropout_p=, dropout_seed=,
        dropout_offset=, dropout_mask= ("bytes" | "bits"), weight1=, bias1=, parallel=,
        zero_centered_weight=, y_dtype=, and for rms_norm_forward z=, gate=; with any of them the
        result is a LayerNormForwardResult(y, mean, rstd, h, mask, y1) /
        RMSNormForwardResult(y, rstd, h, mask, y1), h and mask being what the backward takes as
        x and as dropout_mask= (bytes) / dropout_mask_bits= (bits)
    layer_norm_backward(dy, x, weight, bias, mean, rstd) -> (dx, dweight, dbias)
    rms_norm_backward(dy, x, weight, rstd) -> (dx, dweight)
        both with the fused options as keywords (docs/FUSED.md): dresidual=, inplace_residual=,
        zero_centered_weight=, rowscale=, dropout_mask= / dropout_mask_bits=, dropout_p=,
        return_dresidual_in= (which appends dh to the result, last); parallel norms dy1=,
        weight1=, bias1= (appending dweight1[, dbias1]); recompute from the forward's output y=
        (x may then be None); rms_norm_backward also z=, gate= for the gated RMSNorm (appending dz,
        before dweight1)
    layer_norm / rms_norm: the functional forms, on normjit's forward and backward
    LayerNorm / RMSNorm: drop-in torch.nn.LayerNorm / torch.nn.RMSNorm, likewise
    clear_workspaces(): drops the workspace kept per device and stream (see docs/PYTHON.md)

The ops are registered as torch.ops.normjit.layer_norm_forward / rms_norm_forward,
layer_norm_backward / rms_norm_backward, and for the fused options *_forward_fused,
*_backward_fused and *_backward_fused_inplace.
"""
import torch as _torch

if not hasattr(_torch, "library") or not hasattr(_torch.library, "custom_op"):
    raise ImportError("normjit.torch needs PyTorch 2.4 or newer (torch.library.custom_op); this is torch %s."
                      % _torch.__version__)

from ._functional import layer_norm, rms_norm  # noqa: E402
from ._launch import clear_workspaces  # noqa: E402
from ._modules import LayerNorm, RMSNorm  # noqa: E402
from ._ops import (LayerNormForwardResult, RMSNormForwardResult, layer_norm_backward, layer_norm_forward,  # noqa: E402
                   rms_norm_backward, rms_norm_forward)

__all__ = ["layer_norm_forward", "rms_norm_forward", "layer_norm_backward", "rms_norm_backward", "layer_norm",
           "rms_norm", "LayerNorm", "RMSNorm", "clear_workspaces", "LayerNormForwardResult", "RMSNormForwardResult"]
