"""(Module parameters in x's dtype: torch's LayerNorm takes no other.) Where the host time of normjit's autograd backward goes (session 14): peers.py reads normjit's
times 1.1-1.6x its kernel time, erratically, and python_overhead.py times LayerNorm
forward+backward at 572 us of host time a step against torch's 230. Per step of
y = module(x); torch.autograd.grad(y, (x, w, b), dy): the forward, the grad call, and inside the
grad call the Function's backward, backward_packed, _run, the C call, the workspace and the
context push, each summed by wrappers; torch's modules beside. Then the C call alone from the
main thread and from a second Python thread."""
import statistics
import sys
import threading
import time

import torch

import normjit.torch as njt
from normjit.torch import _context, _functional, _launch

acc = {}


def timed(name, fn):
    def wrapper(*a, **k):
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            acc[name] = acc.get(name, 0.0) + time.perf_counter() - t
    return wrapper


def steps(module, x, dy, inputs, count):
    fwd = grad = 0.0
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(count):
        a = time.perf_counter()
        y = module(x)
        b = time.perf_counter()
        torch.autograd.grad(y, inputs, dy)
        c = time.perf_counter()
        fwd += b - a
        grad += c - b
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    return fwd / count * 1e6, grad / count * 1e6, (t1 - t0) / count * 1e6, (t2 - t0) / count * 1e6


def run(kind, m, n, dtype, instrument):
    torch.manual_seed(0)
    x = torch.randn(m, n, device="cuda", dtype=dtype, requires_grad=True)
    dy = torch.randn(m, n, device="cuda", dtype=dtype)
    for name, module in (("normjit", (njt.LayerNorm if kind == "LN" else njt.RMSNorm)(n, device="cuda", dtype=dtype)),
                         ("torch", (torch.nn.LayerNorm if kind == "LN" else torch.nn.RMSNorm)(n, device="cuda", dtype=dtype))):
        inputs = (x,) + tuple(module.parameters())
        steps(module, x, dy, inputs, 5)
        acc.clear()
        count = 200 if m * n < 1 << 20 else 50
        r = [steps(module, x, dy, inputs, count) for _ in range(3)]
        med = [statistics.median(v[i] for v in r) for i in range(4)]
        parts = " ".join(f"{k} {v / (3 * count) * 1e6:.1f}" for k, v in sorted(acc.items()))
        print(f"{kind} M={m} N={n} {str(dtype)[6:]} {name:8} {'instr' if instrument else 'plain'}: fwd {med[0]:.1f} "
              f"grad {med[1]:.1f} step(host) {med[2]:.1f} step(synced) {med[3]:.1f} us | {parts}", flush=True)


def c_call_alone(m, n, dtype):
    """The fast path's _run for a LayerNorm plan, on the main thread and on another thread."""
    x = torch.randn(m, n, device="cuda", dtype=dtype)
    dy = torch.randn_like(x)
    w = torch.ones(n, device="cuda")
    b = torch.zeros(n, device="cuda")
    y, stats, plan = njt._launch_forward.forward(_functional._LAYERNORM, x, w, b, 1e-5, 1, True, None)
    _launch.backward_packed(plan, _functional._LAYERNORM, dy, x, w, b, stats, 1)  # learns the workspace
    p = stats.data_ptr()

    def loop(out, count=300):
        torch.cuda.set_device(0)
        for _ in range(5):
            _launch._run(plan, dy, x, w, b, p, p + 4 * plan.m)
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(count):
            _launch._run(plan, dy, x, w, b, p, p + 4 * plan.m)
        out.append((time.perf_counter() - t) / count * 1e6)
        torch.cuda.synchronize()
    main = []
    loop(main)
    other = []
    th = threading.Thread(target=loop, args=(other,))
    th.start()
    th.join()
    print(f"_run alone LN M={m} N={n} {str(dtype)[6:]}: main thread {main[0]:.1f} us, second thread {other[0]:.1f} us",
          flush=True)


shapes = [("LN", 4, 256), ("RMS", 4, 256), ("LN", 16384, 4096), ("RMS", 32768, 2048)]
for kind, m, n in shapes:
    run(kind, m, n, torch.bfloat16, False)
# Instrumented: the Functions' backward, backward_packed, _run, the C entry point, _workspace, push/pop.
_functional._LayerNormFunction.backward = staticmethod(timed("Function.backward", _functional._LayerNormFunction.backward))
_functional._RMSNormFunction.backward = staticmethod(timed("Function.backward", _functional._RMSNormFunction.backward))
_launch.backward_packed = timed("backward_packed", _launch.backward_packed)
_functional._launch = _launch
_launch._run = timed("_run", _launch._run)
_launch._workspace = timed("_workspace", _launch._workspace)
_launch.push_context = timed("push_context", _launch.push_context)
_launch.pop_context = timed("pop_context", _launch.pop_context)
_orig_new_plan = _launch._new_plan


for kind, m, n in shapes:
    for plan in list(_launch._plans.values()):
        if not getattr(plan.backward, "_timed", False):
            plan.backward = timed("C backward", plan.backward)
            plan.backward._timed = True
    run(kind, m, n, torch.bfloat16, True)
for m, n in ((4, 256), (16384, 4096)):
    c_call_alone(m, n, torch.bfloat16)
