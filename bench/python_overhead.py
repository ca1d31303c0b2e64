"""Host time per normjit call from Python on a kernel-cache hit, against torch's own, as a table.

Each row times BATCH calls at a tiny shape (the GPU work is a few microseconds, so the host
side is what is measured), syncs outside the timed region, and reports the median over
REPEATS batches in microseconds per call. Groups of rows:
- the floor: prebuilt C structs straight into nj_layer_norm_backward (ctypes), and the three
  output allocations alone (torch.empty_like; an eager call cannot do without them);
- functional forward: normjit.torch.layer_norm_forward / rms_norm_forward and the functional
  forms layer_norm / rms_norm (nothing requiring grad), the forward op through the dispatcher,
  torch's aten.native_layer_norm and torch.nn.functional's norms;
- functional backward: normjit.torch.layer_norm_backward / rms_norm_backward, the ops through
  the dispatcher (what torch.compile'd code calls), torch's aten.native_layer_norm_backward;
- modules: normjit.torch.LayerNorm / RMSNorm against torch.nn.LayerNorm / RMSNorm, forward with
  the autograd graph built (parameters require grad) and forward + backward
  (torch.autograd.grad of x and the parameters);
- a CUDA graph of the same calls (host time per replayed call) where the row can be captured.
The "path" column says which way normjit's calls went, as seen on one call after the warm-up:
"eager" (the implementation called directly: the public functions without the dispatcher, the
modules' autograd Function through autograd's C entry point), "op" (through the registered
custom op), then "fast" (every launch a plan's fast call) or "general" (the general path).
Target: <= 10 us per call from Python on a cache hit; a line says for each public function
whether it is met. The last lines set each normjit row beside torch's equivalent.

    python3 bench/python_overhead.py [--m 4] [--n 256] [--dtype bf16]
"""
import argparse
import ctypes
import os
import statistics
import sys
import time
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import normjit  # noqa: E402
import normjit.torch as njt  # noqa: E402
from normjit import _capi  # noqa: E402
from normjit.torch import _context, _functional, _launch, _launch_forward, _ops  # noqa: E402

BATCH = 500  # fewer than the launch queue holds, so host time is not throttled by the GPU
REPEATS = 15


def synchronize():
    if torch.cuda.is_available():  # host_breakdown.py --device cpu times without a GPU
        torch.cuda.synchronize()


def host_us(fn, batch=BATCH):
    """Host µs per call of fn: the median of REPEATS batches of `batch` calls, synchronized
    outside the timed region."""
    fn()
    synchronize()
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        times.append((time.perf_counter() - start) / batch * 1e6)
        synchronize()
    return statistics.median(times)


def gpu_us(fn, batch=200):
    fn()
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    begin.record()
    for _ in range(batch):
        fn()
    end.record()
    torch.cuda.synchronize()
    return begin.elapsed_time(end) * 1e3 / batch


def graph_us(fn, calls=100):
    """Host and GPU time per call of `calls` calls captured in one CUDA graph, replayed."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    return host_us(graph.replay, batch=20) / calls, gpu_us(graph.replay, batch=20) / calls


def path_of(fn):
    """Which way normjit's calls in fn went (see the module's docstring), from one call."""
    eager = []
    launches = []

    def spy(module, name, record, value):
        real = getattr(module, name)

        def wrapper(*args, **kwargs):
            out = real(*args, **kwargs)
            record.append(value(out))
            return out
        return mock.patch.object(module, name, wrapper)
    patches = [spy(_ops, "_plain_eager", eager, bool), spy(_functional, "_plain_eager", eager, bool),
               spy(_launch_forward, "_run", launches, lambda out: "fast"),
               spy(_launch_forward, "_forward", launches, lambda out: "general"),
               spy(_launch, "_run", launches, lambda out: "fast" if out is not None else "refused"),
               spy(_launch, "_backward", launches, lambda out: "general")]
    for p in patches:
        p.start()
    try:
        fn()
        torch.cuda.synchronize()
    finally:
        for p in reversed(patches):
            p.stop()
    if not launches:
        return "-"
    way = "eager" if eager and all(eager) else "op"
    return "%s, %s" % (way, "fast" if all(w == "fast" for w in launches) else "general")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--m", type=int, default=4)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--dtype", choices=("fp32", "fp16", "bf16"), default="bf16")
    opt = ap.parse_args()
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[opt.dtype]
    m, n = opt.m, opt.n
    x = torch.randn(m, n, device="cuda", dtype=dtype)
    dy = torch.randn(m, n, device="cuda", dtype=dtype)
    w = torch.randn(n, device="cuda") + 1
    b = torch.randn(n, device="cuda")
    wx = w.to(dtype)
    bx = b.to(dtype)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, [n], None, None, 1e-5)
    rrstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5)

    # The ctypes floor: the structs built once, one C call per iteration (no torch at all).
    engine = _capi.default_engine()
    p = _capi.Problem(kind=_capi.LAYERNORM, n=n, x_dtype=_capi.BF16 if dtype == torch.bfloat16 else
                      (_capi.F16 if dtype == torch.float16 else _capi.F32), weight_dtype=_capi.F32,
                      has_weight=1, has_bias=1)
    dx, dw, db = (torch.empty_like(x), torch.empty_like(w), torch.empty_like(b))
    with _context.current_context(x.device.index):
        ws = torch.empty(engine.workspace_size(p, m), dtype=torch.uint8, device="cuda")
    a = _capi.BackwardArgs(m=m, x=x.data_ptr(), dy=dy.data_ptr(), mean=mean.data_ptr(), rstd=rstd.data_ptr(),
                           weight=w.data_ptr(), dx=dx.data_ptr(), dweight=dw.data_ptr(), dbias=db.data_ptr(),
                           workspace=ws.data_ptr() or None, workspace_bytes=ws.numel())
    raw = engine._backward[_capi.LAYERNORM]
    stream = torch.cuda.current_stream().cuda_stream
    handle, pp, ap_ = engine.handle, ctypes.byref(p), ctypes.byref(a)

    def floor():
        raw(handle, pp, ap_, stream)

    # The entry point normjit.torch's fast path calls: every argument an int address.
    by_address = engine.raw_backward[_capi.LAYERNORM]
    addresses = (engine.address, ctypes.addressof(p), ctypes.addressof(a), stream)

    def floor_by_address():
        by_address(*addresses)

    def allocations():
        # What the eager call cannot avoid on top of the floor: its three outputs.
        return torch.empty_like(x), torch.empty_like(w), torch.empty_like(b)

    # The modules, parameters requiring grad (x's dtype, as torch's CUDA LayerNorm wants them):
    # what a training step pays per norm.
    modules = {name: cls(n, device="cuda", dtype=dtype) for name, cls in
               (("nj_ln", njt.LayerNorm), ("torch_ln", torch.nn.LayerNorm), ("nj_rms", njt.RMSNorm),
                ("torch_rms", torch.nn.RMSNorm))}
    xg = x.clone().requires_grad_()

    def forward_backward(module):
        inputs = (xg,) + tuple(module.parameters())

        def step():
            torch.autograd.grad(module(xg), inputs, dy)
        return step

    T = "torch: "
    groups = [
        ("floor", [
            ("ctypes floor: nj_layer_norm_backward, structs prebuilt", floor, None),
            ("ctypes floor: the same by address (raw_backward)", floor_by_address, None),
            ("torch.empty_like x3 (dx, dw, db allocations alone)", allocations, None)]),
        ("functional forward", [
            ("normjit.torch.layer_norm_forward (fp32 weight)", lambda: njt.layer_norm_forward(x, w, b, 1e-5),
             T + "aten.native_layer_norm (same-dtype weight)"),
            ("normjit.torch.rms_norm_forward (fp32 weight)", lambda: njt.rms_norm_forward(x, w, 1e-5),
             T + "aten.native_layer_norm (same-dtype weight)"),
            ("torch.ops.normjit.layer_norm_forward (dispatcher)",
             lambda: torch.ops.normjit.layer_norm_forward(x, w, b, 1e-5, 1), None),
            (T + "aten.native_layer_norm (same-dtype weight)",
             lambda: torch.ops.aten.native_layer_norm(x, [n], wx, bx, 1e-5), None),
            ("normjit.torch.layer_norm (no grad needed)", lambda: njt.layer_norm(x, (n,), wx, bx),
             T + "F.layer_norm (no grad needed)"),
            (T + "F.layer_norm (no grad needed)", lambda: F.layer_norm(x, (n,), wx, bx), None),
            ("normjit.torch.rms_norm (no grad needed)", lambda: njt.rms_norm(x, (n,), wx),
             T + "F.rms_norm (no grad needed)"),
            (T + "F.rms_norm (no grad needed)", lambda: F.rms_norm(x, (n,), wx), None)]),
        ("functional backward", [
            ("normjit.torch.layer_norm_backward (fp32 weight)",
             lambda: njt.layer_norm_backward(dy, x, w, b, mean, rstd), T + "aten.native_layer_norm_backward"),
            ("normjit.torch.rms_norm_backward (fp32 weight)", lambda: njt.rms_norm_backward(dy, x, w, rrstd),
             T + "aten.native_layer_norm_backward"),
            ("torch.ops.normjit.layer_norm_backward (dispatcher)",
             lambda: torch.ops.normjit.layer_norm_backward(dy, x, w, b, mean, rstd, 1), None),
            ("torch.ops.normjit.rms_norm_backward (dispatcher)",
             lambda: torch.ops.normjit.rms_norm_backward(dy, x, w, rrstd, 1), None),
            (T + "aten.native_layer_norm_backward",
             lambda: torch.ops.aten.native_layer_norm_backward(dy, x, [n], mean, rstd, wx, bx, [True, True, True]),
             None)]),
        ("modules", [
            ("normjit.torch.LayerNorm forward (autograd graph built)", lambda: modules["nj_ln"](x),
             T + "nn.LayerNorm forward"),
            (T + "nn.LayerNorm forward", lambda: modules["torch_ln"](x), None),
            ("normjit.torch.RMSNorm forward (autograd graph built)", lambda: modules["nj_rms"](x),
             T + "nn.RMSNorm forward"),
            (T + "nn.RMSNorm forward", lambda: modules["torch_rms"](x), None),
            ("normjit.torch.LayerNorm forward+backward", forward_backward(modules["nj_ln"]),
             T + "nn.LayerNorm forward+backward"),
            (T + "nn.LayerNorm forward+backward", forward_backward(modules["torch_ln"]), None),
            ("normjit.torch.RMSNorm forward+backward", forward_backward(modules["nj_rms"]),
             T + "nn.RMSNorm forward+backward"),
            (T + "nn.RMSNorm forward+backward", forward_backward(modules["torch_rms"]), None)]),
    ]
    # Not captured: the floor rows (the C call by itself, or no kernel) and the forward+backward rows.
    no_graph = {"floor"}
    print("normjit %s, torch %s, %s; M=%d N=%d %s; median of %d batches of %d calls"
          % (normjit.version(), torch.__version__, torch.cuda.get_device_name(), m, n, opt.dtype, REPEATS, BATCH))
    print("%-62s %-14s %9s %9s %13s %12s" % ("call", "path", "host us", "GPU us", "graph host us", "graph GPU us"))
    results = {}
    pairs = []
    for group, rows in groups:
        print("-- %s" % group)
        for name, fn, versus in rows:
            fn()  # warm-up: kernels compiled and loaded, plans made
            path = path_of(fn)
            h = host_us(fn)
            g = gpu_us(fn)
            captured = group not in no_graph and "+backward" not in name
            gh, gg = graph_us(fn) if captured else (float("nan"), float("nan"))
            results[name] = h
            if versus:
                pairs.append((name, versus))
            print("%-62s %-14s %9.2f %9.2f %13.2f %12.2f" % (name, path, h, g, gh, gg))
    for name in ("normjit.torch.layer_norm_forward (fp32 weight)", "normjit.torch.rms_norm_forward (fp32 weight)",
                 "normjit.torch.layer_norm_backward (fp32 weight)", "normjit.torch.rms_norm_backward (fp32 weight)"):
        us = results[name]
        print("target <= 10 us per call from Python on a cache hit, %s: %s (%.2f us)"
              % (name.split(" ")[0], "met" if us <= 10 else "NOT met", us))
    print("normjit against torch (host us, ratio):")
    for name, versus in pairs:
        print("  %-56s %8.2f  vs %8.2f  %-40s x%.2f" % (name, results[name], results[versus], versus[len(T):],
                                                       results[name] / results[versus]))
    print("(GPU us: events around %d back-to-back calls, so host-bound rows show host time there too)" % 200)


if __name__ == "__main__":
    main()
