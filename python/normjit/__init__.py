"""normjit from Python: run-time generated LayerNorm/RMSNorm kernels, backward and forward.

    import normjit.torch as njt
    y, mean, rstd = njt.layer_norm_forward(x, weight, bias, 1e-5)
    dx, dw, db = njt.layer_norm_backward(dy, x, weight, bias, mean, rstd)
    norm = njt.LayerNorm(4096)          # a drop-in torch.nn.LayerNorm on normjit's kernels

This top-level module needs no PyTorch: it loads libnormjit through the C API (ctypes).
See docs/PYTHON.md.
"""
from ._capi import Engine, NormjitError, default_engine, version
from ._library import LibraryNotFound, candidate_paths, load_library

__all__ = ["Engine", "NormjitError", "LibraryNotFound", "default_engine", "version", "candidate_paths",
           "load_library"]
