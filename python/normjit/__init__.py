"""normjit from Python: run-time generated LayerNorm/RMSNorm backward kernels.

    import normjit.torch as njt
    dx, dw, db = njt.layer_norm_backward(dy, x, weight, bias, mean, rstd)
    norm = njt.LayerNorm(4096)          # a drop-in torch.nn.LayerNorm with normjit's backward

This top-level module needs no PyTorch: it loads libnormjit through the C API (ctypes).
See docs/PYTHON.md.
"""
from ._capi import Engine, NormjitError, default_engine, version
from ._library import LibraryNotFound, candidate_paths, load_library

__all__ = ["Engine", "NormjitError", "LibraryNotFound", "default_engine", "version", "candidate_paths",
           "load_library"]
