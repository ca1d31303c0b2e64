"""Host time per normjit backward (and forward) from Python on a kernel-cache hit, as a table.

Each row times BATCH calls at a tiny shape (the GPU work is a few microseconds, so the host
side is what is measured), syncs outside the timed region, and reports the median over
REPEATS batches in microseconds per call. Rows: the ctypes floor (prebuilt C structs straight
into nj_layer_norm_backward), the three output allocations alone (torch.empty_like; an eager call
cannot do without them), the public functions (normjit.torch.*: the eager fast path),
the registered custom ops through the dispatcher (what torch.compile'd code calls), torch's own
aten backward for comparison, the forward functions beside torch's aten forward, and a CUDA graph
of the same calls (host time per replayed call).
Target: normjit.torch.layer_norm_backward and rms_norm_backward <= 10 us per call; a line says
for each whether it is met.

    python3 bench/python_overhead.py [--m 4] [--n 256] [--dtype bf16]
"""
import argparse
import ctypes
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import torch  # noqa: E402

import normjit  # noqa: E402
import normjit.torch as njt  # noqa: E402
from normjit import _capi  # noqa: E402
from normjit.torch import _context  # noqa: E402

BATCH = 500  # fewer than the launch queue holds, so host time is not throttled by the GPU
REPEATS = 15


def host_us(fn, batch=BATCH):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        times.append((time.perf_counter() - start) / batch * 1e6)
        torch.cuda.synchronize()
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

    # The modules' forward, parameters requiring grad: what a training step's forward pays per norm.
    nj_module = njt.LayerNorm(n, device="cuda", dtype=dtype)
    torch_module = torch.nn.LayerNorm(n, device="cuda", dtype=dtype)

    no_graph = (floor, floor_by_address, allocations)  # captured elsewhere, or no kernel to capture
    rows = [
        ("ctypes floor: nj_layer_norm_backward, structs prebuilt", floor),
        ("ctypes floor: the same by address (raw_backward)", floor_by_address),
        ("torch.empty_like x3 (dx, dw, db allocations alone)", allocations),
        ("normjit.torch.layer_norm_backward (fp32 weight)", lambda: njt.layer_norm_backward(dy, x, w, b, mean, rstd)),
        ("normjit.torch.rms_norm_backward (fp32 weight)", lambda: njt.rms_norm_backward(dy, x, w, rrstd)),
        ("torch.ops.normjit.layer_norm_backward (dispatcher)",
         lambda: torch.ops.normjit.layer_norm_backward(dy, x, w, b, mean, rstd, 1)),
        ("torch.ops.normjit.rms_norm_backward (dispatcher)",
         lambda: torch.ops.normjit.rms_norm_backward(dy, x, w, rrstd, 1)),
        ("torch: aten.native_layer_norm_backward (same-dtype weight)",
         lambda: torch.ops.aten.native_layer_norm_backward(dy, x, [n], mean, rstd, wx, bx, [True, True, True])),
        ("normjit.torch.layer_norm_forward (fp32 weight)", lambda: njt.layer_norm_forward(x, w, b, 1e-5)),
        ("normjit.torch.rms_norm_forward (fp32 weight)", lambda: njt.rms_norm_forward(x, w, 1e-5)),
        ("torch: aten.native_layer_norm (same-dtype weight)",
         lambda: torch.ops.aten.native_layer_norm(x, [n], wx, bx, 1e-5)),
        ("normjit.torch.LayerNorm module forward (autograd graph built)", lambda: nj_module(x)),
        ("torch.nn.LayerNorm module forward (autograd graph built)", lambda: torch_module(x)),
    ]
    print("normjit %s, torch %s, %s; M=%d N=%d %s; median of %d batches of %d calls"
          % (normjit.version(), torch.__version__, torch.cuda.get_device_name(), m, n, opt.dtype, REPEATS, BATCH))
    print("%-62s %12s %12s %14s %14s" % ("call", "host us", "GPU us", "graph host us", "graph GPU us"))
    results = {}
    for name, fn in rows:
        h = host_us(fn)
        g = gpu_us(fn)
        gh, gg = graph_us(fn) if fn not in no_graph else (float("nan"), float("nan"))
        results[name] = h
        print("%-62s %12.2f %12.2f %14.2f %14.2f" % (name, h, g, gh, gg))
    for name in ("normjit.torch.layer_norm_backward (fp32 weight)", "normjit.torch.rms_norm_backward (fp32 weight)"):
        us = results[name]
        print("target <= 10 us per call from Python on a cache hit, %s: %s (%.2f us)"
              % (name.split(" ")[0], "met" if us <= 10 else "NOT met", us))
    print("(GPU us: events around %d back-to-back calls, so host-bound rows show host time there too)" % 200)


if __name__ == "__main__":
    main()
