"""The Python glue of normjit.torch's fast paths, timed without a GPU.

What python_overhead.py and host_breakdown.py time on the GPU machine is the glue plus the C
calls' kernel launches plus the output allocations; this times the glue (and the allocations of
CPU tensors) alone, here: CPU tensors stand in for CUDA ones, the plans are the ones the general
paths would leave (made by _launch's own _problem and _new_plan, under the keys the fast paths
look up), the CUDA stream lookup returns a stream of its own (no context push), and the plans'
C entry points are a C function that returns OK (built with the system's cc into a temporary
folder). Each row is one call or a piece of one, so a change to the glue can be judged before
it goes to a GPU:
- the functional backward (normjit.torch.layer_norm_backward) and its pieces;
- the modules' training step, y = module(x); torch.autograd.grad(y, (x, weight[, bias]), dy),
  for normjit.LayerNorm and RMSNorm (parameters in x's dtype, as host_breakdown.py's first rows),
  split as host_breakdown.py splits it (fwd; grad = step − fwd; bwd: the backward alone over a
  retained graph; node: the Function's backward called on this thread), and the pieces of the
  forward (the module's call; its forward as it was before it read the parameters from
  _parameters, through nn.Module.__getattr__; layer_norm's checks, autograd's C entry point, the
  Function's forward, _launch_forward._run) and of the backward (backward_packed, _run); beside them the
  floor: a Python autograd.Function that only clones, with one gradient and with three.
  On the CPU autograd runs the backward on this thread; on CUDA it runs it on a worker thread.
- with --timeline STEPS, host_breakdown.py's timeline of the steps (inside autograd's own run):
  there the same backward takes 2-3x as long as in a loop of its own (the rows above), on the
  CPU too, its caches shared with the forward, the engine and the allocator; a microsecond
  taken off a row is worth more in a step than the row says.
Needs torch (any build), cc and libnormjit (NORMJIT_LIBRARY, or the build folder), no GPU.

    python3 bench/python_glue_cpu.py [--m 4] [--n 256] [--calls 20000] [--steps 2000] [--timeline STEPS]
    --python DIR: import normjit from DIR instead of this checkout's python/ (an A/B of two
    versions of the package, each in its own process)
"""
import argparse
import ctypes
import os
import subprocess
import sys
import tempfile

_here = os.path.dirname(os.path.abspath(__file__))


def _args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--m", type=int, default=4)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--calls", type=int, default=20000, help="calls a batch for the functional rows")
    ap.add_argument("--steps", type=int, default=2000, help="calls a batch for the module rows")
    ap.add_argument("--timeline", type=int, default=0, metavar="STEPS", help="host_breakdown.py's timeline")
    ap.add_argument("--python", default=os.path.join(_here, "..", "python"), help="where normjit is imported from")
    return ap.parse_args()


_opt = _args()
sys.path.insert(0, os.path.abspath(_opt.python))

import torch  # noqa: E402

import normjit.torch as njt  # noqa: E402
from normjit import _capi  # noqa: E402
from normjit.torch import _functional, _launch, _launch_forward, _ops  # noqa: E402
from python_overhead import host_us  # noqa: E402  (bench/, this script's folder)
from autograd_floor import CloneFunction, Clone3Function  # noqa: E402  (bench/)


def ok_entry_point(folder):
    """A C function of the entry points' shape (engine, problem, args, stream) that returns 0
    (NJ_OK) at once."""
    src = os.path.join(folder, "ok.c")
    lib = os.path.join(folder, "libok.so")
    with open(src, "w") as f:
        f.write("int nj_ok(void* e, void* p, void* a, void* s) { (void)e; (void)p; (void)a; (void)s; return 0; }\n")
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", src, "-o", lib], check=True)
    fn = ctypes.CDLL(lib).nj_ok
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p] * 4
    return fn


class _StandInCtx:
    """What the Functions' forward is given as ctx when called outside autograd (its pieces)."""

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors


def module_plan(kind, x, weight, bias, ok):
    """The forward plan a module's first (general) call would leave, its entry points ok; it also
    serves the backward (workspace 0: none at these sizes)."""
    n = x.shape[-1]
    affine = weight if weight is not None else bias
    problem_key = (kind, n, x.dtype, x.dtype, None if affine is None else affine.dtype, weight is not None,
                   bias is not None)
    p = _launch._problem(problem_key, kind, n, x, x, affine, weight is not None, bias is not None)
    m = x.numel() // n
    plan = _launch._new_plan(_launch_forward.forward_key(kind, x, weight, bias, 1), kind, p, m, n, -1, x, 1,
                             weight, bias, 0, (problem_key, m, -1))
    plan.forward = plan.backward = ok
    return plan


def main():
    opt = _opt
    m, n = opt.m, opt.n
    with tempfile.TemporaryDirectory() as folder:
        ok = ok_entry_point(folder)
        stream = lambda device: 7  # noqa: E731  a stream of its own: no context push
        _launch._raw_stream = _launch_forward._raw_stream = stream
        _launch.push_context = _launch_forward.push_context = lambda device: False
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
        print("torch %s, host CPU, normjit from %s; M=%d N=%d bf16; us per call, median of 15 batches"
              % (torch.__version__, os.path.dirname(os.path.abspath(_launch.__file__)), m, n))
        print("\n== LayerNorm backward, fp32 weights (batches of %d)" % opt.calls)
        for name, fn in rows:
            print("%-66s %7.2f" % (name, host_us(fn, opt.calls)))

        # The modules' training step, parameters in x's dtype (host_breakdown.py's first rows).
        xg = x.clone().requires_grad_()
        modules = []
        for kind, cls in ((_capi.LAYERNORM, njt.LayerNorm), (_capi.RMSNORM, njt.RMSNorm)):
            module = cls(n, dtype=x.dtype)
            params = tuple(module.parameters())
            weight, bias = params[0], (params[1] if len(params) > 1 else None)
            module_plan(kind, xg, weight, bias, ok)
            modules.append((cls.__name__, kind, module, weight, bias))
        print("\n== the modules' training step and its pieces (batches of %d)" % opt.steps)
        print("%-66s %7s" % ("", "us"))
        floors = [("floor: Python autograd.Function (clone)", CloneFunction),
                  ("floor, 3 gradients", Clone3Function)]
        for label, function in floors:
            wf = torch.nn.Parameter(torch.ones(n, dtype=x.dtype))
            bf = torch.nn.Parameter(torch.zeros(n, dtype=x.dtype))
            inputs = (xg, wf, bf)
            step_us = host_us(lambda: torch.autograd.grad(function.apply(xg, wf, bf), inputs, dy, allow_unused=True),
                              opt.steps)
            fwd_us = host_us(lambda: function.apply(xg, wf, bf), opt.steps)
            y = function.apply(xg, wf, bf)
            bwd_us = host_us(lambda: torch.autograd.grad(y, inputs, dy, retain_graph=True, allow_unused=True),
                             opt.steps)
            node_us = host_us(lambda: function.backward(y.grad_fn, dy), opt.steps)
            print("%-66s %7.2f" % (label + ": step", step_us))
            print("%-66s %7.2f" % ("  fwd / grad (step - fwd) / bwd / node", fwd_us), "%7.2f %7.2f %7.2f"
                  % (step_us - fwd_us, bwd_us, node_us))
        for name, kind, module, weight, bias in modules:
            inputs = (xg,) + tuple(module.parameters())
            layer_norm = kind == _capi.LAYERNORM
            function = _functional._LayerNormFunction if layer_norm else _functional._RMSNormFunction
            nshape = tuple(module.normalized_shape)
            eps = module.eps if layer_norm else (_ops.FP32_EPS if module.eps is None else module.eps)
            y = module(xg)
            node = y.grad_fn
            assert type(node).__name__.startswith(function.__name__), type(node).__name__
            fplan = node.plan
            assert fplan is not None and fplan.forward is ok, "the module did not take its plan's fast path"
            saved = node.saved_tensors
            stats = saved[-1]
            ctx = _StandInCtx()
            if layer_norm:
                functional = lambda: _functional.layer_norm(xg, nshape, weight, bias, eps)  # noqa: E731
                eager = lambda: _functional._layer_norm_eager(xg, nshape, weight, bias, eps, fplan)  # noqa: E731
                apply = lambda: _functional._layer_norm_apply(xg, nshape, weight, bias, eps, fplan)  # noqa: E731
                forward = lambda: function.forward(ctx, xg, nshape, weight, bias, eps, fplan)  # noqa: E731
                packed = lambda: _launch.backward_packed(fplan, kind, dy, xg, weight, bias, stats, 1)  # noqa: E731
                p = stats.data_ptr()
                run = lambda: _launch._run(fplan, dy, xg, weight, bias, p, p + 4 * m)  # noqa: E731
            else:
                functional = lambda: _functional.rms_norm(xg, nshape, weight, module.eps)  # noqa: E731
                eager = lambda: _functional._rms_norm_eager(xg, nshape, weight, eps, fplan)  # noqa: E731
                apply = lambda: _functional._rms_norm_apply(xg, nshape, weight, eps, fplan)  # noqa: E731
                forward = lambda: function.forward(ctx, xg, nshape, weight, eps, fplan)  # noqa: E731
                packed = lambda: _launch.backward_packed(fplan, kind, dy, xg, weight, None, stats, 1)  # noqa: E731
                run = lambda: _launch._run(fplan, dy, xg, weight, None, 0, stats.data_ptr())  # noqa: E731
            names = ("weight", "bias") if layer_norm else ("weight",)
            if layer_norm:  # the forward before it read _parameters directly
                old_forward = lambda: _functional.layer_norm(  # noqa: E731
                    xg, module.normalized_shape, module.weight, module.bias, module.eps)
            else:
                old_forward = lambda: _functional.rms_norm(xg, module.normalized_shape, module.weight,  # noqa: E731
                                                           module.eps)
            step_us = host_us(lambda: torch.autograd.grad(module(xg), inputs, dy), opt.steps)
            fwd_us = host_us(lambda: module(xg), opt.steps)
            rows = [
                ("%s: step (module(x) + autograd.grad)" % name, lambda: step_us),
                ("  fwd: module(x), the graph built", lambda: fwd_us),
                ("    module.forward (no nn.Module.__call__)", lambda: host_us(lambda: module.forward(xg), opt.steps)),
                ("    module.forward as it was: parameters by nn.Module.__getattr__",
                 lambda: host_us(old_forward, opt.steps)),
                ("      the parameters by nn.Module.__getattr__ (module.weight...)",
                 lambda: host_us(lambda: [getattr(module, k) for k in names], opt.steps)),
                ("      the parameters from _parameters (the forward's way)",
                 lambda: host_us(lambda: [module._parameters[k] for k in names], opt.steps)),
                ("    the functional form, planned (%s)" % ("layer_norm" if layer_norm else "rms_norm"),
                 lambda: host_us(functional, opt.steps)),
                ("      _planned (the plan's key, lookup, contiguity)",
                 lambda: host_us(lambda: _functional._planned(kind, xg, nshape, weight, bias), opt.steps)),
                ("      _plain_eager (3 tensors)", lambda: host_us(lambda: _ops._plain_eager(xg, weight, bias),
                                                                  opt.steps)),
                ("      the eager call past the checks (_%s_eager)" % ("layer_norm" if layer_norm else "rms_norm"),
                 lambda: host_us(eager, opt.steps)),
                ("        autograd's C entry point with the Function (apply)", lambda: host_us(apply, opt.steps)),
                ("          Function.forward (a stand-in ctx)", lambda: host_us(forward, opt.steps)),
                ("            _launch_forward._run (packed)",
                 lambda: host_us(lambda: _launch_forward._run(fplan, xg, weight, bias, eps, True), opt.steps)),
                ("  grad: step - fwd", lambda: step_us - fwd_us),
                ("    bwd: autograd.grad over a retained graph",
                 lambda: host_us(lambda: torch.autograd.grad(y, inputs, dy, retain_graph=True), opt.steps)),
                ("      node: Function.backward on this thread",
                 lambda: host_us(lambda: function.backward(node, dy), opt.steps)),
                ("        _launch.backward_packed", lambda: host_us(packed, opt.steps)),
                ("          _launch._run (outputs, pointers, the C call)", lambda: host_us(run, opt.steps)),
            ]
            for label, fn in rows:
                print("%-66s %7.2f" % (label, fn()))
        if opt.timeline:
            from host_breakdown import timeline  # bench/, this script's folder
            cases = [("normjit " + name, module, _functional._LayerNormFunction if kind == _capi.LAYERNORM
                      else _functional._RMSNormFunction) for name, kind, module, _, _ in modules]
            for label, function in floors:
                cases.append((label, _Module(function, n, x.dtype), function))
            timeline(cases, xg, dy, opt.timeline)


class _Module(torch.nn.Module):
    """A floor Function as a module with its own parameters (host_breakdown.py's _CloneModule)."""

    def __init__(self, function, n, dtype):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(n, dtype=dtype))
        self.bias = torch.nn.Parameter(torch.zeros(n, dtype=dtype))
        self.function = function

    def forward(self, x):
        return self.function.apply(x, self.weight, self.bias)


if __name__ == "__main__":
    main()
