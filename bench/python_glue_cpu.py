"""The Python glue of normjit.torch's backward fast path, timed without a GPU.

What python_overhead.py times on the GPU machine is the glue plus the C call's kernel launches
plus the output allocations; this times the glue alone, here: CPU tensors stand in for CUDA
ones, the plan is the one the general path would leave (made by _launch's own _problem and
_new_plan), the CUDA stream and context lookups return at once, and the plan's C entry point
is a C function that returns OK (built with the system's cc into a temporary folder). Each row
is a piece of one call, so a change to the glue can be judged before it goes to a GPU. Needs
torch (any build), cc and libnormjit (NORMJIT_LIBRARY, or the build folder), no GPU.

    python3 bench/python_glue_cpu.py [--m 4] [--n 256] [--calls 20000]
"""
import argparse
import ctypes
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import torch  # noqa: E402

import normjit.torch as njt  # noqa: E402
from normjit import _capi  # noqa: E402
from normjit.torch import _launch, _ops  # noqa: E402
from python_overhead import host_us  # noqa: E402  (bench/, this script's folder)


def ok_entry_point(folder):
    """A C function of the backward entry point's shape (engine, problem, args, stream) that
    returns 0 (NJ_OK) at once."""
    src = os.path.join(folder, "ok.c")
    lib = os.path.join(folder, "libok.so")
    with open(src, "w") as f:
        f.write("int nj_ok(void* e, void* p, void* a, void* s) { (void)e; (void)p; (void)a; (void)s; return 0; }\n")
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", src, "-o", lib], check=True)
    fn = ctypes.CDLL(lib).nj_ok
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p] * 4
    return fn


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--m", type=int, default=4)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--calls", type=int, default=20000)
    opt = ap.parse_args()
    m, n = opt.m, opt.n
    with tempfile.TemporaryDirectory() as folder:
        ok = ok_entry_point(folder)
        _launch._raw_stream = lambda device: 7  # a stream of its own: no context push
        _launch.push_context = lambda device: False
        x = torch.randn(m, n, dtype=torch.bfloat16)
        dy = torch.randn(m, n, dtype=torch.bfloat16)
        w, b = torch.randn(n), torch.randn(n)
        mean, rstd = torch.randn(m, 1), torch.rand(m, 1)
        # The plan a completed general call leaves under its key (as _launch._backward makes it:
        # no workspace at this size), its C entry point then swapped for the one that returns OK.
        problem_key = (_capi.LAYERNORM, n, x.dtype, dy.dtype, w.dtype, True, True)
        p = _launch._problem(problem_key, _capi.LAYERNORM, n, x, dy, w, True, True)
        plan = _launch._new_plan(_launch._plan_key(_capi.LAYERNORM, dy, x, w, b, mean, rstd, 1), _capi.LAYERNORM, p,
                                 m, n, -1, x, 1, w, b, 0, (problem_key, m, -1))
        plan.backward = ok
        a, _ = _capi.thread_args()
        rows = [
            ("normjit.torch.layer_norm_backward, the whole call", lambda: njt.layer_norm_backward(dy, x, w, b, mean, rstd)),
            ("  _launch.backward (the plan's key, contiguity, _run)",
             lambda: _launch.backward(_capi.LAYERNORM, dy, x, w, b, mean, rstd, 1)),
            ("  _launch._run (outputs, pointers, the C call)", lambda: _launch._run(plan, dy, x, w, b, 0, 0)),
            ("    the three outputs (empty_like, new_empty x2)",
             lambda: (torch.empty_like(x), w.new_empty(size=plan.weight_shape), b.new_empty(size=plan.bias_shape))),
            ("    7 x data_ptr", lambda: (x.data_ptr(), dy.data_ptr(), w.data_ptr(), b.data_ptr(), x.data_ptr(),
                                          w.data_ptr(), b.data_ptr())),
            ("    thread_args + pack_into", lambda: (_capi.thread_args(), _capi.ARGS_HEAD.pack_into(
                a, 0, m, 1, n, 2, n, 3, 4, 5, 6, n, 7, 8, 0, 0))),
            ("    the C call by ctypes (4 ints)", lambda: ok(0, 0, 0, 0)),
            ("  _plan_key", lambda: _launch._plan_key(_capi.LAYERNORM, dy, x, w, b, mean, rstd, 1)),
            ("  5 x is_contiguous", lambda: (x.is_contiguous(), dy.is_contiguous(), rstd.is_contiguous(),
                                             mean.is_contiguous(), w.is_contiguous())),
            ("  _plain_eager (6 tensors)", lambda: _ops._plain_eager(dy, x, w, b, mean, rstd)),
        ]
        out = njt.layer_norm_backward(dy, x, w, b, mean, rstd)
        assert out[0].shape == x.shape and out[1].shape == w.shape and out[2].shape == b.shape
        print("torch %s, host CPU; LayerNorm backward M=%d N=%d bf16, fp32 weights; us per call, median of 15 x %d"
              % (torch.__version__, m, n, opt.calls))
        for name, fn in rows:
            print("%-60s %7.2f" % (name, host_us(fn, opt.calls)))


if __name__ == "__main__":
    main()
